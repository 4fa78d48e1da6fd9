"""The drive format: lines, entries, metadata, ids, links and the ``## Index``.

Everything here is pure text processing: no git, no I/O. Parsing never raises
on arbitrary text (a line that is not an entry is kept as text), and
``serialise(parse(line)) == line`` holds byte for byte. docs/format.md records
how the spec's ambiguous corners are read.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

from .safe_text import INVISIBLE_RANGES

MEMORY_FILE = "MEMORY.md"
QUESTIONS_FILE = "questions.md"
INDEX_HEADING = "## Index"
RESERVED_DIRS = ("twin/", "imports/")
RESERVED_FILES = (QUESTIONS_FILE,)

_BULLET_RE = re.compile(r"([ \t]*)([-*])([ \t]+)(?=\S)")
_THEMATIC_BREAK_RE = re.compile(r"[ \t]{0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*\Z")
# The metadata group: the last ``[...]`` that ends the line (trailing blanks
# allowed) and holds no bracket inside; ``[[link]]`` cannot match because its
# last ``[`` is preceded by ``[`` and the group would end in ``]]``.
_GROUP_RE = re.compile(r"\[([^\[\]]*)\]([ \t]*)\Z")
_PAIR_RE = re.compile(r"[ \t]*([a-z][a-z0-9_-]*):(.*)\Z", re.S)
_FENCE_RE = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})")
_LINK_RE = re.compile(r"\[\[([^\[\]|]+?)(?:\|[^\[\]]*)?\]\]")
_HEADING_RE = re.compile(r"(#{1,6})[ \t]")
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}\Z")
# What str.splitlines() and CommonMark take for a line end but split_lines does not:
# a CR not followed by LF (CommonMark, splitlines), VT, FF, FS, GS, RS, NEL, U+2028 and
# U+2029 (splitlines). docs/security.md explains why the policy refuses them (MG307).
_STRAY_BREAK_RE = re.compile("\r(?!\n)|[\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
# Invisible characters (safe_text.INVISIBLE_RANGES: Unicode Cf and the other
# default-ignorables) as one character class.
INVISIBLE_RE = re.compile("[" + "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}"
                                        for a, b in INVISIBLE_RANGES) + "]")
# An entry id (and a parent or supersedes value): what the policy accepts (MG106).
ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}\Z")


@dataclass(frozen=True)
class Entry:
    """One bullet line split into parts that join back to the same bytes.

    ``prefix`` is indentation + bullet + blanks; ``body`` is the entry text as
    written (it may end with blanks before the group); ``group`` is the
    metadata group with its brackets (``""`` when there is none); ``tail`` is
    what follows the group (trailing blanks).
    """

    prefix: str
    body: str
    group: str = ""
    tail: str = ""

    @property
    def text(self) -> str:
        """The entry text without bullet and metadata, surrounding blanks removed."""
        return self.body.strip(" \t")

    @cached_property
    def meta(self) -> dict[str, str]:
        """Metadata as a dict (values stripped); empty when there is no group.

        Cached: the dataclass is frozen, and cached_property writes the instance
        ``__dict__`` directly. Treat the returned dict as read-only.
        """
        return dict(parse_group(self.group[1:-1]) or ()) if self.group else {}

    def get(self, key: str, default: str = "") -> str:
        return self.meta.get(key, default)

    @property
    def id(self) -> str:
        """The explicit ``id`` or the deterministic ``entry-`` id."""
        meta = self.meta
        explicit = meta.get("id")
        if explicit:
            return explicit
        return deterministic_id(self.text, meta.get("source", ""), meta.get("added", ""))

    @property
    def has_explicit_id(self) -> bool:
        return bool(self.meta.get("id"))

    def serialise(self) -> str:
        return self.prefix + self.body + self.group + self.tail

    def with_text(self, text: str) -> Entry:
        """The same entry with new text, keeping bullet and metadata bytes."""
        sep = " " if self.group else ""
        return replace(self, body=text + sep)

    def with_meta(self, key: str, value: str) -> Entry:
        """Set one metadata value; other pairs are kept byte for byte."""
        if not self.group:
            body = self.body if self.body.endswith((" ", "\t")) else self.body + " "
            return replace(self, body=body, group=f"[{key}: {value}]")
        raw_pairs = self.group[1:-1].split(";")
        out: list[str] = []
        done = False
        for raw in raw_pairs:
            m = _PAIR_RE.match(raw)
            if m and m.group(1) == key and not done:
                lead = raw[: len(raw) - len(raw.lstrip(" \t"))]
                out.append(f"{lead}{key}: {value}")
                done = True
            else:
                out.append(raw)
        if not done:
            out.append(f" {key}: {value}")
        return replace(self, group="[" + ";".join(out) + "]")


def parse_group(inner: str) -> list[tuple[str, str]] | None:
    """Parse the inside of a ``[...]`` group into ``(key, value)`` pairs.

    Returns ``None`` when the text is not a metadata group (any part that is
    not ``key: value``).
    """
    if not inner.strip():
        return None
    pairs: list[tuple[str, str]] = []
    for raw in inner.split(";"):
        m = _PAIR_RE.match(raw)
        if m is None:
            return None
        pairs.append((m.group(1), m.group(2).strip(" \t")))
    return pairs


def parse_entry(line: str) -> Entry | None:
    """Parse one line (without its line terminator) as an entry, or ``None``."""
    bullet = _BULLET_RE.match(line)
    if bullet is None or _THEMATIC_BREAK_RE.match(line):
        return None
    prefix = line[: bullet.end()]
    rest = line[bullet.end() :]
    group_match = _GROUP_RE.search(rest)
    if group_match is not None:
        start = group_match.start()
        # ``[[a]] [b: c]`` is fine, but ``[[x: y]]`` ends in ``]]``: the group
        # regex cannot match there because ``[^\[\]]`` excludes the inner ``[``.
        pairs = parse_group(group_match.group(1))
        if pairs is not None and rest[:start].strip(" \t"):
            entry = Entry(prefix, rest[:start], rest[start : group_match.end(1) + 1],
                          group_match.group(2))
            entry.__dict__["meta"] = dict(pairs)  # prime the cached_property
            return entry
    return Entry(prefix, rest)


def deterministic_id(text: str, source: str = "", added: str = "") -> str:
    """``entry-`` + the first 16 hex digits of sha256(text \\n source \\n added)."""
    digest = hashlib.sha256(f"{text}\n{source}\n{added}".encode()).hexdigest()
    return "entry-" + digest[:16]


# --- ids --------------------------------------------------------------------

_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"
_ulid_lock = threading.Lock()
_ulid_last: list[int] = [0, 0, 0]  # pid, milliseconds, random part of the last id


def new_id(now_ms: int | None = None) -> str:
    """A new ``m-`` id: a lowercase ULID, monotonic within this process.

    The monotonic state belongs to one process: a forked child starts afresh
    (else parent and children would count up from the same random part and
    hand out the same ids). An explicit ``now_ms`` neither uses nor moves it.
    """
    if now_ms is not None:
        ms, rand = now_ms, int.from_bytes(os.urandom(10), "big")
    else:
        ms = int(time.time() * 1000)
        with _ulid_lock:
            pid = os.getpid()
            if _ulid_last[0] != pid:
                _ulid_last[:] = [pid, 0, 0]
            if ms <= _ulid_last[1]:
                ms = _ulid_last[1]
                rand = (_ulid_last[2] + 1) & ((1 << 80) - 1)
            else:
                rand = int.from_bytes(os.urandom(10), "big")
            _ulid_last[1], _ulid_last[2] = ms, rand
    value = (ms << 80) | rand
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "m-" + "".join(reversed(chars))


def is_memgit_id(value: str) -> bool:
    return re.fullmatch(r"m-[0-7][0-9a-hjkmnp-tv-z]{25}", value) is not None


def is_valid_date(value: str) -> bool:
    """A real calendar date written YYYY-MM-DD."""
    if not _DATE_RE.match(value):
        return False
    import datetime as _dt

    try:
        _dt.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def format_entry(text: str, source: str, added: str, entry_id: str, bullet: str = "- ") -> str:
    """A new entry line in memgit's canonical form."""
    return f"{bullet}{text} [source: {source}; added: {added}; id: {entry_id}]"


