"""The state database: location, permissions, pragmas, migrations (real SQLite files)."""

from __future__ import annotations

import multiprocessing
import sqlite3
import stat
from pathlib import Path

import pytest

from memgit import state
from memgit.errors import RepoError
from memgit.state import pending

CTX = multiprocessing.get_context("fork")


def test_created_private_in_the_git_dir_with_wal_and_full_sync(tmp_path: Path) -> None:
    conn = state.connect(tmp_path)
    try:
        path = tmp_path / "memgit" / "state.sqlite"
        assert state.state_path(tmp_path) == path and path.is_file()
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == state.BUSY_TIMEOUT_MS
        assert state.schema_version(conn) == len(state.MIGRATIONS)
        conn.execute("INSERT INTO meta (key, value) VALUES ('k', 'v')")  # autocommit
        wal = Path(str(path) + "-wal")
        assert wal.exists() and stat.S_IMODE(wal.stat().st_mode) == 0o600
    finally:
        conn.close()


def test_reopening_keeps_data_and_does_not_migrate_again(tmp_path: Path) -> None:
    with state.opened(tmp_path) as conn:
        with state.immediate(conn):
            state.set_meta(conn, "indexed_rev", "abc")
    with state.opened(tmp_path) as conn:
        assert state.get_meta(conn, "indexed_rev") == "abc"
        assert state.schema_version(conn) == len(state.MIGRATIONS)
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        assert {"meta", "events", "pending", "facts", "facts_fts"} <= tables


def test_an_older_schema_is_migrated_forward(tmp_path: Path) -> None:
    (tmp_path / "memgit").mkdir(mode=0o700)
    raw = sqlite3.connect(tmp_path / "memgit" / "state.sqlite")
    raw.execute("PRAGMA user_version = 0")
    raw.close()
    with state.opened(tmp_path) as conn:
        assert state.schema_version(conn) == len(state.MIGRATIONS)
        assert pending.count(conn) == 0


def test_immediate_rolls_back_on_error(tmp_path: Path) -> None:
    with state.opened(tmp_path) as conn:
        try:
            with state.immediate(conn):
                state.set_meta(conn, "k", "v")
                raise RuntimeError("boom")
        except RuntimeError:
            pass
        assert state.get_meta(conn, "k") is None
        assert not conn.in_transaction


def _open(path: str) -> None:
    with state.opened(Path(path)) as conn:
        assert state.schema_version(conn) == len(state.MIGRATIONS)


def test_concurrent_first_opens_migrate_once(tmp_path: Path) -> None:
    procs = [CTX.Process(target=_open, args=(str(tmp_path),)) for _ in range(6)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
    assert [p.exitcode for p in procs] == [0] * 6
    with state.opened(tmp_path) as conn:
        assert state.schema_version(conn) == len(state.MIGRATIONS)


def test_a_symlink_at_the_state_path_is_refused(tmp_path: Path) -> None:
    (tmp_path / "memgit").mkdir()
    target = tmp_path / "elsewhere.sqlite"
    target.write_bytes(b"")
    (tmp_path / "memgit" / "state.sqlite").symlink_to(target)
    with pytest.raises(RepoError, match="symbolic link"):
        state.connect(tmp_path)
    assert target.read_bytes() == b""


def test_many_processes_opening_a_new_database_at_once(tmp_path) -> None:
    """First open (the switch to WAL) and migrations never fail with 'database is locked'."""
    ctx = multiprocessing.get_context("fork")
    for round_ in range(30):
        git_dir = tmp_path / f"g{round_}"
        git_dir.mkdir()
        barrier = ctx.Barrier(8)
        procs = [ctx.Process(target=_open_together, args=(str(git_dir), barrier))
                 for _ in range(8)]
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join(60)
        assert [proc.exitcode for proc in procs] == [0] * 8, f"round {round_}"


def _open_together(git_dir: str, barrier) -> None:
    barrier.wait()
    conn = state.connect(Path(git_dir))
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert state.schema_version(conn) == len(state.MIGRATIONS)
    finally:
        conn.close()


def test_the_context_migration_keeps_rows_and_counts_and_asks_for_a_reindex(
        tmp_path: Path) -> None:
    """A database made before the recall index had a context column (schema 3): its
    rows, their full-text entries and retrieval counts survive; the next read reindexes."""
    folder = tmp_path / "memgit"
    folder.mkdir(mode=0o700)
    raw = sqlite3.connect(folder / "state.sqlite")
    for script in state.MIGRATIONS[:3]:
        raw.executescript(script)
    raw.execute("INSERT INTO facts (id, fact_id, entry_id, path, line, text, digest, indexed, "
                "valid_from, retrievals) VALUES (7, 'drive_x', 'm-1', 'projects/pay_ments.md', "
                "3, 'Otters hold hands', 'd', 1, 'now', 4)")
    raw.execute("INSERT INTO facts_fts (rowid, text, topic) VALUES (7, 'Otters hold hands', "
                "'projects pay ments')")
    raw.execute("INSERT INTO meta (key, value) VALUES ('indexed_rev', 'abc')")
    raw.execute("PRAGMA user_version = 3")
    raw.commit()
    raw.close()
    with state.opened(tmp_path) as conn:
        assert state.schema_version(conn) == len(state.MIGRATIONS)
        assert conn.execute("SELECT retrievals, context FROM facts").fetchall() == [(4, "")]
        assert conn.execute("SELECT rowid FROM facts_fts WHERE facts_fts MATCH 'otters'"
                            ).fetchall() == [(7,)]
        assert conn.execute("SELECT rowid FROM facts_fts WHERE facts_fts MATCH 'payments OR "
                            "ments'").fetchall() == [(7,)]
        assert state.get_meta(conn, "indexed_rev") is None


def test_the_context_managers_without_contextlib(tmp_path: Path) -> None:
    """opened closes its connection, immediate hands back the connection it commits on,
    and the setup lock's flock is released when its block ends, on error too (they are
    plain classes: the quick path does not load contextlib)."""
    import fcntl
    import os

    with state.opened(tmp_path) as conn:
        with state.immediate(conn) as same:
            assert same is conn and conn.in_transaction
        assert not conn.in_transaction
    with pytest.raises(sqlite3.ProgrammingError):
        conn.execute("SELECT 1")
    path = state.state_file(tmp_path)
    with pytest.raises(KeyError):
        with state._setup_lock(path):
            raise KeyError("inside")
    fd = os.open(os.path.join(os.path.dirname(path), "state.lock"), os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises if still held
    finally:
        os.close(fd)
