"""``memgit import plan``: read a memory folder (or a mem0 export) into a plan, changing
nothing.

The plan (docs/import.md) says for every line of every source file what becomes of it,
once (entry, present, refused, verbatim or structure); a refused item carries the reason
and the line, never the text. Each source file is judged line by line first, so a refused
line refuses its own block only; then the plan is judged exactly as apply will judge it
(verdict.judge: the writer's own preview), so its entries are what apply creates.
"""

from __future__ import annotations

import datetime as _dt
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from memgit.errors import UsageError
from memgit.format import entries as fmt
from memgit.importing import obsidian, readers, sources
from memgit.importing.items import (
    ACTIONS,
    PRESENT,
    Item,
    Plan,
    imported_source,
    line_extras,
    load_plan,
    plan_from_dict,
    refuse,
    valid_id,
)
from memgit.importing.markdown import ENTRY, REFUSED, STRUCTURE, VERBATIM, Piece
from memgit.importing.verdict import judge_plan
from memgit.policy.judge import ERROR, check_blob, check_topic, quote, secret_kinds, text_digest
from memgit.policy.settings import Policy
from memgit.write.ops import clean_text

if TYPE_CHECKING:
    from memgit.git.repository import Drive

# the plan document's names, for the callers that know them from here
__all__ = ["ACTIONS", "PRESENT", "Item", "Plan", "build_plan", "imported_source", "line_extras",
           "load_plan", "plan_from_dict", "refuse", "valid_id"]

MAX_FILE_BYTES = 16 * 1024 * 1024  # a larger file is listed, not read
VERBATIM_MAX_BYTES = 32 * 1024  # a verbatim block larger than this is left out
NOT_READ_LISTED = 20  # the plan names this many of the files it left unread
Progress = Callable[[str, int, int], None]  # (phase, done, total)


# --- building a plan -----------------------------------------------------------------------


def build_plan(source: str | Path, tool: str = "auto", *, progress: Progress | None = None,
               policy: Policy | None = None, today: str | None = None,
               drive: Drive | None = None) -> Plan:
    """Read ``source`` (a folder or one file) without changing it, and judge the plan
    against ``drive`` (None: an empty drive with ``policy``); see the module docstring."""
    root = Path(source)
    if not root.exists():
        raise UsageError(f"{root} does not exist", "give a memory folder or a mem0 JSON export")
    if tool != "auto" and tool not in readers.TOOLS:
        raise UsageError(f"unknown tool {tool!r}", f"use one of: auto, {', '.join(readers.TOOLS)}")
    if root.is_symlink():
        raise UsageError(f"{root} is a symbolic link", "give the folder it points to")
    chosen = readers.detect(root) if tool == "auto" else tool
    policy = policy or Policy()
    unread: list[str] = []
    if root.is_file():
        files = [(root.name, root)]
        name = root.stem
    else:
        found = dict(readers.walk(root))
        read, unread = readers.select(chosen, list(found))
        files = [(rel, found[rel]) for rel in read]
        name = root.resolve().name
    plan = Plan(chosen, _slug(name) or "import", str(root.resolve()),
                today or _dt.date.today().isoformat())
    if unread:
        why = "Obsidian's settings and bin" if chosen == "obsidian" \
            else f"not {chosen} files (choose another --from to read them)"
        plan.not_read = {"count": len(unread), "why": why, "first": unread[:NOT_READ_LISTED]}
    builder = _Builder(plan, policy, [rel for rel, _ in files])
    for number, (rel, full) in enumerate(files, start=1):
        if progress is not None:
            progress("reading", number, len(files))
        builder.add_file(rel, full)
    builder.finish()
    judge_plan(plan, drive, policy, progress=progress)
    return plan


def _slug(text: str) -> str:
    out = "".join(c if c.isalnum() or c in "-_." else "-" for c in text.lower())
    return "-".join(part for part in out.split("-") if part)[:60]


