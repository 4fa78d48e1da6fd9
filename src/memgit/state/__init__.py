"""The state database: SQLite at ``<git dir>/memgit/state.sqlite``; all of memgit's SQL.

Owns: the database itself here (the file, connections and their per-process cache,
migrations in ``PRAGMA user_version``, transactions, meta values) and its tables:
``facts`` and ``search`` (the recall index), ``vectors``, ``pending`` (the pending-write
queue), ``counters`` and ``events``, ``observations`` and ``dream``, ``blob_ids`` (what
pre-receive knows of old files); ``salvage`` (what a damaged file still holds intact,
carried into its replacement).
May import: errors and the standard library; nothing else imports sqlite3.
The recall index can be rebuilt from the drive at any time, but the pending queue holds
acknowledged writes not yet in the drive (deleting the file while ``memgit info`` shows
``pending_writes`` > 0 loses them, as it loses observed turns, dream reports, counters).
Every connection: WAL (readers never block the one writer), ``synchronous=FULL`` (a
committed transaction survives power loss), a busy timeout (concurrent hooks and agents
wait instead of failing). The file and its folder are private (0600 / 0700): entry texts
are copied into it. No pygit2 and no pathlib: the hooks and the quick path load it.
"""

from __future__ import annotations

import _thread
import os
import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads it so)
if TYPE_CHECKING:
    import sqlite3
else:
    # The C module the sqlite3 package re-exports: the package also imports datetime to
    # register adapters for date and time values (a tenth of a quick recall's
    # instructions), and this package binds only str, int, float, bytes and None.
    import _sqlite3 as sqlite3
if TYPE_CHECKING:
    import datetime
    from collections.abc import Callable, Iterator
    from pathlib import Path
    from types import TracebackType

Connection = sqlite3.Connection
Error = sqlite3.Error  # any failure of the database
OperationalError = sqlite3.OperationalError  # locked, disk full, I/O: worth a retry

STATE_DIR = "memgit"
STATE_FILE = "state.sqlite"
BUSY_TIMEOUT_MS = 30_000

