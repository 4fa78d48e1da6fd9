"""CommonMark block structure of a Markdown file: the one block reader of memgit.

``read_lines`` splits a file into leaf blocks with their line ranges (CommonMark's
containers and leaves, closely enough for memory files, and YAML front matter). Every line
belongs to exactly one block, blank lines too, so a caller can say what becomes of each
line; it never raises on arbitrary text, and imports nothing of memgit, so the hooks may
use it. docs/compat.md: how it is tested against markdown-it-py.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

PARAGRAPH = "paragraph"
HEADING = "heading"
FENCE = "fence"
CODE = "code"
HTML = "html"
TABLE = "table"
THEMATIC = "thematic"
BLANK = "blank"
FRONT_MATTER = "front-matter"
LINK_DEF = "link-definition"
EMPTY_ITEM = "empty-item"

_ATX_RE = re.compile(r"(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*\Z")
_FENCE_OPEN_RE = re.compile(r"(`{3,}|~{3,})(.*)\Z")
_THEMATIC_RE = re.compile(r"([-*_])(?:[ \t]*\1){2,}[ \t]*\Z")
_SETEXT_RE = re.compile(r"(=+|-+)[ \t]*\Z")
_BULLET_RE = re.compile(r"([-*+])(?=[ \t]|\Z)")
_ORDERED_RE = re.compile(r"(\d{1,9})([.)])(?=[ \t]|\Z)")
_LINK_DEF_RE = re.compile(r"\[[^\]]+\]:[ \t]*\S")
_TABLE_DELIM_RE = re.compile(r"\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*\Z")
_HTML_TAGS = frozenset("""address article aside base basefont blockquote body caption center col
colgroup dd details dialog dir div dl dt fieldset figcaption figure footer form frame frameset h1
h2 h3 h4 h5 h6 head header hr html iframe legend li link main menu menuitem nav noframes ol
optgroup option p param search section summary table tbody td tfoot th thead title tr track
ul""".split())
_HTML_RAW_RE = re.compile(r"<(?:script|pre|style|textarea)(?:[ \t>]|\Z)", re.I)
_HTML_BLOCK6_RE = re.compile(r"</?([A-Za-z][A-Za-z0-9-]*)(?:[ \t/>]|\Z)")
_HTML_TAG7_RE = re.compile(
    r"(?:<[A-Za-z][A-Za-z0-9-]*(?:[ \t]+[A-Za-z_:][\w.:-]*(?:[ \t]*=[ \t]*"
    r"(?:[^ \t\"'=<>`]+|'[^']*'|\"[^\"]*\"))?)*[ \t]*/?>|</[A-Za-z][A-Za-z0-9-]*[ \t]*>)[ \t]*\Z")


def atx_heading(line: str) -> tuple[int, str] | None:
    """(level, text) of an ATX heading line (``## Build & Deploy``), or None."""
    s = _expand(line)
    if _indent(s) > 3:
        return None
    m = _ATX_RE.match(s.lstrip(" "))
    return (len(m.group(1)), (m.group(2) or "").strip()) if m else None


@dataclass
class ListItem:
    """One list item: where it starts, its marker, and its parent item."""

    line: int
    marker: str
    parent: ListItem | None = None
    blocks: list[Block] = field(default_factory=list)


@dataclass
class Block:
    """A leaf block: ``kind``, lines ``start``..``end`` (1-based, inclusive),
    ``lines`` its content with container markers removed, ``item`` the innermost
    list item holding it, ``level`` a heading's level, ``info`` a fence's info."""

    kind: str
    start: int
    end: int
    lines: list[str] = field(default_factory=list)
    item: ListItem | None = None
    quoted: bool = False
    level: int = 0
    info: str = ""
    fence: str = ""
    fence_indent: int = 0
    closed: bool = False


def _expand(line: str) -> str:
    """Tabs to spaces at four-column stops (CommonMark's tab rule, for structure only)."""
    if "\t" not in line:
        return line
    out: list[str] = []
    col = 0
    for ch in line:
        if ch == "\t":
            pad = 4 - col % 4
            out.append(" " * pad)
            col += pad
        else:
            out.append(ch)
            col += 1
    return "".join(out)


def _indent(s: str) -> int:
    return len(s) - len(s.lstrip(" "))


def split_front_matter(lines: Sequence[str]) -> int:
    """Number of lines of YAML front matter at the top (0 when there is none)."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            return i + 1
    return 0


@dataclass
class _Container:
    """A block quote or list item the reader is inside, and what continues it."""

    kind: str  # "quote" or "item"
    item: ListItem | None = None
    content: int = 0  # columns a continuation line must be indented by (items)
    has_content: bool = False  # an item saw a non-blank line


class _Reader:
    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.stack: list[_Container] = []
        self.leaf: Block | None = None  # the open leaf (paragraph, fence, code, html, table)
        self.leaf_depth = 0  # how many containers the open leaf is inside

    # --- helpers -------------------------------------------------------------

    def _innermost_item(self, depth: int | None = None) -> ListItem | None:
        for c in reversed(self.stack[: len(self.stack) if depth is None else depth]):
            if c.kind == "item":
                return c.item
        return None

    def _quoted(self) -> bool:
        return any(c.kind == "quote" for c in self.stack)

    def _add(self, block: Block) -> Block:
        block.item = self._innermost_item()
        block.quoted = self._quoted()
        if block.item is not None:
            block.item.blocks.append(block)
        self.blocks.append(block)
        return block

    def _close_leaf(self) -> None:
        if self.leaf is not None and self.leaf.kind == CODE:
            # trailing blank lines are not part of an indented code block
            while self.leaf.lines and not self.leaf.lines[-1].strip() \
                    and self.leaf.end > self.leaf.start:
                self.leaf.lines.pop()
                self.leaf.end -= 1
                self.blocks.insert(self.blocks.index(self.leaf) + 1,
                                   Block(BLANK, self.leaf.end + 1, self.leaf.end + 1, [""],
                                         self.leaf.item, self.leaf.quoted))
        self.leaf = None

    def _close_containers(self, keep: int) -> None:
        if len(self.stack) > keep:
            if self.leaf is not None and self.leaf_depth > keep:
                self._close_leaf()
            del self.stack[keep:]

    # --- one line --------------------------------------------------------------

    def line(self, number: int, raw: str) -> None:
        s = _expand(raw)
        pos, matched = self._match_containers(s)
        rest = s[pos:]
        leaf = self.leaf
        all_matched = matched == len(self.stack)
        if leaf is not None and leaf.kind == FENCE and all_matched and self.leaf_depth == matched:
            self._fence_line(number, rest)
            return
        if leaf is not None and leaf.kind == HTML and all_matched and self.leaf_depth == matched:
            self._html_line(number, rest)
            return
        opened = False
        while True:
            new = self._open_container(number, rest, matched if not opened else len(self.stack),
                                       opened)
            if new is None:
                break
            rest = new
            opened = True
        if not opened and matched < len(self.stack):
            if self._lazy(rest):
                self._append(number, rest.strip())
                return
            self._close_containers(matched)
        self._leaf_line(number, rest, opened)

    def _match_containers(self, s: str) -> tuple[int, int]:
        pos = 0
        matched = 0
        for c in self.stack:
            rest = s[pos:]
            if c.kind == "quote":
                ind = _indent(rest)
                if ind <= 3 and rest[ind:ind + 1] == ">":
                    pos += ind + 1
                    if s[pos:pos + 1] == " ":
                        pos += 1
                    matched += 1
                    continue
                break
            if not rest.strip():
                if c.has_content:
                    matched += 1
                    pos = min(len(s), pos + c.content)
                    continue
                break
            if _indent(rest) >= c.content:
                pos += c.content
                matched += 1
                continue
            break
        return pos, matched

    def _open_container(self, number: int, rest: str, matched: int, opened: bool) -> str | None:
        ind = _indent(rest)
        if ind >= 4:
            return None
        body = rest[ind:]
        if body.startswith(">"):
            self._close_containers(matched)
            if self.leaf is not None and self.leaf_depth >= len(self.stack):
                self._close_leaf()
            self.stack.append(_Container("quote"))
            out = body[1:]
            return out[1:] if out.startswith(" ") else out
        if _THEMATIC_RE.match(body):
            return None
        bullet = _BULLET_RE.match(body) or _ORDERED_RE.match(body)
        if bullet is None:
            return None
        after = body[bullet.end():]
        blank_start = not after.strip()
        # the interruption rule concerns a paragraph of the container this line
        # continues (a sibling item after an item's paragraph is not interrupting it)
        paragraph_open = (self.leaf is not None and self.leaf.kind == PARAGRAPH
                          and self.leaf_depth == matched and not opened)
        if paragraph_open:
            # CommonMark: an empty item, or an ordered one not starting at 1,
            # cannot interrupt a paragraph
            if blank_start or (bullet.re is _ORDERED_RE and bullet.group(1) != "1"):
                return None
        spaces = _indent(after)
        marker_width = ind + bullet.end()
        if blank_start:
            width = marker_width + 1
        elif spaces > 4:
            width = marker_width + 1  # the content is indented code
        else:
            width = marker_width + spaces
        self._close_containers(matched)
        if self.leaf is not None and self.leaf_depth >= len(self.stack):
            self._close_leaf()
        item = ListItem(number, bullet.group(0), self._innermost_item())
        container = _Container("item", item, width, has_content=not blank_start)
        self.stack.append(container)
        if blank_start:
            return ""
        return after[1:] if spaces > 4 else after[spaces:]

    def _lazy(self, rest: str) -> bool:
        """A paragraph continuation line that did not match the open containers."""
        if self.leaf is None or self.leaf.kind != PARAGRAPH or not rest.strip():
            return False
        body = rest.lstrip(" ")
        if _indent(rest) < 4 and (body.startswith(">") or _ATX_RE.match(body)
                                  or _FENCE_OPEN_RE.match(body) or _THEMATIC_RE.match(body)
                                  or self._html_start(body, interrupting=True) is not None):
            return False
        if _indent(rest) < 4 and (_BULLET_RE.match(body) or _ORDERED_RE.match(body)):
            m = _BULLET_RE.match(body) or _ORDERED_RE.match(body)
            assert m is not None
            if body[m.end():].strip() and (m.re is _BULLET_RE or m.group(1) == "1"):
                return False
        return True

    def _append(self, number: int, text: str) -> None:
        assert self.leaf is not None
        self.leaf.lines.append(text)
        self.leaf.end = number
        for c in self.stack[: self.leaf_depth]:
            if c.kind == "item":
                c.has_content = True

    def _open_leaf(self, block: Block) -> None:
        self._close_leaf()
        self.leaf = self._add(block)
        self.leaf_depth = len(self.stack)

    def _mark_content(self) -> None:
        for c in self.stack:
            if c.kind == "item":
                c.has_content = True

    def _leaf_line(self, number: int, rest: str, opened: bool) -> None:
        leaf = self.leaf
        if leaf is not None and self.leaf_depth != len(self.stack):
            self._close_leaf()
            leaf = None
        if not rest.strip():
            if leaf is not None and leaf.kind == CODE:
                leaf.lines.append(rest[4:] if len(rest) > 4 else "")
                leaf.end = number
                return
            self._close_leaf()
            top = self.stack[-1] if self.stack else None
            empty = opened and top is not None and top.kind == "item" and not top.has_content
            self._add(Block(EMPTY_ITEM if empty else BLANK, number, number, [""]))
            return
        self._mark_content()
        ind = _indent(rest)
        body = rest[ind:]
        if leaf is not None and leaf.kind == CODE and ind >= 4:
            leaf.lines.append(rest[4:])
            leaf.end = number
            return
        if ind >= 4:
            if leaf is not None and leaf.kind == PARAGRAPH:
                self._append(number, rest.strip())
                return
            self._open_leaf(Block(CODE, number, number, [rest[4:]]))
            return
        atx = _ATX_RE.match(body)
        if atx:
            self._close_leaf()
            self._add(Block(HEADING, number, number, [(atx.group(2) or "").strip()],
                            level=len(atx.group(1))))
            return
        fence = _FENCE_OPEN_RE.match(body)
        if fence and not (fence.group(1)[0] == "`" and "`" in fence.group(2)):
            self._open_leaf(Block(FENCE, number, number, [], info=fence.group(2).strip(),
                                  fence=fence.group(1), fence_indent=ind))
            return
        if leaf is not None and leaf.kind == PARAGRAPH and not opened and _SETEXT_RE.match(body):
            leaf.kind = HEADING
            leaf.level = 1 if body[0] == "=" else 2
            leaf.end = number
            leaf.lines = [" ".join(x.strip() for x in leaf.lines)]
            self.leaf = None
            return
        if _THEMATIC_RE.match(body):
            self._close_leaf()
            self._add(Block(THEMATIC, number, number, [body]))
            return
        html = self._html_start(body, interrupting=leaf is not None and leaf.kind == PARAGRAPH)
        if html is not None:
            block = Block(HTML, number, number, [rest], info=html)
            self._open_leaf(block)
            if self._html_ends(html, body):
                block.closed = True
                self.leaf = None
            return
        if leaf is not None and leaf.kind == PARAGRAPH:
            if "|" in leaf.lines[-1] and _TABLE_DELIM_RE.match(body) and "-" in body \
                    and _cells(leaf.lines[-1]) == _cells(body):
                self._table_from_paragraph(number, body)
                return
            self._append(number, rest.strip())
            return
        if leaf is not None and leaf.kind == TABLE:
            leaf.lines.append(body)
            leaf.end = number
            return
        if _LINK_DEF_RE.match(body):
            self._close_leaf()
            self._add(Block(LINK_DEF, number, number, [body]))
            return
        self._open_leaf(Block(PARAGRAPH, number, number, [body.strip()]))

    def _table_from_paragraph(self, number: int, delimiter: str) -> None:
        """A delimiter row under a paragraph's last line: that line is a table's header
        (GFM lets a table interrupt a paragraph; the lines before stay a paragraph)."""
        leaf = self.leaf
        assert leaf is not None
        header = leaf.lines.pop()
        if leaf.lines:
            leaf.end = number - 2
            self._open_leaf(Block(TABLE, number - 1, number, [header, delimiter]))
        else:
            leaf.kind = TABLE
            leaf.lines = [header, delimiter]
            leaf.end = number

    def _fence_line(self, number: int, rest: str) -> None:
        leaf = self.leaf
        assert leaf is not None
        ind = _indent(rest)
        body = rest[ind:]
        leaf.end = number
        if ind < 4 and body.startswith(leaf.fence[0] * len(leaf.fence)) \
                and not body.strip(leaf.fence[0]).strip():
            leaf.closed = True
            self.leaf = None
            return
        leaf.lines.append(rest[min(ind, leaf.fence_indent):])

    def _html_line(self, number: int, rest: str) -> None:
        leaf = self.leaf
        assert leaf is not None
        if leaf.info in ("6", "7") and not rest.strip():
            self._close_leaf()
            self._add(Block(BLANK, number, number, [""]))
            return
        leaf.lines.append(rest)
        leaf.end = number
        if self._html_ends(leaf.info, rest):
            leaf.closed = True
            self.leaf = None

    @staticmethod
    def _html_start(body: str, *, interrupting: bool) -> str | None:
        """The CommonMark HTML block type (1-7) a line starts, or None."""
        if not body.startswith("<"):
            return None
        if _HTML_RAW_RE.match(body):
            return "1"
        if body.startswith("<!--"):
            return "2"
        if body.startswith("<?"):
            return "3"
        if re.match(r"<![A-Za-z]", body):
            return "4"
        if body.startswith("<![CDATA["):
            return "5"
        m = _HTML_BLOCK6_RE.match(body)
        if m and m.group(1).lower() in _HTML_TAGS:
            return "6"
        if not interrupting and _HTML_TAG7_RE.match(body):
            return "7"
        return None

    @staticmethod
    def _html_ends(kind: str, line: str) -> bool:
        if kind == "1":
            return re.search(r"</(?:script|pre|style|textarea)>", line, re.I) is not None
        return {"2": "-->", "3": "?>", "4": ">", "5": "]]>"}.get(kind, "\0") in line

    def finish(self) -> list[Block]:
        self._close_leaf()
        return self.blocks


def _cells(row: str) -> int:
    inner = row.strip()
    if inner.startswith("|"):
        inner = inner[1:]
    if inner.endswith("|"):
        inner = inner[:-1]
    return len(re.split(r"(?<!\\)\|", inner))


def read_lines(lines: Sequence[str]) -> list[Block]:
    """The blocks of a Markdown file's lines (without terminators), in line order."""
    blocks: list[Block] = []
    front = split_front_matter(lines)
    if front:
        blocks.append(Block(FRONT_MATTER, 1, front, list(lines[1:front - 1])))
    reader = _Reader()
    for number in range(front + 1, len(lines) + 1):
        reader.line(number, lines[number - 1])
    blocks.extend(reader.finish())
    return blocks
