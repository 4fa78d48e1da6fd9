"""The one judgement of an import, run by ``import plan`` and by ``import apply``.

:func:`judge` takes a plan's items and a drive and says what becomes of each:

1. **Ids.** Every entry that may be written has its id: the source's own (an AMR
   entry's), else one the plan makes once and keeps, so that apply writes the very
   lines the plan judged and a second apply finds them by id.
2. **Lines.** Each entry becomes the writer's add operation (write_ops.prepare_add):
   its text, source, ``added`` date and metadata, rendered exactly as apply writes
   it. Its line is checked with policy.check_blob before the writer plans (the
   writer's own check, done early so it plans once); a possible credential that only
   the metadata brings (a heading trail, a key) costs the metadata, not the entry.
3. **Files under the limit.** Entries go to their topic file while it stays under
   3/4 of ``limits.file_bytes`` (its size in the drive counted); then to
   ``<topic>-part-2.md``, ``-part-3.md``, ... (layout.py). The Index lists every
   part, as it lists every topic file. Verbatim blocks go to reference files under
   ``imports/`` split the same way (keep.py).
4. **The writer judges.** The operations, the reference files and the receipt go
   through write_plan.plan_and_judge: ``preview_write_ops`` for a plan and for
   ``apply --dry-run``, ``writer.apply_write_ops`` for apply. One implementation:
   the policy on every new line and file (secrets, transcripts, HTML, ...), the
   purge registry, the drive's own entries (duplicates), the file, drive-size and
   file-count limits.
5. **Verdicts.** What the writer did to each operation becomes its item's action:
   added -> ``entry``; same text or id in the drive -> ``present``; refused by a
   secret, transcript or purge rule -> ``refused`` (the text dropped from the plan);
   refused by another rule (raw HTML, say) -> ``verbatim``, kept in a reference file
   (for a plan, judged again with it; at apply time such an item is left out).

A drive that the import would take over its size or file-count limit (MG206, MG207)
refuses the write as a whole. A plan is previewed with those two limits lifted, so it
says what each item becomes even then, and the tree the write would make is checked
against the real limits with policy.check_tree: what it finds is recorded in
``overflow`` with what to do. Apply raises RefusedError with the same advice, and
writes nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memgit import state
from memgit.errors import RefusedError
from memgit.format import entries as fmt
from memgit.git.repository import Drive, commit_tree_id, init_bare, ref_target, tree_files
from memgit.importing.items import PRESENT, Item, Plan, imported_source, line_extras, refuse
from memgit.importing.keep import Receipt, reference_ops
from memgit.importing.layout import Layout, split_name
from memgit.importing.markdown import ENTRY, REFUSED, VERBATIM
from memgit.policy.judge import (
    DANGEROUS_SCHEMES,
    ERROR,
    TreeItem,
    check_blob,
    check_tree,
    quote,
    source_allowed,
    source_scheme,
    text_digest,
)
from memgit.policy.settings import Policy
from memgit.recall.read_path import catch_up
from memgit.state import facts
from memgit.write.ops import NewFact, Skipped, WriteOp, WriteResult, prepare_add, today
from memgit.write.plan import preview_write_ops
from memgit.write.writer import apply_write_ops

LIMIT_CODES = ("MG206", "MG207")  # drive size, file count: the import as a whole
# rule codes of an entry line that make it refused (never copied) rather than verbatim
REFUSE_CODES = ("MG401", "MG305", "MG606", "MG607")
ROUNDS = 4  # judgements of a plan at most: metadata dropped, blocks made verbatim, final
Progress = Callable[[str, int, int], None]
_FIGURE_RE = re.compile(r"(\d+)")


@dataclass
class Judged:
    """What the writer did or would do with a plan's items."""

    result: WriteResult
    receipt: str = ""
    kept: list[str] = field(default_factory=list)  # reference files of verbatim blocks
    left_out: list[dict[str, str]] = field(default_factory=list)
    overflow: list[dict[str, Any]] = field(default_factory=list)


