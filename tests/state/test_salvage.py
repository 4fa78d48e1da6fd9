"""What a damaged state database still holds intact is carried over (memgit.state.salvage).

The repairs themselves run through real processes in test_repair.py; here the rules of
what may be carried together, and the meta keys the module names without importing."""

from __future__ import annotations

from memgit.state import salvage
from memgit.state import vectors as vector_rows

ALL = set(salvage.INDEX_TABLES | salvage.VECTOR_TABLES | {"meta", "events", "tokens"})


def test_vector_meta_keys_are_the_vectors_modules_own() -> None:
    assert salvage.VECTOR_META == (vector_rows.MODEL_KEY, vector_rows.DIMENSION_KEY,
                                   vector_rows.STAMP_KEY, vector_rows.DONE_KEY)


def test_damaged_vectors_leave_everything_else() -> None:
    assert salvage._carried(ALL, {"vectors"}) == ALL - {"vectors"}


def test_a_damaged_part_of_the_index_drops_the_index_and_its_vectors() -> None:
    for part in sorted(salvage.INDEX_TABLES):
        assert salvage._carried(ALL, {part}) == {"meta", "events", "tokens"}, part


def test_without_meta_the_index_cannot_be_trusted() -> None:
    assert salvage._carried(ALL, {"meta"}) == {"events", "tokens"}


def test_an_index_missing_a_table_is_not_carried() -> None:
    assert salvage._carried(ALL - {"facts_fts_idx"}, set()) == {"meta", "events", "tokens"}


def test_what_the_repair_says() -> None:
    assert salvage.outcome([], []) == "rebuilt from the drive"
    assert salvage.outcome(["meta"], ["vectors"]) == \
        "every table carried over but the vectors (embedded again in the background)"
    assert salvage.outcome(["meta"], ["facts", "facts_fts_data", "vectors", "tokens"]) == (
        "every table carried over but the recall index (rebuilt from the drive) and the "
        "vectors (embedded again in the background) and the tokens table")


def test_sound_tables_are_copied_whole_with_a_table_the_new_file_lacks(tmp_path) -> None:
    """Real SQLite files: an old database with rows in facts, meta, events, vectors and a
    table a module made lazily (with its index); its vectors' root page overwritten."""
    import random
    import sqlite3

    from memgit import state

    old_dir, new_dir = tmp_path / "old", tmp_path / "new"
    old_dir.mkdir()
    new_dir.mkdir()
    conn = state.connect(old_dir)
    conn.execute("INSERT INTO facts (fact_id, entry_id, path, line, text, digest, indexed, "
                 "valid_from) VALUES ('f1', 'e1', 'notes.md', 3, 'herons fish', 'd1', 1, 'x')")
    conn.execute("INSERT INTO facts_fts (rowid, text, topic, context) "
                 "VALUES (1, 'herons fish', 'notes', '')")
    conn.execute("INSERT INTO vectors (fact_id, digest, vector) VALUES ('f1', 'd1', x'00')")
    conn.execute("INSERT INTO meta VALUES ('indexed_rev', 'abc'), ('embed_model_id', 'm')")
    conn.execute("INSERT INTO events (name, count, updated) VALUES ('push', 7, 'now')")
    conn.execute("CREATE TABLE later (k TEXT PRIMARY KEY, v INTEGER)")
    conn.execute("CREATE INDEX later_v ON later (v)")
    conn.execute("INSERT INTO later VALUES ('a', 1), ('b', 2)")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'vectors'").fetchone()[0]
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    path = state.state_file(old_dir)
    data = bytearray(open(path, "rb").read())
    data[(root - 1) * page:root * page] = random.Random(2).randbytes(page)
    with open(path, "wb") as fh:
        fh.write(bytes(data))
    fresh = state.connect(new_dir)
    carried, rebuilt = salvage.carry_tables(path, fresh)
    assert rebuilt == ["vectors"]
    assert "facts" in carried and "later" in carried and "vectors" not in carried
    assert fresh.execute("SELECT rowid FROM facts_fts WHERE facts_fts MATCH 'heron*'"
                         ).fetchall() == [(1,)]
    assert dict(fresh.execute("SELECT key, value FROM meta")) == {"indexed_rev": "abc"}
    assert fresh.execute("SELECT count FROM events").fetchall() == [(7,)]
    assert fresh.execute("SELECT k, v FROM later ORDER BY k").fetchall() == [("a", 1), ("b", 2)]
    assert fresh.execute("SELECT name FROM sqlite_master WHERE name = 'later_v'").fetchall()
    assert fresh.execute("SELECT count(*) FROM vectors").fetchone()[0] == 0
    # the vectors made anew continue after the old numbers (a seq is never given twice)
    fresh.execute("INSERT INTO vectors (fact_id, digest, vector) VALUES ('f1', 'd1', x'00')")
    assert fresh.execute("SELECT seq FROM vectors").fetchall() == [(2,)]
    assert fresh.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    fresh.close()
    other = sqlite3.connect(tmp_path / "other.sqlite")  # another schema version: nothing
    other.execute("CREATE TABLE meta (key TEXT, value TEXT)")
    other.close()
    again = state.connect(tmp_path)
    assert salvage.carry_tables(str(tmp_path / "other.sqlite"), again) == ([], [])
    again.close()
