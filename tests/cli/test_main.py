"""The one error handler (cli.main): codes, hints, exit statuses, no tracebacks by default."""

from __future__ import annotations

import os
import random
from pathlib import Path

from tests.conftest import git, memgit


def drive_with_entry(new_drive) -> Path:
    return new_drive({"notes.md": "# Notes\n\n- Herons stand still to fish "
                                  "[source: imported:unknown; id: m-heron]\n"})


def damage_loose_object(path: Path, rev: str) -> None:
    """Overwrite one loose object of the checkout with bytes that do not inflate."""
    oid = git("rev-parse", rev, cwd=path).stdout.decode().strip()
    obj = path / ".git" / "objects" / oid[:2] / oid[2:]
    obj.chmod(0o644)
    obj.write_bytes(b"not zlib data")


def test_an_unexpected_exception_is_one_line_mg000_and_exit_3(new_drive) -> None:
    path = drive_with_entry(new_drive)
    damage_loose_object(path, "HEAD:notes.md")
    proc = memgit("lint", "--rev", "HEAD", cwd=path)
    err = proc.stderr.decode()
    assert proc.returncode == 3
    assert err.splitlines()[0] == ("memgit: error MG000 internal error: GitError: failed to "
                                   "inflate loose object")
    assert "rerun with --debug or MEMGIT_DEBUG=1" in err
    assert "Traceback" not in err
    debug = memgit("--debug", "lint", "--rev", "HEAD", cwd=path)
    assert debug.returncode == 3
    assert "Traceback (most recent call last)" in debug.stderr.decode()
    os.environ["MEMGIT_DEBUG"] = "1"
    try:
        env_debug = memgit("lint", "--rev", "HEAD", cwd=path)
    finally:
        del os.environ["MEMGIT_DEBUG"]
    assert env_debug.returncode == 3
    assert "Traceback (most recent call last)" in env_debug.stderr.decode()


def test_a_damaged_state_database_is_a_user_error_with_a_way_out(new_drive) -> None:
    path = drive_with_entry(new_drive)
    assert memgit("recall", "herons", cwd=path).returncode == 0
    database = path / ".git" / "memgit" / "state.sqlite"
    for suffix in ("-wal", "-shm"):
        Path(str(database) + suffix).unlink(missing_ok=True)
    database.write_bytes(random.Random(7).randbytes(8192))
    proc = memgit("recall", "x", cwd=path)
    err = proc.stderr.decode()
    assert proc.returncode == 2
    assert err.startswith(f"memgit: error MG013: the state database {database} is damaged "
                          "(file is not a database)\n")
    assert "memgit index --rebuild" in err and "Traceback" not in err
    # the hint's way out: move the file aside, rebuild, recall again
    database.rename(str(database) + ".damaged")
    assert memgit("index", "--rebuild", cwd=path).returncode == 0
    found = memgit("recall", "herons", cwd=path)
    assert found.returncode == 0 and b"Herons stand still to fish" in found.stdout


def test_exit_statuses_of_usage_errors_and_violations(new_drive) -> None:
    path = drive_with_entry(new_drive)
    usage = memgit("lint", "--rev", "HEAD", "--cached", cwd=path)
    assert (usage.returncode, usage.stderr.decode().split(":", 2)[1]) == (2, " error MG001")
    (path / "bad.md").write_text("- x [source: javascript:alert(1)]\n")
    violations = memgit("lint", cwd=path)
    assert violations.returncode == 1
    assert b"MG101 source-scheme" in violations.stdout
    unknown = memgit("no-such-command", cwd=path)
    assert unknown.returncode == 2 and b"No such command" in unknown.stderr
