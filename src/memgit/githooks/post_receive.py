"""post-receive: count the accepted push and bring the recall index to the new head, in the
background.

git tells the client the push is done only once post-receive has exited AND its stderr is
closed (stderr reaches the client through the sideband), so the hook starts a detached
process (two forks and a ``setsid``, every inherited descriptor closed) and exits. That
process reindexes in one ``BEGIN IMMEDIATE`` transaction; if it never runs, the next read
repairs the index (failures: ``<git dir>/memgit/post-receive.log``). Each holds
``post-receive.lock`` shared until done, so :func:`wait_for_background` (exclusive)
returns once every push already answered is counted and indexed.
"""

from __future__ import annotations

import os
import sys

from memgit.githooks import hook_io
from memgit.githooks.detach import detached, let_go
from memgit.githooks.hook_io import parse_updates
from memgit.safe_text import append_log_line, printable

LOCK_FILE = "post-receive.lock"
LOG_FILE = "post-receive.log"


def _state_dir(git_dir: str | os.PathLike[str]) -> str:
    folder = os.path.join(git_dir, "memgit")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    return folder


def run_post_receive(git_dir: str | os.PathLike[str], stdin: bytes) -> tuple[int, list[str]]:
    """post-receive cannot undo a push: problems are reported, the status is always 0."""
    try:
        parse_updates(stdin)  # git's input is checked here, where the pusher sees a warning
        start_background(git_dir)
    except Exception as exc:
        message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        return 0, [f"memgit: warning: post-receive failed: {printable(message, 300)}"]
    return 0, []


def background_lock(git_dir: str | os.PathLike[str]) -> int:
    """A descriptor holding ``post-receive.lock`` shared: many pushes' work at once; taking
    it waits only while :func:`wait_for_background` holds it exclusively."""
    import fcntl

    lock = os.open(os.path.join(_state_dir(git_dir), LOCK_FILE),
                   os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_SH)
    except BaseException:
        os.close(lock)
        raise
    return lock


def start_background(git_dir: str | os.PathLike[str]) -> None:
    """Run :func:`background_work` for ``git_dir`` in a detached process; return at once."""
    lock = background_lock(git_dir)
    if hook_io.AFTER_ANSWER is not None:
        # a child of the warm judge: it does the work itself once git has the answer
        try:
            hook_io.after_answer(lambda: detached_work(lock, git_dir))
        except BaseException:
            os.close(lock)
            raise
        return
    try:
        detached(lambda: detached_work(lock, git_dir))
    finally:
        os.close(lock)  # the detached process keeps the lock through its own descriptor


def detached_work(lock: int, git_dir: str | os.PathLike[str]) -> None:
    """In a process the hook's client no longer waits for: let go of git's descriptors,
    then do the background work (its failures go to the log)."""
    let_go(keep=lock)
    try:
        background_work(git_dir)
    except BaseException as exc:  # noqa: BLE001 - nobody to tell but the log
        _log(git_dir, exc)


def background_work(git_dir: str | os.PathLike[str]) -> None:
    """Count the accepted push, reindex from the branch head git just moved, bring the
    census of a drive with caps up to date (memgit.policy.census), start the vectors'
    filler of a drive with an ``embeddings:`` section, and update the drive's row of the
    fleet index when it belongs to a fleet (:func:`update_fleet_index`)."""
    from pathlib import Path

    from memgit.embeddings import fill as vector_fill
    from memgit.git.repository import open_drive
    from memgit.index.reindex import reindex
    from memgit.policy.census import update_census
    from memgit.policy.settings import drive_policy
    from memgit.state import events

    events.record(Path(git_dir), "push_accepted")
    drive = open_drive(Path(git_dir))
    policy = drive_policy(drive)
    reindex(drive, policy=policy)
    update_census(drive.git_dir, policy)
    # A server drive with an embeddings: section: the pushed entries' vectors are made
    # by a filler of their own (memgit.embeddings.fill.wait_for_fill waits for it).
    vector_fill.schedule(drive.git_dir, policy.embeddings())
    update_fleet_index(drive.git_dir)


def update_fleet_index(git_dir: str | os.PathLike[str]) -> None:
    """A drive under a fleet root (a folder above it holds ``.memgit-fleet``): its row of
    the fleet index, by ``memgit fleet index --drive`` in a process of its own (the fleet
    sits tiers above the hooks, so this process never imports it); waited for, so
    :func:`wait_for_background` covers it. Finding the root walks up from the drive:
    the cost is the same in a root of 10 drives or 10,000."""
    import subprocess

    from memgit.git.roots import root_of

    if root_of(git_dir) is None:
        return
    proc = subprocess.run([sys.executable, "-m", "memgit", "fleet", "index", "--drive",
                           os.fspath(git_dir)], stdin=subprocess.DEVNULL,
                          capture_output=True, timeout=3600, check=False)
    if proc.returncode != 0:
        raise RuntimeError("memgit fleet index --drive failed: " + proc.stderr.decode(
            "utf-8", "replace").strip()[-500:])


def _log(git_dir: str | os.PathLike[str], exc: BaseException) -> None:
    message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
    append_log_line(os.path.join(_state_dir(git_dir), LOG_FILE), message)


def wait_for_background(git_dir: str | os.PathLike[str], timeout: float = 60.0) -> bool:
    """Wait until the background work of every push answered so far is done; False after
    ``timeout`` seconds."""
    import fcntl
    import time

    path = os.path.join(git_dir, "memgit", LOCK_FILE)
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW)
    except FileNotFoundError:
        return True  # no push ever started background work here
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.005)
    finally:
        os.close(fd)  # closing the descriptor releases the lock
