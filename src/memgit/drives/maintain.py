"""``memgit maintain``: housekeeping that needs no model, as a list of steps (:data:`STEPS`).

A step is ``(drive, policy, now) -> StepReport``; one that fails with a memgit, database
or file-system error is reported as failed and the steps after it still run.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memgit import state
from memgit.dream.observations import apply_retention
from memgit.errors import MemgitError, RepoError, UsageError
from memgit.git.plumbing import git_plumbing
from memgit.git.repository import Drive
from memgit.policy.registry import PURGE_LOCK_FILE
from memgit.policy.settings import Policy
from memgit.state import dream as dream_runs
from memgit.state import facts, pending
from memgit.sync.mounts import mount_names, mounts_dir
from memgit.write.writer import retry_pending

RUNS_DAYS = 90  # dream run records kept (their reports hold entry texts)
RETIRED_DAYS = 90  # recall-index rows of entries that left the drive
VACUUM_SHARE = 0.25  # free pages above this share of the state database: VACUUM
GC_LOOSE = 256  # loose objects from which git gc is worth running
GC_PACKS = 8  # packs from which git gc is worth running


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
    days = policy.dream().observations_days
    deleted = apply_retention(drive, days, now)
    return StepReport("observations", f"deleted {deleted} turn(s) older than {days} day(s)",
                      {"observations_deleted": deleted, "observations_days": days})


def pending_queue(drive: Drive, policy: Policy, now: _dt.datetime) -> StepReport:
    """Retry the pending writes (waiting up to 5 s for a writer): a write that landed, or
    had landed before a crash, leaves the queue; one still refused stays, visible."""
    conn = state.connection(drive.git_dir)
    before = pending.count(conn)
    left = retry_pending(drive, policy=policy) if before else 0
    return StepReport("pending", f"retried {before} queued write(s): {before - left} done, "
                      f"{left} still pending", {"pending_before": before, "pending_left": left})


def dream_run_retention(drive: Drive, policy: Policy, now: _dt.datetime) -> StepReport:
    """Delete the records of dream runs that finished more than RUNS_DAYS days ago."""
    deleted = dream_runs.delete_finished_before(state.connection(drive.git_dir),
                                                now - _dt.timedelta(days=RUNS_DAYS))
    return StepReport("dream_runs", f"deleted {deleted} dream run record(s) older than "
                      f"{RUNS_DAYS} days", {"dream_runs_deleted": deleted})


def retired_rows(drive: Drive, policy: Policy, now: _dt.datetime) -> StepReport:
    """Delete the recall index's rows of entries that left the drive RETIRED_DAYS ago."""
    cutoff = state.stamp(now - _dt.timedelta(days=RETIRED_DAYS))
    deleted = facts.delete_retired_before(state.connection(drive.git_dir), cutoff)
    return StepReport("retired", f"deleted {deleted} recall-index row(s) of entries retired "
                      f"more than {RETIRED_DAYS} days ago", {"retired_rows_deleted": deleted})


def rejected_entries(drive: Drive, policy: Policy, now: _dt.datetime) -> StepReport:
    """Remove the rejected proposals kept longer than ``review.keep_rejected_days`` (one
    commit; the drive's day in its time zone)."""
    import zoneinfo

    from memgit.review.proposals import expire

    day = now.astimezone(zoneinfo.ZoneInfo(policy.timezone)).date()
    gone, result = expire(drive, policy, day)
    commit = f" in {result.commit[:12]}" if result is not None and result.commit else ""
    return StepReport("rejected", f"removed {len(gone)} rejected entr"
                      f"{'y' if len(gone) == 1 else 'ies'}{commit}",
                      {"rejected_removed": len(gone)})


def sqlite_upkeep(drive: Drive, policy: Policy, now: _dt.datetime) -> StepReport:
    """PRAGMA optimize, VACUUM when VACUUM_SHARE of the file is free pages, WAL truncated."""
    done = state.upkeep(state.connection(drive.git_dir), vacuum_share=VACUUM_SHARE)
    what = "optimized and vacuumed" if done["vacuumed"] else \
        f"optimized ({done['free_pages']} free pages: no VACUUM needed)"
    return StepReport("sqlite", f"{what}; {done['bytes_before']} -> {done['bytes_after']} "
                      "bytes", {f"sqlite_{k}": v for k, v in done.items()})


def git_upkeep(drive: Drive, policy: Policy, now: _dt.datetime) -> StepReport:
    """``git gc`` of the drive and of each mount when worthwhile (GC_LOOSE loose objects or
    GC_PACKS packs). ``--prune=2.weeks.ago``, never ``now``: a push's objects that git has
    moved out of its quarantine but not yet referenced are younger than that. Skipped
    while a purge holds its lock (it repacks and prunes itself)."""
    if (drive.git_dir / PURGE_LOCK_FILE).exists():
        return StepReport("git", "skipped: a purge is running", {"git_gc": 0})
    repos = [drive.git_dir] + [mounts_dir(drive) / f"{n}.git" for n in mount_names(drive)]
    collected = 0
    loose = packs = 0
    for git_dir in repos:
        counts = _object_counts(git_dir)
        loose += counts.get("count", 0)
        packs += counts.get("packs", 0)
        if counts.get("count", 0) >= GC_LOOSE or counts.get("packs", 0) >= GC_PACKS:
            proc = git_plumbing(git_dir, "gc", "--quiet", "--prune=2.weeks.ago")
            if proc.returncode != 0:
                raise RepoError(f"git gc in {git_dir} failed: "
                                f"{proc.stderr.decode(errors='replace').strip()}", "")
            collected += 1
    ran = f"git gc ran in {collected} of them" if collected else "no git gc needed"
    return StepReport("git", f"{loose} loose objects, {packs} packs in {len(repos)} "
                      f"repositor{'y' if len(repos) == 1 else 'ies'}; {ran}",
                      {"git_loose_objects": loose, "git_packs": packs, "git_gc": collected})


def _object_counts(git_dir: Path) -> dict[str, int]:
    proc = git_plumbing(git_dir, "count-objects", "-v")
    out: dict[str, int] = {}
    for line in proc.stdout.decode().splitlines():
        key, _colon, value = line.partition(": ")
        if value.strip().isdigit():
            out[key.strip()] = int(value)
    return out


# (name, step) in the order they run; `memgit maintain --step NAME` runs some of them.
STEPS: list[tuple[str, Step]] = [
    ("observations", observation_retention),
    ("pending", pending_queue),
    ("dream_runs", dream_run_retention),
    ("retired", retired_rows),
    ("rejected", rejected_entries),
    ("sqlite", sqlite_upkeep),
    ("git", git_upkeep),
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