# --- documents ----------------------------------------------------------------


@dataclass(frozen=True)
class Line:
    """One line of a document: ``content`` without terminator, ``eol`` the terminator."""

    number: int
    content: str
    eol: str
    entry: Entry | None = None
    in_fence: bool = False
    in_index_section: bool = False


@dataclass
class Document:
    path: str
    lines: list[Line] = field(default_factory=list)

    def entries(self) -> Iterator[tuple[Line, Entry]]:
        for line in self.lines:
            if line.entry is not None:
                yield line, line.entry

    def serialise(self) -> str:
        return "".join(line.content + line.eol for line in self.lines)


def split_lines(text: str) -> list[tuple[str, str]]:
    """Split into ``(content, eol)``; only ``\\n`` and ``\\r\\n`` end a line.

    The one line splitter of memgit: the parser, the policy, the purge and the registry
    all read lines through it. Other characters that some readers take for a line end
    (:func:`stray_line_break`) stay inside a line here, and the policy refuses them.
    """
    out: list[tuple[str, str]] = []
    pos = 0
    n = len(text)
    while pos < n:
        nl = text.find("\n", pos)
        if nl < 0:
            out.append((text[pos:], ""))
            break
        if nl > pos and text[nl - 1] == "\r":
            out.append((text[pos : nl - 1], "\r\n"))
        else:
            out.append((text[pos:nl], "\n"))
        pos = nl + 1
    return out