def judge_plan(plan: Plan, drive: Drive | None, policy: Policy, *,
               progress: Progress | None = None) -> None:
    """Judge a new plan against ``drive``, or against an empty drive with ``policy``
    when there is none; record the verdicts and what was judged in ``plan``."""
    if drive is None:
        with _empty_drive(policy) as scratch:
            judged = judge(plan, scratch, policy, write=False, progress=progress)
        plan.judged = {"drive": "", "head": "", "as": "an empty drive with this policy"}
    else:
        judged = judge(plan, drive, policy, write=False, progress=progress)
        head = ref_target(drive, policy.branch_ref) or ""
        plan.judged = {"drive": str(drive.root), "head": head, "as": "this drive"}
    plan.overflow = judged.overflow
    plan.left_out = judged.left_out


def judge(plan: Plan, drive: Drive, policy: Policy, *, write: bool, message: str = "",
          progress: Progress | None = None) -> Judged:
    """Judge (``write``: and write, as one commit) ``plan``'s items on ``drive``; the
    items' actions, topics and ids become the verdicts (see the module docstring)."""
    conn = state.connection(drive.git_dir)
    catch_up(drive, policy=policy, conn=conn)  # names a missing branch; the index is current
    date = today(policy)
    base = f"imports/{_plan_date(plan, date)}-{plan.name}"
    judged = Judged(WriteResult("unchanged"))
    lines: dict[tuple[Any, ...], WriteOp | Skipped] = {}  # prepared once, for every round
    for round_ in range(ROUNDS):  # an entry a rule keeps out becomes verbatim: judge again
        final = write or round_ == ROUNDS - 1
        ops, by_ref = _entry_ops(plan, drive, conn, policy, date, progress, lines)
        _follow_originals(plan)
        files, judged.left_out = reference_ops(plan, base, policy, drive)
        receipt = Receipt(plan, base, date, judged.left_out, policy.file_bytes)
        if progress is not None:
            progress("judging" if not write else "writing", 0, 1)
        judged.result = _run(drive, ops + files, policy, receipt, write, message, judged)
        if progress is not None:
            progress("judging" if not write else "writing", 1, 1)
        moved = _verdicts(judged.result, by_ref, final=final)
        moved |= _follow_originals(plan)
        judged.receipt = receipt.path if receipt.path in judged.result.rewritten else ""
        judged.kept = sorted(set(judged.result.rewritten) - set(receipt.paths))
        if not moved or final:
            break
    return judged


# --- entries -----------------------------------------------------------------------------


def _entry_ops(plan: Plan, drive: Drive, conn: state.Connection, policy: Policy, date: str,
               progress: Progress | None, lines: dict[tuple[Any, ...], WriteOp | Skipped]
               ) -> tuple[list[WriteOp], dict[int, Item]]:
    """The add operations of the plan's entries, laid out in files under the limit;
    entries the drive has by id are ``present`` at once."""
    items = [i for i in plan.items if i.action in (ENTRY, PRESENT) and not i.duplicate_of]
    for item in items:
        item.id = item.id or fmt.new_id()
    located = facts.locate(conn, [i.id for i in items])
    ops: list[WriteOp] = []
    by_ref: dict[int, Item] = {}
    for number, item in enumerate(items):
        if progress is not None and number % 500 == 0:
            progress("preparing", number, len(items))
        if item.id in located:
            item.action, item.reason = PRESENT, f"already in the drive: {item.id}"
            item.topic = located[item.id]
            continue
        key = (item.id, item.text, item.source, item.added, item.context,
               tuple(item.meta.items()), split_name(item.topic)[0])
        prepared = lines.get(key)
        if prepared is None:
            prepared = lines[key] = prepare(item, number, plan.tool, policy, date)
        else:
            prepared = dataclasses.replace(prepared, ref=number)
        if isinstance(prepared, Skipped):
            _skipped(item, prepared.reason, prepared.detail, final=False)
            continue
        item.action = ENTRY
        ops.append(prepared)
        by_ref[number] = item
    if progress is not None:
        progress("preparing", len(items), len(items))
    head = ref_target(drive, policy.branch_ref)
    existing = tree_files(drive, commit_tree_id(drive, head)) if head else []
    present = facts.present_digests(conn, [text_digest(by_ref[op.ref].text) for op in ops])
    layout = Layout(policy, {e.path: e.size for e in existing})
    placed = layout.place([(op.path, op.line, text_digest(by_ref[op.ref].text) in present)
                           for op in ops])
    out = []
    for op, path in zip(ops, placed, strict=True):
        by_ref[op.ref].topic = path
        out.append(op if path == op.path else dataclasses.replace(op, path=path))
    return _precheck(out, by_ref, policy), by_ref


