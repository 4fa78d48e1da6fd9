"""The fleet index's counts and pages (memgit.fleet.store's two invariants): the full-text
index's count of a query is the matcher's, on texts chosen to split differently in
SQLite's tokenizer, PostgreSQL's parser and Python, and a page of ``find`` is the first
hits of the whole answer, on both backends."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from memgit.fleet.find import find, judge
from memgit.fleet.history import Read, Version
from memgit.fleet.match import Query, parse_query, words_of
from memgit.fleet.store import DRIVE_SHIFT, DriveRecord, PostgresStore, SQLiteStore, Store

# words PostgreSQL's parser splits (1e5x), that SQLite folds (café/cafe, its Unicode 6.1
# tables), that NFKC or case folding join (ＪＡＮＥ, Straße), in scripts without spaces,
# and long ones
TEXTS = ["Jane Roe prefers tea", "jane likes roe fish", "ＪＡＮＥ ROE signed", "café crème",
         "cafe creme", "Straße und STRASSE", "1e5x is not 1e5 x", "12e34e and 12e34 e",
         "3e86xuwt at 10am in q3", "zq6a zqx zq", "東京 の オフィス", "ꭰꭱ Cherokee ᏣᎳᎩ",
         "𞤀𞤁 Adlam letters", "x" * 70 + " long", "ü" * 20 + " umlauts", "ǅ digraph Ǆ",
         "a1b2 0x1f 007 7", "x marks 1e5 spots", "Roe, Jane: the contract",
         "Q3 budget for Jane_Roe", "jane-roe@example.org", "١٢٣ digits", "naïve naive NAÏVE"]
DRIVES = 7


def _reads(rng: random.Random) -> Iterator[tuple[DriveRecord, Read]]:
    for d in range(DRIVES):
        texts = rng.sample(TEXTS, 12)
        versions = [Version(f"m-{d}-{n}", f"t{n % 3}.md", text, "imported:unknown",
                            "2026-01-01", n % 4 != 0) for n, text in enumerate(texts)]
        head = {(v.entry_id, v.digest) for v in versions if v.at_head}
        yield (DriveRecord("host:/root", f"d{d}.git", f"/root/d{d}.git", "drive"),
               Read(versions, head, [], True))


def _queries() -> list[Query]:
    words = sorted({w for t in TEXTS for w in words_of(t)})
    pairs = [" ".join(p) for t in TEXTS for p in itertools.pairwise(words_of(t))]
    return ([parse_query(w) for w in words] + [parse_query(p) for p in pairs] +
            [parse_query(f'"{p}"') for p in pairs] + [parse_query("zurich"),
                                                       parse_query("strasse"),
                                                       parse_query("x")])


def _check(store: Store) -> None:
    store.put(list(_reads(random.Random(3))))
    _compare(store)
    # the drives change: two read anew (rows deleted, others written), one's head moves
    # (versions leave the head, others come to it), then everything is checked again
    again = list(_reads(random.Random(8)))
    store.put(again[:2])
    record, read = again[2]
    moved = [v for v in read.versions if not v.at_head][:2]
    store.put([(record, Read(moved, {(v.entry_id, v.digest) for v in moved}, [], False))])
    _compare(store)


def _compare(store: Store) -> None:
    checked = 0
    for query in _queries():
        for history in (False, True):
            judged = judge(query, store.search(query, history=history), history)
            counts = store.counts(query, history=history)
            assert (sum(c.head for c in counts), sum(c.past for c in counts)) == \
                judged.totals, (query, history)
            assert sorted(c.name for c in counts) == judged.names
            page = judge(query, store.page(query, [c.drive_id for c in counts],
                                           history=history), history)
            assert (page.hits, page.history) == (judged.hits, judged.history)
            checked += bool(judged.hits or judged.history)
            for limit in (1, 3, 1000):  # a backend's own answer is the plain one's
                mine = store.answer(query, history=history, origin=None, limit=limit)
                plain = Store.answer(store, query, history=history, origin=None, limit=limit)
                assert mine[0] == plain[0]
                assert judge(query, mine[1], history) == judge(query, plain[1], history)
    if store.max_runs is None:  # SQLite searches drive ranges only
        return
    runs, store.max_runs = store.max_runs, 0  # scattered drives: one search of the set
    try:
        for query in _queries()[:40]:
            judged = judge(query, store.search(query, history=True), True)
            ids = [c.drive_id for c in store.counts(query, history=True)]
            page = judge(query, store.page(query, ids, history=True), True)
            assert (page.hits, page.history) == (judged.hits, judged.history)
    finally:
        store.max_runs = runs
    assert checked > 100  # the queries do find things
    ids = [r[0] for r in store._execute("SELECT id FROM entries").fetchall()]
    drive_ids = {r[0] for r in store._execute("SELECT drive_id FROM entries").fetchall()}
    assert {i >> DRIVE_SHIFT for i in ids} == drive_ids  # each id in its drive's range


def test_sqlite_counts_are_the_matchers_and_pages_its_first_hits(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "index.sqlite")
    try:
        _check(store)
    finally:
        store.close()


@pytest.mark.slow
def test_postgresql_counts_are_the_matchers_and_pages_its_first_hits(
        postgres_url: str) -> None:
    store = PostgresStore(postgres_url, "test")
    try:
        _check(store)
    finally:
        store.close()


_KEPT = "SELECT term, drive_id, n FROM drive_terms ORDER BY 1, 2"
_RECOUNTED = ("SELECT w, t.drive_id, count(*) FROM entry_terms t CROSS JOIN "
              "unnest(tsvector_to_array(t.tsv)) AS w WHERE t.at_head = 1 GROUP BY 1, 2 "
              "ORDER BY 1, 2")


@pytest.mark.slow
def test_postgresql_keeps_each_drives_term_counts_and_fills_an_older_index(
        postgres_url: str) -> None:
    """drive_terms (what a query of one term is counted from) is each drive's count of
    its head's entries per term after every kind of write, holds no removed drive, and
    is made and filled when an index made before it is opened."""
    store = PostgresStore(postgres_url, "test")
    try:
        store.put(list(_reads(random.Random(5))))
        again = list(_reads(random.Random(9)))
        record, read = again[3]
        moved = [v for v in read.versions if not v.at_head][:3]
        store.put([again[0], (record, Read(moved, {(v.entry_id, v.digest) for v in moved},
                                           [], False)),
                   (DriveRecord("host:/root", "d5.git", "/root/d5.git", "damaged"), None)])
        store.remove("host:/root", ["d1.git", "d6.git"])
        kept = store._execute(_KEPT).fetchall()
        assert kept == store._execute(_RECOUNTED).fetchall()
        names = {r[0]: r[1] for r in store._execute("SELECT id, name FROM drives")}
        assert {names[d] for _t, d, _n in kept} == {"d0.git", "d2.git", "d3.git", "d4.git"}
        store._execute("DROP TABLE drive_terms")  # as an index of schema 2 had it
    finally:
        store.close()
    reopened = PostgresStore(postgres_url, "test")
    try:
        assert reopened._execute(_KEPT).fetchall() == kept
    finally:
        reopened.close()


class _Index:
    """What find reads of a FleetIndex: the embedded store, no shared one."""

    def __init__(self, store: SQLiteStore) -> None:
        self.embedded, self.origin, self.warning = store, "host:/root", ""

    def reader(self) -> SQLiteStore:
        return self.embedded


def test_a_page_is_the_first_hits_of_the_whole_answer(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "index.sqlite")
    try:
        store.put(list(_reads(random.Random(4))))
        index = _Index(store)
        for text in ("jane", "roe", '"jane roe"', "t0", "umlauts"):
            query = parse_query(text)
            whole = find(index, query, history=True, limit=None)  # type: ignore[arg-type]
            assert whole.totals == (len(whole.hits), len(whole.history))
            for limit in (1, 2, 3, 5, 1000):
                page = find(index, query, history=True, limit=limit)  # type: ignore[arg-type]
                assert page.hits == whole.hits[:limit]
                assert page.history == whole.history[:limit]
                assert page.totals == whole.totals and page.names == whole.names
                assert page.cut() == (limit < max(whole.totals))
    finally:
        store.close()


def test_an_index_of_the_old_schema_is_made_again(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "index.sqlite"
    old = sqlite3.connect(path)
    old.executescript("CREATE TABLE fleet_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                      "INSERT INTO fleet_meta VALUES ('schema', '1');"
                      "CREATE TABLE drives (id INTEGER PRIMARY KEY, origin TEXT, name TEXT);"
                      "INSERT INTO drives VALUES (1, 'o', 'stale.git');"
                      "CREATE TABLE entries (id INTEGER PRIMARY KEY, words TEXT);"
                      "CREATE VIRTUAL TABLE entries_fts USING fts5 (words);"
                      "CREATE TABLE leases (origin TEXT, drive TEXT, task TEXT, day TEXT, "
                      "status TEXT, attempts BIGINT, token TEXT, pid BIGINT, host TEXT, "
                      "heartbeat TEXT, error TEXT, PRIMARY KEY (origin, drive, task, day));"
                      "INSERT INTO leases VALUES ('o', 'a.git', 'dream', '2026-01-01', "
                      "'done', 1, '', 0, '', '', '');")
    old.close()
    store = SQLiteStore(path)
    try:
        assert store.drives() == {}  # census describes every drive again
        tables = {r[0] for r in store._execute("SELECT name FROM sqlite_master")}
        assert "entries_fts" not in tables and {"head_fts", "past_fts"} <= tables
        assert store.lease("o", "a.git", "dream", "2026-01-01") is not None  # kept
        store.put(list(_reads(random.Random(5))))
        assert store.counts(parse_query("jane"))
    finally:
        store.close()
    newer = sqlite3.connect(path)
    newer.execute("UPDATE fleet_meta SET value = '3' WHERE key = 'schema'")
    newer.commit()
    newer.close()
    from memgit.errors import FleetError

    with pytest.raises(FleetError) as caught:
        SQLiteStore(path)
    assert "has schema 3" in caught.value.message
