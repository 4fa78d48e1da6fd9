"""``memgit import apply``: a plan's entries into a drive, as one writer commit.

1. Every ``entry`` item becomes an add operation through the writer's own
   ``prepare_add`` (text, topic, source, added, and the metadata the plan
   kept: the heading trail as ``context``, an AMR entry's open keys and id).
   A source the drive's policy does not allow (today ``imported:<tool>/...``
   is not one of its forms) is written ``imported:unknown`` and the plan's
   provenance goes to an ``origin`` key instead.
2. Entries whose text the drive already has (the index's text digests, as the
   writer compares them) are left out, so applying a plan twice adds nothing,
   and no commit or receipt is made when nothing is new.
3. A receipt ``imports/<date>-<name>.md`` lists the counts and the created ids.
   ``imports/`` is reserved for memgit's own writes; the receipt is written
   the way the questions board writes ``questions.md`` (``allow_reserved``),
   and its lines carry ``memory_type: not_memory`` so recall never returns them.
4. ``writer.apply_write_ops`` commits entries, receipt and the regenerated Index in
   one commit with compare-and-swap, and reindexes.

``dry_run`` stops before step 4 and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from .. import format as fmt
from .. import state
from ..git.repository import Drive, ref_target
from ..policy import Policy, find_policy, source_allowed, text_digest
from ..read_path import catch_up
from ..state import facts
from ..write_ops import NewFact, Skipped, WriteOp, WriteResult, prepare_add, today
from ..writer import apply_write_ops
from .plan import Item, Plan, line_extras

RECEIPT_DIR = "imports/"
IDS_PER_LINE = 8
Progress = Callable[[str], None]


@dataclass
class ApplyResult:
    """What apply did (or, with dry_run, would do)."""

    status: str  # "committed", "queued", "unchanged" or "dry-run"
    commit: str | None = None
    created: list[str] = field(default_factory=list)
    present: int = 0  # entries the drive already had
    skipped: list[dict[str, str]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    receipt: str = ""
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _no_progress(_message: str) -> None:
    return None


def apply_plan(drive: Drive, plan: Plan, *, dry_run: bool = False, policy: Policy | None = None,
               progress: Progress = _no_progress) -> ApplyResult:
    """Apply ``plan`` to ``drive`` (see the module docstring)."""
    policy = policy or find_policy(None, drive.git_dir, drive.config_value("memgit.policy"))
    date = today(policy)
    result = ApplyResult("dry-run" if dry_run else "unchanged", counts=plan.counts())
    items = plan.entries()
    progress(f"preparing {len(items)} entries")
    ops: list[WriteOp] = []
    origin: dict[int, Item] = {}
    for number, item in enumerate(items):
        prepared = _prepare(item, number, plan, policy, date)
        if isinstance(prepared, Skipped):
            result.skipped.append({"item": item.where, "reason": prepared.reason,
                                   "detail": prepared.detail})
            continue
        ops.append(prepared)
        origin[number] = item
    new_ops = _not_in_drive(drive, ops, policy)
    result.present = len(ops) - len(new_ops)
    if not new_ops:
        return result
    receipt_ops = _receipt(plan, new_ops, result, policy, date)
    result.receipt = receipt_ops[0].path if receipt_ops else ""
    if dry_run:
        result.created = [op.id for op in new_ops]
        return result
    progress(f"committing {len(new_ops)} entries")
    message = f"Import {plan.tool} {plan.name}: {len(new_ops)} entries"
    written = apply_write_ops(drive, new_ops + receipt_ops, message, policy=policy)
    return _report(result, written, new_ops, origin)


def _prepare(item: Item, number: int, plan: Plan, policy: Policy, date: str) -> WriteOp | Skipped:
    source = item.source
    extras = line_extras(item)
    if not source_allowed(source):
        extras.append(("origin", _value(f"{plan.tool}/{item.path}#L{item.line}")))
        source = "imported:unknown"
    own_id = item.meta.get("id", "")
    prepared = prepare_add(NewFact(item.text, source, item.topic), number, policy,
                           item.added or date, extra=extras)
    if isinstance(prepared, Skipped) or not own_id:
        return prepared
    entry = fmt.parse_entry(prepared.line)
    if entry is None:
        return prepared
    line = entry.with_meta("id", own_id).serialise()
    return WriteOp("add", own_id, path=prepared.path, line=line, ref=number)


def _value(text: str) -> str:
    table = str.maketrans({";": "%3B", "[": "%5B", "]": "%5D"})
    return "".join(text.translate(table).split()) or "unknown"


def _not_in_drive(drive: Drive, ops: list[WriteOp], policy: Policy) -> list[WriteOp]:
    """The operations whose text (and id) the drive does not have yet, each text once."""
    if ref_target(drive, policy.branch_ref) is None:
        return ops  # the writer names the missing branch
    conn = state.connection(drive.git_dir)
    catch_up(drive, policy=policy, conn=conn)
    digests = {op.id: text_digest(fmt.parse_entry(op.line).text)  # type: ignore[union-attr]
               for op in ops}
    present = facts.present_digests(conn, digests.values())
    located = facts.locate(conn, [op.id for op in ops])
    out: list[WriteOp] = []
    seen: set[str] = set()
    for op in ops:
        digest = digests[op.id]
        if digest in present or op.id in located or digest in seen:
            continue
        seen.add(digest)
        out.append(op)
    return out


def _receipt(plan: Plan, ops: list[WriteOp], result: ApplyResult, policy: Policy,
             date: str) -> list[WriteOp]:
    """The receipt's lines: one of counts, then the created ids, IDS_PER_LINE a line."""
    path = f"{RECEIPT_DIR}{date}-{plan.name}.md"
    counts = result.counts
    texts = [f"Import of {plan.tool} memory {plan.name}: {len(ops)} entries created, "
             f"{result.present} already in the drive, {counts.get('duplicate', 0)} repeated in "
             f"the source, {counts.get('refused', 0)} refused, {counts.get('verbatim', 0)} "
             f"left out as verbatim, {counts.get('structure', 0)} structure"]
    ids = [op.id for op in ops]
    for start in range(0, len(ids), IDS_PER_LINE):
        texts.append("Created " + ", ".join(ids[start:start + IDS_PER_LINE]))
    out: list[WriteOp] = []
    for number, text in enumerate(texts):
        prepared = prepare_add(NewFact(text, "imported:unknown", path), 100000 + number, policy,
                               date, allow_reserved=True, dedupe=False,
                               extra=(("memory_type", "not_memory"),))
        if isinstance(prepared, WriteOp):
            out.append(prepared)
        else:
            result.warnings.append(f"receipt line {number + 1} not written: {prepared.detail}")
    return out


def _report(result: ApplyResult, written: WriteResult, ops: list[WriteOp],
            origin: dict[int, Item]) -> ApplyResult:
    result.status = written.status
    result.commit = written.commit
    wanted = {op.id for op in ops}
    result.created = [a.id for a in written.added if a.id in wanted]
    result.warnings.extend(written.warnings)
    for skipped in written.skipped:
        item = origin.get(skipped.ref)
        result.skipped.append({"item": item.where if item else "receipt",
                               "reason": skipped.reason, "detail": skipped.detail})
    missing = wanted - set(result.created)
    if missing and written.status == "committed":
        result.warnings.append(f"the receipt lists {len(missing)} id(s) the writer skipped "
                               "(see skipped)")
    return result
