"""Accepted suggestions -> one writer commit ``Dream YYYY-MM-DD``, its diff, the report.

A suggestion's operations are planned with the writer's own judgement first, and one any
of whose operations the writer would skip is rejected whole: no suggestion is ever half
applied. The same operations are then committed as one commit.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memgit.dream.checks import Checked, Rejection, Suggestion
from memgit.dream.snapshot import Snapshot
from memgit.git.repository import Drive
from memgit.policy.settings import Policy
from memgit.write.ops import NewFact, WriteOp, WriteResult, prepare_facts
from memgit.write.plan import Preview, preview_write_ops
from memgit.write.propose import Actor, route
from memgit.write.writer import apply_write_ops

MAX_PLANS = 5
DREAM_AGENT = "dream"  # the dream's name in autonomy rules (agent: dream)


@dataclass
class Planned:
    ops: list[WriteOp]
    owners: dict[int, int]  # op ref -> index into accepted
    accepted: list[Suggestion]
    rejected: list[Rejection]
    preview: Preview
    new_ids: dict[int, str] = field(default_factory=dict)  # accepted index -> lesson's id


def _inputs(accepted: list[Suggestion], snap: Snapshot) -> tuple[
        list[NewFact], list[str], dict[str, str], dict[int, int]]:
    adds: list[NewFact] = []
    retire: list[str] = []
    edits: dict[str, str] = {}
    add_owner: list[int] = []
    retire_owner: list[int] = []
    edit_owner: list[int] = []
    for n, s in enumerate(accepted):
        if s.kind == "lesson":
            adds.append(NewFact(s.text, f"memgit:observation/{s.turns[0]}", s.topic))
            add_owner.append(n)
            continue
        for entry_id in s.retired:
            retire.append(entry_id)
            retire_owner.append(n)
        if s.keep and s.text and s.text != snap.by_id[s.keep].text:
            edits[s.keep] = s.text
            edit_owner.append(n)
    owners = dict(enumerate(add_owner + retire_owner + edit_owner))
    return adds, retire, edits, owners


def _actor(accepted: list[Suggestion], owners: dict[int, int]) -> Actor:
    """The dream as the autonomy rules see it: agent ``dream``, a merge's or a prune's
    operations named so (a contradiction's edit stays an edit)."""
    actions = {ref: accepted[n].kind for ref, n in owners.items()
               if accepted[n].kind in ("merge", "prune")}
    return Actor(agent=DREAM_AGENT, why="memgit dream", actions=actions)


def plan(drive: Drive, snap: Snapshot, checked: Checked, policy: Policy) -> Planned:
    """Prepare and preview the operations; drop suggestions the writer would skip."""
    accepted = list(checked.accepted)
    rejected = list(checked.rejected)
    for _ in range(MAX_PLANS):
        adds, retire, edits, owners = _inputs(accepted, snap)
        ops, skipped = prepare_facts(adds, retire, edits=edits, policy=policy)
        routed = route(drive, ops, policy, _actor(accepted, owners))
        ops = routed.ops
        preview = preview_write_ops(drive, ops, policy=policy)
        skipped = skipped + routed.skipped + preview.result.skipped
        bad = {owners[s.ref]: s for s in skipped if s.ref in owners}
        if not bad:
            new_ids = {owners[op.ref]: op.id for op in ops if op.kind == "add"}
            return Planned(ops, owners, accepted, rejected, preview, new_ids)
        for n, s in sorted(bad.items()):
            sugg = accepted[n]
            rejected.append(Rejection(sugg.kind, sugg.index, "writer",
                                      f"the writer would skip it: {s.reason} ({s.detail})",
                                      tuple(sugg.ids), sugg.text))
        accepted = [s for n, s in enumerate(accepted) if n not in bad]
    raise RuntimeError("the writer kept skipping suggestions")  # pragma: no cover


def unified_diff(changes: Mapping[str, tuple[str | None, str | None]]) -> str:
    """The diff of a commit, ``git diff`` style (a/ and b/ paths, /dev/null)."""
    out: list[str] = []
    for path in sorted(changes):
        old, new = changes[path]
        lines = difflib.unified_diff(
            (old or "").splitlines(keepends=True), (new or "").splitlines(keepends=True),
            fromfile=f"a/{path}" if old is not None else "/dev/null",
            tofile=f"b/{path}" if new is not None else "/dev/null")
        for line in lines:
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of "
                       "file\n")
    return "".join(out)


def touched(planned: Planned, snap: Snapshot) -> list[dict[str, Any]]:
    """Per applied suggestion: before and after text of each entry it touches."""
    out = []
    for n, s in enumerate(planned.accepted):
        changes = []
        for entry_id in s.ids:
            entry = snap.by_id[entry_id]
            after = (s.text or entry.text) if entry_id == s.keep else None
            changes.append({"id": entry_id, "path": entry.path, "before": entry.text,
                            "after": after})
        if s.kind == "lesson":
            changes.append({"id": planned.new_ids.get(n, ""), "path": s.topic, "before": None,
                            "after": s.text})
        item = s.as_dict()
        item["changes"] = changes
        out.append(item)
    return out


def report(planned: Planned, snap: Snapshot, checked: Checked, proposer: str) -> dict[str, Any]:
    counts = {kind: sum(1 for s in planned.accepted if s.kind == kind)
              for kind in ("merge", "contradiction", "lesson", "prune")}
    return {"day": snap.day, "proposer": proposer, "head": snap.head,
            "entries_shown": len(snap.entries), "entries_in_drive": snap.total_entries,
            "turns_shown": len(snap.turns), "counts": counts,
            "applied": touched(planned, snap),
            "rejected": [r.as_dict() for r in planned.rejected],
            "ignored_keys": checked.ignored_keys}


def commit(drive: Drive, planned: Planned, day: str, policy: Policy) -> WriteResult:
    """The one commit of the night (the writer adds counts and ids to the message)."""
    # routed by the autonomy rules in plan() already (as the dream's merges and prunes)
    return apply_write_ops(drive, planned.ops, f"Dream {day}", policy=policy,
                           actor=Actor(review=True))
