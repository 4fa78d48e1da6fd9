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

from memgit.format import blocks as bl
from memgit.safe_text import INVISIBLE_RANGES

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
# What a file that may hold a code block or front matter contains: a fence, a line
# indented four columns (a tab counts to the next four), or --- on top. Only such a file
# needs the block reader (writer-made files rarely do, and the hooks parse every new
# file); substring tests, since a regex over the whole text costs more than the parse.
_TAB_HINTS = ("\n\t", "\n \t", "\n  \t", "\n   \t")
_BLOCK_STARTS = ("---", "    ", "\t", " \t", "  \t", "   \t")
_TICKS_RE = re.compile(r"`+")
_LINK_RE = re.compile(r"\[\[([^\[\]|]+?)(?:\|[^\[\]]*)?\]\]")
_HEADING_RE = re.compile(r"(#{1,6})[ \t]")
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}\Z")
# What str.splitlines() and CommonMark take for a line end but split_lines does not:
# a CR not followed by LF (CommonMark, splitlines), VT, FF, FS, GS, RS, NEL, U+2028 and
# U+2029 (splitlines). docs/security.md explains why the policy refuses them (MG307).
_STRAY_BREAK_RE = re.compile("\r(?!\n)|[\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
# The other C0 controls (but TAB, LF, CR and NUL, which MG302 refuses first), DEL and the
# C1 controls (but NEL): ESC starts the terminal's escape sequences (CSI, OSC), which can
# hide text from a person reading the file with cat or git while an agent reads it whole.
CONTROL_CHARACTERS = "\x01-\x08\x0e-\x1b\x1f\x7f\x80-\x84\x86-\x9f"  # a class's body
_CONTROL_RE = re.compile("[" + CONTROL_CHARACTERS + "]")
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


def without_meta(entry: Entry, key: str) -> Entry:
    """``entry`` without metadata ``key``; other pairs are kept byte for byte (an empty
    group goes with its separating space)."""
    if not entry.group:
        return entry
    kept = [raw for raw in entry.group[1:-1].split(";")
            if not ((m := _PAIR_RE.match(raw)) and m.group(1) == key)]
    if len(kept) == len(entry.group[1:-1].split(";")):
        return entry
    if not kept:
        return replace(entry, body=entry.body.rstrip(" \t"), group="")
    if kept[0] != kept[0].lstrip(" \t") and not entry.group[1:].startswith((" ", "\t")):
        kept[0] = kept[0].lstrip(" \t")
    return replace(entry, group="[" + ";".join(kept) + "]")


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
    in_code: bool = False  # a fenced or indented code block (CommonMark, also in list items)
    in_index_section: bool = False
    in_front_matter: bool = False  # YAML between --- lines at the top: the file's metadata


@dataclass
class Document:
    """A parsed Markdown file: its lines in order, each with its entry when it holds one."""

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


def read_blocks(text: str) -> list[bl.Block]:
    """The CommonMark blocks of a Markdown file (memgit.format.blocks), lines cut by split_lines."""
    return bl.read_lines([content for content, _eol in split_lines(text)])


def front_matter_text(text: str) -> str | None:
    """The YAML between the front matter's ``---`` lines, or None when there is none."""
    lines = [content for content, _eol in split_lines(text)]
    front = bl.split_front_matter(lines)
    return "\n".join(lines[1:front - 1]) if front else None


def structure_marks(text: str, contents: Sequence[str]) -> tuple[frozenset[int], int]:
    """(numbers of the lines in code blocks, number of front matter lines) of a file.

    Code blocks are fenced or indented ones as CommonMark reads them (a fence inside a
    list item counts from the item's content column); front matter is YAML between a
    first-line ``---`` and the next ``---`` or ``...`` line. Only a file that can hold
    either is given to the block reader.
    """
    if not needs_block_reader(text):
        return frozenset(), 0
    code: set[int] = set()
    front = 0
    for block in bl.read_lines(contents):
        if block.kind == bl.FRONT_MATTER:
            front = block.end
        elif block.kind in (bl.FENCE, bl.CODE):
            code.update(range(block.start, block.end + 1))
    return frozenset(code), front


def needs_block_reader(text: str) -> bool:
    """False when no line of ``text`` can be code or front matter: every bullet line is
    then an entry, and a caller may parse lines one by one (memgit.purge.text does)."""
    if text.startswith(_BLOCK_STARTS) or "```" in text or "~~~" in text or "\n    " in text:
        return True
    return "\t" in text and any(hint in text for hint in _TAB_HINTS)


def stray_line_break(text: str) -> int:
    """Offset of the first character that CommonMark or ``str.splitlines()`` reads as a
    line end but :func:`split_lines` does not (a lone CR, U+2028...), or -1."""
    found = _STRAY_BREAK_RE.search(text)
    return found.start() if found is not None else -1


def control_character(text: str) -> int:
    """Offset of the first control character that is no line end (ESC, BEL, DEL, a C1
    control...), or -1; the line ends that readers disagree on are
    :func:`stray_line_break`'s."""
    found = _CONTROL_RE.search(text)
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
    """Parse a Markdown drive file. Bullets in code blocks, in front matter and the
    Index links of MEMORY.md are not entries."""
    doc = Document(path)
    split = split_lines(text)
    code, front = structure_marks(text, [content for content, _eol in split]) \
        if needs_block_reader(text) else (frozenset(), 0)
    in_index_section = False
    is_memory = path == MEMORY_FILE
    for number, (content, eol) in enumerate(split, start=1):
        if number <= front:
            doc.lines.append(Line(number, content, eol, in_front_matter=True))
            continue
        if number in code:
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


def heading_trails(doc: Document) -> dict[int, str]:
    """line number -> the trail of ATX headings above each entry (``Project > Build &
    Deploy``): where the entry sits, as the file's headings say."""
    trail: list[tuple[int, str]] = []
    out: dict[int, str] = {}
    for line in doc.lines:
        if line.entry is not None:
            out[line.number] = " > ".join(text for _level, text in trail if text)
            continue
        if line.in_code or line.in_front_matter or "#" not in line.content:
            continue
        heading = bl.atx_heading(line.content)
        if heading is not None:
            while trail and trail[-1][0] >= heading[0]:
                trail.pop()
            trail.append(heading)
    return out


def code_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of the inline code spans of one line, as CommonMark finds them: a
    run of backticks opens one, the next run of the same length closes it; a backslash
    before the first backtick makes it literal."""
    if "`" not in text:
        return []
    runs = [(m.start(), m.end()) for m in _TICKS_RE.finditer(text)]
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(runs):
        start, end = runs[i]
        if _escaped(text, start):
            start += 1  # an escaped backtick is literal; the rest of the run may open
        closer = next((j for j in range(i + 1, len(runs))
                       if runs[j][1] - runs[j][0] == end - start), None) if start < end else None
        if closer is None:
            i += 1
            continue
        out.append((start, runs[closer][1]))
        i = closer + 1
    return out


def _escaped(text: str, at: int) -> bool:
    """Whether the character at ``at`` follows an odd number of backslashes."""
    count = 0
    while at - count - 1 >= 0 and text[at - count - 1] == "\\":
        count += 1
    return count % 2 == 1


def strip_code_spans(text: str) -> str:
    """The line with each code span blanked (same length), for rules on prose only."""
    spans = code_spans(text)
    if not spans:
        return text
    out = list(text)
    for start, end in spans:
        out[start:end] = " " * (end - start)
    return "".join(out)


def iter_links(text: str) -> Iterator[str]:
    """Targets of ``[[path]]`` cross-links in a line (alias after ``|`` dropped); a
    ``[[...]]`` inside a code span is literal text, not a link."""
    if "[[" not in text:
        return
    for m in _LINK_RE.finditer(strip_code_spans(text)):
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
    """(heading line, end line exclusive) of the ``## Index`` section, outside code
    blocks and front matter (0-based)."""
    contents = [content for content, _eol in lines]
    code, front = structure_marks("\n".join(contents), contents)
    start: int | None = None
    for i, content in enumerate(contents):
        if i < front or i + 1 in code:
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


def index_section_difference(memory_text: str, paths: Iterable[str]) -> str:
    """What is wrong with a stale Index section, in words: no section, the links
    missing and extra, the first pair out of order, a repeated link, or (the same links
    in order) lines not in ``- [[path]]`` form. Empty when the section is current."""
    if index_section_is_current(memory_text, paths):
        return ""
    lines = split_lines(memory_text)
    span = _index_section_span(lines)
    if span is None:
        return "MEMORY.md has no ## Index section"
    listed: list[str] = []
    for content, _eol in lines[span[0] + 1 : span[1]]:
        m = _INDEX_SECTION_LINE_RE.match(content)
        if m:
            target = m.group(1).strip()
            listed.append(target[:-3] if target.endswith(".md") else target)
    wanted = index_section_paths(paths)
    missing = [t for t in wanted if t not in listed]
    extra = sorted({t for t in listed if t not in wanted})
    parts = []
    if missing:
        parts.append("missing " + _links(missing))
    if extra:
        parts.append("not a topic file " + _links(extra))
    if parts:
        return "the ## Index does not list exactly the drive's topic files: " + "; ".join(parts)
    repeated = next((t for i, t in enumerate(listed) if t in listed[:i]), None)
    if repeated is not None:
        return f"the ## Index lists [[{repeated}]] twice"
    pair = next(((a, b) for a, b in zip(listed, listed[1:], strict=False) if a > b), None)
    if pair is not None:
        return f"the ## Index is not sorted by path: [[{pair[0]}]] comes before [[{pair[1]}]]"
    return "the ## Index list is not in the form memgit writes (one '- [[path]]' line per " \
        "file, together)"


def _links(targets: list[str], most: int = 5) -> str:
    shown = ", ".join(f"[[{t}]]" for t in targets[:most])
    return shown + (f" and {len(targets) - most} more" if len(targets) > most else "")


def initial_memory(title: str = "Memory") -> str:
    return f"# {title}\n\n{INDEX_HEADING}\n"
