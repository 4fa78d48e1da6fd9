"""memgit.format.blocks: CommonMark block structure, checked against markdown-it-py.

markdown-it-py (the reference Python CommonMark parser, a test dependency) is
the independent oracle: on every real sample file, and on generated documents,
both must find the same leaf blocks at the same lines and the same list items.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from memgit.format import blocks as bl
from memgit.format import entries as fmt

REALWORLD = Path(__file__).parents[1] / "data" / "realworld"
SAMPLE_FILES = sorted(p for p in REALWORLD.rglob("*.md") if p.name not in ("ORIGIN.md",
                                                                           "README.md"))
_MD = MarkdownIt("commonmark").enable("table").use(front_matter_plugin)
_KINDS = {"paragraph_open": bl.PARAGRAPH, "heading_open": bl.HEADING, "fence": bl.FENCE,
          "code_block": bl.CODE, "html_block": bl.HTML, "table_open": bl.TABLE,
          "hr": bl.THEMATIC, "front_matter": bl.FRONT_MATTER}


def oracle(text: str) -> tuple[set[tuple[str, int, int]], set[int]]:
    """(kind, first line, last line) of markdown-it's leaf blocks, and its list item lines."""
    leaves: set[tuple[str, int, int]] = set()
    items: set[int] = set()
    for token in _MD.parse(text):
        if token.map is None:
            continue
        if token.type in _KINDS:
            leaves.add((_KINDS[token.type], token.map[0] + 1, token.map[1]))
        elif token.type == "list_item_open":
            items.add(token.map[0] + 1)
    return leaves, items


def ours(text: str) -> tuple[set[tuple[str, int, int]], set[int]]:
    leaves: set[tuple[str, int, int]] = set()
    items: set[int] = set()
    for block in fmt.read_blocks(text):
        if block.kind not in (bl.BLANK, bl.EMPTY_ITEM, bl.LINK_DEF):
            leaves.add((block.kind, block.start, block.end))
        item = block.item
        while item is not None:
            items.add(item.line)
            item = item.parent
    return leaves, items


def test_the_samples_are_there() -> None:
    assert len(SAMPLE_FILES) >= 50
    # every kind but mem0 (JSON) and cursor (its rules are .mdc files)
    assert len({p.relative_to(REALWORLD).parts[0] for p in SAMPLE_FILES}) == 12


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: str(p.relative_to(REALWORLD)))
def test_real_samples_read_as_markdown_it_reads_them(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert ours(text) == oracle(text)


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: str(p.relative_to(REALWORLD)))
def test_every_line_is_in_exactly_one_block(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    covered: list[int] = []
    for block in fmt.read_blocks(text):
        assert block.start <= block.end
        covered.extend(range(block.start, block.end + 1))
    assert covered == list(range(1, text.count("\n") + 1 + (not text.endswith("\n"))))


# Lines that memory files are made of; the 3-space-indented marker ("   - x") is left
# out on purpose: after it, a 4-space line is a lazy paragraph continuation for
# cmark-gfm and for this reader, but an indented code block for markdown-it-py
# (docs/compat.md, "where the readers differ").
_LINES = ["- item", "* star", "+ plus", "1. one", "2. two", "3) paren", "  - nested",
          "    - deep", "      deeper text", "  continued", "lazy line", "", "", "```",
          "```py", "~~~", "  ```", "    ```", "    code", "# Head", "## Sub ##", "Para text",
          "---", "***", "===", "> quote", "> - qitem", ">", "| a | b |", "|---|---|",
          "| 1 | 2 |", "<div>", "</div>", "<!-- c -->", "<!--", "-->", "[ref]: http://x",
          "-", "1.", "- [ ] todo", "text with | pipe", "    ", "  > q2", "  1. sub",
          "- a [source: https://x.example; added: 2026-01-02]", "`[[code]]` span"]


_MARKER = re.compile(r"( {0,3})([-*+]|\d{1,9}[.)])( +)\S")


def _readers_differ(lines: list[str]) -> bool:
    """The shape cmark-gfm and markdown-it-py read differently (docs/compat.md): a list
    item whose content starts past column 4, then (before a blank line) a line indented
    4 or more columns but less than that: a lazy paragraph line for cmark (and memgit),
    code for markdown-it-py. "  1. sub" then "    code" is one."""
    column = 0  # content column of the last item, while its paragraph may continue
    for line in lines:
        indent = len(line) - len(line.lstrip(" "))
        if not line.strip():
            column = 0
        elif 4 <= indent < column:
            return True
        m = _MARKER.match(line)
        if m:
            column = m.end(3)
    return False


@given(st.lists(st.sampled_from(_LINES), min_size=1, max_size=14))
def test_generated_documents_read_as_markdown_it_reads_them(lines: list[str]) -> None:
    assume(not _readers_differ(lines))
    text = "\n".join(lines) + "\n"
    assert ours(text) == oracle(text)


def test_the_shape_the_readers_differ_on_is_read_as_cmark_reads_it() -> None:
    # cmark-gfm (GitHub's renderer): the four-space line continues the item's paragraph
    text = "  1. sub\n    ```\n"
    assert _readers_differ(text.splitlines())
    assert [(b.kind, b.start, b.end) for b in fmt.read_blocks(text)] == [(bl.PARAGRAPH, 1, 2)]


def test_a_fence_inside_a_list_item_hides_its_bullets() -> None:
    # the fence is indented four spaces: format.py's fence rule (at most three) misses it
    text = "- example:\n\n    ```\n    - not an entry\n    ```\n- after\n"
    assert ours(text) == oracle(text)
    blocks = fmt.read_blocks(text)
    fence = next(b for b in blocks if b.kind == bl.FENCE)
    assert (fence.start, fence.end, fence.lines) == (3, 5, ["- not an entry"])
    assert fence.item is not None and fence.item.line == 1
    assert [b.start for b in blocks if b.kind == bl.PARAGRAPH] == [1, 6]


def test_front_matter_is_one_block_and_its_list_is_not_items() -> None:
    text = "---\ntitle: x\ntags:\n- branding\n- design\n---\n\n- real item\n"
    blocks = fmt.read_blocks(text)
    assert (blocks[0].kind, blocks[0].start, blocks[0].end) == (bl.FRONT_MATTER, 1, 6)
    assert [b.start for b in blocks if b.item is not None] == [8]
    assert fmt.front_matter_text(text) == "title: x\ntags:\n- branding\n- design"


def test_an_unclosed_front_matter_is_a_thematic_break() -> None:
    blocks = fmt.read_blocks("---\ntitle: x\n")
    assert blocks[0].kind == bl.THEMATIC


def test_where_cmark_and_markdown_it_differ_the_reader_follows_cmark() -> None:
    # cmark-gfm 0.29 (GitHub's renderer) reads this as one list item whose paragraph
    # runs over the 4-space lines (lazy continuation); markdown-it-py ends the item.
    text = "   - three\n    ```\n    code\n- [ ] todo\n"
    blocks = fmt.read_blocks(text)
    assert [(b.kind, b.start, b.end) for b in blocks] == [(bl.PARAGRAPH, 1, 3),
                                                          (bl.PARAGRAPH, 4, 4)]
    assert oracle(text)[0] != ours(text)[0]


def test_tabs_and_crlf_do_not_break_the_structure() -> None:
    text = "-\tone\r\n\t- two\r\n\r\n```\r\n- code\r\n```\r\n"
    kinds = [(b.kind, b.start) for b in fmt.read_blocks(text) if b.kind != bl.BLANK]
    assert kinds == [(bl.PARAGRAPH, 1), (bl.PARAGRAPH, 2), (bl.FENCE, 4)]