def _precheck(ops: list[WriteOp], by_ref: dict[int, Item], policy: Policy) -> list[WriteOp]:
    """The operations whose own line the policy accepts; the others get their verdict now.

    The writer judges every file it changes with policy.check_blob and skips an
    operation whose line has an error, then plans again. The same check on each file's
    new lines here spares that second planning (and a second round of judge): the
    writer stays the judge of what it writes. The secret scan is not repeated:
    prepare_add scanned each of these lines."""
    rows: dict[str, list[WriteOp]] = {}
    for op in ops:
        rows.setdefault(op.path, []).append(op)
    refused: set[int] = set()
    for path, file_ops in rows.items():
        text = "".join(op.line + "\n" for op in file_ops)
        for v in check_blob(path, text.encode(), policy, scan=lambda _n, _c: False).violations:
            if v.severity == ERROR and 0 < v.line <= len(file_ops):
                op = file_ops[v.line - 1]
                if op.ref not in refused:
                    refused.add(op.ref)
                    _skipped(by_ref[op.ref], "policy",
                             f"{v.code} {v.name}: {quote(v.message, policy)}", final=False)
    return [op for op in ops if op.ref not in refused]


def prepare(item: Item, ref: int, tool: str, policy: Policy, date: str) -> WriteOp | Skipped:
    """The add operation apply performs for ``item``: the line the writer writes.

    A source the drive's policy does not allow becomes the provenance
    ``imported:TOOL/PATH#LN`` (the original kept as ``orig-source`` unless its scheme
    is a dangerous one). The secret scan of the line is the writer's (its judgement of
    the new file): the text comes from source lines the policy judged already."""
    source = item.source
    extras = line_extras(item)
    if not source_allowed(source, policy):
        if source_scheme(source) not in DANGEROUS_SCHEMES and _is_value(source):
            extras.insert(0, ("orig-source", source))
        source = imported_source(tool, item.path, item.line)
        if not source_allowed(source, policy):
            source = "imported:unknown"
    fact = NewFact(item.text, source, item.topic, item.added or None)
    return prepare_add(fact, ref, policy, date, extra=extras, entry_id=item.id, scan=False)


def _is_value(text: str) -> bool:
    """Whether ``text`` can be a metadata value as it is (no ``;``, ``[``, ``]``)."""
    return bool(text) and not any(c in text for c in ";[]") and text.strip() == text


# --- running the writer ------------------------------------------------------------------


def _run(drive: Drive, ops: list[WriteOp], policy: Policy, receipt: Receipt, write: bool,
         message: str, judged: Judged) -> WriteResult:
    """The writer's verdict: committed (``write``), or previewed.

    A write over the drive's size or file-count limit is refused as a whole (nothing is
    written). A preview is made with those two limits lifted, so that it says what each
    item becomes even then, and the tree it would commit is checked against the real
    limits with the policy's own tree rules (policy.check_tree)."""
    if write:
        try:
            return apply_write_ops(drive, ops, message, policy=policy, finish=receipt)
        except RefusedError as exc:
            over = [v for v in exc.violations if v.code in LIMIT_CODES]
            if not over or len(over) != len(exc.violations):
                raise
            judged.overflow = [_advice(v, policy, drive) for v in over]
            raise RefusedError(
                "the import would take the drive over its limits: "
                + "; ".join(o["message"] for o in judged.overflow) + "; nothing was written",
                exc.violations, " | ".join(judged.overflow[0]["what_to_do"])) from exc
    lifted = dataclasses.replace(policy, drive_bytes=1 << 62, files=1 << 30)
    preview = preview_write_ops(drive, ops, policy=lifted, finish=receipt)
    if preview.tree:
        items = [TreeItem(e.path, e.mode, e.size) for e in tree_files(drive, preview.tree)]
        judged.overflow = [_advice(v, policy, drive) for v in check_tree(items, {}, policy)
                           if v.code in LIMIT_CODES]
    return preview.result


