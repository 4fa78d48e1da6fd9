"""The recall index searched: BM25 over the full-text table, listings of the entries, and
retrieval counts.

Apart from state.facts so that a search loads only sqlite3: the shell's quick path imports
it, so nothing of typing, re or pathlib. Rows are plain tuples in the column order their
alias names.
"""

from __future__ import annotations

from memgit.state import Connection, immediate, utc_now

# entry_id, text, path, line, source, added, BM25 score (lower is better), fact_id,
# retrievals, rowid
FoundRow = tuple[str, str, str, int, str, str, float, str, int, int]
# entry_id, text, path, added, source, retrievals
ListedRow = tuple[str, str, str, str, str, int]




def searchable_count(conn: Connection) -> int:
    """The rows of the full-text table, counted in FTS5's ``_docsize`` shadow table, which
    holds one row per document while columnsize=1 (the default the migration keeps) and
    is far cheaper to count than the full-text table (docs/performance.md)."""
    return int(conn.execute("SELECT count(*) FROM facts_fts_docsize").fetchone()[0])


def match_count(conn: Connection, expression: str) -> int:
    """How many searchable rows match an FTS5 expression."""
    return int(conn.execute("SELECT count(*) FROM facts_fts WHERE facts_fts MATCH ?",
                            (expression,)).fetchone()[0])


def has_match(conn: Connection, expression: str) -> bool:
    """Whether any searchable row matches an FTS5 expression (stops at the first)."""
    return conn.execute("SELECT 1 FROM facts_fts WHERE facts_fts MATCH ? LIMIT 1",
                        (expression,)).fetchone() is not None


# BM25 weights of the columns: the entry text, the topic path's words, the heading trail
# (chosen, not tuned: a heading and a file name say where an entry sits, both weaker
# than what it says; docs/index.md has the labelled set's figures)
_WEIGHTS = "1.0, 0.4, 0.4"

# Rank inside the full-text table first and join only the top rows: joining
# every match before sorting costs a facts lookup per match (3x slower at p50
# on a 15,000-entry drive, bench/bench_recall.py).
_RANKED_SQL = (
    "SELECT f.entry_id, f.text, f.path, f.line, f.source, f.added, r.score, f.fact_id, "
    "f.retrievals, f.id FROM (SELECT rowid, bm25(facts_fts, " + _WEIGHTS + ") AS score "
    "FROM facts_fts WHERE facts_fts MATCH ? ORDER BY score LIMIT ?) AS r "
    "JOIN facts f ON f.id = r.rowid ORDER BY r.score, f.id")
# A single term found in a large share of the drive carries almost no ranking
# information, and BM25 would score every match (6 ms for "the" on 15,000
# entries): take the newest matches instead, which FTS5 reads in rowid order
# and stops after ``limit``; they are still scored with BM25 for the output.
_NEWEST_SQL = (
    "SELECT f.entry_id, f.text, f.path, f.line, f.source, f.added, r.score, f.fact_id, "
    "f.retrievals, f.id FROM (SELECT rowid, bm25(facts_fts, " + _WEIGHTS + ") AS score "
    "FROM facts_fts WHERE facts_fts MATCH ? ORDER BY rowid DESC LIMIT ?) AS r "
    "JOIN facts f ON f.id = r.rowid ORDER BY r.score, f.id")


def search(conn: Connection, expression: str, limit: int, *,
           newest: bool = False) -> list[FoundRow]:
    """The ``limit`` best rows for an FTS5 expression (BM25 over text, topic and context); with
    ``newest``, the newest matches instead of the best."""
    sql = _NEWEST_SQL if newest else _RANKED_SQL
    return conn.execute(sql, (expression, limit)).fetchall()


# Searchable rows (present and in the full-text table) in the order of a listing;
# ties go to the newest row.
_TOP_SQL = {
    "retrieved": "SELECT entry_id, text, path, added, source, retrievals FROM facts "
                 "WHERE valid_until IS NULL AND indexed = 1 AND retrievals > 0 "
                 "ORDER BY retrievals DESC, last_retrieved DESC, id DESC LIMIT ?",
    "newest": "SELECT entry_id, text, path, added, source, retrievals FROM facts "
              "WHERE valid_until IS NULL AND indexed = 1 ORDER BY added DESC, id DESC LIMIT ?",
}
TOP_ORDERS = tuple(_TOP_SQL)


def top_entries(conn: Connection, order: str, limit: int) -> list[ListedRow]:
    """The first ``limit`` searchable entries by ``order``: ``retrieved`` (most retrieved
    first, entries never retrieved left out) or ``newest`` (by their ``added`` date)."""
    return conn.execute(_TOP_SQL[order], (limit,)).fetchall()


def count_retrievals(conn: Connection, rowids: list[int]) -> None:
    """One transaction, committed without waiting for the disk.

    The only write memgit makes at ``synchronous=NORMAL``: in WAL mode a power
    loss can then lose the last few counts (never corrupt the file), and an fsync
    per recall would be most of its time (docs/performance.md). Counts are cache
    data: a rebuild resets them anyway (docs/index.md).
    """
    now = utc_now(micro=True)
    conn.execute("PRAGMA synchronous = NORMAL")
    try:
        with immediate(conn):
            conn.executemany("UPDATE facts SET retrievals = retrievals + 1, "
                             "last_retrieved = ? WHERE id = ?", [(now, rid) for rid in rowids])
    finally:
        conn.execute("PRAGMA synchronous = FULL")


def count_fact_retrievals(conn: Connection, fact_ids: list[str]) -> None:
    """:func:`count_retrievals` for rows named by fact id (recall across mounts counts
    only the hits it returns, after merging the drives' results)."""
    rowids: list[int] = []
    wanted = list(dict.fromkeys(fact_ids))
    for start in range(0, len(wanted), 500):
        chunk = wanted[start:start + 500]
        marks = ",".join("?" * len(chunk))
        rowids += [int(r[0]) for r in conn.execute(
            f"SELECT id FROM facts WHERE fact_id IN ({marks})", chunk)]
    if rowids:
        count_retrievals(conn, rowids)


def terms_matched(conn: Connection, fact_id: str, terms: list[str]) -> int:
    """How many of the FTS5 ``terms`` the searchable row ``fact_id`` matches (FTS5's own
    tokenizer and stemming decide): a measure that, unlike BM25, does not depend on the
    rest of the drive, so hits of different drives can be compared by it."""
    row = conn.execute("SELECT id FROM facts WHERE fact_id = ?", (fact_id,)).fetchone()
    if row is None:
        return 0
    return sum(1 for term in terms if conn.execute(
        "SELECT 1 FROM facts_fts WHERE facts_fts MATCH ? AND rowid = ?",
        (term, row[0])).fetchone() is not None)