# Each migration is applied once, in order, inside one BEGIN IMMEDIATE
# transaction together with the user_version bump; add new ones at the end,
# never edit an old one.
MIGRATIONS: list[str] = [
    # 1: meta, events, the pending queue, the index
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE events (
        name TEXT PRIMARY KEY,
        count INTEGER NOT NULL DEFAULT 0,
        updated TEXT NOT NULL
    );
    CREATE TABLE pending (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        created TEXT NOT NULL,
        intent TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        last_error TEXT NOT NULL DEFAULT ''
    );
    CREATE TABLE facts (
        id INTEGER PRIMARY KEY,
        fact_id TEXT NOT NULL UNIQUE,
        entry_id TEXT NOT NULL,
        path TEXT NOT NULL,
        line INTEGER NOT NULL,
        text TEXT NOT NULL,
        source TEXT NOT NULL DEFAULT '',
        added TEXT NOT NULL DEFAULT '',
        digest TEXT NOT NULL,
        indexed INTEGER NOT NULL,
        valid_from TEXT NOT NULL,
        valid_until TEXT,
        retrievals INTEGER NOT NULL DEFAULT 0,
        last_retrieved TEXT
    );
    CREATE INDEX facts_entry ON facts (entry_id);
    CREATE INDEX facts_path ON facts (path) WHERE valid_until IS NULL;
    CREATE INDEX facts_digest ON facts (digest) WHERE valid_until IS NULL;
    CREATE VIRTUAL TABLE facts_fts USING fts5 (
        text, topic, tokenize = 'porter unicode61 remove_diacritics 2'
    );
    """,
    # 2: memgit observe's turns (state/observations.py) and memgit dream's runs (state/dream.py)
    """
    CREATE TABLE observations (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        turn_id TEXT NOT NULL UNIQUE,
        created TEXT NOT NULL,
        session TEXT NOT NULL DEFAULT '',
        role TEXT NOT NULL,
        text TEXT NOT NULL
    );
    CREATE INDEX observations_created ON observations (created);
    CREATE TABLE dream_runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        day TEXT NOT NULL,
        trigger TEXT NOT NULL,
        status TEXT NOT NULL,
        token TEXT NOT NULL,
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        started TEXT NOT NULL,
        heartbeat TEXT NOT NULL,
        finished TEXT,
        proposer TEXT NOT NULL DEFAULT '',
        commit_id TEXT NOT NULL DEFAULT '',
        error TEXT NOT NULL DEFAULT '',
        report TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX dream_runs_day ON dream_runs (day);
    """,
    # 3: the context packet's listings (state/search.py top_entries) read these partial
    # indexes instead of sorting every row: 23 ms -> 0.9 ms at 15,000 entries
    """
    CREATE INDEX facts_newest ON facts (added DESC, id DESC)
        WHERE valid_until IS NULL AND indexed = 1;
    CREATE INDEX facts_retrieved ON facts (retrievals DESC, last_retrieved DESC, id DESC)
        WHERE valid_until IS NULL AND indexed = 1 AND retrievals > 0;
    """,
    # 4: the recall index's context: an entry's heading trail (and its context key), a
    # full-text column of its own, weaker than the text. FTS5 tables cannot take a new
    # column, so facts_fts is made anew from the rows (the topic words as
    # state.facts.topic_words makes them: the tokenizer ignores the extra blanks) and
    # the next read reindexes fully to fill the context in.
    """
    ALTER TABLE facts ADD COLUMN context TEXT NOT NULL DEFAULT '';
    DROP TABLE facts_fts;
    CREATE VIRTUAL TABLE facts_fts USING fts5 (
        text, topic, context, tokenize = 'porter unicode61 remove_diacritics 2'
    );
    INSERT INTO facts_fts (rowid, text, topic, context)
        SELECT id, text, trim(replace(replace(replace(replace(
            substr(path, 1, length(path) - 3), '/', ' '), '_', ' '), '.', ' '), '-', ' ')), ''
        FROM facts WHERE indexed = 1 AND valid_until IS NULL;
    DELETE FROM meta WHERE key = 'indexed_rev';
    """,
    # 5: semantic recall's vectors (state/vectors.py), one per searchable entry, keyed by
    # fact id with the digest of the text embedded. The triggers drop a vector in the
    # transaction that retires, hides, changes or deletes its row (reindex, forget,
    # purge, a client learning purged ids), and change vectors_stamp, the meta value the
    # in-process vector matrices are cached under. seq never reuses a number
    # (AUTOINCREMENT), so a process holding the vectors up to seq N reads only the rows
    # after N and drops the seqs gone (hybrid's matrix refresh).
    """
    CREATE TABLE vectors (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        fact_id TEXT NOT NULL UNIQUE,
        digest TEXT NOT NULL,
        vector BLOB NOT NULL
    );
    CREATE TRIGGER vectors_follow_facts AFTER UPDATE OF digest, indexed, valid_until ON facts
        WHEN (new.valid_until IS NOT NULL OR new.indexed = 0 OR new.digest IS NOT old.digest)
            AND EXISTS (SELECT 1 FROM vectors WHERE fact_id = old.fact_id)
    BEGIN
        DELETE FROM vectors WHERE fact_id = old.fact_id;
        REPLACE INTO meta (key, value) VALUES ('vectors_stamp', hex(randomblob(8)));
    END;
    CREATE TRIGGER vectors_follow_deletes AFTER DELETE ON facts
        WHEN EXISTS (SELECT 1 FROM vectors WHERE fact_id = old.fact_id)
    BEGIN
        DELETE FROM vectors WHERE fact_id = old.fact_id;
        REPLACE INTO meta (key, value) VALUES ('vectors_stamp', hex(randomblob(8)));
    END;
    """,
    # 6: the entry ids a blob holds, by blob id (state/blob_ids.py): pre-receive learns
    # which files a push's new ids collide with without reading every old file. ``salt``
    # names the parser that computed them (a new parser reads afresh).
    """
    CREATE TABLE blob_ids (
        oid TEXT NOT NULL,
        salt TEXT NOT NULL,
        ids TEXT NOT NULL,
        PRIMARY KEY (oid, salt)
    ) WITHOUT ROWID;
    """,
]


def state_dir(git_dir: Path) -> Path:
    from pathlib import Path

    return Path(git_dir) / STATE_DIR


def state_file(git_dir: str | os.PathLike[str]) -> str:
    """The database file's path as a string (no pathlib needed)."""
    return os.path.join(git_dir, STATE_DIR, STATE_FILE)


def state_path(git_dir: Path) -> Path:
    return state_dir(git_dir) / STATE_FILE


def _create_private(path: str) -> None:
    """Create the folder (0700) and an empty database file (0600) if missing."""
    try:
        os.mkdir(os.path.dirname(path), 0o700)
    except FileExistsError:
        pass
    # O_NOFOLLOW: never follow a symlink planted at the state file's place.
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    os.close(fd)


_opened: set[str] = set()  # every database file this process opened (repair_damaged)


def connect(git_dir: str | os.PathLike[str], *, migrate: bool = True) -> sqlite3.Connection:
    """Open (creating and migrating) the drive's state database.

    The connection is in autocommit mode; use :func:`immediate` for
    transactions that write. A damaged file is moved aside and replaced by a new one
    (:func:`_repair`): everything in it but the pending queue is derived from git.
    """
    path = state_file(git_dir)
    if os.path.islink(path) or os.path.islink(os.path.dirname(path)):
        from memgit.errors import RepoError  # on failure only: the quick path skips it

        raise RepoError(f"{path} is a symbolic link; memgit will not follow it",
                        "remove the link; the state database is rebuilt from the drive")
    _opened.add(path)
    if not os.path.exists(path):
        _create_missing(path)
    try:
        return _open(path, migrate)
    except _Damaged as damage:
        return _repair(path, damage.reason, migrate)


class _Damaged(Exception):
    """The file is not a readable SQLite database (never raised out of this module)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _open(path: str, migrate: bool) -> sqlite3.Connection:
    """A configured (and migrated) connection; :class:`_Damaged` when the file is not a
    database, is truncated, or its schema cannot be read."""
    truncated = _truncation(path)
    if truncated:
        raise _Damaged(truncated)
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000,
                           isolation_level=None, check_same_thread=False)
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        if mode != "wal" or (migrate and schema_version(conn) < len(MIGRATIONS)):
            with _setup_lock(path):
                _set_wal(conn)
                if migrate:
                    _migrate(conn)
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
    except sqlite3.DatabaseError as exc:
        conn.close()
        if type(exc) is not sqlite3.DatabaseError:
            raise  # locked, I/O, ...: not damage (OperationalError and friends)
        # "file is not a database", "database disk image is malformed"
        raise _Damaged(str(exc)) from exc
    except BaseException:
        conn.close()
        raise
    return conn


def _truncation(path: str) -> str:
    """Why the file is shorter than its own header says (\"\" when it is not): SQLite
    reads a cut-off file without complaint until a query reaches a missing page.

    The header's page count is valid when its "version valid for" field equals the
    change counter (both written at each commit to the file). A non-empty write-ahead
    log may hold pages a checkpoint has not copied yet, so the file is then left to
    SQLite's own checks.
    """
    try:
        with open(path, "rb") as fh:
            header = fh.read(100)
            size = os.fstat(fh.fileno()).st_size
    except OSError:
        return ""
    try:
        if os.path.getsize(path + "-wal") > 0:
            return ""
    except OSError:
        pass  # no log: the file alone is the database
    if size == 0 or len(header) < 100 or not header.startswith(MAGIC):
        return ""  # empty: a new database; not SQLite: sqlite3 says so itself
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    if header[24:28] == header[92:96] and size < pages * page_size:
        return f"truncated: {size} bytes of {pages * page_size}"
    return ""


def _create_missing(path: str) -> None:
    """Create the file; a folder that already held a database (its ``state.lock`` is made
    at the first open) lost it: say so, and keep the orphaned write-ahead log aside
    (replayed into a new file it would corrupt it)."""
    folder = os.path.dirname(path)
    if not os.path.exists(os.path.join(folder, "state.lock")):
        _create_private(path)
        return
    with _setup_lock(path):
        if os.path.exists(path):
            return  # another process made it meanwhile
        kept = _move_aside(path, "missing", main=False)
        _create_private(path)
    _warn(folder, "the state database was missing: rebuilt from the drive"
          + (f" (its leftover log kept as {kept})" if kept else ""))


def _repair(path: str, reason: str, migrate: bool,
            still: Callable[[str], str] | None = None) -> sqlite3.Connection:
    """Move a damaged database aside (kept, never deleted), open a new one, carry over
    the pending writes still readable from the kept copy and every table that passes
    its check (state/salvage.py), and say so in one line.
    ``still`` tells, under the setup lock, whether the file is still damaged (another
    process may have repaired it meanwhile)."""
    with _setup_lock(path):
        try:
            damaged = (still or _damaged_header)(path)
        except FileNotFoundError:
            damaged = ""
        kept = _move_aside(path, "damaged", main=True) if damaged else ""
        if not os.path.exists(path):
            _create_private(path)
    conn = _open(path, migrate)
    if not kept:
        return conn  # another process repaired it first
    source = _salvage_copy(kept)
    try:
        carried, unreadable = _carry_pending(source, conn)
        from memgit.state.salvage import carry_tables, outcome  # on damage only

        done = outcome(*carry_tables(source, conn))
    finally:
        for suffix in ("", "-wal", "-shm", "-journal"):
            if os.path.exists(source + suffix):
                os.unlink(source + suffix)
    line = f"the state database was damaged ({reason}): kept as {kept}, {done}"
    if carried:
        line += f"; {carried} pending write{'s' if carried != 1 else ''} carried over"
    if unreadable:
        line += f"; {unreadable} (see {kept})"
    _warn(os.path.dirname(path), line)
    return conn


def _damaged_header(path: str) -> str:
    return _truncation(path) or _not_a_database(path)


def _not_a_database(path: str) -> str:
    """SQLite's complaint when it cannot read the schema of the file at ``path``."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return ""
    except sqlite3.DatabaseError as exc:
        return str(exc) if type(exc) is sqlite3.DatabaseError else ""
    finally:
        conn.close()


def _move_aside(path: str, label: str, *, main: bool) -> str:
    """Rename the file (when ``main``) and its ``-wal``/``-shm`` companions to
    ``state.sqlite.LABEL-STAMP``; returns the new name of the file (or of the first
    companion moved, or \"\")."""
    import time as _time

    stamp = _time.strftime("%Y%m%dT%H%M%SZ", _time.gmtime())
    target = f"{path}.{label}-{stamp}"
    number = 1
    while os.path.exists(target) or os.path.exists(target + "-wal"):
        number += 1
        target = f"{path}.{label}-{stamp}-{number}"
    first = ""
    for suffix in ("", "-wal", "-shm") if main else ("-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.rename(path + suffix, target + suffix)  # same folder: atomic
            first = first or target + suffix
    return first


def _carry_pending(source: str, conn: sqlite3.Connection) -> tuple[int, str]:
    """Copy the pending writes readable from ``source`` (the kept copy made readable,
    :func:`_salvage_copy`) into ``conn``; returns how many, and what could not be read
    (\"\" when nothing was lost)."""
    import json

    rows: list[tuple[str, str, int, str]] = []
    problem = ""
    try:
        old = _open_read_only(source)
        try:
            cursor = old.execute("SELECT created, intent, attempts, last_error FROM pending "
                                 "ORDER BY seq")
            for created, intent, attempts, error in cursor:
                try:
                    json.loads(intent)
                except (TypeError, ValueError):
                    problem = "a pending write could not be read"
                    continue
                rows.append((str(created), str(intent), int(attempts), str(error)))
        finally:
            old.close()
    except sqlite3.Error as exc:
        problem = f"the pending-write queue could not be read ({exc}): writes queued there, " \
                  "if any, are not carried over"
    if rows:
        with immediate(conn):
            conn.executemany("INSERT INTO pending (created, intent, attempts, last_error) "
                             "VALUES (?, ?, ?, ?)", rows)
    return len(rows), problem


def _salvage_copy(path: str) -> str:
    """A temporary copy of a damaged file that SQLite can open: the 16-byte magic string
    put back when it was overwritten, a cut-off file made whole with zero bytes (SQLite
    refuses one outright). Pages that survived are then readable; a query that
    reaches a damaged or zeroed page still fails."""
    with open(path, "rb") as fh:
        data = bytearray(fh.read())
    copy = path + ".salvage.memgit-tmp"
    if len(data) >= 100:
        data[:16] = MAGIC
        data[18:20] = b"\x01\x01"  # a rollback-journal file: no -wal or -shm beside the copy
        page_size = int.from_bytes(data[16:18], "big")
        size = (65536 if page_size == 1 else page_size) * int.from_bytes(data[28:32], "big")
        if data[24:28] == data[92:96] and len(data) < size:
            data.extend(bytes(size - len(data)))
    fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return copy


MAGIC = b"SQLite format 3\0"
REPAIR_LOG = "repair.log"


def _warn(folder: str, line: str) -> None:
    """One warning line on stderr, and the same line in ``memgit/repair.log`` (a hook's
    background work has no stderr)."""
    import sys
    import time as _time

    sys.stderr.write(f"memgit: warning: {line}\n")
    stamp = _time.strftime("%Y-%m-%dT%H:%M:%SZ", _time.gmtime())
    try:
        fd = os.open(os.path.join(folder, REPAIR_LOG),
                     os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, f"{stamp} {line}\n".encode("utf-8", "backslashreplace"))
        finally:
            os.close(fd)
    except OSError:
        pass  # a log line is never worth failing the command


class _setup_lock:
    """First open and migrations, one process at a time (a flock on a sidecar file).

    Switching a database to WAL needs an exclusive lock, and SQLite answers
    "database is locked" at once, without its busy handler, when another
    process opens the file at that moment; so the processes take turns.
    (A class, not contextlib.contextmanager: the quick path does not import contextlib.)
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd = -1

    def __enter__(self) -> None:
        import fcntl

        self.fd = os.open(os.path.join(os.path.dirname(self.path), "state.lock"),
                          os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(self.fd)
            raise

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        os.close(self.fd)


def _set_wal(conn: sqlite3.Connection) -> None:
    """WAL is a property of the file; setting it again is a no-op. SQLite creates
    -wal and -shm with the database file's permissions (0600). A reader of a
    process that opened the file before the lock can still hold it for a moment:
    retry within the busy timeout."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _migrate(conn: sqlite3.Connection) -> None:
    if schema_version(conn) >= len(MIGRATIONS):
        return
    with immediate(conn):
        # Re-read under the write lock: another process may have migrated meanwhile.
        version = schema_version(conn)
        for number in range(version, len(MIGRATIONS)):
            for statement in _statements(MIGRATIONS[number]):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number + 1}")


def _statements(script: str) -> Iterator[str]:
    """The statements of a migration: split at semicolons, rejoined where a statement is
    not complete yet (a trigger's body holds semicolons of its own)."""
    pending = ""
    for part in script.split(";"):
        pending += part + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \n;"):
                yield pending.strip()
            pending = ""
    if pending.strip(" \n;"):
        yield pending.strip()


class immediate:
    """A ``BEGIN IMMEDIATE`` transaction: takes the write lock up front, so two
    writers never both read and then deadlock upgrading their locks. Committed when the
    block ends, rolled back (and the exception raised on) when it raises."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.conn.execute("ROLLBACK" if kind is not None else "COMMIT")


class opened:
    """A connection of its own to the drive's state database, closed when the block ends."""

    def __init__(self, git_dir: Path) -> None:
        self.conn = connect(git_dir)

    def __enter__(self) -> sqlite3.Connection:
        return self.conn

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.conn.close()


def get_meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT INTO meta (key, value) VALUES (?, ?) "
                 "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (key, value))


def delete_meta(conn: sqlite3.Connection, key: str) -> None:
    conn.execute("DELETE FROM meta WHERE key = ?", (key,))


STAMP = "%Y-%m-%dT%H:%M:%SZ"


def utc_now(*, micro: bool = False) -> str:
    """The time as the state database stores it: UTC, ``2026-01-02T03:04:05Z`` (with
    microseconds for the recall index's rows)."""
    import datetime as _dt

    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ" if micro else STAMP)


def stamp(when: datetime.datetime) -> str:
    """A given time as the state database stores it (``utc_now``'s form)."""
    import datetime as _dt

    return when.astimezone(_dt.UTC).strftime(STAMP)


def parse_stamp(value: str) -> datetime.datetime:
    """The time a stored stamp names (UTC)."""
    import datetime as _dt

    return _dt.datetime.strptime(value, STAMP).replace(tzinfo=_dt.UTC)


# --- the process's connections ----------------------------------------------------------

_conn_lock = _thread.allocate_lock()  # threading.Lock, without importing threading
_connections: dict[tuple[int, str], tuple[sqlite3.Connection, int]] = {}


def connection(git_dir: str | os.PathLike[str]) -> sqlite3.Connection:
    """The process's connection to the drive's state database (opened once).

    A database file deleted or replaced since it was opened is noticed (inode
    check) and reopened, so "delete state.sqlite" works in a running process too.
    The key holds the process id: a forked child never uses its parent's connection.
    """
    key = (os.getpid(), str(git_dir))
    path = state_file(git_dir)
    with _conn_lock:
        cached = _connections.get(key)
        if cached is not None:
            conn, inode = cached
            try:
                current = os.stat(path).st_ino
            except FileNotFoundError:
                current = -1
            if current == inode:
                return conn
            conn.close()
            del _connections[key]
        conn = connect(git_dir)
        _connections[key] = (conn, os.stat(path).st_ino)
        return conn


def is_damage(exc: BaseException) -> bool:
    """A query found the file damaged ("database disk image is malformed"): SQLite's plain
    DatabaseError, not one of its subclasses (locked, I/O, constraint ...)."""
    return type(exc) is sqlite3.DatabaseError


def repair_damaged() -> list[str]:
    """Check the databases this process opened (``PRAGMA quick_check``) and repair each
    damaged one as :func:`connect` would (kept aside, rebuilt); returns their paths.
    The command line calls it when a query met damage :func:`connect` could not see
    (a damaged page deep in a table, the vectors' for one), then runs the command again."""
    repaired = []
    for path in sorted(_opened):
        problem = _quick_check(path)
        if not problem:
            continue
        with _conn_lock:
            for key in [k for k in _connections if state_file(k[1]) == path]:
                _connections.pop(key)[0].close()
        _repair(path, problem, True, still=_quick_check).close()
        repaired.append(path)
    return repaired


def _quick_check(path: str) -> str:
    """SQLite's first complaint of ``PRAGMA quick_check`` on the file ("" when sound)."""
    try:
        check = sqlite3.connect(path)
        try:
            answer = str(check.execute("PRAGMA quick_check").fetchone()[0])
        finally:
            check.close()
    except sqlite3.DatabaseError as exc:
        answer = str(exc)
    # Its report starts with a "*** in database main ***" heading, which names nothing.
    lines = [line for line in answer.splitlines() if not line.startswith("***")] or [answer]
    return "" if answer == "ok" else lines[0][:200]


def close_connections() -> None:
    with _conn_lock:
        for conn, _inode in _connections.values():
            conn.close()
        _connections.clear()


# --- copies (memgit backup and restore) -----------------------------------------------------


def backup_to(git_dir: Path, target: Path) -> None:
    """A consistent copy of the drive's state database at ``target`` (a new file).

    SQLite's online backup API copies the pages inside one read transaction (all pages
    in one step), so the copy is one committed state of the database even while other
    processes read and write it (WAL: the writers are not blocked). The copy is then
    switched to a rollback journal, so it is one self-contained file.
    """
    source = connect(git_dir)
    fd = os.open(target, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    os.close(fd)
    copy = sqlite3.connect(str(target), isolation_level=None)
    try:
        source.backup(copy, pages=-1)
        copy.execute("PRAGMA journal_mode = DELETE")
    finally:
        copy.close()
        source.close()


def _open_read_only(path: Path | str) -> sqlite3.Connection:
    """A database file opened read-only through SQLite's URI form (``mode=ro``)."""
    from pathlib import Path  # lazily: the quick read path loads this module, not pathlib

    return sqlite3.connect(Path(path).absolute().as_uri() + "?mode=ro", uri=True)


def check_copy(path: Path) -> tuple[str, int]:
    """(SQLite's ``integrity_check`` answer, schema version) of a database file, opened
    read-only; ("not a database: ...", -1) when SQLite cannot read it at all."""
    try:
        conn = _open_read_only(path)
    except sqlite3.Error as exc:
        return f"not a database: {exc}", -1
    try:
        answer = conn.execute("PRAGMA integrity_check").fetchone()[0]
        return str(answer), schema_version(conn)
    except sqlite3.DatabaseError as exc:
        return f"not a database: {exc}", -1
    finally:
        conn.close()


def meta_of_copy(path: Path, key: str) -> str | None:
    """A meta value of a database file opened read-only (a backup's copy)."""
    conn = _open_read_only(path)
    try:
        return get_meta(conn, key)
    finally:
        conn.close()


def upkeep(conn: sqlite3.Connection, *, vacuum_share: float) -> dict[str, int]:
    """``PRAGMA optimize`` (fresh planner statistics where SQLite finds them useful), then
    ``VACUUM`` when free pages are more than ``vacuum_share`` of the file (a rebuild of
    the file: worth its cost only then), then a TRUNCATE checkpoint (the write-ahead log
    back to zero bytes). Returns the page counts and bytes before and after."""
    def sizes() -> tuple[int, int, int]:
        pages = int(conn.execute("PRAGMA page_count").fetchone()[0])
        free = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
        size = int(conn.execute("PRAGMA page_size").fetchone()[0])
        return pages, free, pages * size

    pages, free, before = sizes()
    conn.execute("PRAGMA optimize")
    vacuumed = pages > 0 and free / pages > vacuum_share
    if vacuumed:
        conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    _pages, free_after, after = sizes()
    return {"free_pages": free, "vacuumed": int(vacuumed), "bytes_before": before,
            "bytes_after": after, "free_pages_after": free_after}
