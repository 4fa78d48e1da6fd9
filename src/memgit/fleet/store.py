"""The fleet index's database: one schema, two backends (all of the fleet's SQL).

Like ``memgit.state`` for a drive, this module is the only code of the fleet that
speaks SQL (tests/test_architecture.py): the fleet index is a database of its own,
under the root or on a PostgreSQL server several git hosts share, and its statements
are written once here for both backends.

* :class:`SQLiteStore`: ``ROOT/.memgit-fleet/index.sqlite``, WAL, a busy timeout,
  ``secure_delete`` (a purged text's bytes do not stay in free pages), FTS5 over the
  entries' words (an external-content table kept by triggers);
* :class:`PostgresStore`: the same tables (``BIGSERIAL`` ids), a generated
  ``tsvector`` column over the same words with a GIN index, searched with
  ``plainto_tsquery``/``phraseto_tsquery`` of the ``simple`` configuration.

Tables: ``fleet_meta`` (schema version), ``drives`` (one row per repository under a
root: ``origin`` names the host and root, so several hosts share one database) and
``entries`` (every version of every entry, ``at_head`` when the head holds it). The
full-text search only narrows; memgit.fleet.match judges every candidate, so both
backends return the same hits.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import Any, NamedTuple

from memgit.errors import FleetError
from memgit.fleet.history import Read, text_digest
from memgit.fleet.match import Query, words_of

SCHEMA_VERSION = "1"
BUSY_TIMEOUT_MS = 30_000


@dataclass
class DriveRecord:
    """One repository under a root, as census shows it (a row of ``drives``)."""

    origin: str
    name: str
    path: str
    status: str  # drive, not_drive, error
    reason: str = ""
    fingerprint: str = ""
    tips: str = ""  # the ref tips the entries were read at, space-separated
    head: str = ""
    kind: str = ""
    timezone: str = ""  # as memgit.yaml sets it ("" unset: the server's)
    dream_window: str = ""
    entries: int = 0
    drive_bytes: int = 0
    drive_bytes_limit: int = 0
    files: int = 0
    files_limit: int = 0
    cap_entries: int = 0
    max_entries: int = 0
    near_limit: float = 0.8
    last_push: str = ""
    pending_writes: int = 0
    last_dream_day: str = ""
    last_dream_status: str = ""
    index_health: str = ""
    updated: str = ""


COLUMNS = [f.name for f in fields(DriveRecord)]


@dataclass
class LeaseRow:
    """A scheduled task's lease for one drive and day (a row of ``leases``)."""

    origin: str
    drive: str
    task: str
    day: str
    status: str  # running, done, failed
    attempts: int = 0
    token: str = ""
    pid: int = 0
    host: str = ""
    heartbeat: str = ""
    error: str = ""


LEASE_COLUMNS = [f.name for f in fields(LeaseRow)]


class Hit(NamedTuple):
    """An entry version an index returned for a query (judged by the caller). A tuple:
    a broad query makes tens of thousands. ``words`` is the text's words as stored
    (memgit.fleet.match.words_of, space-separated): what the matcher judges."""

    origin: str
    drive: str
    entry_id: str
    path: str
    source: str
    added: str
    text: str
    at_head: bool
    words: str