class _Builder:
    def __init__(self, plan: Plan, policy: Policy, rels: list[str]) -> None:
        self.plan = plan
        self.policy = policy
        self.topics: dict[str, str] = {fmt.MEMORY_FILE.casefold(): fmt.MEMORY_FILE}
        self.by_path: dict[str, str] = {}
        self.vault: obsidian.Vault | None = None
        if plan.tool == "obsidian":
            notes = [rel for rel in rels if rel.endswith(readers.MARKDOWN_SUFFIXES)]
            self.vault = obsidian.Vault({rel: self.topic_for(_md_path(rel)) for rel in notes})

    # --- files ---------------------------------------------------------------------

    def add_file(self, rel: str, full: Path) -> None:
        plan = self.plan
        if secret_kinds(rel, self.policy):
            plan.files.append({"path": "(refused file name)", "kind": "refused"})
            plan.items.append(Item("(refused file name)", 0, 0, REFUSED,
                                   "MG401 possible credential in the file name"))
            return
        if full.is_symlink() or not full.is_file():
            self._whole(rel, 0, VERBATIM, "not a regular file (symbolic links are not followed)")
            return
        markdown = sources.is_markdown_name(rel)
        if plan.tool == "obsidian" and not markdown:
            self._whole(rel, 0, VERBATIM, obsidian.ATTACHMENT)
            plan.files[-1]["kind"] = "attachment"
            return
        size = full.stat().st_size
        if size > MAX_FILE_BYTES:
            self._whole(rel, 0, VERBATIM, f"larger than {MAX_FILE_BYTES} bytes")
            return
        data = full.read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            self._whole(rel, 0, VERBATIM, "not UTF-8 text")
            return
        contents = [content for content, _eol in fmt.split_lines(text)]
        lines = len(contents)
        refused = self._refused_lines(rel, data)
        if markdown:
            path = _md_path(rel)
            reading = readers.read_file(plan.tool, path, text, refused=refused,
                                        vault=self.vault)
            topic = self.topic_for(path)
            plan.files.append({"path": rel, "lines": lines, "kind": "markdown", "topic": topic,
                               **({"added": reading.added} if reading.added else {})})
            self._pieces(rel, reading, topic, refused, contents, text)
        elif plan.tool == "mem0" and rel.endswith(".json"):
            try:
                reading = readers.read_mem0(rel, text)
            except ValueError as exc:
                raise UsageError(str(exc), "export the memories with mem0's get_all, or "
                                 "choose another --from") from exc
            plan.files.append({"path": rel, "lines": lines, "kind": "mem0"})
            self._pieces(rel, reading, "", refused, contents, text)
        else:
            plan.files.append({"path": rel, "lines": lines, "kind": "other"})
            whole = Piece(1, lines, VERBATIM, "not Markdown") if lines else None
            self._split(rel, whole, refused, contents, text) if whole else \
                self._whole(rel, 0, VERBATIM, "empty", add_file=False)

    def _whole(self, rel: str, lines: int, action: str, reason: str, *,
               add_file: bool = True) -> None:
        if add_file:
            self.plan.files.append({"path": rel, "lines": lines, "kind": "other"})
        self.plan.items.append(Item(rel, 1 if lines else 0, lines, action, reason))

    def _refused_lines(self, rel: str, data: bytes) -> dict[int, str]:
        """line -> reason, for the lines of the source the policy refuses outright."""
        judged = rel if rel.endswith(".md") else rel + ".txt"
        out: dict[int, str] = {}
        for v in check_blob(judged, data, self.policy).violations:
            if v.code in ("MG401", "MG305") and v.line and v.severity == ERROR:
                out.setdefault(v.line, f"{v.code} {v.name}: {v.message}")
        return out

    def _pieces(self, rel: str, reading: readers.FileReading, topic: str,
                refused: dict[int, str], contents: list[str], text: str) -> None:
        for piece in reading.pieces:
            hit = [n for n in range(piece.line, piece.end + 1) if n in refused]
            # the JSON around a mem0 memory never reaches the drive: not refused
            if hit and piece.reason != "JSON" and piece.action == ENTRY:
                where = f" (line {hit[0]})" if piece.end > piece.line else ""
                self.plan.items.append(Item(rel, piece.line, piece.end, REFUSED,
                                            refused[hit[0]] + where))
            elif hit and piece.reason != "JSON":
                self._split(rel, piece, refused, contents, text)
            else:
                self._add_piece(rel, piece, topic, reading.added, contents)

    def _split(self, rel: str, piece: Piece, refused: dict[int, str], contents: list[str],
               text: str) -> None:
        """A block of structure or verbatim lines with refused lines in it: each refused
        line is an item of its own (naming its front matter key), the rest keep the
        block's action in runs."""
        run = piece.line
        for number in range(piece.line, piece.end + 2):
            if number <= piece.end and number not in refused:
                continue
            if run < number:
                part = Piece(run, number - 1, piece.action, piece.reason, context=piece.context)
                self._add_piece(rel, part, "", "", contents)
            if number <= piece.end:
                key = readers.front_matter_key(text, number) \
                    if piece.reason == "front matter" else ""
                where = f" (front matter key {quote(key, self.policy)})" if key else ""
                self.plan.items.append(Item(rel, number, number, REFUSED,
                                            refused[number] + where))
            run = number + 1

    def _add_piece(self, rel: str, piece: Piece, topic: str, added: str,
                   contents: list[str]) -> None:
        item = self._item(rel, piece, topic, added)
        if item.action == VERBATIM:
            item.text = _verbatim_text(contents[piece.line - 1:piece.end])
            item.context = _context_value(piece.context)
        self.plan.items.append(item)

    def _item(self, rel: str, piece: Piece, topic: str, added: str) -> Item:
        item = Item(rel, piece.line, piece.end, piece.action, piece.reason)
        if piece.action != ENTRY:
            return item
        meta = dict(piece.meta)
        owner = meta.pop("mem0-owner", "")
        mem0_added = meta.pop("mem0-added", "")
        if owner:
            topic = self.topic_for(f"mem0/{owner}.md")
        item.topic = topic
        item.text = clean_text(piece.text)
        item.context = _context_value(piece.context)
        own_added = meta.pop("added", "")
        item.added = next((d for d in (own_added, mem0_added, added) if fmt.is_valid_date(d)),
                          "")
        own_source = meta.pop("source", "")
        own_id = meta.pop("id", "")
        item.id = own_id if valid_id(own_id) else ""  # else the judgement makes one
        item.source = own_source or imported_source(self.plan.tool, rel, piece.line)
        item.meta = meta
        return item

    # --- topics ----------------------------------------------------------------------

    def topic_for(self, path: str) -> str:
        """The drive topic for a source path: the same path where the policy allows it
        (a leading dot of a folder or file name dropped: ``.cursor/rules`` ->
        ``cursor/rules``)."""
        if path in self.by_path:
            return self.by_path[path]
        candidate = unicodedata.normalize("NFC", path)
        candidate = "/".join(part.lstrip(".") or "x" for part in candidate.split("/"))
        for suffix in (".mdc", ".markdown"):
            if candidate.endswith(suffix):
                candidate = candidate[: -len(suffix)]
        if not candidate.endswith(".md"):
            candidate += ".md"
        candidate = self._allowed(candidate)
        stem = candidate[:-3]
        number = 1
        while candidate.casefold() in self.topics and self.topics[candidate.casefold()] != path \
                and not (candidate == fmt.MEMORY_FILE and path == fmt.MEMORY_FILE):
            number += 1
            candidate = f"{stem}-{number}.md"
        self.topics[candidate.casefold()] = path
        self.by_path[path] = candidate
        return candidate

    def _allowed(self, candidate: str) -> str:
        for attempt in range(3):
            problems = check_topic(candidate, self.policy)
            if not problems:
                return candidate
            codes = {v.code for v in problems}
            if "MG213" in codes:  # questions.md, twin/, imports/: memgit's own
                candidate = "imported-" + candidate
            elif "MG305" in codes:
                # the drive profile reads "transcript" or ".log" in a name as a transcript
                candidate = candidate.replace("transcript", "transkript").replace(".log", "-log")
            else:
                parts = [_slug(p) or "x" for p in candidate[:-3].split("/")]
                candidate = "/".join(parts)[:200] + ".md"
            if attempt == 2:
                break
        return candidate if not check_topic(candidate, self.policy) else "imported/notes.md"

    # --- the whole plan ----------------------------------------------------------------

    def finish(self) -> None:
        """Empty texts become structure; the metadata an entry keeps is what the policy
        accepts; a text seen before is a duplicate of its first item."""
        seen: dict[str, str] = {}
        for item in self.plan.items:
            if item.action != ENTRY:
                continue
            if not item.text:
                item.action, item.reason = STRUCTURE, "empty"
                continue
            item.meta = self._kept_meta(item)
            digest = text_digest(item.text)
            if digest in seen:
                item.duplicate_of = seen[digest]
            else:
                seen[digest] = item.where

    def _kept_meta(self, item: Item) -> dict[str, str]:
        """The entry's own metadata pairs (AMR's open keys) that the policy accepts."""
        kept: dict[str, str] = {}
        for key, value in item.meta.items():
            if key in ("source", "added", "id") or not value:
                continue
            # a value the drive profile refuses for a key it knows (status: done,
            # kind: preference, a free-text parent) is kept under an open key
            for name in (key, "orig-" + key):
                if self._pair_allowed(name, value):
                    kept[name] = value
                    break
        return kept

    def _pair_allowed(self, key: str, value: str) -> bool:
        line = fmt.format_entry("x", "imported:unknown", "2000-01-01", "m-0") \
            .replace("id: m-0]", f"id: m-0; {key}: {value}]")
        return not any(v.severity == ERROR
                       for v in check_blob("x.md", line.encode(), self.policy).violations)


def _verbatim_text(lines: list[str]) -> str:
    """The source lines of a verbatim item, as they were, for apply to keep under
    imports/ ("" when too large to keep: the item is then listed as left out)."""
    text = "\n".join(lines)
    return text if len(text.encode()) <= VERBATIM_MAX_BYTES else ""


def _md_path(rel: str) -> str:
    """The Markdown path a source file is read as (``.markdown``/``.mdc`` -> ``.md``,
    ``.cursorrules`` -> ``.cursorrules.md``)."""
    for suffix in (".markdown", ".mdc"):
        if rel.endswith(suffix):
            return rel[: -len(suffix)] + ".md"
    return rel if rel.endswith(".md") else rel + ".md"


def _context_value(context: str) -> str:
    """A heading trail as a metadata value: no ``;``, ``[``, ``]`` or ``<``."""
    table = str.maketrans({";": ",", "[": "(", "]": ")", "<": "‹"})
    return " ".join(context.translate(table).split())


