"""A whole dream: when it is due, the lease, the proposer, the checks, the commit.

``dream()`` never leaves the drive half changed: everything before the one writer commit
only reads, and that commit is a compare-and-swap of the branch. A killed run leaves its
lease, which the next run takes over (state.dream); with ``--due`` it first looks for a
``Dream YYYY-MM-DD`` commit the killed run made without recording it, so a night is never
dreamed twice. Failures are recorded and counted (``dream_failed``); with ``--due`` a
night is tried at most state.dream.MAX_ATTEMPTS times.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memgit import state
from memgit.dream import apply, checks, snapshot
from memgit.dream.observations import apply_retention
from memgit.dream.rule_based import RuleProposer
from memgit.errors import DreamFailedError, MemgitError
from memgit.git.plumbing import git_plumbing
from memgit.git.repository import Drive, ref_target
from memgit.policy.dream_settings import DreamConfig, in_window
from memgit.policy.settings import Policy
from memgit.recall.read_path import catch_up
from memgit.state import dream as runs

Progress = Callable[[str], None]


@dataclass
class Outcome:
    """What a run did: ``status`` applied, queued, no_changes, failed, skipped or dry_run."""

    status: str
    day: str
    reason: str = ""
    commit: str = ""
    diff: str = ""
    run_id: int | None = None
    report: dict[str, Any] = field(default_factory=dict)
    error: MemgitError | None = None  # a failed run: what failed it (its code and hint)

    def as_dict(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"status": self.status, "day": self.day, "reason": self.reason,
                                 "commit": self.commit, "run_id": self.run_id,
                                 "diff": self.diff, "report": self.report}
        if self.error is not None:
            shown["code"], shown["hint"] = self.error.code, self.error.hint
        return shown


def proposer_for(config: DreamConfig, *, no_model: bool, base_url: str | None,
                 model_name: str | None) -> Any:
    """The rule-based proposer, or the configured model plugin (with overrides)."""
    if no_model:
        return RuleProposer(prune=config.prune)
    model = config.model or ("openai" if base_url else "")
    if not model:
        return RuleProposer(prune=config.prune)
    from memgit import plugins

    settings = config.plugin_settings()
    if base_url:
        settings["base_url"] = base_url
    if model_name:
        settings["model_name"] = model_name
    return plugins.load("model", model, settings)


def proposer_label(proposer: Any) -> str:
    name = str(getattr(proposer, "name", type(proposer).__name__))
    model = getattr(proposer, "model_name", "")
    return f"{name}:{model}" if model else name


def _quiet(_message: str) -> None:
    pass


def dream(drive: Drive, policy: Policy, config: DreamConfig, *, due: bool = False,
          dry_run: bool = False, no_model: bool = False, base_url: str | None = None,
          model_name: str | None = None, now: _dt.datetime | None = None,
          progress: Progress = _quiet) -> Outcome:
    """Run one dream (see the module docstring and docs/dream.md)."""
    now = now or _dt.datetime.now(_dt.UTC)
    local = snapshot.local_now(policy, now)
    day = local.date().isoformat()
    if due and not in_window(config.window, local.hour * 60 + local.minute):
        start, end = config.window
        return Outcome("skipped", day, f"outside the dream window {start // 60:02}:"
                       f"{start % 60:02}-{end // 60:02}:{end % 60:02} ({policy.timezone}; "
                       f"it is {local:%H:%M})")
    proposer = proposer_for(config, no_model=no_model, base_url=base_url,
                            model_name=model_name)
    if dry_run:
        return _dream(drive, policy, config, proposer, day, now, None, progress)
    conn = state.connection(drive.git_dir)
    lease = runs.take_lease(conn, day, "due" if due else "manual", now, due=due)
    if isinstance(lease, runs.Busy):
        return Outcome("skipped", day, lease.reason)
    try:
        if due:
            found = unrecorded_dream(drive, policy, day, runs.recorded_commits(conn, day))
            if found:
                runs.finish(conn, lease, "applied", commit=found,
                             report={"day": day, "recovered": True})
                return Outcome("applied", day, "recovered the commit of an interrupted run",
                               commit=found, run_id=lease.run_id)
        apply_retention(drive, config.observations_days, now)
        catch_up(drive, policy=policy, conn=conn)
        outcome = _dream(drive, policy, config, proposer, day, now, lease, progress)
    except MemgitError as exc:
        runs.finish(conn, lease, "failed", proposer=proposer_label(proposer),
                    error=exc.message)
        return Outcome("failed", day, exc.message, run_id=lease.run_id, error=exc)
    except BaseException as exc:
        if isinstance(exc, Exception):
            runs.finish(conn, lease, "failed", proposer=proposer_label(proposer),
                        error=f"internal error: {type(exc).__name__}")
        raise
    outcome.run_id = lease.run_id
    return outcome


def _ask(proposer: Any, snap: snapshot.Snapshot, progress: Progress) -> Any:
    label = proposer_label(proposer)
    progress(f"dream: asking {label} about {len(snap.entries)} entries and "
             f"{len(snap.turns)} turns ...")
    try:
        return proposer.propose(snap.as_mapping())
    except MemgitError:
        raise
    except Exception as exc:  # noqa: BLE001 - a third-party plugin's failure fails the run
        raise DreamFailedError(f"the model plugin {label} failed: {type(exc).__name__}: "
                               f"{checks.shown(exc)}", "the drive was not changed") from exc


def _dream(drive: Drive, policy: Policy, config: DreamConfig, proposer: Any, day: str,
           now: _dt.datetime, lease: runs.Lease | None, progress: Progress) -> Outcome:
    from memgit.policy.registry import PurgeRegistry

    snap = snapshot.take(drive, policy, now=now)
    proposal = _ask(proposer, snap, progress)
    why = checks.usable(proposal)
    if why is not None:
        raise DreamFailedError(f"unusable answer from {proposer_label(proposer)}: {why}",
                               "the drive was not changed; see docs/dream.md for the format")
    checked = checks.check(proposal, snap, policy, prune=config.prune,
                           registry=PurgeRegistry.load(drive.git_dir))
    planned = apply.plan(drive, snap, checked, policy)
    report = apply.report(planned, snap, checked, proposer_label(proposer))
    if lease is None:
        return Outcome("dry_run", day, diff=apply.unified_diff(planned.preview.changes),
                       report=report)
    conn = state.connection(drive.git_dir)
    if not planned.preview.changes:
        runs.finish(conn, lease, "no_changes", proposer=report["proposer"], report=report)
        return Outcome("no_changes", day, report=report)
    progress("dream: committing ...")
    result = apply.commit(drive, planned, day, policy)
    report["writer"] = {"status": result.status, "skipped": [
        {"ref": s.ref, "id": s.id, "reason": s.reason, "detail": s.detail}
        for s in result.skipped], "error": result.error}
    status = {"committed": "applied", "queued": "queued"}.get(result.status, "no_changes")
    report["commit"] = result.commit or ""
    runs.finish(conn, lease, status, proposer=report["proposer"], commit=result.commit or "",
                 report=report)
    return Outcome(status, day, result.error, commit=result.commit or "", report=report)


def unrecorded_dream(drive: Drive, policy: Policy, day: str, recorded: set[str],
                     depth: int = 200) -> str:
    """A ``Dream DAY`` commit among the branch's last ``depth`` first-parent commits
    that no run recorded (a run killed between its commit and its record), or ""."""
    for oid, subject in dream_commits(drive, policy, depth):
        if subject == f"Dream {day}" and oid not in recorded:
            return oid
    return ""


def dream_commits(drive: Drive, policy: Policy, depth: int) -> list[tuple[str, str]]:
    """(commit, subject) of the branch's last ``depth`` first-parent commits whose
    subject starts with "Dream " or "Undo dream ", newest first."""
    head = ref_target(drive, policy.branch_ref)
    if head is None:
        return []
    proc = git_plumbing(drive.git_dir, "log", "--first-parent", f"-n{depth}",
                        "--format=%H %s", head)
    out = []
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        oid, _, subject = line.partition(" ")
        if subject.startswith(("Dream ", "Undo dream ")):
            out.append((oid, subject))
    return out


def status(drive: Drive, limit: int = 10) -> list[runs.Run]:
    return runs.runs(state.connection(drive.git_dir), limit=limit)
