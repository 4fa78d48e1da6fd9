"""``memgit maintain``: housekeeping that needs no model, as a list of steps.

Each step is a function ``(drive, policy, now) -> StepReport`` saying in one line
what it did, with its figures for ``--json``; :data:`STEPS` lists them in the order
they run. Adding housekeeping (git maintenance, SQLite optimize and VACUUM, old
events, stuck pending writes) is one function and one row of :data:`STEPS`. A step
that fails with a memgit, database or file-system error is reported as failed and
the steps after it still run.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import state
from .dream.config import of as dream_settings
from .dream.observations import apply_retention
from .errors import MemgitError, UsageError
from .git.repository import Drive
from .policy import Policy


@dataclass(frozen=True)
class StepReport:
    """What one step did: ``did`` is one line for people, ``figures`` its numbers."""

    step: str
    did: str
    figures: dict[str, Any] = field(default_factory=dict)
    ok: bool = True

    def as_dict(self) -> dict[str, Any]:
        return {"step": self.step, "ok": self.ok, "did": self.did, **self.figures}


Step = Callable[[Drive, Policy, _dt.datetime], StepReport]


def observation_retention(drive: Drive, policy: Policy, now: _dt.datetime) -> StepReport:
    """Delete observed turns older than ``dream.observations_days`` (memgit observe)."""
    days = dream_settings(policy).observations_days
    deleted = apply_retention(drive, days, now)
    return StepReport("observations", f"deleted {deleted} turn(s) older than {days} day(s)",
                      {"observations_deleted": deleted, "observations_days": days})


# (name, step) in the order they run; `memgit maintain --step NAME` runs some of them.
STEPS: list[tuple[str, Step]] = [
    ("observations", observation_retention),
]


def maintain(drive: Drive, policy: Policy, *, only: Sequence[str] = (),
             now: _dt.datetime | None = None) -> list[StepReport]:
    """Run the steps (all, or those named in ``only``, in :data:`STEPS` order)."""
    known = [name for name, _step in STEPS]
    unknown = sorted(set(only) - set(known))
    if unknown:
        raise UsageError(f"unknown maintenance step(s): {', '.join(unknown)}",
                         f"the steps are: {', '.join(known)}")
    now = now or _dt.datetime.now(_dt.UTC)
    reports = []
    for name, step in STEPS:
        if only and name not in only:
            continue
        try:
            reports.append(step(drive, policy, now))
        except (MemgitError, state.Error, OSError) as exc:
            message = exc.message if isinstance(exc, MemgitError) else \
                f"{type(exc).__name__}: {exc}"
            reports.append(StepReport(name, f"failed: {message}", ok=False))
    return reports
