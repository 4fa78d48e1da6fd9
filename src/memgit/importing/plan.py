"""``memgit import plan``: read a memory folder (or a mem0 export) into a plan.

The plan is a JSON document (docs/import.md) whose ``items`` say, for every
line of every source file, what becomes of it: an ``entry`` (with its text,
topic, context, added date and source), ``refused`` (a possible credential or
a transcript: the reason code only, never the text), ``verbatim`` (code,
tables, HTML, images, files that are not Markdown: left out of the drive and
listed) or ``structure`` (headings, blank lines, front matter, Index links).
Each item covers lines ``line``..``end``; together they cover every line once.

Nothing in the source is changed. The policy decides what is refused: the
source file is judged with ``policy.check_blob`` (secrets, transcripts), and
so is every topic file the plan would write, rendered with the writer's own
``prepare_add``, so that apply meets no surprise (an entry line the drive
profile refuses becomes ``refused`` or ``verbatim`` here, with its code).
"""

from __future__ import annotations

import datetime as _dt
import json
import unicodedata
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memgit.errors import UsageError
from memgit.format import entries as fmt
from memgit.importing import readers
from memgit.importing.markdown import ENTRY, REFUSED, STRUCTURE, VERBATIM, Piece
from memgit.policy.judge import ERROR, check_blob, check_topic, secret_kinds, text_digest
from memgit.policy.settings import Policy
from memgit.write.ops import NewFact, Skipped, clean_text, prepare_add

PLAN_FORMAT = "memgit-import-plan"
PLAN_VERSION = 1
MAX_FILE_BYTES = 1024 * 1024
VERBATIM_MAX_BYTES = 32 * 1024  # a verbatim block larger than this is left out
ACTIONS = (ENTRY, REFUSED, VERBATIM, STRUCTURE)
# rule codes of an entry line that make it refused (never copied) or verbatim (left out)
_REFUSE_CODES = ("MG401", "MG305", "MG606", "MG607")
Progress = Callable[[int, int, str], None]


@dataclass
class Item:
    """What becomes of lines ``line``..``end`` of source file ``path``."""

    path: str
    line: int
    end: int
    action: str
    reason: str = ""
    topic: str = ""
    text: str = ""
    context: str = ""
    added: str = ""
    source: str = ""
    meta: dict[str, str] = field(default_factory=dict)
    duplicate_of: str = ""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "line": self.line, "end": self.end,
                               "action": self.action}
        if self.reason:
            out["reason"] = self.reason
        if self.action == REFUSED:
            return out  # never the refused text, nor anything derived from it
        for key in ("topic", "text", "context", "added", "source", "duplicate_of"):
            value = getattr(self, key)
            if value:
                out[key] = value
        if self.meta:
            out["meta"] = dict(self.meta)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Item:
        meta = data.get("meta") or {}
        if not isinstance(meta, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                 for k, v in meta.items()):
            raise ValueError("meta must map strings to strings")
        kwargs: dict[str, Any] = {"meta": dict(meta)}
        for key in ("path", "action", "reason", "topic", "text", "context", "added", "source",
                    "duplicate_of"):
            value = data.get(key, "")
            if not isinstance(value, str):
                raise ValueError(f"{key} must be a string")
            kwargs[key] = value
        for key in ("line", "end"):
            value = data.get(key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{key} must be a line number")
            kwargs[key] = value
        if kwargs["action"] not in ACTIONS:
            raise ValueError(f"action must be one of {', '.join(ACTIONS)}")
        return cls(**kwargs)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass
class Plan:
    tool: str
    name: str
    source: str
    created: str
    items: list[Item] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out = {action: 0 for action in ACTIONS}
        out["duplicate"] = 0
        for item in self.items:
            if item.action == ENTRY and item.duplicate_of:
                out["duplicate"] += 1
            else:
                out[item.action] += 1
        return out

    def entries(self) -> list[Item]:
        """The items that become entries (duplicates of earlier ones excluded)."""
        return [i for i in self.items if i.action == ENTRY and not i.duplicate_of]

    def as_dict(self) -> dict[str, Any]:
        return {"format": PLAN_FORMAT, "version": PLAN_VERSION, "tool": self.tool,
                "name": self.name, "source": self.source, "created": self.created,
                "counts": self.counts(), "files": self.files,
                "items": [i.as_dict() for i in self.items]}

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=1, ensure_ascii=False) + "\n"


