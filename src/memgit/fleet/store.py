"""The fleet index's database: one schema, two backends (all of the fleet's SQL).

Like ``memgit.state`` for a drive, this module is the only code of the fleet that
speaks SQL (tests/test_architecture.py): the fleet index is a database of its own,
under the root or on a PostgreSQL server several git hosts share, and its statements
are written once here for both backends.

* :class:`SQLiteStore`: ``ROOT/.memgit-fleet/index.sqlite``, WAL, a busy timeout,
  ``secure_delete`` (a purged text's bytes do not stay in free pages), FTS5 over the
  entries' terms in two external-content tables kept by triggers: ``head_fts`` the
  versions at a head, ``past_fts`` those only history holds;
* :class:`PostgresStore`: the same tables, and ``entry_terms`` (each entry's id, drive,
  head flag and the ``tsvector`` of its terms, GIN-indexed, kept by a trigger), searched
  with ``plainto_tsquery``/``phraseto_tsquery`` of the ``simple`` configuration.

Tables: ``fleet_meta`` (schema version), ``drives`` (one row per repository under a
root: ``origin`` names the host and root, so several hosts share one database) and
``entries`` (every version of every entry, ``at_head`` when the head holds it).

Two invariants make a broad find cheap (:meth:`Store.counts`, :meth:`Store.page`):

* the terms (memgit.fleet.match.term) are one token each for both full-text engines,
  so their search finds exactly the entries the matcher matches: counts come from
  the full-text index alone (the pages of hits are still judged by the matcher);
* an entry's id is its drive's id times 2**32 plus a number within the drive
  (:data:`DRIVE_SHIFT`), so the drive of a full-text hit is its rowid shifted: no
  entry row is read to count hits per drive.

A schema older than this one is dropped and made again (every row is a copy of what
the drives hold: census describes them again; the leases are kept).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import astuple, dataclass, fields
from operator import attrgetter
from pathlib import Path
from typing import Any, NamedTuple

from memgit.errors import FleetError
from memgit.fleet.history import Read, text_digest
from memgit.fleet.match import Query, terms_of
from memgit.plugins import install_command

SCHEMA_VERSION = "2"  # 2: terms, entry ids within their drive's range, head/past FTS
DRIVE_SHIFT = 32  # an entry's id: drive id << DRIVE_SHIFT | its number in the drive
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
    a broad query makes tens of thousands. ``terms`` is the text's terms as stored
    (memgit.fleet.match.terms_of): what the matcher judges."""

    origin: str
    drive: str
    entry_id: str
    path: str
    source: str
    added: str
    text: str
    at_head: bool
    terms: str


class DriveCount(NamedTuple):
    """How many entries of one drive match a query: at its head, and only in history."""

    drive_id: int
    origin: str
    name: str
    head: int
    past: int


_ANSWER_ORDER = attrgetter("origin", "name")  # drives in an answer: origin, then name

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
    text TEXT NOT NULL, terms TEXT NOT NULL, at_head INTEGER NOT NULL,
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
CREATE VIRTUAL TABLE IF NOT EXISTS head_fts USING fts5 (
    terms, content = 'entries', content_rowid = 'id', tokenize = 'unicode61'
)

CREATE VIRTUAL TABLE IF NOT EXISTS past_fts USING fts5 (
    terms, content = 'entries', content_rowid = 'id', tokenize = 'unicode61'
)

CREATE TRIGGER IF NOT EXISTS entries_ai AFTER INSERT ON entries BEGIN
    INSERT INTO head_fts (rowid, terms) SELECT new.id, new.terms WHERE new.at_head;
    INSERT INTO past_fts (rowid, terms) SELECT new.id, new.terms WHERE NOT new.at_head;
END

CREATE TRIGGER IF NOT EXISTS entries_ad AFTER DELETE ON entries BEGIN
    INSERT INTO head_fts (head_fts, rowid, terms) SELECT 'delete', old.id, old.terms
        WHERE old.at_head;
    INSERT INTO past_fts (past_fts, rowid, terms) SELECT 'delete', old.id, old.terms
        WHERE NOT old.at_head;
END

CREATE TRIGGER IF NOT EXISTS entries_au AFTER UPDATE OF at_head ON entries
WHEN old.at_head <> new.at_head BEGIN
    INSERT INTO head_fts (head_fts, rowid, terms) SELECT 'delete', old.id, old.terms
        WHERE old.at_head;
    INSERT INTO past_fts (past_fts, rowid, terms) SELECT 'delete', old.id, old.terms
        WHERE NOT old.at_head;
    INSERT INTO head_fts (rowid, terms) SELECT new.id, new.terms WHERE new.at_head;
    INSERT INTO past_fts (rowid, terms) SELECT new.id, new.terms WHERE NOT new.at_head;
