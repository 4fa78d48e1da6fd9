"""One reader per memory tool, and auto-detection of which tool wrote a folder.

Every Markdown-based tool shares markdown.read_markdown; a reader adds what its tool means
beyond CommonMark (front matter as file metadata, a daily note's date, a relation's
subject, the AMR Index; docs/import.md has the table of tools; sources.py and obsidian.py
the agent instruction files and vaults). A front matter key on a refused line reaches no
entry. A file's ``added`` comes from its front matter dates, else from a date that starts
its file name; an entry's own ``added`` wins over both.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memgit.format import blocks as bl
from memgit.format import entries as fmt
from memgit.importing import obsidian, sources
from memgit.importing.markdown import ENTRY, STRUCTURE, Piece, plain, read_markdown

TOOLS = ("amr", "claude-code", "letta", "openclaw", "cline", "basic-memory", "mem0", "cursor",
         "windsurf", "copilot", "gemini", "agents", "obsidian", "plain")
MARKDOWN_SUFFIXES = (".md", ".markdown")
_DATE_KEYS = ("added", "created", "created_at", "date", "updated", "modified", "updated_at",
              "last_updated")
_FILE_DATE_RE = re.compile(r"(\d{4}-\d{2}-\d{2})")
_RELATION_RE = re.compile(r"(?:[A-Za-z_][\w-]*|\"[^\"]+\"|'[^']+')[ \t]+\[\[")
# ``- [category] text``; a task box (``- [x] done``) is not an observation
_OBSERVATION_RE = re.compile(r"[-*][ \t]+\[(?![xX]\])[^\]\s][^\]]*\][ \t]+\S", re.M)
_CLINE_FILES = {"projectbrief.md", "productContext.md", "activeContext.md", "systemPatterns.md",
                "techContext.md", "progress.md"}
_OPENCLAW_FILES = {"SOUL.md", "HEARTBEAT.md", "IDENTITY.md", "USER.md", "TOOLS.md", "BOOT.md",
                   "BOOTSTRAP.md"}
_CLAUDE_TYPES = {"user", "feedback", "project", "reference"}
_INDEX_LINK_RE = re.compile(r"\[\[[^\[\]]+\]\]")
_KEY_RE = re.compile(r"([^\s:#\-][^:]*):(?:\s|\Z)")


@dataclass
class FileReading:
    """What a reader makes of one file: its pieces and its file-level facts."""

    pieces: list[Piece]
    meta: dict[str, Any] = field(default_factory=dict)  # parsed front matter
    added: str = ""
    title: str = ""


# --- front matter and dates ---------------------------------------------------------


def front_matter(text: str) -> dict[str, Any]:
    """The parsed YAML front matter (empty when absent or not a mapping)."""
    raw = fmt.front_matter_text(text)
    if raw is None:
        return {}
    import yaml

    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


def as_date(value: Any) -> str:
    """``YYYY-MM-DD`` of a YAML date, datetime or ISO string; ``""`` otherwise."""
    if isinstance(value, _dt.datetime | _dt.date):
        return value.isoformat()[:10]
    if isinstance(value, str) and fmt.is_valid_date(value.strip()[:10]):
        return value.strip()[:10]
    return ""


def file_added(path: str, meta: dict[str, Any]) -> str:
    for key in _DATE_KEYS:
        found = as_date(meta.get(key))
        if found:
            return found
    stem = path.rsplit("/", 1)[-1]
    m = _FILE_DATE_RE.match(stem)
    if m and fmt.is_valid_date(m.group(1)):
        return m.group(1)
    return ""


def _title(meta: dict[str, Any], text: str, refused: Collection[int] = ()) -> str:
    for key in ("title", "name"):
        value = meta.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    for block in fmt.read_blocks(text):
        if block.kind == bl.HEADING and block.level == 1 and block.lines:
            return "" if block.start in refused else plain(block.lines[0])
    return ""


def front_matter_key(text: str, line: int) -> str:
    """The top-level front matter key that line ``line`` of ``text`` belongs to ("" when
    the line is not inside the front matter)."""
    lines = [content for content, _eol in fmt.split_lines(text)]
    end = bl.split_front_matter(lines)
    if not end or not 1 < line < end:
        return ""
    for number in range(line, 1, -1):
        m = _KEY_RE.match(lines[number - 1])
        if m:
            return m.group(1).strip()
    return ""


def _drop_refused_keys(text: str, meta: dict[str, Any], refused: Collection[int]) -> None:
    for line in refused:
        key = front_matter_key(text, line)
        if key:
            meta.pop(key, None)


# --- Markdown readers -----------------------------------------------------------------


def read_file(tool: str, path: str, text: str, *, refused: Collection[int] = (),
              vault: obsidian.Vault | None = None) -> FileReading:
    """Read one Markdown file as ``tool`` wrote it (``path`` relative to the source;
    ``refused``: its lines the policy refuses; ``vault``: an Obsidian vault's notes)."""
    pieces = read_markdown(text, refused)
    meta = front_matter(text)
    _drop_refused_keys(text, meta, refused)
    reading = FileReading(pieces, meta, file_added(path, meta), _title(meta, text, refused))
    if path == fmt.MEMORY_FILE:
        _index_section(text, pieces)
    entries = [p for p in pieces if p.action == ENTRY]
    if tool == "basic-memory" and reading.title:
        for piece in entries:
            if piece.reason == "list item" and _RELATION_RE.match(piece.text):
                piece.text = f"{reading.title} {piece.text}"
    where = sources.applies_to(tool, meta)
    for piece in entries:
        if where:
            piece.meta.setdefault("applies-to", where)
        if tool == "gemini" and sources.is_import_line(piece.text):
            piece.action, piece.reason, piece.text = STRUCTURE, "import of another file", ""
        elif tool == "obsidian" and vault is not None:
            embed = vault.embed_only(piece.text)
            if embed:
                piece.action, piece.reason, piece.text = STRUCTURE, embed, ""
            else:
                piece.text = vault.rewrite(obsidian.tidy(piece.text))
    return reading


def _index_section(text: str, pieces: list[Piece]) -> None:
    """The root MEMORY.md's ``## Index`` links are the drive's own Index, made anew."""
    start: int | None = None
    end = 0
    for block in fmt.read_blocks(text):
        if block.kind != bl.HEADING:
            continue
        if start is None and block.level == 2 and block.lines \
                and "## " + block.lines[0] == fmt.INDEX_HEADING:
            start = block.end
        elif start is not None and block.level <= 2:
            end = block.start
            break
    if start is None:
        return
    for piece in pieces:
        if piece.action == ENTRY and piece.line > start and (not end or piece.line < end) \
                and _INDEX_LINK_RE.match(piece.text.strip()):
            piece.action, piece.reason, piece.text = STRUCTURE, "index link", ""


# --- mem0 -------------------------------------------------------------------------------


def mem0_memories(data: Any) -> list[dict[str, Any]] | None:
    """The memory objects of a mem0 export (``{"results": [...]}``, ``{"memories":
    [...]}`` or a bare list), or None when ``data`` is not one."""
    items = data
    if isinstance(data, dict):
        items = data.get("results", data.get("memories"))
    if not isinstance(items, list) or not items:
        return None
    if not all(isinstance(m, dict) and isinstance(m.get("memory"), str) for m in items):
        return None
    return items


def read_mem0(path: str, text: str) -> FileReading:
    """Each memory of a mem0 JSON export is an entry in ``mem0/<user>.md``; every other
    line of the file is structure. Raises ValueError when the file is not an export."""
    try:
        memories = mem0_memories(json.loads(text))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not JSON: {exc.msg} at line {exc.lineno}") from exc
    if memories is None:
        raise ValueError(f"{path} is not a mem0 export (no list of objects with \"memory\")")
    lines = fmt.split_lines(text)
    decoder = json.JSONDecoder()
    pieces: list[Piece] = []
    pos = 0
    covered = 0
    key = re.compile(r'"memory"\s*:\s*')
    for memory in memories:
        found = None
        for m in key.finditer(text, pos):
            try:
                value, stop = decoder.raw_decode(text, m.end())
            except json.JSONDecodeError:
                continue
            if value == memory["memory"]:
                found = (m.start(), stop)
                break
        if found is None:  # the same text twice: the decoder already used its first place
            continue
        line = text.count("\n", 0, found[0]) + 1
        pos = found[1]
        if line > covered + 1:
            pieces.append(Piece(covered + 1, line - 1, STRUCTURE, "JSON"))
        owner = next((str(memory[k]) for k in ("user_id", "agent_id", "app_id", "run_id")
                      if memory.get(k)), "memories")
        piece = Piece(line, line, ENTRY, "mem0 memory", " ".join(memory["memory"].split()))
        piece.meta = {"mem0-owner": owner, "mem0-added": as_date(memory.get("created_at"))}
        pieces.append(piece)
        covered = line
    if covered < len(lines):
        pieces.append(Piece(covered + 1, len(lines), STRUCTURE, "JSON"))
    return FileReading(pieces)


# --- detection --------------------------------------------------------------------------


def walk(root: Path) -> Iterator[tuple[str, Path]]:
    """(relative posix path, path) of every file under ``root``, sorted, without
    descending into ``.git`` or following symbolic links to folders."""
    for folder, dirs, files in os.walk(root, followlinks=False):
        base = Path(folder)
        # a symbolic link to a folder is listed like a file (and never read), not walked
        linked = [d for d in dirs if (base / d).is_symlink()]
        dirs[:] = sorted(d for d in dirs if d != ".git" and d not in linked)
        for name in sorted(n for n in [*files, *linked] if n != ".git"):
            full = base / name
            yield full.relative_to(root).as_posix(), full


def _small_text(path: Path, limit: int = 65536) -> str:
    try:
        if path.is_symlink() or not path.is_file():
            return ""
        with path.open("rb") as fh:
            return fh.read(limit).decode("utf-8", "replace")
    except OSError:
        return ""


def select(tool: str, rels: list[str]) -> tuple[list[str], list[str]]:
    """(the files of a folder that are ``tool``'s memory, the files left unread): an
    instruction tool's own files (sources.select); an Obsidian vault without its
    settings; every file for the others."""
    if tool == "obsidian":
        return ([r for r in rels if not obsidian.is_setting(r)],
                [r for r in rels if obsidian.is_setting(r)])
    return sources.select(tool, rels)


def detect(source: Path) -> str:
    """The tool that most likely wrote ``source`` (a folder, or a file)."""
    if source.is_file():
        return _detect_file(source)
    files = [(rel, full) for rel, full in walk(source)]
    rels = {rel for rel, _ in files}
    names = {rel.rsplit("/", 1)[-1] for rel in rels}
    if any(rel.startswith("memory-bank/") for rel in rels) or len(_CLINE_FILES & names) >= 2:
        return "cline"
    markdown = [(rel, full) for rel, full in files if rel.endswith(MARKDOWN_SUFFIXES)]
    metas = {rel: front_matter(_small_text(full)) for rel, full in markdown}
    if (source / ".letta").is_dir() or any(
            rel.startswith("system/") and "description" in meta for rel, meta in metas.items()):
        return "letta"
    if any(re.match(r"(?:.*/)?memory/\d{4}-\d{2}-\d{2}[^/]*\.md\Z", rel) for rel in rels) \
            or len(_OPENCLAW_FILES & rels) >= 1:
        return "openclaw"
    if any(_claude_type(meta) in _CLAUDE_TYPES for meta in metas.values()):
        return "claude-code"
    if (source / ".obsidian").is_dir():
        return "obsidian"
    for tool in ("cursor", "windsurf", "copilot"):
        if any(sources.is_tool_file(tool, rel) for rel in rels):
            return tool
    texts = {rel: _small_text(full) for rel, full in markdown}
    if any("![[" in text for text in texts.values()):  # embeds: Obsidian's own syntax
        return "obsidian"
    if sum(len(_OBSERVATION_RE.findall(text)) for text in texts.values()) >= 3:
        return "basic-memory"
    if fmt.MEMORY_FILE in rels:
        memory = _small_text(source / fmt.MEMORY_FILE)
        if fmt.INDEX_HEADING in memory or any(
                (e := fmt.parse_entry(ln)) is not None and e.group for ln in memory.splitlines()):
            return "amr"
    jsons = [full for rel, full in files if rel.endswith(".json")]
    if jsons and not markdown and all(_is_mem0(full) for full in jsons):
        return "mem0"
    for tool in ("gemini", "agents"):  # a folder of these files only
        if markdown and all(sources.is_tool_file(tool, rel) for rel, _ in markdown):
            return tool
    return "plain"


def _detect_file(source: Path) -> str:
    if source.suffix.lower() == ".json":
        return "mem0"
    if source.name == fmt.MEMORY_FILE:
        return "amr"
    if source.name == "copilot-instructions.md":
        return "copilot"
    return next((tool for tool in sources.INSTRUCTION_TOOLS
                 if sources.is_tool_file(tool, source.name)), "plain")


def _claude_type(meta: dict[str, Any]) -> str:
    value = meta.get("type")
    nested = meta.get("metadata")
    if value is None and isinstance(nested, dict):
        value = nested.get("type")
    return value if isinstance(value, str) else ""


def _is_mem0(path: Path) -> bool:
    try:
        return mem0_memories(json.loads(path.read_text(encoding="utf-8"))) is not None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
