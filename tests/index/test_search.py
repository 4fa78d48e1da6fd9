"""recall_search (and state.search): the query's words without re, hits, counts."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from memgit import state
from memgit.git.repository import open_drive
from memgit.index import search as recall_search
from memgit.recall.read_path import recall
from memgit.state import search as rows
from tests.conftest import committed_copy

ROOT = Path(__file__).resolve().parents[2]
SEMANTIC = ROOT / "tests" / "data" / "recall_semantic"  # public FAQ data, see its ORIGIN.md
WORD_RE = re.compile(r"\w+")


def test_every_code_point_is_a_word_character_exactly_when_re_says_so() -> None:
    """words() decides with str.isalnum() or '_'; re's \\w with its own Unicode tables:
    they agree on all of Unicode (surrogates excluded: they never reach a query)."""
    text = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)
    assert recall_search.words(text) == WORD_RE.findall(text)


@given(st.text())
def test_words_split_any_text_as_re_findall_does(text: str) -> None:
    assert recall_search.words(text) == WORD_RE.findall(text)


def test_match_expression_drops_stop_words_and_quotes_each_word() -> None:
    assert recall_search.match_expression("What does the Gmail_filter do?") == \
        '"gmail_filter"*'
    assert recall_search.match_expression("the of") == '"the" OR "of"'
    assert recall_search.match_expression('AND "x" OR NEAR(y)') == '"x" OR "near"* OR "y"'


def test_hits_print_and_serialise_in_field_order(tmp_path: Path) -> None:
    drive = open_drive(committed_copy(SEMANTIC / "drive", tmp_path / "drive"))
    hits = recall(drive, "strikethrough font github", 3)
    assert hits and hits[0].entry_id == "web-001"
    first = hits[0]
    assert list(recall_search.hit_json(first)) == ["id", "text", "topic", "line", "source",
                                                   "added", "score", "retrievals"]
    assert list(recall_search.hit_json(first, "team"))[:2] == ["drive", "id"]
    assert recall_search.hit_line(first) == (
        f"{first.path}:{first.line}: {first.text}  [web-001; score {first.score:.2f}]")
    assert first.retrievals == 1  # counted


def test_the_searchable_count_is_the_full_text_tables_row_count(tmp_path: Path) -> None:
    drive = open_drive(committed_copy(SEMANTIC / "drive", tmp_path / "drive"))
    recall(drive, "gmail")
    conn = state.connection(drive.git_dir)
    slow = int(conn.execute("SELECT count(*) FROM facts_fts").fetchone()[0])
    assert rows.searchable_count(conn) == slow == 192
    conn.execute("DELETE FROM facts_fts WHERE rowid IN (SELECT rowid FROM facts_fts LIMIT 5)")
    assert rows.searchable_count(conn) == 187


def test_the_context_listings_read_their_indexes_not_every_row(tmp_path: Path) -> None:
    drive = open_drive(committed_copy(SEMANTIC / "drive", tmp_path / "drive"))
    recall(drive, "gmail filter")  # two entries retrieved
    conn = state.connection(drive.git_dir)
    for order, index in (("newest", "facts_newest"), ("retrieved", "facts_retrieved")):
        plan = " ".join(str(r) for r in conn.execute(
            "EXPLAIN QUERY PLAN " + rows._TOP_SQL[order], (20,)))
        assert index in plan and "TEMP B-TREE" not in plan, plan
    newest = rows.top_entries(conn, "newest", 5)
    assert len(newest) == 5 and [r[3] for r in newest] == sorted(
        (r[3] for r in newest), reverse=True)
    retrieved = rows.top_entries(conn, "retrieved", 50)
    assert retrieved and all(r[5] > 0 for r in retrieved)