END
"""

# what schema 1 made (dropped with it; SQLite only: PostgreSQL drops with the table)
_SQLITE_OLD = ("DROP TRIGGER IF EXISTS entries_ai", "DROP TRIGGER IF EXISTS entries_ad",
               "DROP TRIGGER IF EXISTS entries_au", "DROP TABLE IF EXISTS entries_fts",
               "DROP TABLE IF EXISTS head_fts", "DROP TABLE IF EXISTS past_fts")

# PostgreSQL searches a narrow table of its own (id, drive, head, tsvector), kept by a
# trigger: a broad word's count visits every matching row (a GIN index answers no
# count alone), and rows without the texts are a third of the pages to visit. So a
# query of one term is counted from ``drive_terms`` instead: each drive's number of
# entries at its head that hold each term, made anew from entry_terms for every drive a
# write touches (:meth:`PostgresStore._recount`; the block below makes and fills it in
# an index of schema 2 made before it), read by an index-only scan (the primary key
# includes the count) once VACUUM has marked the pages all-visible (:meth:`analyze`)
_POSTGRES_FTS = """
CREATE TABLE IF NOT EXISTS entry_terms (
    id BIGINT PRIMARY KEY REFERENCES entries (id) ON DELETE CASCADE,
    drive_id BIGINT NOT NULL, at_head INTEGER NOT NULL, tsv tsvector NOT NULL
)

CREATE INDEX IF NOT EXISTS entry_terms_tsv ON entry_terms USING gin (tsv)

CREATE OR REPLACE FUNCTION memgit_entry_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO entry_terms (id, drive_id, at_head, tsv)
            VALUES (NEW.id, NEW.drive_id, NEW.at_head, to_tsvector('simple', NEW.terms));
    ELSE
        UPDATE entry_terms SET at_head = NEW.at_head WHERE id = NEW.id;
    END IF;
    RETURN NULL;
END
$$

CREATE OR REPLACE TRIGGER entries_terms AFTER INSERT OR UPDATE OF at_head ON entries
    FOR EACH ROW EXECUTE FUNCTION memgit_entry_terms()

DO $$ BEGIN
    IF to_regclass('drive_terms') IS NULL THEN
        CREATE TABLE drive_terms (
            term TEXT COLLATE "C" NOT NULL, drive_id BIGINT NOT NULL, n BIGINT NOT NULL,
            PRIMARY KEY (term, drive_id) INCLUDE (n)
        );
        CREATE INDEX drive_terms_drive ON drive_terms (drive_id);
        INSERT INTO drive_terms (term, drive_id, n)
            SELECT w, t.drive_id, count(*) FROM entry_terms t
            CROSS JOIN unnest(tsvector_to_array(t.tsv)) AS w WHERE t.at_head = 1
            GROUP BY 1, 2;
    END IF;
