"""What memgit serve counts about itself, and the text of ``/metrics``.

``/metrics`` is the Prometheus text exposition (0.0.4) of two things: memgit's event
counters and gauges of every drive under the root (memgit.drives.info.drive_metrics, rendered
by memgit.state.events.prometheus, labelled ``owner/drive``), then the server's own counters,
kept in this process since it started (a restart starts them at 0, as Prometheus expects
of a counter):

* ``memgit_serve_requests_total{route, code}``: requests answered;
* ``memgit_serve_request_duration_seconds{route}``: a histogram of the time from the
  request's headers to the end of its answer;
* ``memgit_serve_refusals_total{reason}``: requests refused for access (no token, a bad
  or expired one, a read token pushing, a token of another drive or of none) or for
  their form (a bad name, a body too large, a client too slow);
* ``memgit_serve_in_flight``: requests being answered now.

Routes are a fixed set (never a path a client chose), so no client can grow the label set.
The counters are touched only on the event loop's thread; :meth:`ServeMetrics.text` takes a
snapshot there.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from memgit.state.events import _label, _number

ROUTES = ("info_refs", "upload_pack", "receive_pack", "page", "metrics", "other")
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
REASONS = ("no_token", "bad_token", "read_only", "other_drive", "bad_name", "too_large",
           "too_slow", "not_smart_http")


class ServeMetrics:
    """Request counts, latencies and refusals of one server process."""

    def __init__(self) -> None:
        self.requests: Counter[tuple[str, int]] = Counter()
        self.refusals: Counter[str] = Counter()
        self.buckets: dict[str, list[int]] = {r: [0] * len(BUCKETS) for r in ROUTES}
        self.sums: dict[str, float] = dict.fromkeys(ROUTES, 0.0)
        self.counts: dict[str, int] = dict.fromkeys(ROUTES, 0)
        self.in_flight = 0

    def observe(self, route: str, code: int, seconds: float) -> None:
        route = route if route in ROUTES else "other"
        self.requests[(route, code)] += 1
        self.sums[route] += seconds
        self.counts[route] += 1
        counts = self.buckets[route]
        for i, bound in enumerate(BUCKETS):
            if seconds <= bound:
                counts[i] += 1

    def refuse(self, reason: str) -> None:
        self.refusals[reason if reason in REASONS else "other"] += 1

    def text(self) -> str:
        """The server's own metrics in Prometheus text format."""
        lines = ["# HELP memgit_serve_requests_total requests answered by memgit serve",
                 "# TYPE memgit_serve_requests_total counter"]
        for (route, code), n in sorted(self.requests.items()):
            lines.append(f'memgit_serve_requests_total{{route="{route}",code="{code}"}} {n}')
        lines += ["# HELP memgit_serve_request_duration_seconds time to answer a request",
                  "# TYPE memgit_serve_request_duration_seconds histogram"]
        for route in ROUTES:
            if not self.counts[route]:
                continue
            for bound, n in zip(BUCKETS, self.buckets[route], strict=True):
                lines.append(f'memgit_serve_request_duration_seconds_bucket{{route="{route}",'
                             f'le="{_number(bound)}"}} {n}')
            lines.append(f'memgit_serve_request_duration_seconds_bucket{{route="{route}",'
                         f'le="+Inf"}} {self.counts[route]}')
            lines.append(f'memgit_serve_request_duration_seconds_sum{{route="{route}"}} '
                         f"{self.sums[route]!r}")
            lines.append(f'memgit_serve_request_duration_seconds_count{{route="{route}"}} '
                         f"{self.counts[route]}")
        lines += ["# HELP memgit_serve_refusals_total requests refused, by reason",
                  "# TYPE memgit_serve_refusals_total counter"]
        for reason in (*REASONS, "other"):
            if reason != "other" or self.refusals[reason]:
                lines.append(f'memgit_serve_refusals_total{{reason="{_label(reason)}"}} '
                             f"{self.refusals[reason]}")
        lines += ["# HELP memgit_serve_in_flight requests being answered now",
                  "# TYPE memgit_serve_in_flight gauge",
                  f"memgit_serve_in_flight {self.in_flight}"]
        return "\n".join(lines) + "\n"


def drive_row(name: str, path: Path) -> tuple[str, dict[str, int], dict[str, float]] | None:
    """memgit's event counters and gauges of one drive, labelled ``owner/drive``, read as
    ``memgit metrics`` reads it (its read path first); None when the drive cannot be read,
    so one damaged drive never hides the others."""
    from memgit.drives.info import drive_metrics
    from memgit.errors import MemgitError

    try:
        return drive_metrics(str(path), label=name)
    except (MemgitError, OSError):
        return None