def _advice(v: Any, policy: Policy, drive: Drive) -> dict[str, Any]:
    """A drive-limit violation as the plan reports it: the figures and what to do."""
    figures = [int(n) for n in _FIGURE_RE.findall(v.message)]  # "N bytes, limit L"
    needed = figures[0] if figures else 0
    key, unit = ("drive_bytes", "bytes") if v.code == "MG206" else ("files", "files")
    room = needed + needed // 4
    where = f"{drive.git_dir}/memgit.yaml" if drive.git_dir.name != "scratch.git" \
        else "the drive's memgit.yaml (in its git directory)"
    return {
        "code": v.code, "limit": key, "needed": needed, "allowed": getattr(policy, key),
        "message": f"{v.code} {v.name}: the drive would hold {needed:,} {unit}, over its "
                   f"limit of {getattr(policy, key):,} (limits.{key})",
        "what_to_do": [
            f"raise limits.{key} to at least {needed} (with room to grow: {room}) in {where}",
            "import a subset: plan a sub-folder, or drop files' items from the plan",
            "spread the memory over several drives: memgit fork, then memgit mount add",
        ]}


# --- verdicts ------------------------------------------------------------------------------


def _verdicts(result: WriteResult, by_ref: dict[int, Item], *, final: bool) -> bool:
    """Each operation's outcome as its item's action; True when an entry became verbatim
    (its block must go to a reference file: the plan is judged again)."""
    by_id = {item.id: item for item in by_ref.values()}
    for added in result.added:
        item = by_id.get(added.id)
        if item is not None:
            item.action, item.topic = ENTRY, added.path
    moved = False
    for skipped in result.skipped:
        item = by_ref.get(skipped.ref)
        if item is not None:
            moved |= _skipped(item, skipped.reason, skipped.detail, final=final)
    return moved


def _follow_originals(plan: Plan) -> bool:
    """A repeat of a text shares its first occurrence's fate when that is refused or
    verbatim (the same text, the same rule); True when one became verbatim now."""
    first = {item.where: item for item in plan.items}
    moved = False
    for item in plan.items:
        original = first.get(item.duplicate_of) if item.duplicate_of else None
        if original is None or item.action not in (ENTRY, PRESENT):
            continue
        if original.action == REFUSED:
            refuse(item, original.reason)
        elif original.action == VERBATIM:
            item.action, item.reason, item.context = VERBATIM, original.reason, ""
            item.duplicate_of = ""
            moved = True
    return moved


def _skipped(item: Item, reason: str, detail: str, *, final: bool) -> bool:
    """An entry the writer (or prepare_add) did not write: its verdict. True when it
    becomes verbatim."""
    if reason == "duplicate":
        item.action, item.reason = PRESENT, f"already in the drive ({detail})"
        return False
    if reason == "purged":
        refuse(item, "purged: this text was purged from the drive and may not return")
        return False
    if reason == "credential":
        refuse(item, f"MG401 secret: {detail}")
        return False
    code = detail.split(" ", 1)[0]
    if reason == "policy" and code == "MG401" and not final and (item.context or item.meta):
        # what the scanner found may be in the metadata (a heading trail, a key), not
        # the text: the entry is judged again without it before it is refused
        item.context, item.meta = "", {}
        return True
    if reason == "policy" and code in REFUSE_CODES:
        refuse(item, detail)
        return False
    text = f"{reason}: {detail}" if reason != "policy" else detail
    if final:  # at apply time: no second pass to keep its block; listed as left out
        item.action, item.reason = VERBATIM, f"left out, cannot be an entry: {text}"
        item.text = ""
        return False
    item.action, item.reason = VERBATIM, f"cannot be an entry: {text}"
    item.context = ""
    return True


# --- helpers -------------------------------------------------------------------------------


def _plan_date(plan: Plan, date: str) -> str:
    """The plan's date (names reference files, so apply writes what the plan judged)."""
    return plan.created if fmt.is_valid_date(plan.created) else date


@contextlib.contextmanager
def _empty_drive(policy: Policy) -> Iterator[Drive]:
    """A new bare drive in a temporary folder, removed afterwards: what a plan without a
    drive is judged against."""
    with tempfile.TemporaryDirectory(prefix="memgit-plan-") as folder:
        drive = init_bare(Path(folder) / "scratch.git",
                          {fmt.MEMORY_FILE: fmt.initial_memory().encode()}, "Create drive")
        if policy.branch_ref != "refs/heads/main":
            head = ref_target(drive, "refs/heads/main")
            assert head is not None
            drive.repo.references.create(policy.branch_ref, head)
        yield drive