_TABLES = """
CREATE TABLE IF NOT EXISTS fleet_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)

CREATE TABLE IF NOT EXISTS drives (
    id {serial} PRIMARY KEY,
    origin TEXT NOT NULL, name TEXT NOT NULL, path TEXT NOT NULL, status TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '', fingerprint TEXT NOT NULL DEFAULT '',
    tips TEXT NOT NULL DEFAULT '', head TEXT NOT NULL DEFAULT '',
    kind TEXT NOT NULL DEFAULT '', timezone TEXT NOT NULL DEFAULT '',
    dream_window TEXT NOT NULL DEFAULT '',
    entries BIGINT NOT NULL DEFAULT 0, drive_bytes BIGINT NOT NULL DEFAULT 0,
    drive_bytes_limit BIGINT NOT NULL DEFAULT 0, files BIGINT NOT NULL DEFAULT 0,
    files_limit BIGINT NOT NULL DEFAULT 0, cap_entries BIGINT NOT NULL DEFAULT 0,
    max_entries BIGINT NOT NULL DEFAULT 0, near_limit REAL NOT NULL DEFAULT 0.8,
    last_push TEXT NOT NULL DEFAULT '', pending_writes BIGINT NOT NULL DEFAULT 0,
    last_dream_day TEXT NOT NULL DEFAULT '', last_dream_status TEXT NOT NULL DEFAULT '',
    index_health TEXT NOT NULL DEFAULT '', updated TEXT NOT NULL DEFAULT '',
    UNIQUE (origin, name)
)

CREATE TABLE IF NOT EXISTS entries (
    id {serial} PRIMARY KEY,
    drive_id BIGINT NOT NULL REFERENCES drives (id) ON DELETE CASCADE,
    entry_id TEXT NOT NULL, digest TEXT NOT NULL, path TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT '', added TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL, words TEXT NOT NULL, at_head INTEGER NOT NULL,
    UNIQUE (drive_id, entry_id, digest)
)

CREATE INDEX IF NOT EXISTS entries_drive ON entries (drive_id, at_head)

CREATE TABLE IF NOT EXISTS leases (
    origin TEXT NOT NULL, drive TEXT NOT NULL, task TEXT NOT NULL, day TEXT NOT NULL,
    status TEXT NOT NULL, attempts BIGINT NOT NULL DEFAULT 0,
    token TEXT NOT NULL DEFAULT '', pid BIGINT NOT NULL DEFAULT 0,
    host TEXT NOT NULL DEFAULT '', heartbeat TEXT NOT NULL DEFAULT '',
    error TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (origin, drive, task, day)
)
"""

_SQLITE_FTS = """
CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts USING fts5 (
    words, content = 'entries', content_rowid = 'id', tokenize = 'unicode61'
)

CREATE TRIGGER IF NOT EXISTS entries_ai AFTER INSERT ON entries BEGIN
    INSERT INTO entries_fts (rowid, words) VALUES (new.id, new.words);
END

CREATE TRIGGER IF NOT EXISTS entries_ad AFTER DELETE ON entries BEGIN
    INSERT INTO entries_fts (entries_fts, rowid, words) VALUES ('delete', old.id, old.words);
END
"""

_POSTGRES_FTS = """
ALTER TABLE entries ADD COLUMN IF NOT EXISTS tsv tsvector
    GENERATED ALWAYS AS (to_tsvector('simple', words)) STORED

CREATE INDEX IF NOT EXISTS entries_tsv ON entries USING gin (tsv)
"""

_PLAIN_SOURCE = "entries e JOIN drives d ON d.id = e.drive_id"
_HIT_COLUMNS = ("d.origin, d.name, e.entry_id, e.path, e.source, e.added, e.text, "
                "e.at_head, e.words")


