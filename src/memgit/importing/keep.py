"""What an import keeps besides entries: reference files of verbatim blocks, the receipt.

* **Reference files.** ``verbatim`` items (code, tables, HTML, images, files that are not
  Markdown) are kept as they were in ``imports/<date>-<name>/<path>.md``, each block
  under a heading naming its lines, in a fence longer than any backtick run inside it,
  so no rule reads them as entries, HTML or images. A file fills up to 3/4 of
  ``limits.file_bytes``, then ``<path>-part-2.md`` and on (layout.py). A block the
  policy refuses even there (a conflict marker, say), a block over 32 KiB and an
  attachment are left out, and listed.
* **The receipt** ``imports/<date>-<name>.md`` (``-2``, ``-3``, ... when taken) is
  written in the same commit by the writer's finish step (write_plan.Finish), from
  what the writer really does: the ids it creates, the counts, where verbatim blocks
  are kept and what was left out. It holds no bullet lines, so it is never an entry.

``imports/`` is memgit's own folder: never in the Index, never recalled.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from memgit.git.repository import Drive, commit_tree_id, file_at, ref_target
from memgit.importing.layout import FILL, part_name
from memgit.importing.markdown import VERBATIM
from memgit.policy.judge import ERROR, check_blob
from memgit.policy.settings import Policy
from memgit.write.ops import WriteOp, WriteResult

if TYPE_CHECKING:
    from memgit.importing.items import Item, Plan

IDS_PER_LINE = 6
LEFT_OUT_LISTED = 200  # the receipt names this many left-out items, then counts the rest
KEPT_LISTED = 50  # and this many reference files


def reference_ops(plan: Plan, base: str, policy: Policy,
                  drive: Drive) -> tuple[list[WriteOp], list[dict[str, str]]]:
    """The whole-file operations writing the reference files of ``plan``'s verbatim
    items under ``base``, and the items left out (``item``, ``reason``, ``detail``)."""
    parts: dict[str, list[str]] = {}  # file -> its blocks
    chain: dict[str, tuple[int, int]] = {}  # first file -> (part, bytes in it)
    left_out: list[dict[str, str]] = []
    budget = int(policy.file_bytes * FILL)
    for item in (i for i in plan.items if i.action == VERBATIM):
        if not item.text:
            left_out.append({"item": item.where, "reason": item.reason or "verbatim",
                             "detail": "nothing of it could be kept (not text, or too large)"})
            continue
        first = f"{base}/{item.path}" + ("" if item.path.endswith(".md") else ".md")
        block = _fenced(item)
        problems = [v for v in check_blob(first, block.encode(), policy).violations
                    if v.severity == ERROR]
        if problems:
            left_out.append({"item": item.where, "reason": item.reason or "verbatim",
                             "detail": f"{problems[0].code} {problems[0].name}"})
            continue
        part, used = chain.get(first, (1, 0))
        cost = len(block.encode())
        if used and used + cost > budget - 400:  # 400: the file's own heading
            part, used = part + 1, 0
        chain[first] = (part, used + cost)
        parts.setdefault(part_name(first, part), []).append(block)
    texts = {path: _head(plan, base, path) + "".join(blocks) for path, blocks in parts.items()}
    return [WriteOp("file", "file:" + path, path=path, text=text, value=oid, ref=-1)
            for path, (text, oid) in sorted(_with_oids(drive, policy, texts).items())], left_out


def _head(plan: Plan, base: str, path: str) -> str:
    source = path[len(base) + 1:]
    return (f"# Kept verbatim: {plain_words(source)}\n\n"
            f"memgit import kept these blocks of {plan.tool} memory {plan.name} as they "
            "were: they could not be one-line entries.\n")


def _fenced(item: Item) -> str:
    """One verbatim item: a heading naming its lines, then its text in a fence longer
    than any backtick run inside it (so the fence cannot close early)."""
    longest = max((len(m) for m in re.findall(r"`+", item.text)), default=0)
    fence = "`" * max(3, longest + 1)
    where = f"lines {item.line}-{item.end}" if item.end > item.line else f"line {item.line}"
    context = f" ({plain_words(item.context)})" if item.context else ""
    return (f"\n## {where}: {item.reason or 'verbatim'}{context}\n\n"
            f"{fence}text\n{item.text}\n{fence}\n")


def plain_words(text: str) -> str:
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


class Receipt:
    """The writer's finish step: the receipt of what the write really does."""

    def __init__(self, plan: Plan, base: str, date: str, left_out: list[dict[str, str]],
                 file_bytes: int = 65536) -> None:
        self.plan, self.base, self.date, self.left_out = plan, base, date, left_out
        self.budget = int(file_bytes * FILL)
        self.path = ""
        self.paths: list[str] = []  # the receipt and its parts (a long list of ids)

    def __call__(self, written: WriteResult, oid_at: Callable[[str], str]) -> list[WriteOp]:
        created = [a.id for a in written.added]
        if not created:
            self.path, self.paths = "", []
            return []
        self.path = self._free_path(oid_at)
        texts = self.texts(written, created)
        self.paths = [part_name(self.path, n) for n in range(1, len(texts) + 1)]
        return [WriteOp("file", "file:" + path, path=path, text=text, value="", ref=-1)
                for path, text in zip(self.paths, texts, strict=True)]

    def _free_path(self, oid_at: Callable[[str], str]) -> str:
        path = f"{self.base}.md"
        number = 1
        while oid_at(path):
            number += 1
            path = f"{self.base}-{number}.md"
        return path

    def texts(self, written: WriteResult, created: list[str]) -> list[str]:
        """The receipt, then as many parts as its list of created ids needs."""
        rows = [", ".join(created[n:n + IDS_PER_LINE])
                for n in range(0, len(created), IDS_PER_LINE)]
        head = self.text(written, created)
        out = [head]
        for row in rows:
            if len(out[-1].encode()) + len(row.encode()) + 1 > self.budget:
                out.append(f"# Import of {self.plan.tool} memory {self.plan.name}, "
                           f"{self.date} (part {len(out) + 1})\n\n## Created entries\n\n")
            out[-1] += row + "\n"
        return out

    def text(self, written: WriteResult, created: list[str]) -> str:
        plan = self.plan
        counts = plan.counts()
        present = counts.get("present", 0) + sum(1 for s in written.skipped
                                                  if s.reason == "duplicate")
        refused = counts.get("refused", 0) + sum(1 for s in written.skipped
                                                 if s.reason != "duplicate" and s.ref >= 0)
        kept = sorted(p for p in set(written.rewritten) if p != self.path)
        lines = [
            f"# Import of {plan.tool} memory {plan.name}, {self.date}", "",
            "memgit import apply wrote this receipt in the commit that made the entries "
            "below; it is not memory (imports/ is never in the Index or recalled).", "",
            f"Created {len(created)} entries. Already in the drive: {present}. Repeated in "
            f"the source: {counts.get('duplicate', 0)}. Refused (never copied): "
            f"{refused}. Verbatim: {counts.get('verbatim', 0)}, of which "
            f"{len(self.left_out)} left out. Structure lines: {counts.get('structure', 0)}. "
            f"Files of the source not read: {plan.not_read.get('count', 0)}. The plan was "
            f"made {plan.created}.", ""]
        if kept:
            more = f" and {len(kept) - KEPT_LISTED} more files" if len(kept) > KEPT_LISTED else ""
            lines += ["Verbatim blocks are kept in " + ", ".join(kept[:KEPT_LISTED]) + more
                      + ".", ""]
        if self.left_out:
            lines += ["## Left out", ""]
            lines += [plain_words(f"{o['item']}: {o['reason']} ({o['detail']})")
                      for o in self.left_out[:LEFT_OUT_LISTED]]
            if len(self.left_out) > LEFT_OUT_LISTED:
                lines.append(f"and {len(self.left_out) - LEFT_OUT_LISTED} more")
            lines.append("")
        lines += ["## Created entries", ""]
        return "\n".join(lines) + "\n"
