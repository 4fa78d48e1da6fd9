"""memgit compact: remove the entries that exceed the drive's caps, as one writer commit.

The order of removal is docs/shared.md's ("Caps and compaction"); an entry recall returned
in the last :data:`RECENT_DAYS` days is never removed. The commit is judged like every
write and undone with ``git revert``. Retrievals are counted where recall runs, so compact
where the agents recall, not on a server.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import asdict, dataclass, field
from typing import Any

from memgit import state
from memgit.git.repository import Drive
from memgit.policy.judge import counts_toward_caps
from memgit.policy.settings import Policy
from memgit.recall.read_path import catch_up
from memgit.state import facts
from memgit.write.ops import WriteResult
from memgit.write.writer import commit_facts

RECENT_DAYS = 30


@dataclass(frozen=True)
class Removal:
    entry_id: str
    path: str
    added: str
    retrievals: int
    reason: str  # "age" or "count"


@dataclass
class CompactPlan:
    entries: int  # entries counted toward the caps before compaction
    max_entries: int
    max_age_days: int
    removals: list[Removal] = field(default_factory=list)
    protected: int = 0  # entries over a cap kept because recall returned them recently
    result: WriteResult | None = None

    @property
    def after(self) -> int:
        return self.entries - len(self.removals)

    def as_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k != "result"}
        out["after"] = self.after
        if self.result is not None:
            out["commit"] = self.result.commit
            out["status"] = self.result.status
        return out


def plan_compaction(drive: Drive, policy: Policy, *,
                    now: _dt.datetime | None = None) -> CompactPlan:
    """What :func:`compact` would remove now (nothing is written)."""
    now = now or _dt.datetime.now(_dt.UTC)
    conn = state.connection(drive.git_dir)
    catch_up(drive, policy=policy, conn=conn)
    rows = [r for r in facts.cap_rows(conn) if counts_toward_caps(r.path)]
    plan = CompactPlan(len(rows), policy.max_entries, policy.max_age_days)
    recent = (now - _dt.timedelta(days=RECENT_DAYS)).strftime("%Y-%m-%dT%H:%M:%S")
    kept = {r.entry_id for r in rows if r.last_retrieved and r.last_retrieved >= recent}
    removed: set[str] = set()
    if policy.max_age_days:
        oldest_allowed = (now.date() - _dt.timedelta(days=policy.max_age_days)).isoformat()
        for r in rows:
            if r.added and r.added < oldest_allowed:
                if r.entry_id in kept:
                    plan.protected += 1
                    continue
                plan.removals.append(Removal(r.entry_id, r.path, r.added, r.retrievals, "age"))
                removed.add(r.entry_id)
    excess = len(rows) - len(removed) - policy.max_entries if policy.max_entries else 0
    if excess > 0:
        pool = sorted((r for r in rows if r.entry_id not in removed),
                      key=lambda r: (r.retrievals > 0, r.added or r.valid_from[:10], r.entry_id))
        for r in pool:
            if excess <= 0:
                break
            if r.entry_id in kept:
                continue
            plan.removals.append(Removal(r.entry_id, r.path, r.added, r.retrievals, "count"))
            excess -= 1
        plan.protected += max(excess, 0)
    return plan


def compact(drive: Drive, policy: Policy, *, dry_run: bool = False,
            now: _dt.datetime | None = None) -> CompactPlan:
    """Plan, and unless ``dry_run`` apply the removals as one writer commit."""
    plan = plan_compaction(drive, policy, now=now)
    if dry_run or not plan.removals:
        return plan
    ids = [r.entry_id for r in plan.removals]
    plan.result = commit_facts(drive, [], ids, f"Compact: {len(ids)} entries over the caps",
                               policy=policy)
    return plan