def stray_line_break(text: str) -> int:
    """Offset of the first character that CommonMark or ``str.splitlines()`` reads as a
    line end but :func:`split_lines` does not (a lone CR, U+2028...), or -1."""
    found = _STRAY_BREAK_RE.search(text)
    return found.start() if found is not None else -1


def line_around(text: str, at: int) -> tuple[int, int, str]:
    """The line of ``text`` holding offset ``at``, as :func:`split_lines` cuts it:
    (start, end including the terminator, content without it)."""
    start = text.rfind("\n", 0, at) + 1
    nl = text.find("\n", at)
    end = len(text) if nl < 0 else nl + 1
    content = text[start:nl] if nl >= 0 else text[start:]
    if nl >= 0 and content.endswith("\r"):
        content = content[:-1]
    return start, end, content


def parse_document(path: str, text: str) -> Document:
    """Parse a Markdown drive file. Bullets in fenced code and Index links are not entries."""
    doc = Document(path)
    fence: str | None = None
    in_index_section = False
    is_memory = path == MEMORY_FILE
    for number, (content, eol) in enumerate(split_lines(text), start=1):
        fence_match = _FENCE_RE.match(content)
        if fence is not None:
            closing = fence_match is not None and fence_match.group(1)[0] == fence[0] \
                and len(fence_match.group(1)) >= len(fence) \
                and not content[fence_match.end():].strip()
            doc.lines.append(Line(number, content, eol, None, True, in_index_section))
            if closing:
                fence = None
            continue
        if fence_match is not None:
            fence = fence_match.group(1)
            doc.lines.append(Line(number, content, eol, None, True, in_index_section))
            continue
        heading = _HEADING_RE.match(content)
        if heading is not None and is_memory:
            level = len(heading.group(1))
            if content.rstrip() == INDEX_HEADING:
                in_index_section = True
            elif level <= 2:
                in_index_section = False
        entry = None if in_index_section else parse_entry(content)
        doc.lines.append(Line(number, content, eol, entry, False, in_index_section))
    return doc


def iter_links(text: str) -> Iterator[str]:
    """Targets of ``[[path]]`` cross-links in a line (alias after ``|`` dropped)."""
    for m in _LINK_RE.finditer(text):
        yield m.group(1).strip()


def link_target_path(target: str, existing: Iterable[str] = ()) -> str:
    """The drive path a link points at: ``.md`` omitted for Markdown files."""
    if target.endswith(".md"):
        return target
    existing_set = set(existing)
    if target in existing_set:
        return target
    return target + ".md"


# --- the Index ---------------------------------------------------------------


def fold_path(path: str) -> str:
    """The form two paths are compared in: NFC, then case-folded (``Twin/A`` = ``twin/a``)."""
    return unicodedata.normalize("NFC", path).casefold()


