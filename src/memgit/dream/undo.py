"""memgit dream undo YYYY-MM-DD: take back one night, as a new commit.

The night is the newest ``Dream YYYY-MM-DD`` commit on the first-parent line that no
``Undo dream`` commit names; its change is replayed backwards onto the head. With nothing
written since, the result is exactly the tree before the dream; when a line the night
touched was changed since, undo refuses and lists those entries.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memgit import state
from memgit.dream.run import dream_commits
from memgit.errors import UndoRefusedError, UsageError
from memgit.format.entries import is_valid_date
from memgit.git.repository import Drive, commit_info, commit_tree_id, ref_target, tree_texts
from memgit.policy.settings import Policy
from memgit.state import dream as runs
from memgit.sync import replay
from memgit.write.ops import WriteResult
from memgit.write.writer import restore_files

DEPTH = 5000
ATTEMPTS = 3


@dataclass
class Undone:
    day: str
    dream_commit: str
    commit: str
    files: list[str] = field(default_factory=list)
    result: WriteResult | None = None

    def as_dict(self) -> dict[str, object]:
        return {"day": self.day, "dream_commit": self.dream_commit, "commit": self.commit,
                "files": self.files}


def find_night(drive: Drive, policy: Policy, day: str) -> str:
    """The commit of that night's dream not undone yet."""
    undone: set[str] = set()
    for oid, subject in dream_commits(drive, policy, DEPTH):
        if subject.startswith(f"Undo dream {day} "):
            undone.add(subject.rsplit("(", 1)[-1].rstrip(")"))
        elif subject == f"Dream {day}" and not any(oid.startswith(u) for u in undone if u):
            return oid
    raise UsageError(f"no dream of {day} to undo on {policy.branch_ref}",
                     "memgit dream status lists the nights; each night is undone once")


def _changes(before: dict[str, str], after: dict[str, str]) -> dict[str, str | None]:
    out: dict[str, str | None] = {p: t for p, t in after.items() if before.get(p) != t}
    out.update({p: None for p in before if p not in after})
    return out


def undo(drive: Drive, policy: Policy, day: str) -> Undone:
    if not is_valid_date(day):
        raise UsageError(f"{day!r} is not a date", "write the night as YYYY-MM-DD")
    night = find_night(drive, policy, day)
    info = commit_info(drive, night)
    if not info.parents:
        raise UsageError(f"the dream commit {night[:12]} has no parent", "")
    dreamed = tree_texts(drive, info.tree)
    before = tree_texts(drive, commit_tree_id(drive, info.parents[0]))
    ops = replay.compute_ops(dreamed, before)
    for _ in range(ATTEMPTS):
        head = ref_target(drive, policy.branch_ref)
        assert head is not None
        current = tree_texts(drive, commit_tree_id(drive, head))
        applied = replay.apply_replay_ops(current, ops, on_conflict="server")
        if applied.conflicts:
            lines = sorted({f"{c.key} in {c.path} ({c.kind})" for c in applied.conflicts})
            files = sorted({c.path for c in applied.conflicts})
            raise UndoRefusedError(
                f"cannot undo the dream of {day}: lines it touched were changed since: "
                + "; ".join(lines) + f" (files: {', '.join(files)})",
                "undo those changes first, or edit the entries by hand (memgit edit, "
                "memgit forget)")
        changes = _changes(current, applied.tree)
        if not changes:
            raise UsageError(f"the dream of {day} left nothing to undo", "")
        result = restore_files(drive, head, changes,
                                      f"Undo dream {day} ({night[:12]})", policy=policy)
        if result.status in ("committed", "queued"):
            _mark(drive, night)
            return Undone(day, night, result.commit or "", sorted(changes), result)
        if not any(s.reason == "changed" for s in result.skipped):
            detail = "; ".join(f"{s.reason} ({s.detail})" for s in result.skipped)
            raise UndoRefusedError(f"the writer refused the undo of {day}: {detail}",
                                   "fix what it names, then undo again")
    raise UndoRefusedError(f"the drive kept changing while undoing the dream of {day}",
                           "run memgit dream undo again")


def _mark(drive: Drive, night: str) -> None:
    runs.mark_undone(state.connection(drive.git_dir), night)
