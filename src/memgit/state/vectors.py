"""Semantic recall's vectors (migration 5): one float32 BLOB per searchable entry.

A row is keyed by the entry's fact id and holds the digest of the text it was made from.
The INSERT stores a vector only while its fact is present, searchable and of that digest
(a vector computed while a writer changed the entry is dropped), and migration 5's
triggers delete it in the transaction that retires, hides, changes or deletes the fact: an
unchanged entry keeps its vector through any reindex, and purge's secure delete takes the
vectors with the rows. Meta values: ``embed_model_id`` and ``embed_dimension`` (recorded
with the first vector), ``vectors_stamp`` (changes with every change of the table;
in-process matrices are cached under it) and ``embedded`` (``"<indexed revision>
<stamp>"`` once nothing searchable lacked a vector there).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from memgit.state import Connection, delete_meta, get_meta, set_meta
from memgit.state.search import FoundRow

MODEL_KEY = "embed_model_id"
DIMENSION_KEY = "embed_dimension"
STAMP_KEY = "vectors_stamp"
DONE_KEY = "embedded"


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def recorded_model(conn: Connection) -> tuple[str, int] | None:
    """(model id, dimension) the stored vectors were made with; None before the first."""
    model = get_meta(conn, MODEL_KEY)
    dimension = get_meta(conn, DIMENSION_KEY)
    if model is None or dimension is None:
        return None
    return model, int(dimension)


def record_model(conn: Connection, model_id: str, dimension: int) -> None:
    set_meta(conn, MODEL_KEY, model_id)
    set_meta(conn, DIMENSION_KEY, str(dimension))


def count(conn: Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM vectors").fetchone()[0])


def missing_count(conn: Connection) -> int:
    """Searchable entries without a vector."""
    return int(conn.execute(
        "SELECT count(*) FROM facts f WHERE f.valid_until IS NULL AND f.indexed = 1 "
        "AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.fact_id = f.fact_id)").fetchone()[0])


def missing_fast(conn: Connection) -> int:
    """Searchable entries without a vector, as two counts instead of
    :func:`missing_count`'s scan (docs/embeddings.md): a vector exists only for a
    present, searchable fact (the INSERT of :func:`store` checks it, migration 5's
    triggers delete it when that ends) and at most one per fact (fact_id is UNIQUE)."""
    return int(conn.execute(
        "SELECT (SELECT count(*) FROM facts INDEXED BY facts_newest "
        "WHERE valid_until IS NULL AND indexed = 1) - (SELECT count(*) FROM vectors)"
    ).fetchone()[0])


def missing(conn: Connection, limit: int | None = None) -> list[tuple[str, str, str]]:
    """(fact id, digest, text) of searchable entries without a vector, newest row first."""
    return conn.execute(
        "SELECT f.fact_id, f.digest, f.text FROM facts f "
        "WHERE f.valid_until IS NULL AND f.indexed = 1 "
        "AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.fact_id = f.fact_id) "
        "ORDER BY f.id DESC LIMIT ?", (-1 if limit is None else limit,)).fetchall()


def without_vector(conn: Connection, fact_ids: list[str]) -> set[str]:
    """Those of ``fact_ids`` that have no vector (a recall's top hits: a few dozen)."""
    wanted = list(dict.fromkeys(fact_ids))
    having: set[str] = set()
    for chunk in _chunks(wanted, 500):
        marks = ",".join("?" * len(chunk))
        having.update(r[0] for r in conn.execute(
            f"SELECT fact_id FROM vectors WHERE fact_id IN ({marks})", chunk))
    return set(wanted) - having


def store(conn: Connection, rows: Iterable[tuple[str, str, bytes]]) -> int:
    """Store (fact id, digest, BLOB) rows whose fact is still present, searchable and of
    that digest; returns how many were stored. Call inside a write transaction."""
    before = conn.total_changes
    conn.executemany(
        "INSERT OR REPLACE INTO vectors (fact_id, digest, vector) SELECT fact_id, digest, ? "
        "FROM facts WHERE fact_id = ? AND digest = ? AND valid_until IS NULL AND indexed = 1",
        [(blob, fact_id, digest) for fact_id, digest, blob in rows])
    stored = conn.total_changes - before
    if stored:
        new_stamp(conn)
    return stored


def new_stamp(conn: Connection) -> None:
    set_meta(conn, STAMP_KEY, os.urandom(8).hex())


def stamp(conn: Connection) -> str:
    return get_meta(conn, STAMP_KEY) or ""


def done_mark(conn: Connection) -> str | None:
    return get_meta(conn, DONE_KEY)


def set_done_mark(conn: Connection, value: str) -> None:
    set_meta(conn, DONE_KEY, value)


def load(conn: Connection, after: int = 0) -> list[tuple[int, str, bytes]]:
    """Every (seq, fact id, BLOB) stored after seq ``after``, in the order stored."""
    return conn.execute("SELECT seq, fact_id, vector FROM vectors WHERE seq > ? ORDER BY seq",
                        (after,)).fetchall()


def seqs(conn: Connection) -> list[int]:
    """The seq of every stored vector, in no order: read from the fact id index, which
    holds them without the BLOBs (an order would read the table; docs/performance.md)."""
    return [r[0] for r in conn.execute("SELECT seq FROM vectors")]


def clear(conn: Connection) -> None:
    """Delete every vector and the model they were made with (call inside a write
    transaction): the next fill embeds the whole drive with the configured model."""
    conn.execute("DELETE FROM vectors")
    for key in (MODEL_KEY, DIMENSION_KEY, DONE_KEY):
        delete_meta(conn, key)
    new_stamp(conn)


def found_rows(conn: Connection, fact_ids: list[str]) -> dict[str, FoundRow]:
    """The searchable rows of ``fact_ids`` as state.search returns rows (score 0.0), by
    fact id; ids of entries no longer searchable are left out."""
    out: dict[str, FoundRow] = {}
    for chunk in _chunks(list(dict.fromkeys(fact_ids)), 500):
        marks = ",".join("?" * len(chunk))
        for r in conn.execute(
                "SELECT entry_id, text, path, line, source, added, 0.0, fact_id, retrievals, "
                f"id FROM facts WHERE valid_until IS NULL AND indexed = 1 AND fact_id IN "
                f"({marks})", chunk):
            out[r[7]] = r
    return out
