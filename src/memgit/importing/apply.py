"""``memgit import apply``: a plan's entries into a drive, as one writer commit with a receipt.

Apply judges the plan's items again with the plan's own judgement (verdict.judge, now
committing through the writer, with the receipt in the same commit): on the drive the plan
was judged against, unchanged since, it creates exactly the plan's entries; items whose
verdict changed since are listed in ``changed``. Applying twice adds nothing (the writer's
duplicate check). ``dry_run`` judges the same operations and changes nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from memgit.git.repository import Drive
from memgit.importing.items import PRESENT, Item, Plan
from memgit.importing.markdown import ENTRY, REFUSED
from memgit.importing.verdict import judge
from memgit.policy.settings import Policy, drive_policy

Progress = Callable[[str, int, int], None]


@dataclass
class ApplyResult:
    """What apply did (or, with dry_run, would do)."""

    status: str  # "committed", "queued", "unchanged" or "dry-run"
    commit: str | None = None
    created: list[str] = field(default_factory=list)
    proposed: list[str] = field(default_factory=list)  # created as proposals (autonomy rules)
    present: int = 0  # entries the drive already had
    skipped: list[dict[str, str]] = field(default_factory=list)  # refused at apply time
    counts: dict[str, int] = field(default_factory=dict)
    kept: list[str] = field(default_factory=list)  # reference files of verbatim blocks
    left_out: list[dict[str, str]] = field(default_factory=list)  # verbatim items not kept
    receipt: str = ""
    warnings: list[str] = field(default_factory=list)
    changed: list[dict[str, str]] = field(default_factory=list)  # verdicts unlike the plan's
    plan: Plan | None = None  # the plan as apply judged it

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("plan")
        return out


def apply_plan(drive: Drive, plan: Plan, *, dry_run: bool = False, policy: Policy | None = None,
               progress: Progress | None = None) -> ApplyResult:
    """Apply ``plan`` to ``drive`` (see the module docstring); ``plan`` is not changed."""
    policy = policy or drive_policy(drive)
    current = dataclasses.replace(  # the items judged anew; plan keeps what it said
        plan, items=[dataclasses.replace(i, meta=dict(i.meta)) for i in plan.items],
        overflow=[], left_out=[])
    message = f"Import {plan.tool} memory {plan.name}"
    judged = judge(current, drive, policy, write=not dry_run, message=message,
                   progress=progress)
    written = judged.result
    current.overflow, current.left_out = judged.overflow, judged.left_out
    result = ApplyResult("dry-run" if dry_run else written.status, commit=written.commit,
                         counts=current.counts(), kept=judged.kept, left_out=judged.left_out,
                         receipt=judged.receipt, warnings=list(written.warnings), plan=current)
    result.created = [a.id for a in written.added]
    result.proposed = list(written.proposed)
    result.present = sum(1 for i in current.items
                         if i.action == PRESENT and not i.duplicate_of)
    if written.status == "unchanged" and not dry_run:
        result.kept = []  # a file written again as it was is no change
    result.changed = changed_verdicts(plan, current)
    was = {id(new): old for old, new in zip(plan.items, current.items, strict=True)}
    result.skipped = [{"item": i.where, "reason": i.reason.split(":", 1)[0], "detail": i.reason}
                      for i in current.items if _refused_now(was[id(i)], i)]
    return result


def _refused_now(old: Item, new: Item) -> bool:
    return new.action == REFUSED and old.action in (ENTRY, PRESENT)


def changed_verdicts(before: Plan, after: Plan) -> list[dict[str, str]]:
    """The items whose verdict (action, or file for an entry) differs between two
    judgements of the same plan, in item order."""
    out = []
    for old, new in zip(before.items, after.items, strict=True):
        was, now = _verdict(old), _verdict(new)
        if was != now:
            out.append({"item": old.where, "was": was, "now": now, "reason": new.reason})
    return out


def _verdict(item: Item) -> str:
    if item.action in (ENTRY, PRESENT) and item.duplicate_of:
        return "duplicate"
    if item.action == ENTRY:
        return f"entry in {item.topic}"
    return item.action
