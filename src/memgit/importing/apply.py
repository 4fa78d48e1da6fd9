"""``memgit import apply``: a plan's entries into a drive, as one writer commit.

1. Every ``entry`` item becomes an add operation through the writer's own
   ``prepare_add``: its text, topic, ``added`` date (NewFact.added), source, and
   the metadata the plan kept (the heading trail as ``context``, an AMR entry's
   open keys and id). A source the drive's policy does not allow is replaced by
   the plan's provenance ``imported:TOOL/PATH#LN`` and kept as ``orig-source``
   (unless its scheme is a dangerous one: then it is dropped).
2. The writer skips entries whose text the drive already has (and an entry whose
   own id it has), so applying a plan twice adds nothing.
3. ``verbatim`` items (code, tables, HTML, images, files that are not Markdown)
   are kept as they were in reference files ``imports/<date>-<name>/<path>.md``,
   each block in a fence, so no rule reads them as entries or as HTML; a block the
   policy would refuse even there, or one too large, is listed as left out.
4. The receipt ``imports/<date>-<name>.md`` is written in the same commit by the
   writer's ``finish`` step (write_plan.Finish): it lists what the writer really
   created, whatever it skipped. ``imports/`` is memgit's own folder: never in the
   Index, never entries (the receipt and reference files hold no bullet lines).
5. ``writer.apply_write_ops`` commits it all with compare-and-swap, regenerates the
   Index section and reindexes.

``dry_run`` plans and judges the same operations (write_plan.preview_write_ops)
and changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from memgit import state
from memgit.format import entries as fmt
from memgit.git.repository import Drive, commit_tree_id, file_at, ref_target
from memgit.importing.markdown import VERBATIM
from memgit.importing.plan import Item, Plan, imported_source, line_extras
from memgit.policy.judge import DANGEROUS_SCHEMES, ERROR, check_blob, source_allowed, source_scheme
from memgit.policy.settings import Policy, drive_policy
from memgit.recall.read_path import catch_up
from memgit.state import facts
from memgit.write.ops import NewFact, Skipped, WriteOp, WriteResult, prepare_add, today
from memgit.write.plan import preview_write_ops
from memgit.write.writer import apply_write_ops

RECEIPT_DIR = "imports/"
IDS_PER_LINE = 6
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
    kept: list[str] = field(default_factory=list)  # reference files of verbatim blocks
    left_out: list[dict[str, str]] = field(default_factory=list)  # verbatim items not kept
    receipt: str = ""
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _no_progress(_message: str) -> None:
    return None


def apply_plan(drive: Drive, plan: Plan, *, dry_run: bool = False, policy: Policy | None = None,
               progress: Progress = _no_progress) -> ApplyResult:
    """Apply ``plan`` to ``drive`` (see the module docstring)."""
    policy = policy or drive_policy(drive)
    conn = state.connection(drive.git_dir)
    catch_up(drive, policy=policy, conn=conn)  # names a missing branch; the index is current
    date = today(policy)
    result = ApplyResult("dry-run" if dry_run else "unchanged", counts=plan.counts())
    items = plan.entries()
    progress(f"preparing {len(items)} entries")
    ops, origin = _entry_ops(plan, items, policy, date, result)
    owned = {op.id for op in ops if origin[op.ref].meta.get("id")}
    present_ids = set(facts.locate(conn, owned))
    result.present = len(present_ids)
    ops = [op for op in ops if op.id not in present_ids]
    base = f"{RECEIPT_DIR}{date}-{plan.name}"
    files = _reference_files(plan, base, policy, result)
    receipt = _Receipt(plan, base, date, origin, result)
    file_ops = [WriteOp("file", "file:" + path, path=path, text=text, value=oid, ref=-1)
                for path, (text, oid) in sorted(_with_oids(drive, policy, files).items())]
    message = f"Import {plan.tool} memory {plan.name}"
    if dry_run:
        preview = preview_write_ops(drive, ops + file_ops, policy=policy, finish=receipt)
        return _report(result, preview.result, origin, receipt)
    if not ops and not file_ops:
        return result
    progress(f"committing {len(ops)} entries")
    written = apply_write_ops(drive, ops + file_ops, message, policy=policy, finish=receipt)
    return _report(result, written, origin, receipt)


# --- entries ----------------------------------------------------------------------------


def _entry_ops(plan: Plan, items: list[Item], policy: Policy, date: str,
               result: ApplyResult) -> tuple[list[WriteOp], dict[int, Item]]:
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
    return ops, origin


def _prepare(item: Item, number: int, plan: Plan, policy: Policy,
             date: str) -> WriteOp | Skipped:
    source = item.source
    extras = line_extras(item)
    if not source_allowed(source, policy):
        if source_scheme(source) not in DANGEROUS_SCHEMES and _is_value(source):
            extras.insert(0, ("orig-source", source))
        source = imported_source(plan.tool, item.path, item.line)
        if not source_allowed(source, policy):
            source = "imported:unknown"
    own_id = item.meta.get("id", "")
    prepared = prepare_add(NewFact(item.text, source, item.topic, item.added or None),
                           number, policy, date, extra=extras)
    if isinstance(prepared, Skipped) or not own_id:
        return prepared
    entry = fmt.parse_entry(prepared.line)
    if entry is None:
        return prepared
    return WriteOp("add", own_id, path=prepared.path, line=entry.with_meta("id", own_id)
                   .serialise(), ref=number)


def _is_value(text: str) -> bool:
    """Whether ``text`` can be a metadata value as it is (no ``;``, ``[``, ``]``)."""
    return bool(text) and not any(c in text for c in ";[]") and text.strip() == text


# --- verbatim blocks --------------------------------------------------------------------


def _reference_files(plan: Plan, base: str, policy: Policy,
                     result: ApplyResult) -> dict[str, str]:
    """path -> text of the reference files keeping the plan's verbatim items."""
    chunks: dict[str, list[str]] = {}
    limit = int(policy.file_bytes * 0.75)
    for item in (i for i in plan.items if i.action == VERBATIM):
        if not item.text:
            result.left_out.append({"item": item.where, "reason": item.reason or "verbatim",
                                    "detail": "nothing of it could be kept (not text, or "
                                              "too large)"})
            continue
        path = f"{base}/{item.path}" + ("" if item.path.endswith(".md") else ".md")
        chunk = _fenced(item)
        problems = [v for v in check_blob(path, chunk.encode(), policy).violations
                    if v.severity == ERROR]
        size = sum(len(c.encode()) for c in chunks.get(path, []))
        if problems or size + len(chunk.encode()) > limit:
            detail = (f"{problems[0].code} {problems[0].name}" if problems
                      else "its reference file is full")
            result.left_out.append({"item": item.where, "reason": item.reason or "verbatim",
                                    "detail": detail})
            continue
        chunks.setdefault(path, []).append(chunk)
    out: dict[str, str] = {}
    for path, parts in chunks.items():
        source = path[len(base) + 1:]
        head = (f"# Kept verbatim: {_plain_words(source)}\n\n"
                f"memgit import kept these blocks of {plan.tool} memory {plan.name} as they "
                "were: they could not be one-line entries.\n")
        out[path] = head + "".join(parts)
    return out


