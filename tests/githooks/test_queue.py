"""The push queue (memgit.githooks.queue) on a real bare repository: who gets the turn,
what is refused unjudged, and that the queue never blocks a push it cannot order."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from memgit.githooks import queue
from memgit.githooks.hook_io import RefUpdate
from tests.conftest import bare_drive, git

REF = "refs/heads/main"


def repo(tmp_path: Path) -> tuple[Path, str, str]:
    """A bare drive, its head and a new commit on it (what a push would bring)."""
    drive = bare_drive(tmp_path / "d.git")
    head = git("rev-parse", REF, cwd=drive.git_dir).stdout.decode().strip()
    tree = git("rev-parse", f"{head}^{{tree}}", cwd=drive.git_dir).stdout.decode().strip()
    new = git("commit-tree", "-p", head, "-m", "a push", tree,
              cwd=drive.git_dir).stdout.decode().strip()
    return Path(drive.git_dir), head, new


def stdin(old: str, new: str) -> bytes:
    return f"{old} {new} {REF}\n".encode()


def test_a_push_on_the_current_head_is_judged_in_its_turn(tmp_path: Path) -> None:
    git_dir, head, new = repo(tmp_path)
    judged = []
    status = queue.in_turn(git_dir, stdin(head, new), lambda: judged.append(1) or 0)
    assert status == 0 and judged == [1]
    assert (git_dir / queue.NOTE_FILE).exists() and (git_dir / queue.PACE_FILE).exists()
    assert list((git_dir / queue.QUEUE_DIR).iterdir()) == []  # its ticket is gone


def test_a_push_whose_branch_moved_is_refused_unjudged(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    git_dir, head, new = repo(tmp_path)
    judged = []
    status = queue.in_turn(git_dir, stdin(new, new), lambda: judged.append(1) or 0)
    err = capfd.readouterr().err
    assert status == 1 and judged == []
    assert err.startswith("memgit: push not judged: the branch moved")
    assert f"MG604 non-fast-forward: {REF} moved to {head[:10]}" in err
    assert "push again in about" in err and "memgit: nothing was accepted" in err


def test_older_work_on_its_way_back_goes_first(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    git_dir, head, new = repo(tmp_path)
    folder = git_dir / queue.QUEUE_DIR
    folder.mkdir(parents=True)
    soon = int((time.time() + 30) * 1000)
    first_seen = int(time.time() * 1000) - 5000
    for who in ("aaaa", "bbbb"):  # two older pushes refused a moment ago, coming back
        (folder / f"r.{first_seen:013d}.{who}.{soon}").write_text("")
    judged = []
    status = queue.in_turn(git_dir, stdin(head, new), lambda: judged.append(1) or 0)
    err = capfd.readouterr().err
    assert status == 1 and judged == []
    assert "older pushes go first (2 queued)" in err and "push again in about" in err
    mine = [p.name for p in folder.iterdir() if p.name.startswith("r.")
            and ".aaaa." not in p.name and ".bbbb." not in p.name]
    assert len(mine) == 1  # this push keeps its place: a reservation of its own


def test_expired_reservations_and_dead_tickets_are_cleaned_up(tmp_path: Path) -> None:
    git_dir, head, new = repo(tmp_path)
    folder = git_dir / queue.QUEUE_DIR
    folder.mkdir(parents=True)
    old = int(time.time() * 1000) - 60_000
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (folder / f"r.{old:013d}.aaaa.{old + 1000}").write_text("")  # expired
    (folder / f"w.{old:013d}.bbbb.{dead}").write_text("")  # its process has ended
    judged = []
    assert queue.in_turn(git_dir, stdin(head, new), lambda: judged.append(1) or 0) == 0
    assert judged == [1] and list(folder.iterdir()) == []


def test_a_turn_that_does_not_come_leaves_the_push_to_the_judge(tmp_path: Path) -> None:
    """Another process holds the queue's flock and never lets go: after the wait the
    push is judged without a turn (the queue only saves work; git's ref lock decides)."""
    git_dir, head, new = repo(tmp_path)
    lock = git_dir / queue.LOCK_FILE
    lock.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, sys, time; f = open(sys.argv[1], 'a'); "
         "fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)",
         str(lock)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        turn = queue.take_turn(git_dir, [RefUpdate(head, new, REF)], wait=0.3)
        assert turn.fd is None and not turn.refused and turn.waited >= 0.3
        turn.release(accepted=False)
    finally:
        holder.kill()
        holder.wait()


def test_input_the_queue_cannot_read_goes_to_the_judge(tmp_path: Path) -> None:
    git_dir, _head, _new = repo(tmp_path)
    judged = []
    assert queue.in_turn(git_dir, b"not a ref update\n", lambda: judged.append(1) or 7) == 7
    assert judged == [1]


def test_a_refused_push_is_never_told_to_wait_long(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """However slow recent landings were, the wait asked for and the reservation are
    bounded: the place of work whose client gave up lapses soon."""
    git_dir, head, new = repo(tmp_path)
    folder = git_dir / queue.QUEUE_DIR
    folder.mkdir(parents=True)
    (git_dir / queue.PACE_FILE).write_text(f"{time.time():.3f} 50.000\n")  # 50 s a landing
    soon = int((time.time() + 30) * 1000)
    first_seen = int(time.time() * 1000) - 5000
    for who in ("aaaa", "bbbb", "cccc", "dddd"):
        (folder / f"r.{first_seen:013d}.{who}.{soon}").write_text("")
    assert queue.in_turn(git_dir, stdin(head, new), lambda: 0) == 1
    assert f"push again in about {queue.MAX_BACK_IN:.1f} s" in capfd.readouterr().err
    mine = [p.name for p in folder.iterdir() if not any(f".{w}." in p.name
                                                      for w in ("aaaa", "bbbb", "cccc", "dddd"))]
    expiry = int(mine[0].rsplit(".", 1)[1]) / 1000
    assert len(mine) == 1 and expiry <= time.time() + queue.MAX_BACK_IN + queue.RESERVE
