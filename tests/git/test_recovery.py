"""A checkout a killed memgit left half updated is finished from the branch (git.recovery).

The states are the ones a SIGKILL leaves (tests/write/test_crash_faults.py kills real
processes at random moments): the branch moved, git's index and the work tree still at the
old commit, a ``.notes.md.memgit-tmp`` and an ``index.lock`` left over, with or without the
checkout journal. They are made here with plain git on a real checkout of a real server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import git, memgit, memgit_ok


def dead_pid() -> int:
    """The number of a process that has exited (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def checkout(tmp_path: Path) -> Path:
    memgit_ok("init", "--bare", str(tmp_path / "server.git"))
    memgit_ok("clone", (tmp_path / "server.git").as_uri(), str(tmp_path / "a"))
    work = tmp_path / "a"
    memgit_ok("remember", "herons stand still to fish", cwd=work)
    return work


def remembered(work: Path, text: str) -> str:
    out = json.loads(memgit_ok("remember", "--json", text, cwd=work).stdout)
    return str(out["added"][0]["id"])


def lag_behind(work: Path, *, journal: bool) -> str:
    """Put the index and the work tree back one commit, as a write killed after moving
    the branch leaves them; returns the commit the checkout lags at."""
    old = git("rev-parse", "HEAD~1", cwd=work).stdout.decode().strip()
    new = git("rev-parse", "HEAD", cwd=work).stdout.decode().strip()
    git("read-tree", old, cwd=work)
    git("checkout-index", "-f", "-a", cwd=work)
    (work / ".notes.md.memgit-tmp").write_bytes(b"half a file")
    lock = work / ".git" / "index.lock"
    if journal:
        lock.write_bytes(b"")
        os.utime(lock, (1, 1))
        record = {"ref": "refs/heads/main", "old": old, "new": new, "pid": dead_pid(),
                  "host": os.uname().nodename, "started": 1.0}
        (work / ".git" / "memgit-checkout.json").write_text(json.dumps(record))
    return old


def assert_clean(work: Path) -> None:
    assert git("status", "--porcelain", cwd=work).stdout == b""
    assert not list(work.rglob("*.memgit-tmp"))
    assert not (work / ".git" / "index.lock").exists()
    assert not (work / ".git" / "memgit-checkout.json").exists()
    assert git("fsck", "--no-dangling", cwd=work).returncode == 0


def test_a_journaled_update_is_finished_by_the_next_write(tmp_path: Path) -> None:
    work = checkout(tmp_path)
    first = remembered(work, "the kiln fires at dawn")
    lag_behind(work, journal=True)
    assert (work / "notes.md").read_text().count(first) == 0  # the checkout lags
    second = remembered(work, "the glaze needs two coats")
    branch = git("show", "main:notes.md", cwd=work).stdout.decode()
    assert first in branch and second in branch  # the entry the branch held stays
    assert_clean(work)


def test_the_repair_is_reported(tmp_path: Path) -> None:
    work = checkout(tmp_path)
    remembered(work, "the kiln fires at dawn")
    lag_behind(work, journal=True)
    proc = memgit("remember", "the glaze needs two coats", cwd=work)
    out = proc.stdout.decode()
    assert proc.returncode == 0, proc.stderr
    assert "finished a checkout update a killed memgit left: notes.md brought to the " \
           "branch" in out
    assert "removed the index.lock a killed memgit left" in out
    assert "removed 1 temporary file a killed memgit left" in out


def test_a_lagging_checkout_without_journal_is_never_committed_back(tmp_path: Path) -> None:
    """The issue's state (MG001 "commit or stash them" would have undone the entry)."""
    work = checkout(tmp_path)
    first = remembered(work, "the kiln fires at dawn")
    lag_behind(work, journal=False)
    (work / ".notes.md.memgit-tmp").unlink()
    second = remembered(work, "the glaze needs two coats")
    branch = git("show", "main:notes.md", cwd=work).stdout.decode()
    assert first in branch and second in branch
    assert_clean(work)


def test_sync_repairs_a_lagging_checkout_before_it_checks_for_edits(tmp_path: Path) -> None:
    work = checkout(tmp_path)
    first = remembered(work, "the kiln fires at dawn")
    lag_behind(work, journal=True)
    proc = memgit("sync", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert b"memgit: repaired: finished a checkout update" in proc.stderr
    server = git("show", "main:notes.md", cwd=tmp_path / "server.git").stdout.decode()
    assert first in server
    assert_clean(work)


def test_a_user_edit_on_the_old_version_is_kept_on_top_of_the_branch(tmp_path: Path) -> None:
    work = checkout(tmp_path)
    first = remembered(work, "the kiln fires at dawn")
    lag_behind(work, journal=True)
    memory = work / "MEMORY.md"
    notes = work / "notes.md"
    notes.write_text("# My own heading\n\n" + notes.read_text())  # the user's edit
    proc = memgit("remember", "the glaze needs two coats", cwd=work)
    assert proc.returncode == 2  # the write does not land over the user's edit ...
    err = proc.stderr.decode()
    assert "uncommitted edits in notes.md" in err and "git commit -- notes.md" in err
    text = notes.read_text()
    assert text.startswith("# My own heading\n") and first in text  # ... which is kept merged
    # following the hint keeps both: the user's heading and every entry
    git("commit", "-q", "--no-verify", "-m", "my heading", "--", "notes.md", cwd=work)
    second = remembered(work, "the glaze needs two coats")
    branch = git("show", "main:notes.md", cwd=work).stdout.decode()
    assert branch.startswith("# My own heading\n") and first in branch and second in branch
    assert memory.exists()


def test_a_journal_of_a_live_process_is_left_alone(tmp_path: Path) -> None:
    from memgit.git import recovery
    from memgit.git.repository import open_drive

    work = checkout(tmp_path)
    remembered(work, "the kiln fires at dawn")
    drive = open_drive(work)
    head = git("rev-parse", "HEAD", cwd=work).stdout.decode().strip()
    recovery.begin(drive, "refs/heads/main", head, head)  # this process: alive
    assert recovery.recover(drive) == []
    assert (work / ".git" / "memgit-checkout.json").exists()
    recovery.end(drive)


def test_a_half_written_loose_object_is_removed_and_a_young_one_waited_for(
        tmp_path: Path) -> None:
    """What CI's fault run left once: libgit2's ``objects/tmp_object_git2_*`` of a writer
    killed while it wrote a blob. An old one is removed by the next write; a young one
    that a live write renames into place is not touched."""
    import threading

    from memgit.git import recovery
    from memgit.git.repository import open_drive

    work = checkout(tmp_path)
    objects = work / ".git" / "objects"
    stale = objects / "tmp_object_git2_a1b2c3"
    stale.write_bytes(b"x\x9c half a blob")
    os.utime(stale, (1, 1))
    proc = memgit("remember", "the glaze needs two coats", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert "removed 1 temporary file a killed memgit left" in proc.stdout.decode()
    assert not stale.exists()

    live = objects / "tmp_object_git2_d4e5f6"
    live.write_bytes(b"a write in progress")
    placed = objects / "ff" / "live-write-finished"
    placed.parent.mkdir(exist_ok=True)
    timer = threading.Timer(0.2, os.replace, (live, placed))
    timer.start()
    try:
        notes = recovery.recover(open_drive(work))
    finally:
        timer.join()
    assert notes == []
    assert placed.read_bytes() == b"a write in progress"
    placed.unlink()
    assert git("fsck", "--no-dangling", cwd=work).returncode == 0


def test_a_branch_lock_a_killed_sync_left_is_broken_by_the_next_sync(tmp_path: Path) -> None:
    """A sync killed while it moved the checked-out branch to the server's head
    (``switch_branch_to``) leaves ``refs/heads/main.lock``: every later sync that had to
    take the server's head failed with MG004 "locked by another process" (bench/
    crash_sweep.py found it). The branch's lock is now waited on and, once older than any
    write holds one, broken, as for every other ref memgit writes."""
    work = checkout(tmp_path)
    memgit_ok("sync", cwd=work)
    other = tmp_path / "b"
    memgit_ok("clone", (tmp_path / "server.git").as_uri(), str(other))
    theirs = remembered(other, "the kingfisher nests in the clay bank")
    memgit_ok("sync", cwd=other)
    mine = remembered(work, "the heron returns each March")
    lock = work / ".git" / "refs" / "heads" / "main.lock"
    lock.write_bytes(b"")
    os.utime(lock, (1, 1))  # left by a process killed long ago
    proc = memgit("sync", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert not lock.exists()
    ids = git("show", "main:notes.md", cwd=work).stdout.decode()
    assert theirs in ids and mine in ids
    assert_clean(work)