class Store:
    """What both backends share: the statements, written with ``?`` placeholders."""

    kind = ""
    label = ""

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        raise NotImplementedError

    def _executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        raise NotImplementedError

    def transaction(self) -> Any:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def _fts_where(self, query: Query) -> tuple[str, str, list[Any]]:
        """(tables, condition, parameters) selecting the full-text candidates."""
        raise NotImplementedError

    # --- reads ------------------------------------------------------------------------

    def drives(self, origin: str | None = None) -> dict[tuple[str, str], DriveRecord]:
        """(origin, name) -> record, of one origin or of all."""
        sql = f"SELECT {', '.join(COLUMNS)} FROM drives"
        rows = self._execute(sql + " WHERE origin = ?", (origin,)) if origin is not None \
            else self._execute(sql)
        out = {}
        for row in rows.fetchall():
            record = DriveRecord(*row)
            out[(record.origin, record.name)] = record
        return out

    def search(self, query: Query, *, history: bool = False,
               origin: str | None = None) -> list[Hit]:
        """The candidate versions for ``query`` (all of them, in no order: the caller
        judges and orders them); only those at the head unless ``history``."""
        source, where, params = self._fts_where(query) if query.kind != "regex" else \
            (_PLAIN_SOURCE, "1 = 1", [])
        sql = f"SELECT {_HIT_COLUMNS} FROM {source} WHERE {where}"
        if not history:
            sql += " AND e.at_head = 1"
        if origin is not None:
            sql += " AND d.origin = ?"
            params = [*params, origin]
        return [_hit(r) for r in self._execute(sql, params).fetchall()]  # judge orders

    def versions(self, origin: str, name: str) -> list[Hit]:
        """Every stored version of one drive."""
        rows = self._execute(f"SELECT {_HIT_COLUMNS} FROM entries e JOIN drives d ON d.id = "
                             "e.drive_id WHERE d.origin = ? AND d.name = ?", (origin, name))
        return [_hit(r) for r in rows.fetchall()]

    def totals(self, origin: str | None = None) -> tuple[int, int]:
        """(drives, entries at their heads) of one origin or of all."""
        where, params = (" AND d.origin = ?", [origin]) if origin is not None else ("", [])
        drives = self._execute("SELECT count(*) FROM drives d WHERE d.status = 'drive'"
                               + where, params).fetchone()[0]
        entries = self._execute("SELECT count(*) FROM entries e JOIN drives d ON d.id = "
                                "e.drive_id WHERE e.at_head = 1" + where, params).fetchone()[0]
        return int(drives), int(entries)

    # --- writes -----------------------------------------------------------------------

    def put(self, items: Sequence[tuple[DriveRecord, Read | None]]) -> None:
        """Store drives' records and, where given, their entry versions (one transaction)."""
        updates = ", ".join(f"{c} = excluded.{c}" for c in COLUMNS[2:])
        upsert = (f"INSERT INTO drives ({', '.join(COLUMNS)}) VALUES "
                  f"({', '.join('?' * len(COLUMNS))}) ON CONFLICT (origin, name) "
                  f"DO UPDATE SET {updates}")
        with self.transaction():
            for record, read in items:
                self._execute(upsert, astuple(record))
                if read is not None:
                    drive_id = self._execute("SELECT id FROM drives WHERE origin = ? AND "
                                             "name = ?", (record.origin, record.name)
                                             ).fetchone()[0]
                    self._put_versions(drive_id, read)
                elif record.status != "drive":
                    self._execute("DELETE FROM entries WHERE drive_id IN (SELECT id FROM "
                                  "drives WHERE origin = ? AND name = ?)",
                                  (record.origin, record.name))

    def _put_versions(self, drive_id: int, read: Read) -> None:
        if read.full:
            self._execute("DELETE FROM entries WHERE drive_id = ?", (drive_id,))
        else:
            self._execute("UPDATE entries SET at_head = 0 WHERE drive_id = ? AND at_head = 1",
                          (drive_id,))
        self._executemany(
            "INSERT INTO entries (drive_id, entry_id, digest, path, source, added, text, "
            "words, at_head) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (drive_id, "
            "entry_id, digest) DO NOTHING",
            [(drive_id, v.entry_id, v.digest, v.path, v.source, v.added, v.text,
              " ".join(words_of(v.text)), int(v.at_head)) for v in read.versions])
        if not read.full:
            self._executemany("UPDATE entries SET at_head = 1 WHERE drive_id = ? AND "
                              "entry_id = ? AND digest = ?",
                              [(drive_id, i, d) for i, d in sorted(read.head_keys)])

    def remove(self, origin: str, names: Iterable[str]) -> int:
        """Forget repositories that left the root; returns how many."""
        gone = list(names)
        with self.transaction():
            for name in gone:
                self._execute("DELETE FROM entries WHERE drive_id IN (SELECT id FROM drives "
                              "WHERE origin = ? AND name = ?)", (origin, name))
                self._execute("DELETE FROM drives WHERE origin = ? AND name = ?",
                              (origin, name))
        return len(gone)

    # --- leases (memgit.fleet.schedule decides; inside a transaction) -------------------

    def lease(self, origin: str, drive: str, task: str, day: str) -> LeaseRow | None:
        row = self._execute(f"SELECT {', '.join(LEASE_COLUMNS)} FROM leases WHERE origin = ? "
                            "AND drive = ? AND task = ? AND day = ?",
                            (origin, drive, task, day)).fetchone()
        return LeaseRow(*row) if row else None

    def set_lease(self, row: LeaseRow) -> None:
        updates = ", ".join(f"{c} = excluded.{c}" for c in LEASE_COLUMNS[4:])
        self._execute(f"INSERT INTO leases ({', '.join(LEASE_COLUMNS)}) VALUES "
                      f"({', '.join('?' * len(LEASE_COLUMNS))}) ON CONFLICT (origin, drive, "
                      f"task, day) DO UPDATE SET {updates}", astuple(row))

    def _schema(self, tables: str, fts: str) -> None:
        with self.transaction():
            for statement in (tables + "\n\n" + fts).split("\n\n"):  # one per paragraph
                if statement.strip():
                    self._execute(statement)
            self._execute("INSERT INTO fleet_meta (key, value) VALUES ('schema', ?) "
                          "ON CONFLICT (key) DO NOTHING", (SCHEMA_VERSION,))
        found = self._execute("SELECT value FROM fleet_meta WHERE key = 'schema'").fetchone()
        if found[0] != SCHEMA_VERSION:
            raise FleetError(f"the fleet index {self.label} has schema {found[0]}, this "
                             f"memgit reads {SCHEMA_VERSION}", "upgrade memgit on every host")