def is_reserved(path: str) -> bool:
    """questions.md, twin/ and imports/, in any letter case (the collision fold)."""
    key = fold_path(path)
    return key in RESERVED_FILES or key.startswith(RESERVED_DIRS)


def index_section_paths(paths: Iterable[str]) -> list[str]:
    """Link targets the Index must list: every Markdown file but MEMORY.md and reserved ones."""
    targets = [
        p[:-3]
        for p in paths
        if p.endswith(".md") and p != MEMORY_FILE and not is_reserved(p)
    ]
    return sorted(targets)


_INDEX_SECTION_LINE_RE = re.compile(r"[ \t]*[-*][ \t]+\[\[([^\[\]]+)\]\](.*)\Z")


def _index_section_span(lines: Sequence[tuple[str, str]]) -> tuple[int, int] | None:
    """(heading line, end line exclusive) of the ``## Index`` section, outside fences."""
    fence: str | None = None
    start: int | None = None
    for i, (content, _eol) in enumerate(lines):
        fm = _FENCE_RE.match(content)
        if fence is not None:
            if fm and fm.group(1)[0] == fence[0] and len(fm.group(1)) >= len(fence):
                fence = None
            continue
        if fm:
            fence = fm.group(1)
            continue
        h = _HEADING_RE.match(content)
        if h is None:
            continue
        if start is None and content.rstrip() == INDEX_HEADING:
            start = i
        elif start is not None and len(h.group(1)) <= 2:
            return start, i
    if start is None:
        return None
    return start, len(lines)


def index_section_lines(memory_text: str) -> list[str]:
    """The non-blank lines of MEMORY.md's ``## Index`` section (without the heading)."""
    lines = split_lines(memory_text)
    span = _index_section_span(lines)
    if span is None:
        return []
    start, end = span
    return [c.rstrip() for c, _eol in lines[start + 1:end] if c.strip()]


def regenerate_index_section(memory_text: str, paths: Iterable[str]) -> str:
    """MEMORY.md with its ``## Index`` listing exactly the drive's topic files.

    Descriptions after a link are kept; other lines of the section stay where
    they are; the generated list takes the place of the first old link line.
    A missing section is appended at the end.
    """
    targets = index_section_paths(paths)
    lines = split_lines(memory_text)
    eol = "\r\n" if lines and lines[0][1] == "\r\n" else "\n"
    span = _index_section_span(lines)
    if span is None:
        out = memory_text
        if out and not out.endswith("\n"):
            out += eol
        if out and not out.endswith(eol + eol):
            out += eol
        out += INDEX_HEADING + eol
        out += "".join(f"- [[{t}]]{eol}" for t in targets)
        return out
    start, end = span
    described: dict[str, str] = {}
    kept: list[tuple[str, str]] = []
    insert_at: int | None = None
    for content, line_eol in lines[start + 1 : end]:
        m = _INDEX_SECTION_LINE_RE.match(content)
        if m:
            target = m.group(1).strip()
            if target.endswith(".md"):
                target = target[:-3]
            described.setdefault(target, m.group(2))
            if insert_at is None:
                insert_at = len(kept)
            continue
        kept.append((content, line_eol))
    if insert_at is None:
        insert_at = 0  # no list yet: put it right after the heading
    generated = [(f"- [[{t}]]{described.get(t, '')}", eol) for t in targets]
    body = kept[:insert_at] + generated + kept[insert_at:]
    # Lines that moved inside the section all end with a terminator; only the
    # very last line of the file keeps "no terminator" if it had none.
    at_eof = end == len(lines)
    missing_final_eol = at_eof and lines[-1][1] == ""
    body = [(c, e or eol) for c, e in body]
    heading = (lines[start][0], lines[start][1] or eol)
    new_lines = list(lines[:start]) + [heading] + body + list(lines[end:])
    if missing_final_eol:
        new_lines[-1] = (new_lines[-1][0], "")
    return "".join(c + e for c, e in new_lines)


def index_section_is_current(memory_text: str, paths: Iterable[str]) -> bool:
    return regenerate_index_section(memory_text, paths) == memory_text


def initial_memory(title: str = "Memory") -> str:
    return f"# {title}\n\n{INDEX_HEADING}\n"
