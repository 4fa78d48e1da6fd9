"""What becomes of each block of a Markdown memory file (the readers' common core).

``read_markdown(text)`` turns format.blocks' blocks into ``Piece`` objects covering every
line once: entries (list items and prose paragraphs), structure (headings, which make an
entry's context, and the rest) and verbatim (code, tables, HTML, images: they cannot be
one-line entries). An entry's own AMR metadata group is kept.
A line the policy refuses in the source gives no context and no subject to the entries
after it, so a refusal costs its own block only.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field

from memgit.format import blocks as bl
from memgit.format import entries as fmt

ENTRY = "entry"
REFUSED = "refused"
VERBATIM = "verbatim"
STRUCTURE = "structure"

_LABEL_RE = re.compile(r"(?:\*\*|__)?([^*_]{1,80}?)(?:[:：])?(?:\*\*|__)?[:：]?\Z")
_IMAGE_ONLY_RE = re.compile(r"(?:!\[[^\]]*\]\([^)]*\)\s*)+\Z")
_BOLD_LEAD_RE = re.compile(r"(?:\*\*|__)(.+?)(?:\*\*|__)")
_SPLIT_RE = re.compile(r"\s*(?:[:：]|\s[—–-]\s)\s*")
_HARD_BREAK_RE = re.compile(r"\\\Z")
SUBJECT_MAX = 60
CONTEXT_MAX = 160


@dataclass
class Piece:
    """What becomes of lines ``line``..``end`` of a file."""

    line: int
    end: int
    action: str
    reason: str = ""
    text: str = ""
    context: str = ""
    meta: dict[str, str] = field(default_factory=dict)


def plain(text: str) -> str:
    """Inline emphasis markers removed, for subjects and contexts (not entry texts)."""
    return re.sub(r"(\*\*|__|`)", "", text).strip()


def join_lines(lines: list[str]) -> str:
    """A paragraph's lines as one line: hard-break backslashes dropped, blanks collapsed."""
    return " ".join(" ".join(_HARD_BREAK_RE.sub("", ln) for ln in lines).split())


def is_label(text: str) -> bool:
    """A short paragraph that only names what follows: ``**Costs:**``, ``Why:``."""
    stripped = text.strip()
    if len(stripped) > 80 or not stripped:
        return False
    colon = stripped.endswith((":", "：", ":**", "：**", ":__"))
    # a bold phrase alone is a label only when short and not a sentence
    bold = stripped.startswith(("**", "__")) and stripped.endswith(("**", "__")) \
        and len(stripped) <= 44 and not any(c in stripped for c in ".。!！?？,、;")
    return (bold or colon) and _LABEL_RE.match(stripped) is not None and "](" not in stripped


def subject_of(text: str) -> str:
    """The subject a parent item gives its nested items.

    A label item (``**CLI changes:**``) gives its label; an item that opens
    with a bold phrase or ``Name: rest`` gives that phrase; otherwise the first
    words of the item, at most SUBJECT_MAX characters.
    """
    bold = _BOLD_LEAD_RE.match(text)
    if bold:
        return plain(bold.group(1)).rstrip(":： ")
    flat = plain(text)
    parts = _SPLIT_RE.split(flat, maxsplit=1)
    head = parts[0].rstrip(":： ")
    if len(parts) == 2 and 0 < len(head) <= SUBJECT_MAX:
        return head
    if len(flat) <= SUBJECT_MAX:
        return flat.rstrip(":： ")
    cut = flat[:SUBJECT_MAX].rsplit(" ", 1)[0]
    return cut.rstrip(",;:： ") + "…"


def with_subject(subject: str, text: str) -> str:
    if not subject or plain(text).startswith(subject):
        return text
    return f"{subject}: {text}"


def split_metadata(text: str) -> tuple[str, dict[str, str]]:
    """An item's text and its own AMR metadata group (format.parse_entry decides)."""
    entry = fmt.parse_entry("- " + text)
    if entry is None or not entry.group:
        return text, {}
    return entry.text, dict(entry.meta)


class _Trail:
    """The heading trail and the current label, as context for entries."""

    def __init__(self) -> None:
        self.headings: list[tuple[int, str]] = []
        self.label = ""

    def heading(self, level: int, text: str) -> None:
        while self.headings and self.headings[-1][0] >= level:
            self.headings.pop()
        self.headings.append((level, plain(text)))
        self.label = ""

    def context(self) -> str:
        parts = [t for _, t in self.headings if t]
        if self.label:
            parts.append(self.label)
        out = " > ".join(parts)
        return out if len(out) <= CONTEXT_MAX else "…" + out[-(CONTEXT_MAX - 1):]


_STRUCTURE_REASONS = {
    bl.FRONT_MATTER: "front matter",
    bl.BLANK: "blank",
    bl.THEMATIC: "thematic break",
    bl.LINK_DEF: "link reference definition",
    bl.EMPTY_ITEM: "empty list item",
}
_VERBATIM_REASONS = {bl.FENCE: "code block", bl.CODE: "code block", bl.TABLE: "table",
                     bl.HTML: "HTML block"}


def read_markdown(text: str, refused: Collection[int] = ()) -> list[Piece]:
    """One Piece per block of ``text`` (see the module docstring)."""
    trail = _Trail()
    subjects: dict[int, str] = {}  # id(ListItem) -> the subject it gives its children
    pieces: list[Piece] = []
    for block in fmt.read_blocks(text):
        tainted = bool(refused) and any(n in refused for n in range(block.start, block.end + 1))
        if block.kind in _STRUCTURE_REASONS:
            pieces.append(Piece(block.start, block.end, STRUCTURE, _STRUCTURE_REASONS[block.kind]))
        elif block.kind == bl.HEADING:
            heading = block.lines[0] if block.lines and not tainted else ""
            trail.heading(block.level, heading)
            pieces.append(Piece(block.start, block.end, STRUCTURE, "heading"))
        elif block.kind in _VERBATIM_REASONS:
            pieces.append(Piece(block.start, block.end, VERBATIM, _VERBATIM_REASONS[block.kind],
                                context=trail.context()))
        else:
            pieces.append(_paragraph(block, trail, subjects, tainted))
    return pieces


def _paragraph(block: bl.Block, trail: _Trail, subjects: dict[int, str],
               tainted: bool = False) -> Piece:
    joined = join_lines(block.lines)
    if _IMAGE_ONLY_RE.match(joined):
        return Piece(block.start, block.end, VERBATIM, "image", context=trail.context())
    item = block.item
    if item is None:
        if is_label(joined):
            trail.label = "" if tainted else plain(joined).rstrip(":： ")
            return Piece(block.start, block.end, STRUCTURE, "label")
        return Piece(block.start, block.end, ENTRY, "prose", joined, trail.context())
    text, meta = split_metadata(joined)
    first = next((b for b in item.blocks if b.kind == bl.PARAGRAPH), None)
    if block is first:  # the item's own text
        parent = subjects.get(id(item.parent)) if item.parent is not None else ""
        subjects[id(item)] = "" if tainted else subject_of(text)
        return Piece(block.start, block.end, ENTRY, "list item", with_subject(parent or "", text),
                     trail.context(), meta)
    own = subjects.get(id(item), "")
    return Piece(block.start, block.end, ENTRY, "list item paragraph", with_subject(own, text),
                 trail.context(), meta)