class SQLiteStore(Store):
    """The embedded index: one SQLite file under the root."""

    kind = "sqlite"

    def __init__(self, path: Path) -> None:
        self.label = str(path)
        try:
            self.conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000,
                                        isolation_level=None)
            path.chmod(0o600)
            self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA secure_delete = ON")
            self.conn.execute("PRAGMA foreign_keys = ON")
            self._schema(_TABLES.format(serial="INTEGER"), _SQLITE_FTS)
        except sqlite3.Error as exc:
            raise FleetError(f"cannot open the fleet index {path}: {exc}",
                             "delete it: memgit fleet census rebuilds it") from exc

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.conn.execute(sql, tuple(params))

    def _executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self.conn.executemany(sql, rows)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def _fts_where(self, query: Query) -> tuple[str, str, list[Any]]:
        quoted = [f'"{w}"' for w in query.words]
        match = f'"{" ".join(query.words)}"' if query.kind == "phrase" else " ".join(quoted)
        # CROSS JOIN fixes SQLite's join order: from the full-text hits to their rows
        # (the planner would otherwise probe every drive's rows for every hit)
        return ("entries_fts CROSS JOIN entries e ON e.id = entries_fts.rowid "
                "CROSS JOIN drives d ON d.id = e.drive_id", "entries_fts MATCH ?", [match])

    def compact(self) -> None:
        """Merge the full-text segments and VACUUM: deleted words leave the file."""
        self.conn.execute("INSERT INTO entries_fts (entries_fts) VALUES ('optimize')")
        self.conn.execute("VACUUM")

    def close(self) -> None:
        self.conn.close()


class PostgresStore(Store):
    """A PostgreSQL database several hosts' roots share (``memgit[fleet]``: psycopg)."""

    kind = "postgresql"

    def __init__(self, url: str, label: str, connect_timeout: int = 5) -> None:
        self.label = label
        try:
            import psycopg
        except ImportError as exc:
            raise FleetError("the PostgreSQL fleet index needs psycopg",
                             "pip install 'memgit[fleet]'") from exc
        self._errors = (psycopg.Error,)
        try:
            self.conn = psycopg.connect(url, connect_timeout=connect_timeout, autocommit=True)
            self._schema(_TABLES.format(serial="BIGSERIAL"), _POSTGRES_FTS)
        except psycopg.Error as exc:
            raise FleetError(f"cannot reach the PostgreSQL fleet index at {label}: "
                             f"{_first_line(exc)}", "check the URL, the server and the "
                             "password (the embedded index under the root keeps working)"
                             ) from exc

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.conn.execute(sql.replace("?", "%s"), tuple(params))  # type: ignore[arg-type]

    def _executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        with self.conn.cursor() as cur:
            cur.executemany(sql.replace("?", "%s"), list(rows))  # type: ignore[arg-type]

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self.conn.transaction():
            yield

    def _fts_where(self, query: Query) -> tuple[str, str, list[Any]]:
        function = "phraseto_tsquery" if query.kind == "phrase" else "plainto_tsquery"
        return _PLAIN_SOURCE, f"e.tsv @@ {function}('simple', ?)", [" ".join(query.words)]

    def compact(self) -> None:
        """VACUUM the entries: deleted rows' texts leave the tables' pages."""
        self._execute("VACUUM entries")

    def close(self) -> None:
        self.conn.close()


def _hit(row: Sequence[Any]) -> Hit:
    return Hit(row[0], row[1], row[2], row[3], row[4], row[5], row[6], bool(row[7]), row[8])


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


__all__ = ["COLUMNS", "DriveRecord", "Hit", "PostgresStore", "SQLiteStore", "Store",
           "text_digest"]