def _fenced(item: Item) -> str:
    """One verbatim item: a heading naming its lines, then its text in a fence longer
    than any backtick run inside it (so the fence cannot close early)."""
    longest = max((len(m) for m in re.findall(r"`+", item.text)), default=0)
    fence = "`" * max(3, longest + 1)
    where = f"lines {item.line}-{item.end}" if item.end > item.line else f"line {item.line}"
    context = f" ({_plain_words(item.context)})" if item.context else ""
    return (f"\n## {where}: {item.reason or 'verbatim'}{context}\n\n"
            f"{fence}text\n{item.text}\n{fence}\n")


def _plain_words(text: str) -> str:
    """Text fit for a heading of a reference file: no HTML, one line."""
    return " ".join(text.replace("<", "‹").replace(">", "›").split())[:160]


def _with_oids(drive: Drive, policy: Policy,
               files: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Each reference file with the blob id it has at the head ("" when absent): the
    writer writes a file only if it is still that one."""
    head = ref_target(drive, policy.branch_ref)
    tree = commit_tree_id(drive, head) if head else ""
    out: dict[str, tuple[str, str]] = {}
    for path, text in files.items():
        found = file_at(drive, tree, path) if tree else None
        out[path] = (text, found.oid if found is not None else "")
    return out


# --- the receipt --------------------------------------------------------------------------


class _Receipt:
    """The writer's finish step: the receipt of what the write really does."""

    def __init__(self, plan: Plan, base: str, date: str, origin: dict[int, Item],
                 result: ApplyResult) -> None:
        self.plan, self.base, self.date = plan, base, date
        self.origin, self.result = origin, result
        self.path = ""

    def __call__(self, written: WriteResult, oid_at: Callable[[str], str]) -> list[WriteOp]:
        created = [a.id for a in written.added]
        if not created:
            self.path = ""
            return []
        self.path = self._free_path(oid_at)
        return [WriteOp("file", "file:" + self.path, path=self.path,
                        text=self.text(written, created), value="", ref=-1)]

    def _free_path(self, oid_at: Callable[[str], str]) -> str:
        path = f"{self.base}.md"
        number = 1
        while oid_at(path):
            number += 1
            path = f"{self.base}-{number}.md"
        return path

    def text(self, written: WriteResult, created: list[str]) -> str:
        plan, counts = self.plan, self.result.counts
        duplicates = sum(1 for s in written.skipped if s.reason == "duplicate")
        kept = sorted(set(written.rewritten))
        lines = [
            f"# Import of {plan.tool} memory {plan.name}, {self.date}", "",
            "memgit import apply wrote this receipt in the commit that made the entries "
            "below; it is not memory (imports/ is never in the Index or recalled).", "",
            f"Created {len(created)} entries. Already in the drive: "
            f"{self.result.present + duplicates}. Repeated in the source: "
            f"{counts.get('duplicate', 0)}. Refused (never copied): {counts.get('refused', 0)}. "
            f"Verbatim: {counts.get('verbatim', 0)}, of which {len(self.result.left_out)} "
            f"left out. Structure lines: {counts.get('structure', 0)}. The plan was made "
            f"{plan.created}.", ""]
        if kept:
            lines += ["Verbatim blocks are kept in " + ", ".join(kept) + ".", ""]
        lines += ["## Created entries", ""]
        for start in range(0, len(created), IDS_PER_LINE):
            lines.append(", ".join(created[start:start + IDS_PER_LINE]))
        return "\n".join(lines) + "\n"


def _report(result: ApplyResult, written: WriteResult, origin: dict[int, Item],
            receipt: _Receipt) -> ApplyResult:
    if result.status != "dry-run":
        result.status = written.status
    result.commit = written.commit
    result.created = [a.id for a in written.added]
    if written.status != "unchanged":  # a file written again as it was is no change
        result.kept = sorted(p for p in set(written.rewritten) if p != receipt.path)
    result.receipt = receipt.path if receipt.path in written.rewritten else ""
    result.warnings.extend(written.warnings)
    for skipped in written.skipped:
        if skipped.reason == "duplicate":
            result.present += 1
            continue
        item = origin.get(skipped.ref)
        result.skipped.append({"item": item.where if item else "reference file",
                               "reason": skipped.reason, "detail": skipped.detail})
    return result
