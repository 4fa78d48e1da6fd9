"""Event counters per drive, and their Prometheus text (``memgit metrics``).

Each drive counts its events in its own state database (state.counters), incremented in
one ``BEGIN IMMEDIATE`` transaction so concurrent hooks and writers never lose a count.
The git hooks record events, so it imports no pygit2.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from memgit import state
from memgit.errors import MemgitError
from memgit.state import counters

# The events of docs/spec.md, section 3, always exported (0 until they happen).
EVENTS: tuple[str, ...] = (
    "commit", "commit_failed", "pending_retry_failed", "push_accepted", "push_refused",
    "dream_applied", "dream_failed", "dream_no_changes", "purge", "near_limit",
)
_HELP = {
    "commit": "commits made by memgit's writer",
    "commit_failed": "writer commits that failed and went to the pending queue",
    "pending_retry_failed": "retries of a pending write that failed again",
    "push_accepted": "pushes accepted by pre-receive",
    "push_refused": "pushes refused by pre-receive",
    "dream_applied": "nightly consolidations applied",
    "dream_failed": "nightly consolidations that failed",
    "dream_no_changes": "nightly consolidations with nothing to change",
    "purge": "purges (history rewrites) run",
    "near_limit": "writes or pushes that left the drive near a limit",
}


def record(git_dir: Path, name: str, n: int = 1) -> bool:
    """Add ``n`` to the counter ``name`` of the drive in ``git_dir``.

    Best effort by design: counting must never make a push or a write fail, so
    a database error is reported on stderr and ``False`` returned.
    """
    try:
        conn = state.connect(Path(git_dir))
    except (state.Error, OSError, MemgitError) as exc:
        print(f"memgit: warning: could not count event {name}: {exc}", file=sys.stderr)
        return False
    try:
        counters.add(conn, name, n)
    except state.Error as exc:
        print(f"memgit: warning: could not count event {name}: {exc}", file=sys.stderr)
        return False
    finally:
        conn.close()
    return True


def counts(git_dir: Path) -> dict[str, int]:
    """Every counter of the drive; the events of docs/spec.md section 3 are always present."""
    with state.opened(Path(git_dir)) as conn:
        return counts_with(conn)


def counts_with(conn: state.Connection) -> dict[str, int]:
    out = dict.fromkeys(EVENTS, 0)
    out.update(counters.read(conn))
    return out


def _label(value: str) -> str:
    """A Prometheus label value: backslash, double quote and newline escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()
                                  and not math.isinf(value)):
        return str(int(value))
    return repr(float(value))


def prometheus(drives: Iterable[tuple[str, Mapping[str, int], Mapping[str, float]]]) -> str:
    """The Prometheus text exposition format (version 0.0.4) for several drives.

    Each drive is ``(label, event counts, gauges)``; gauges are named
    ``memgit_<name>``. The output is suitable for node_exporter's textfile
    collector (one HELP/TYPE block per metric, samples grouped under it).
    """
    rows = list(drives)
    lines = ["# HELP memgit_events_total memgit events per drive (see docs/writer.md).",
             "# TYPE memgit_events_total counter"]
    for label, event_counts, _gauges in rows:
        for name in sorted(event_counts):
            lines.append(f'memgit_events_total{{drive="{_label(label)}",'
                         f'event="{_label(name)}"}} {_number(event_counts[name])}')
    gauge_names = sorted({g for _l, _c, gauges in rows for g in gauges})
    for gauge in gauge_names:
        lines.append(f"# HELP memgit_{gauge} {_GAUGE_HELP.get(gauge, gauge)}")
        lines.append(f"# TYPE memgit_{gauge} gauge")
        for label, _c, gauges in rows:
            if gauge in gauges:
                lines.append(f'memgit_{gauge}{{drive="{_label(label)}"}} '
                             f"{_number(gauges[gauge])}")
    return "\n".join(lines) + "\n"


_GAUGE_HELP = {
    "pending_writes": "acknowledged writes waiting in the pending queue",
    "entries": "indexed entries of the drive",
    "drive_bytes": "sum of blob sizes at the head",
    "files": "files at the head",
    "cap_entries": "entries of topic files, which limits.max_entries counts",
    "max_entries": "limits.max_entries, the drive's cap on entries",
    "over_cap": "1 when the drive is over limits.max_entries or limits.max_age_days",
}