def load_plan(path: str | Path) -> Plan:
    """Read a plan file; every mistake is a UsageError that names what is wrong."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read the plan {p}: {exc.strerror or exc}",
                         "write one with: memgit import plan SOURCE -o PLAN") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{p} is not a JSON plan: {exc}",
                         "write one with: memgit import plan SOURCE -o PLAN") from exc
    return plan_from_dict(data, str(p))


def plan_from_dict(data: Any, origin: str = "plan") -> Plan:
    hint = "make the plan again with: memgit import plan SOURCE -o PLAN"
    if not isinstance(data, dict) or data.get("format") != PLAN_FORMAT:
        raise UsageError(f"{origin} is not a memgit import plan", hint)
    if data.get("version") != PLAN_VERSION:
        raise UsageError(f"{origin} has plan version {data.get('version')!r}; this memgit "
                         f"reads version {PLAN_VERSION}", hint)
    items = data.get("items")
    if not isinstance(items, list):
        raise UsageError(f"{origin}: items must be a list", hint)
    plan = Plan(str(data.get("tool", "")), str(data.get("name", "")) or "import",
                str(data.get("source", "")), str(data.get("created", "")))
    for number, raw in enumerate(items, start=1):
        try:
            if not isinstance(raw, dict):
                raise ValueError("an item must be an object")
            plan.items.append(Item.from_dict(raw))
        except ValueError as exc:
            raise UsageError(f"{origin}: item {number}: {exc}", hint) from exc
    files = data.get("files", [])
    plan.files = [f for f in files if isinstance(f, dict)] if isinstance(files, list) else []
    return plan


# --- building a plan -----------------------------------------------------------------------


def imported_source(tool: str, path: str, line: int) -> str:
    """``imported:<tool>/<path>#L<line>``, the path percent-encoded so the value
    holds no blank, ``;``, ``[`` or ``]``."""
    return f"imported:{tool}/{urllib.parse.quote(path, safe='/-._~')}#L{line}"


def build_plan(source: str | Path, tool: str = "auto", *, progress: Progress | None = None,
               policy: Policy | None = None, today: str | None = None) -> Plan:
    """Read ``source`` (a folder or one file) without changing it; see the module docstring."""
    root = Path(source)
    if not root.exists():
        raise UsageError(f"{root} does not exist", "give a memory folder or a mem0 JSON export")
    if tool != "auto" and tool not in readers.TOOLS:
        raise UsageError(f"unknown tool {tool!r}", f"use one of: auto, {', '.join(readers.TOOLS)}")
    if root.is_symlink():
        raise UsageError(f"{root} is a symbolic link", "give the folder it points to")
    chosen = readers.detect(root) if tool == "auto" else tool
    policy = policy or Policy()
    if root.is_file():
        files = [(root.name, root)]
        name = root.stem
    else:
        files = list(readers.walk(root))
        name = root.resolve().name
    plan = Plan(chosen, _slug(name) or "import", str(root.resolve()),
                today or _dt.date.today().isoformat())
    builder = _Builder(plan, policy)
    for number, (rel, full) in enumerate(files, start=1):
        if progress is not None:
            progress(number, len(files), rel)
        builder.add_file(rel, full)
    builder.finish()
    return plan


def _slug(text: str) -> str:
    out = "".join(c if c.isalnum() or c in "-_." else "-" for c in text.lower())
    return "-".join(part for part in out.split("-") if part)[:60]


class _Builder:
    def __init__(self, plan: Plan, policy: Policy) -> None:
        self.plan = plan
        self.policy = policy
        self.topics: dict[str, str] = {fmt.MEMORY_FILE.casefold(): fmt.MEMORY_FILE}
        self.by_path: dict[str, str] = {}

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
        if rel.endswith(readers.MARKDOWN_SUFFIXES):
            reading = readers.read_file(self.plan.tool, _md_path(rel), text)
            topic = self.topic_for(_md_path(rel))
            plan.files.append({"path": rel, "lines": lines, "kind": "markdown", "topic": topic,
                               **({"added": reading.added} if reading.added else {})})
            self._pieces(rel, reading, topic, refused, contents)
        elif self.plan.tool == "mem0" and rel.endswith(".json"):
            try:
                reading = readers.read_mem0(rel, text)
            except ValueError as exc:
                raise UsageError(str(exc), "export the memories with mem0's get_all, or "
                                 "choose another --from") from exc
            plan.files.append({"path": rel, "lines": lines, "kind": "mem0"})
            self._pieces(rel, reading, "", refused, contents)
        else:
            plan.files.append({"path": rel, "lines": lines, "kind": "other"})
            if refused:
                self._whole(rel, lines, REFUSED, min(refused.values()), add_file=False)
            else:
                self._whole(rel, lines, VERBATIM, "not Markdown", add_file=False)
                self.plan.items[-1].text = _verbatim_text(contents)

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
                refused: dict[int, str], contents: list[str]) -> None:
        for piece in reading.pieces:
            # the JSON around a mem0 memory never reaches the drive: not refused
            reasons = [refused[n] for n in range(piece.line, piece.end + 1) if n in refused] \
                if piece.reason != "JSON" else []
            if reasons:
                self.plan.items.append(Item(rel, piece.line, piece.end, REFUSED, reasons[0]))
                continue
            item = self._item(rel, piece, topic, reading.added)
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
        if not _valid_id(meta.get("id", "")):
            meta.pop("id", None)  # an id the policy would refuse: the writer stamps a new one
        item.source = own_source or imported_source(self.plan.tool, rel, piece.line)
        item.meta = meta
        return item

    # --- topics ----------------------------------------------------------------------

    def topic_for(self, path: str) -> str:
        """The drive topic for a source path: the same path where the policy allows it."""
        if path in self.by_path:
            return self.by_path[path]
        candidate = unicodedata.normalize("NFC", path)
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
        self._judge_topics()
        seen: dict[str, str] = {}
        for item in self.plan.items:
            if item.action != ENTRY:
                continue
            digest = text_digest(item.text)
            if digest in seen:
                item.duplicate_of = seen[digest]
            else:
                seen[digest] = item.where

    def _judge_topics(self) -> None:
        """Render each topic as the writer would and let the policy judge it."""
        by_topic: dict[str, list[tuple[Item, str]]] = {}
        date = self.plan.created
        for item in self.plan.items:
            if item.action != ENTRY:
                continue
            if not item.text:
                item.action, item.reason = STRUCTURE, "empty"
                continue
            item.meta = self._kept_meta(item)
            op = prepare_add(NewFact(item.text, "imported:unknown", item.topic), 0, self.policy,
                             item.added or date, extra=line_extras(item))
            if isinstance(op, Skipped):
                if op.reason == "credential":
                    _refuse(item, f"MG401 secret: {op.detail}")
                else:
                    item.action, item.reason = VERBATIM, f"cannot be an entry line: {op.detail}"
                continue
            by_topic.setdefault(item.topic, []).append((item, op.line))
        for topic, rows in by_topic.items():
            text = "".join(line + "\n" for _, line in rows)
            for v in check_blob(topic, text.encode(), self.policy).violations:
                if v.severity != ERROR or not 0 < v.line <= len(rows):
                    continue
                item = rows[v.line - 1][0]
                if item.action != ENTRY:
                    continue
                if v.code in _REFUSE_CODES:
                    _refuse(item, f"{v.code} {v.name}: {v.message}")
                else:
                    item.action, item.reason = VERBATIM, f"{v.code} {v.name}: {v.message}"

    def _kept_meta(self, item: Item) -> dict[str, str]:
        """The entry's own metadata pairs (AMR's open keys) that the policy accepts."""
        kept: dict[str, str] = {}
        for key, value in item.meta.items():
            if key == "id":
                kept[key] = value
                continue
            if key in ("source", "added") or not value:
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


def _refuse(item: Item, reason: str) -> None:
    item.action, item.reason = REFUSED, reason
    item.text = item.context = item.source = item.topic = item.added = ""
    item.meta = {}


def _valid_id(value: str) -> bool:
    from memgit.policy.judge import ID_RE

    return bool(value) and ID_RE.match(value) is not None


def _md_path(rel: str) -> str:
    return rel[: -len(".markdown")] + ".md" if rel.endswith(".markdown") else rel


def _context_value(context: str) -> str:
    """A heading trail as a metadata value: no ``;``, ``[``, ``]`` or ``<``."""
    table = str.maketrans({";": ",", "[": "(", "]": ")", "<": "‹"})
    return " ".join(context.translate(table).split())


def line_extras(item: Item) -> list[tuple[str, str]]:
    """The metadata pairs an imported entry carries after source, added and id."""
    extras = [(k, v) for k, v in item.meta.items() if k != "id"]
    if item.context:
        extras.append(("context", item.context))
    return extras