END $$
"""

_POSTGRES_OLD = ("DROP TABLE IF EXISTS entry_terms", "DROP TABLE IF EXISTS drive_terms")

# CROSS JOIN fixes SQLite's join order (from the entries to their drive), and PostgreSQL
# reads it as a plain join: the condition is in the WHERE clause
_PLAIN_SOURCE = "entries e CROSS JOIN drives d"
_PLAIN_JOIN = "d.id = e.drive_id"
_HIT_COLUMNS = ("d.origin, d.name, e.entry_id, e.path, e.source, e.added, e.text, "
                "e.at_head, e.terms")


class Store:
    """What both backends share: the statements, written with ``?`` placeholders."""

    kind = ""
    label = ""
    max_runs: int | None = None  # more runs in a page: one search of the drives' set

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        raise NotImplementedError

    def _executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        raise NotImplementedError

    def transaction(self) -> Any:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def _matching(self, query: Query, head: bool) -> tuple[str, list[Any]]:
        """(condition on ``e``, parameters): the entries at a head (``head``) or only in
        history that the full-text index finds for a words or phrase ``query``."""
        raise NotImplementedError

    def _count_sql(self, query: Query, head: bool) -> tuple[str, list[Any]]:
        """A query of (``drive_id``, ``n``): every drive with an entry :meth:`_matching`
        finds, and how many, read from the full-text index alone."""
        raise NotImplementedError

    def _range_sql(self, query: Query, head: bool) -> tuple[str, list[Any]]:
        """A query of the rows (:data:`_HIT_COLUMNS` and the drive id) :meth:`_matching`
        finds whose id is between two more parameters (exclusive)."""
        raise NotImplementedError

    def _set_sql(self, query: Query, head: bool) -> tuple[str, list[Any]]:
        """A query of the same rows in the drives of one more parameter, a list (for
        backends with :attr:`max_runs`)."""
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
        parts: list[tuple[str, list[Any]]]
        if query.kind == "regex":  # no index narrows a pattern: every version is judged
            parts = [("1 = 1" if history else "e.at_head = 1", [])]
        else:
            parts = [self._matching(query, head) for head in ((True, False) if history
                                                             else (True,))]
        hits: list[Hit] = []
        for where, params in parts:
            sql = f"SELECT {_HIT_COLUMNS} FROM {_PLAIN_SOURCE} WHERE {_PLAIN_JOIN} AND {where}"
            if origin is not None:
                sql += " AND d.origin = ?"
                params = [*params, origin]
            hits.extend(_hit(r) for r in self._execute(sql, params).fetchall())
        return hits  # the judge orders them

    def counts(self, query: Query, *, history: bool = False,
               origin: str | None = None) -> list[DriveCount]:
        """Every drive with an entry matching a words or phrase ``query``, and how many,
        from the full-text index alone (exact: the module's first invariant)."""
        found: dict[int, DriveCount] = {}
        for head in (True, False) if history else (True,):
            counted, params = self._count_sql(query, head)
            sql = (f"SELECT c.drive_id, d.origin, d.name, c.n FROM ({counted}) c CROSS JOIN "
                   "drives d WHERE d.id = c.drive_id")
            if origin is not None:
                sql, params = sql + " AND d.origin = ?", [*params, origin]
            rows = self._execute(sql, params).fetchall()
            if head:  # the first search: each drive once
                found = {r[0]: DriveCount(r[0], r[1], r[2], r[3], 0) for r in rows}
                continue
            for drive_id, drive_origin, name, n in rows:
                known = found.get(drive_id) or DriveCount(drive_id, drive_origin, name, 0, 0)
                found[drive_id] = known._replace(past=n)
        return list(found.values())

    def answer(self, query: Query, *, history: bool, origin: str | None,
               limit: int) -> tuple[list[DriveCount], list[Hit]]:
        """Every drive matching a words or phrase ``query`` (:meth:`counts`, in the
        answer's order: origin, name), and the candidates of the drives that hold the
        first ``limit`` hits (:meth:`page`)."""
        counts = sorted(self.counts(query, history=history, origin=origin), key=_ANSWER_ORDER)
        return counts, self.page(query, first_drives(counts, limit), history=history)

    def page(self, query: Query, drive_ids: Sequence[int], *,
             history: bool = False) -> list[Hit]:
        """The candidate versions for a words or phrase ``query`` in these drives (the
        caller judges and orders them, like :meth:`search`'s)."""
        # one search per run of near drive ids, bounded by the run's id range (an entry's
        # id is in its drive's: the second invariant; census numbers drives in name order,
        # so a page is mostly one run), the rows of drives in a run's gaps dropped
        wanted, hits = set(drive_ids), list[Hit]()
        runs = _runs(sorted(wanted))
        for head in (True, False) if history else (True,):
            if self.max_runs is not None and len(runs) > self.max_runs:
                sql, params = self._set_sql(query, head)
                hits.extend(_hit(r) for r in self._execute(sql, [*params, sorted(wanted)]))
                continue
            sql, params = self._range_sql(query, head)
            for first, last in runs:
                rows = self._execute(sql, [*params, first << DRIVE_SHIFT,
                                           (last + 1) << DRIVE_SHIFT]).fetchall()
                hits.extend(_hit(r) for r in rows if r[-1] in wanted)
        return hits

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
            touched = []
            for record, read in items:
                self._execute(upsert, astuple(record))
                drive_id = self._execute("SELECT id FROM drives WHERE origin = ? AND name = ?",
                                         (record.origin, record.name)).fetchone()[0]
                if read is not None:
                    self._put_versions(drive_id, read)
                    touched.append(drive_id)
                elif record.status != "drive":
                    self._execute("DELETE FROM entries WHERE drive_id = ?", (drive_id,))
                    touched.append(drive_id)
            self._recount(touched)

    def _put_versions(self, drive_id: int, read: Read) -> None:
        if read.full:
            self._execute("DELETE FROM entries WHERE drive_id = ?", (drive_id,))
        else:
            self._execute("UPDATE entries SET at_head = 0 WHERE drive_id = ? AND at_head = 1",
                          (drive_id,))
        # ids in the drive's range (the second invariant); a version already stored keeps
        # its row and leaves its number unused. The drive's row, upserted just before in
        # this transaction, is locked until it ends, so no other writer takes the numbers.
        base = drive_id << DRIVE_SHIFT
        last = self._execute("SELECT max(id) FROM entries WHERE id > ? AND id < ?",
                             (base, base + (1 << DRIVE_SHIFT))).fetchone()[0]
        first = (last or base) + 1
        if first + len(read.versions) >= base + (1 << DRIVE_SHIFT):
            raise FleetError(f"the fleet index has used every entry number of drive "
                             f"{drive_id}", "memgit fleet census ROOT --force describes "
                             "every drive anew")
        self._executemany(
            "INSERT INTO entries (id, drive_id, entry_id, digest, path, source, added, text, "
            "terms, at_head) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (drive_id, "
            "entry_id, digest) DO NOTHING",
            [(first + n, drive_id, v.entry_id, v.digest, v.path, v.source, v.added, v.text,
              terms_of(v.text), int(v.at_head)) for n, v in enumerate(read.versions)])
        if not read.full:
            self._executemany("UPDATE entries SET at_head = 1 WHERE drive_id = ? AND "
                              "entry_id = ? AND digest = ?",
                              [(drive_id, i, d) for i, d in sorted(read.head_keys)])

    def remove(self, origin: str, names: Iterable[str]) -> int:
        """Forget repositories that left the root; returns how many."""
        gone = list(names)
        with self.transaction():
            ids = []
            for name in gone:
                row = self._execute("SELECT id FROM drives WHERE origin = ? AND name = ?",
                                    (origin, name)).fetchone()
                if row is not None:
                    self._execute("DELETE FROM entries WHERE drive_id = ?", (row[0],))
                    self._execute("DELETE FROM drives WHERE id = ?", (row[0],))
                    ids.append(row[0])
            self._recount(ids)
        return len(gone)

    def _recount(self, drive_ids: Sequence[int]) -> None:
        """Bring what the backend keeps per drive up to date after these drives' entries
        changed (within the write's transaction; nothing by default)."""

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

    def _schema(self, tables: str, fts: str, old: Sequence[str] = ()) -> None:
        statements = [s for s in (tables + "\n\n" + fts).split("\n\n") if s.strip()]
        with self.transaction():
            self._execute(statements[0])  # fleet_meta
            found = self._execute("SELECT value FROM fleet_meta WHERE key = 'schema'"
                                  ).fetchone()
            if found is not None and found[0] != SCHEMA_VERSION:
                if not found[0].isdigit() or int(found[0]) > int(SCHEMA_VERSION):
                    raise FleetError(f"the fleet index {self.label} has schema {found[0]}, "
                                     f"this memgit reads {SCHEMA_VERSION}",
                                     "upgrade memgit on every host")
                for statement in (*old, "DROP TABLE IF EXISTS entries",
                                  "DROP TABLE IF EXISTS drives",
                                  "DELETE FROM fleet_meta WHERE key = 'schema'"):
                    self._execute(statement)  # a copy of the drives: census fills it again
            for statement in statements[1:]:
                self._execute(statement)
            self._execute("INSERT INTO fleet_meta (key, value) VALUES ('schema', ?) "
                          "ON CONFLICT (key) DO NOTHING", (SCHEMA_VERSION,))


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
            self._schema(_TABLES.format(serial="INTEGER"), _SQLITE_FTS, _SQLITE_OLD)
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

    @staticmethod
    def _match(query: Query) -> str:
        """FTS5's query: each term quoted (a term is one token: no operator, no split)."""
        if query.kind == "phrase":
            return f'"{" ".join(query.terms)}"'
        return " ".join(f'"{t}"' for t in query.terms)

    def _matching(self, query: Query, head: bool) -> tuple[str, list[Any]]:
        # SQLite loops over the subquery's rowids and looks each entry up by its id
        table = "head_fts" if head else "past_fts"
        return f"e.id IN (SELECT rowid FROM {table} WHERE {table} MATCH ?)", \
            [self._match(query)]

    def _count_sql(self, query: Query, head: bool) -> tuple[str, list[Any]]:
        table = "head_fts" if head else "past_fts"  # the drive is the rowid shifted
        return (f"SELECT rowid >> {DRIVE_SHIFT} AS drive_id, count(*) AS n FROM {table} "
                f"WHERE {table} MATCH ? GROUP BY 1", [self._match(query)])

    def _range_sql(self, query: Query, head: bool) -> tuple[str, list[Any]]:
        # FTS5 seeks to the rowid range; CROSS JOIN fixes the join order: from the
        # full-text hits to their rows
        table = "head_fts" if head else "past_fts"
        return (f"SELECT {_HIT_COLUMNS}, e.drive_id FROM {table} CROSS JOIN entries e ON "
                f"e.id = {table}.rowid CROSS JOIN drives d ON d.id = e.drive_id WHERE {table} "
                f"MATCH ? AND {table}.rowid > ? AND {table}.rowid < ?", [self._match(query)])

    def compact(self) -> None:
        """Merge the full-text segments and VACUUM: deleted words leave the file."""
        for table in ("head_fts", "past_fts"):
            self.conn.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")
        self.conn.execute("VACUUM")

    def close(self) -> None:
        self.conn.close()


class PostgresStore(Store):
    """A PostgreSQL database several hosts' roots share (``memgit[fleet]``: psycopg)."""

    kind = "postgresql"
    max_runs = 8  # a search is a round trip: scattered drives are searched as one set

    def __init__(self, url: str, label: str, connect_timeout: int = 5) -> None:
        self.label = label
        try:
            import psycopg
        except ImportError as exc:
            raise FleetError("the PostgreSQL fleet index needs psycopg",
                             install_command("fleet")) from exc
        self._errors = (psycopg.Error,)
        try:
            self.conn = psycopg.connect(url, connect_timeout=connect_timeout, autocommit=True)
            self._schema(_TABLES.format(serial="BIGSERIAL"), _POSTGRES_FTS, _POSTGRES_OLD)
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

    @staticmethod
    def _terms_where(query: Query, head: bool) -> tuple[str, list[Any]]:
        """(condition on ``entry_terms t``, parameters)."""
        function = "phraseto_tsquery" if query.kind == "phrase" else "plainto_tsquery"
        return f"t.tsv @@ {function}('simple', ?) AND t.at_head = {int(head)}", \
            [" ".join(query.terms)]

    def _matching(self, query: Query, head: bool, also: str = "") -> tuple[str, list[Any]]:
        # ``also``: a further condition on ``t`` (its parameters come after these)
        where, params = self._terms_where(query, head)
        return f"e.id IN (SELECT t.id FROM entry_terms t WHERE {where}{also})", params

    def _rows_sql(self, query: Query, head: bool, also: str) -> tuple[str, list[Any]]:
        matching, params = self._matching(query, head, also)
        return (f"SELECT {_HIT_COLUMNS}, e.drive_id FROM {_PLAIN_SOURCE} WHERE {_PLAIN_JOIN} "
                f"AND {matching}", params)

    def _count_sql(self, query: Query, head: bool) -> tuple[str, list[Any]]:
        one = _one_term(query)
        if head and one is not None:  # the kept counts (the module's note on drive_terms)
            return "SELECT drive_id, n FROM drive_terms WHERE term = ?", [one]
        where, params = self._terms_where(query, head)
        return (f"SELECT t.drive_id, count(*) AS n FROM entry_terms t WHERE {where} "
                "GROUP BY 1", params)

    def _recount(self, drive_ids: Sequence[int]) -> None:
        """Each of these drives' count of entries per term at its head, made anew from
        entry_terms (found by the id range of each drive: the second invariant)."""
        if not drive_ids:
            return
        ids = sorted(set(drive_ids))
        self._execute("DELETE FROM drive_terms WHERE drive_id = ANY(?)", [ids])
        self._execute("INSERT INTO drive_terms (term, drive_id, n) SELECT w, d.id, count(*) "
                      "FROM unnest(?::bigint[]) AS d (id) CROSS JOIN entry_terms t CROSS JOIN "
                      f"unnest(tsvector_to_array(t.tsv)) AS w WHERE t.id > d.id << {DRIVE_SHIFT} "
                      f"AND t.id < (d.id + 1) << {DRIVE_SHIFT} AND t.at_head = 1 GROUP BY 1, 2",
                      [ids])

    def _range_sql(self, query: Query, head: bool) -> tuple[str, list[Any]]:
        return self._rows_sql(query, head, " AND t.id > ? AND t.id < ?")

    def answer(self, query: Query, *, history: bool, origin: str | None,
               limit: int) -> tuple[list[DriveCount], list[Hit]]:
        """One statement, one search (without ``history``): every match's id and drive
        once, the counts per drive in the answer's order (``COLLATE "C"``: code point
        order, Python's), and the rows of the drives whose earlier hits are fewer than
        ``limit`` (:func:`first_drives`' choice), told apart by the first column."""
        if history or _one_term(query) is not None:  # counts kept, or both kinds
            return super().answer(query, history=history, origin=origin, limit=limit)
        where, params = self._terms_where(query, True)
        mine = "AND d.origin = ?" if origin is not None else ""
        sql = (f"WITH m AS MATERIALIZED (SELECT t.id, t.drive_id FROM entry_terms t WHERE "
               f"{where}), c AS (SELECT drive_id, count(*) AS n FROM m GROUP BY drive_id), "
               "o AS (SELECT c.drive_id, d.origin, d.name, c.n, sum(c.n) OVER (ORDER BY "
               'd.origin COLLATE "C", d.name COLLATE "C" ROWS UNBOUNDED PRECEDING) - c.n AS '
               f"before FROM c CROSS JOIN drives d WHERE d.id = c.drive_id {mine}) "
               "SELECT 0, o.origin, o.name, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
               "o.drive_id, o.n FROM o UNION ALL "
               f"SELECT 1, {_HIT_COLUMNS}, NULL, NULL FROM o CROSS JOIN m CROSS JOIN entries e "
               "CROSS JOIN drives d WHERE o.before < ? AND m.drive_id = o.drive_id AND e.id = "
               "m.id AND d.id = o.drive_id")
        counts, hits = [], []
        for row in self._execute(sql, [*params, *([origin] if mine else []), limit]).fetchall():
            if row[0] == 0:
                counts.append(DriveCount(row[10], row[1], row[2], row[11], 0))
            else:
                hits.append(_hit(row[1:]))
        counts.sort(key=_ANSWER_ORDER)
        return counts, hits

    def _set_sql(self, query: Query, head: bool) -> tuple[str, list[Any]]:
        return self._rows_sql(query, head, " AND t.drive_id = ANY(?)")

    def analyze(self) -> None:
        """Fresh planner statistics (without them, a join of the counts to the drives
        after a large copy can take a plan twice as slow), and drive_terms' pages marked
        all-visible, which its index-only scans need (else each row's page is read)."""
        self._execute("ANALYZE drives, entries, entry_terms")
        self._execute("VACUUM (ANALYZE) drive_terms")

    def compact(self) -> None:
        """VACUUM the entries and their terms: deleted rows leave the tables' pages."""
        self._execute("VACUUM entries")
        self._execute("VACUUM entry_terms")  # the terms of purged texts, in dead rows
        self._execute("VACUUM drive_terms")

    def close(self) -> None:
        self.conn.close()


def first_drives(counts: Sequence[DriveCount], limit: int) -> list[int]:
    """The drives (``counts`` in the answer's order) that hold the first ``limit`` hits
    at the heads and the first ``limit`` in history."""
    chosen, head, past = [], 0, 0
    for count in counts:
        if head >= limit and past >= limit:
            break
        if (count.head and head < limit) or (count.past and past < limit):
            chosen.append(count.drive_id)
        head, past = head + count.head, past + count.past
    return chosen


RUN_GAP = 16  # drive ids apart that one search of a page still spans


def _runs(ids: Sequence[int]) -> list[tuple[int, int]]:
    """Sorted ids as (first, last) runs, each next id at most RUN_GAP after the last."""
    runs: list[tuple[int, int]] = []
    for i in ids:
        if runs and i - runs[-1][1] <= RUN_GAP:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    return runs


def _one_term(query: Query) -> str | None:
    """The term of a words or phrase query that asks for one term only, else None."""
    terms = query.terms if query.kind != "regex" else ()
    if len(set(terms)) == 1 and (query.kind == "words" or len(terms) == 1):
        return terms[0]
    return None


def _hit(row: Sequence[Any]) -> Hit:
    """A row of :data:`_HIT_COLUMNS` (and anything after them) as a hit."""
    return Hit(row[0], row[1], row[2], row[3], row[4], row[5], row[6], bool(row[7]), row[8])


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


__all__ = ["COLUMNS", "DriveCount", "DriveRecord", "Hit", "PostgresStore", "SQLiteStore", "Store",
           "text_digest"]
