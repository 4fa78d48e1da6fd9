"""What a damaged state database still holds intact, carried into its replacement.

A damaged page usually belongs to one table: the vectors' BLOBs are most of the file,
so they are where random damage most often lands. ``PRAGMA quick_check(TABLE)``
(SQLite 3.33 and later) checks one table and its indexes and skips the whole-file
page accounting that a damaged page elsewhere upsets, so each table can be judged
alone. The replacement (a new file, made by the migrations) then gets every sound
table's rows, in one transaction; what was damaged is rebuilt as from an empty
database: the recall index from git by the next read, the vectors by the background
filler (missing vectors are embedded in the background, docs/embeddings.md).

Invariants: a table is carried only as a whole and only when it passed its check; the
recall index (its rows, their full-text index and the revision it was made at) is
carried all or nothing, and vectors only with it (a vector is valid for its row's
digest); the pending queue is not handled here (state._carry_pending reads it row by
row); a file at another schema version is not carried at all; AUTOINCREMENT counters are
carried for every table, so no number is given out twice.
"""

from __future__ import annotations

import sqlite3

# Imports nothing of memgit: memgit.state calls it while repairing (a cycle otherwise).

# The recall index: its rows and FTS5's shadow tables (the virtual table has no pages of
# its own; its shadow tables are ordinary tables, so copying them copies the index).
INDEX_TABLES = frozenset({"facts", "facts_fts_data", "facts_fts_idx", "facts_fts_content",
                          "facts_fts_docsize", "facts_fts_config"})
INDEX_META = ("indexed_rev", "indexed_at")
# state/vectors.py's meta keys (MODEL_KEY, DIMENSION_KEY, STAMP_KEY, DONE_KEY; a test
# holds the two lists equal): without them the filler embeds every entry anew.
VECTOR_META = ("embed_model_id", "embed_dimension", "vectors_stamp", "embedded")
VECTOR_TABLES = frozenset({"vectors"})
NOT_HERE = frozenset({"pending", "sqlite_sequence"})  # pending: row by row; the other: SQLite's


def carry_tables(salvage: str, conn: sqlite3.Connection) -> tuple[list[str], list[str]]:
    """Copy the sound tables of the database file ``salvage`` (a readable copy of the
    damaged file) into ``conn``'s new database; returns (tables carried, tables left to
    be rebuilt), both sorted; ([], []) when nothing could be carried."""
    if sqlite3.sqlite_version_info < (3, 33, 0):
        return [], []  # quick_check takes no table name: the file cannot be judged by table
    try:
        old = sqlite3.connect(f"file:{salvage}?mode=ro", uri=True)
    except sqlite3.Error:
        return [], []
    try:
        if _version(old) != _version(conn):
            return [], []
        tables = _tables(old)
        damaged = {name for name in tables if not _sound(old, name)}
        carried = _carried(set(tables), damaged)
        # A sound table left behind with nothing in it (no vectors on a drive without
        # embeddings) loses nothing: it is not named as rebuilt.
        rebuilt = sorted(name for name in set(tables) - carried
                         if name in damaged or _has_rows(old, name))
    except sqlite3.DatabaseError:
        return [], []  # the schema itself cannot be read
    finally:
        old.close()
    if not carried:
        return [], rebuilt
    _copy(conn, salvage, carried, tables)
    return sorted(carried), rebuilt


def outcome(carried: list[str], rebuilt: list[str]) -> str:
    """The repair's words for what :func:`carry_tables` did (after "kept as PATH, ")."""
    if not carried:
        return "rebuilt from the drive"
    if not rebuilt:
        return "every table carried over to a new file (all of them passed their check)"
    names = []
    if INDEX_TABLES & set(rebuilt):
        names.append("the recall index (rebuilt from the drive)")
    if VECTOR_TABLES & set(rebuilt):
        names.append("the vectors (embedded again in the background)")
    names += [f"the {name} table" for name in rebuilt
              if name not in INDEX_TABLES | VECTOR_TABLES]
    return f"every table carried over but {' and '.join(names)}"


def _tables(conn: sqlite3.Connection) -> dict[str, str]:
    """Ordinary tables (name: CREATE statement), SQLite's own and virtual ones left out."""
    return {str(name): str(sql) for name, sql, root in conn.execute(
        "SELECT name, sql, rootpage FROM sqlite_schema WHERE type = 'table'")
        if root and not str(name).startswith("sqlite_") and str(name) not in NOT_HERE}


def _sound(conn: sqlite3.Connection, table: str) -> bool:
    try:
        answer = conn.execute(f"PRAGMA quick_check({_quoted(table)})").fetchall()
    except sqlite3.DatabaseError:
        return False
    return answer == [("ok",)]


def _has_rows(conn: sqlite3.Connection, table: str) -> bool:
    return conn.execute(f"SELECT 1 FROM {_quoted(table)} LIMIT 1").fetchone() is not None


def _carried(tables: set[str], damaged: set[str]) -> set[str]:
    """The sound tables that may be carried: meta is needed by the index (its revision)
    and the index by the vectors."""
    carried = tables - damaged
    if "meta" not in carried or INDEX_TABLES & damaged or not INDEX_TABLES <= tables:
        carried -= INDEX_TABLES | VECTOR_TABLES
    if VECTOR_TABLES & damaged:
        carried -= VECTOR_TABLES
    return carried


def _copy(conn: sqlite3.Connection, salvage: str, carried: set[str],
          tables: dict[str, str]) -> None:
    """One transaction: each carried table's rows (a table the new file lacks, made
    lazily by its module, is created from its old statement), then the meta values of
    what was not carried removed, so that it is rebuilt."""
    conn.execute("ATTACH DATABASE ? AS old", (salvage,))
    try:
        present = set(_tables(conn))
        sequences = _sequences(conn)
        conn.execute("BEGIN IMMEDIATE")
        try:
            for name in sorted(carried):
                if name not in present:
                    conn.execute(tables[name])
                    for (sql,) in conn.execute(
                            "SELECT sql FROM old.sqlite_schema WHERE type = 'index' "
                            "AND tbl_name = ? AND sql IS NOT NULL", (name,)).fetchall():
                        conn.execute(sql)
                else:
                    conn.execute(f"DELETE FROM main.{_quoted(name)}")
                conn.execute(f"INSERT INTO main.{_quoted(name)} SELECT * FROM old.{_quoted(name)}")
            if "meta" in carried:
                gone = (INDEX_META if "facts" not in carried else ()) + \
                    (VECTOR_META if "vectors" not in carried else ())
                conn.executemany("DELETE FROM main.meta WHERE key = ?", [(k,) for k in gone])
            for name, seq in sequences:
                if not conn.execute("UPDATE main.sqlite_sequence SET seq = max(seq, ?) "
                                    "WHERE name = ?", (seq, name)).rowcount:
                    conn.execute("INSERT INTO main.sqlite_sequence (name, seq) VALUES (?, ?)",
                                 (name, seq))
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    finally:
        conn.execute("DETACH DATABASE old")


def _sequences(conn: sqlite3.Connection) -> list[tuple[str, int]]:
    """The old file's AUTOINCREMENT counters (``old.sqlite_sequence``), [] when unreadable.
    They are carried for every table, carried or not: a number an AUTOINCREMENT column
    gave out is never given again (a process holding the vectors up to seq N reads only
    the rows after N), so a table made anew continues after its old numbers."""
    try:
        return [(str(name), int(seq)) for name, seq in
                conn.execute("SELECT name, seq FROM old.sqlite_sequence").fetchall()]
    except sqlite3.DatabaseError:
        return []


def _version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
