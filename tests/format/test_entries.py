"""The drive format: lossless parsing, metadata, ids, links and the Index."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memgit.format import entries as fmt

DATA = Path(__file__).parents[1] / "data"


def data_lines() -> list[str]:
    return [c for c, _e in fmt.split_lines((DATA / "lines.txt").read_bytes().decode())]


@pytest.mark.parametrize("line", data_lines())
def test_round_trip_data_lines(line: str) -> None:
    entry = fmt.parse_entry(line)
    if entry is not None:
        assert entry.serialise() == line


def test_document_round_trip_keeps_bytes() -> None:
    text = (DATA / "lines.txt").read_bytes().decode()
    doc = fmt.parse_document("MEMORY.md", text)
    assert doc.serialise() == text
    assert "\r\n" in text  # the fixture really has CRLF lines


line_chars = st.characters(blacklist_categories=("Cs",), blacklist_characters="\n")
structured = st.builds(
    lambda indent, bullet, text, pairs, tail: f"{indent}{bullet} {text}"
    + (" [" + "; ".join(f"{k}: {v}" for k, v in pairs) + "]" if pairs else "") + tail,
    st.sampled_from(["", "  ", "\t", "    "]),
    st.sampled_from(["-", "*"]),
    st.text(line_chars, max_size=40),
    st.lists(st.tuples(st.from_regex(r"[a-z][a-z0-9_-]{0,6}", fullmatch=True),
                       st.text(st.characters(blacklist_categories=("Cs",),
                                             blacklist_characters="\n;[]\r"), max_size=12)),
             max_size=4),
    st.sampled_from(["", " ", "  \t"]),
)


@settings(max_examples=5000, deadline=None)
@given(st.text(line_chars, max_size=120))
def test_round_trip_arbitrary_text(line: str) -> None:
    entry = fmt.parse_entry(line)  # never raises
    if entry is not None:
        assert entry.serialise() == line
        assert isinstance(entry.id, str) and entry.id


@settings(max_examples=1500, deadline=None)
@given(structured)
def test_round_trip_structured_lines(line: str) -> None:
    entry = fmt.parse_entry(line)
    if entry is not None:
        assert entry.serialise() == line


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=400))
def test_document_never_raises_and_round_trips(text: str) -> None:
    doc = fmt.parse_document("notes.md", text)
    assert doc.serialise() == text


def test_metadata_group_is_parsed() -> None:
    e = fmt.parse_entry("- Joe leads [source: https://example.com/s/1; added: 2026-09-03; "
                        "id: m-01jd3xk8q7c9v2n4r6t8w0y1z3]")
    assert e is not None
    assert e.text == "Joe leads"
    assert e.meta == {"source": "https://example.com/s/1", "added": "2026-09-03",
                      "id": "m-01jd3xk8q7c9v2n4r6t8w0y1z3"}
    assert e.id == "m-01jd3xk8q7c9v2n4r6t8w0y1z3"


@pytest.mark.parametrize("line,text,group", [
    ("- see [[projects/payments]]", "see [[projects/payments]]", ""),
    ("- see [[a]] [source: imported:unknown]", "see [[a]]", "[source: imported:unknown]"),
    ("- Brackets [like this] are text", "Brackets [like this] are text", ""),
    ("- broken [source: x; oops]", "broken [source: x; oops]", ""),
    ("- two groups [a: b] [c: d]", "two groups [a: b]", "[c: d]"),
    ("- [a: b]", "[a: b]", ""),  # a group alone is text: an entry needs text
    ("- [[a]][b: c]", "[[a]]", "[b: c]"),
])
def test_metadata_versus_text(line: str, text: str, group: str) -> None:
    e = fmt.parse_entry(line)
    assert e is not None
    assert (e.text, e.group) == (text, group)


@pytest.mark.parametrize("line", ["* * *", "- - -", "---", "-x", "-", "- ", "text", "# h"])
def test_not_entries(line: str) -> None:
    assert fmt.parse_entry(line) is None


def test_fenced_bullets_and_index_lines_are_not_entries() -> None:
    text = ("# Memory\n\n- real [source: imported:unknown]\n```\n- fenced\n```\n"
            "## Index\n- [[notes]]\n")
    doc = fmt.parse_document("MEMORY.md", text)
    assert [e.text for _l, e in doc.entries()] == ["real"]
    other = fmt.parse_document("notes.md", text)  # only MEMORY.md has an Index
    assert [e.text for _l, e in other.entries()] == ["real", "[[notes]]"]


def test_with_meta_keeps_other_pairs_byte_for_byte() -> None:
    e = fmt.parse_entry("- t [ticket: ABC-1;  priority:high ; id: x1]")
    assert e is not None
    e2 = e.with_meta("id", "x2")
    assert e2.serialise() == "- t [ticket: ABC-1;  priority:high ; id: x2]"
    e3 = e.with_meta("status", "active")
    assert e3.serialise() == "- t [ticket: ABC-1;  priority:high ; id: x1; status: active]"
    bare = fmt.parse_entry("- plain")
    assert bare is not None
    assert bare.with_meta("id", "y").serialise() == "- plain [id: y]"


def test_with_text_keeps_metadata() -> None:
    e = fmt.parse_entry("* old words [source: imported:unknown]")
    assert e is not None
    assert e.with_text("new words").serialise() == "* new words [source: imported:unknown]"


def test_id_vectors_match_sha256() -> None:
    vectors = json.loads((DATA / "id_vectors.json").read_text())
    assert len(vectors) >= 8
    for v in vectors:
        e = fmt.parse_entry(v["line"])
        assert e is not None, v
        meta = e.meta
        expected = "entry-" + hashlib.sha256(
            f"{e.text}\n{meta.get('source', '')}\n{meta.get('added', '')}".encode()
        ).hexdigest()[:16]
        assert e.id == expected == v["id"], v


def test_deterministic_id_changes_with_text() -> None:
    a = fmt.parse_entry("- one [source: imported:unknown]")
    b = fmt.parse_entry("- one! [source: imported:unknown]")
    assert a is not None and b is not None
    assert a.id != b.id and a.id.startswith("entry-") and len(a.id) == 22


def test_new_ids_are_sorted_unique_ulids() -> None:
    ids = [fmt.new_id() for _ in range(2000)]
    assert len(set(ids)) == 2000
    assert ids == sorted(ids)
    assert all(fmt.is_memgit_id(i) and len(i) == 28 for i in ids)
    assert fmt.new_id(now_ms=0) < fmt.new_id()


@pytest.mark.parametrize("value,ok", [("2026-09-03", True), ("2024-02-29", True),
                                      ("2026-02-30", False), ("2026-9-3", False),
                                      ("2026-13-01", False), ("yesterday", False)])
def test_dates(value: str, ok: bool) -> None:
    assert fmt.is_valid_date(value) is ok


def test_links() -> None:
    assert list(fmt.iter_links("see [[a/b]] and [[c|alias]] and [[d.sql]]")) == \
        ["a/b", "c", "d.sql"]
    assert fmt.link_target_path("a/b") == "a/b.md"
    assert fmt.link_target_path("d.sql", ["d.sql"]) == "d.sql"


def test_regenerate_index_lists_topic_files_sorted_and_keeps_descriptions() -> None:
    memory = ("# Memory: Joe\n\n- fact [source: imported:unknown]\n\n## Index\n"
              "- [[projects/payments]] launch plan and owners\n- [[gone]]\n\n## Later\nprose\n")
    paths = ["MEMORY.md", "team_structure.md", "projects/payments.md", "twin/x.md",
             "questions.md", "imports/r.md", "billing/q.sql"]
    out = fmt.regenerate_index_section(memory, paths)
    assert out == ("# Memory: Joe\n\n- fact [source: imported:unknown]\n\n## Index\n"
                   "- [[projects/payments]] launch plan and owners\n- [[team_structure]]\n\n"
                   "## Later\nprose\n")
    assert fmt.index_section_is_current(out, paths)
    assert fmt.regenerate_index_section(out, paths) == out


def test_regenerate_index_adds_missing_section_and_keeps_final_newline_state() -> None:
    assert fmt.regenerate_index_section("# M\n", ["a.md"]) == "# M\n\n## Index\n- [[a]]\n"
    assert fmt.regenerate_index_section("# M\n\n## Index", ["a.md"]) == "# M\n\n## Index\n- [[a]]"
    crlf = fmt.regenerate_index_section("# M\r\n\r\n## Index\r\n", ["a.md", "b.md"])
    assert crlf == "# M\r\n\r\n## Index\r\n- [[a]]\r\n- [[b]]\r\n"


def test_index_link_written_with_md_is_normalised() -> None:
    out = fmt.regenerate_index_section("# M\n\n## Index\n- [[a.md]] about a\n", ["a.md"])
    assert out == "# M\n\n## Index\n- [[a]] about a\n"


def test_explicit_time_does_not_move_the_clock_of_later_ids() -> None:
    import time

    a_year_ahead = int(time.time() * 1000) + 366 * 24 * 3600 * 1000  # from the clock
    future = fmt.new_id(now_ms=a_year_ahead)
    now = fmt.new_id()
    assert now < future  # the next real id carries today's time, not next year's


def test_forked_children_never_share_ids() -> None:
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    import os
    import time

    # The parent's monotonic state, ahead of the clock (as after a burst of ids in
    # one millisecond): children that kept it would all count up from it.
    fmt._ulid_last[:] = [os.getpid(), int(time.time() * 1000) + 60_000, 0]
    try:
        with ctx.Pool(4) as pool:
            batches = pool.map(_ids_in_child, range(4))
        ids = [i for batch in batches for i in batch] + [fmt.new_id() for _ in range(50)]
    finally:
        fmt._ulid_last[:] = [0, 0, 0]  # later tests get ids of today again
    assert len(set(ids)) == len(ids)


def _ids_in_child(_n: int) -> list[str]:
    return [fmt.new_id() for _ in range(50)]


# --- block structure: front matter, code blocks, code spans (issue 12) ------------------

REALWORLD = DATA / "realworld"
SAMPLES = sorted(p for p in REALWORLD.rglob("*.md") if p.name != "ORIGIN.md")
_MD = None


def commonmark_bullet_items(text: str) -> set[int]:
    """Lines where markdown-it-py (the reference parser) starts a ``-`` or ``*`` list item
    outside block quotes: what the drive format calls an entry."""
    global _MD
    if _MD is None:
        from markdown_it import MarkdownIt
        from mdit_py_plugins.front_matter import front_matter_plugin

        _MD = MarkdownIt("commonmark").enable("table").use(front_matter_plugin)
    items: set[int] = set()
    quotes = 0
    tokens = _MD.parse(text)
    for n, token in enumerate(tokens):
        quotes += {"blockquote_open": 1, "blockquote_close": -1}.get(token.type, 0)
        empty = n + 1 < len(tokens) and tokens[n + 1].type == "list_item_close"
        if token.type == "list_item_open" and token.markup in "-*" and not quotes \
                and not empty:  # a lone "- " has no text: no entry
            assert token.map is not None
            items.add(token.map[0] + 1)
    return items


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: str(p.relative_to(REALWORLD)))
def test_entries_are_the_bullet_items_commonmark_finds_in_real_files(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    doc = fmt.parse_document(path.name, text)
    entries = {line.number for line, _e in doc.entries()}
    index_links = {line.number for line in doc.lines if line.in_index_section}
    assert entries == commonmark_bullet_items(text) - index_links
    assert doc.serialise() == text


def test_front_matter_is_never_entries_and_kept_byte_for_byte() -> None:
    path = REALWORLD / "basic-memory" / "docs-examples" / "visual-identity.md"
    text = path.read_text(encoding="utf-8")
    assert "tags:\n- branding\n- design\n" in text  # YAML list items in the front matter
    doc = fmt.parse_document("visual-identity.md", text)
    texts = [e.text for _l, e in doc.entries()]
    assert "branding" not in texts and "design" not in texts and texts
    front = [line for line in doc.lines if line.in_front_matter]
    assert [line.content for line in front][0] == "---" and front[-1].content == "---"
    assert all(line.entry is None for line in front)
    assert doc.serialise() == text
    assert fmt.front_matter_text(text).startswith("title:")  # type: ignore[union-attr]


def test_an_unclosed_front_matter_is_a_thematic_break() -> None:
    doc = fmt.parse_document("a.md", "---\n- an entry\n")
    assert [e.text for _l, e in doc.entries()] == ["an entry"]
    assert not any(line.in_front_matter for line in doc.lines)


def test_a_fence_inside_a_list_item_is_code() -> None:
    # the example: the fence is indented four spaces, one past the item's content
    text = ("1. Run the example:\n\n    ```md\n    - an example bullet\n    ```\n\n"
            "- after the example\n")
    doc = fmt.parse_document("code.md", text)
    assert [e.text for _l, e in doc.entries()] == ["after the example"]
    assert [line.number for line in doc.lines if line.in_code] == [3, 4, 5]


def test_indented_code_is_code_but_a_nested_bullet_is_an_entry() -> None:
    text = ("# Shell\n\n    - not an entry: indented code\n\n- parent\n    - child at four\n"
            "  - child at two\n")
    doc = fmt.parse_document("a.md", text)
    assert [e.text for _l, e in doc.entries()] == ["parent", "child at four", "child at two"]
    assert [line.number for line in doc.lines if line.in_code] == [3]


def test_links_inside_code_spans_are_text() -> None:
    assert list(fmt.iter_links("- The link syntax is `[[path]]`")) == []
    assert list(fmt.iter_links("``a ` [[x]] b`` then [[y]]")) == ["y"]
    # an escaped backtick opens nothing: the link is real
    assert list(fmt.iter_links("\\`[[z]]` stays")) == ["z"]
    # a lone backtick is literal text, so a link after it is real
    assert list(fmt.iter_links("a ` b [[w]]")) == ["w"]
    assert fmt.strip_code_spans("x `[[p]]` y") == "x " + " " * 7 + " y"


def test_a_metadata_group_inside_a_code_span_is_text() -> None:
    entry = fmt.parse_entry("- Write metadata as `[source: URL]`")
    assert entry is not None and entry.group == "" and entry.text.endswith("`[source: URL]`")


def test_the_index_section_is_found_outside_code_and_front_matter() -> None:
    text = ("---\ntitle: x\n---\n# Memory\n\n```\n## Index\n- [[fake]]\n```\n\n## Index\n"
            "- [[b]]\n")
    assert fmt.regenerate_index_section(text, ["MEMORY.md", "a.md", "b.md"]) == \
        text.replace("## Index\n- [[b]]\n", "## Index\n- [[a]]\n- [[b]]\n")
    doc = fmt.parse_document("MEMORY.md", text)
    assert [e.text for _l, e in doc.entries()] == []  # the fenced link is code, not an entry


_SHAPES = ["- item", "* star", "  - nested", "    - deep", "text", "", "# Head", "```",
           "    code", "\tcode", "~~~", "---", "- [[link]] [source: imported:unknown]"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_SHAPES), min_size=1, max_size=12))
def test_the_fast_path_reads_as_the_block_reader_does(lines: list[str]) -> None:
    """A file with no line that can be code or front matter skips the block reader; the
    reader itself would have found no code and no front matter in it either."""
    text = "\n".join(lines) + "\n"
    contents = [c for c, _e in fmt.split_lines(text)]
    if not fmt.needs_block_reader(text):
        kinds = {b.kind for b in fmt.bl.read_lines(contents)}
        assert not kinds & {"fence", "code", "front-matter"}
    code, front = fmt.structure_marks(text, contents)
    marked = {n for n in range(1, len(contents) + 1) if n in code or n <= front}
    doc = fmt.parse_document("a.md", text)
    assert {line.number for line in doc.lines if line.in_code or line.in_front_matter} == marked
    assert {line.number for line, _e in doc.entries()} == \
        {n for n in range(1, len(contents) + 1)
         if n not in marked and fmt.parse_entry(contents[n - 1]) is not None}


def test_invisible_class_holds_every_format_character() -> None:
    """INVISIBLE_RE (names refused by MG214, dropped by the registry's key) covers Unicode
    category Cf of this Python's Unicode database, and no letter, digit or space."""
    import sys
    import unicodedata

    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        category = unicodedata.category(ch)
        if category == "Cf":
            assert fmt.INVISIBLE_RE.match(ch), f"U+{code:04X}"
        elif category[0] in "LNZP" and code not in (0x115F, 0x1160, 0x3164, 0xFFA0):
            assert not fmt.INVISIBLE_RE.match(ch), f"U+{code:04X}"


@pytest.mark.parametrize("path", ["questions.md", "Questions.md", "QUESTIONS.MD", "twin/a.md",
                                  "Twin/a.md", "TWIN/x/y.md", "Imports/r.md", "imports/r.md"])
def test_reserved_paths_match_in_any_case(path: str) -> None:
    assert fmt.is_reserved(path)
    assert fmt.fold_path(path) == fmt.fold_path(path.lower())


@pytest.mark.parametrize("path", ["twins.md", "notes/twin/a.md", "questions.md.bak", "importsx/a"])
def test_other_paths_are_not_reserved(path: str) -> None:
    assert not fmt.is_reserved(path)


def test_line_around_cuts_as_split_lines_does() -> None:
    text = "a\r\nbb\rb\nccc"
    lines = fmt.split_lines(text)
    assert fmt.line_around(text, 0) == (0, 3, lines[0][0])
    assert fmt.line_around(text, 4) == (3, 8, lines[1][0])
    assert fmt.line_around(text, 9) == (8, 11, lines[2][0])
