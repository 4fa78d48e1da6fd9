"""post-receive answers the pusher at once and does its work in a detached process.

The detached work is held back deterministically: the test takes the state
database's write lock first (BEGIN IMMEDIATE), so the background process waits in
its first write while the test checks what the client saw.
"""

from __future__ import annotations

import fcntl
import subprocess
from pathlib import Path

from memgit import state
from memgit.git.repository import open_drive, ref_target
from memgit.githooks.post_receive import LOCK_FILE, LOG_FILE, wait_for_background
from memgit.state import events, facts
from tests.receive_support import MAIN, Drive, base_files, entry, people_text, ulid_like


def background_busy(git_dir: Path) -> bool:
    """True while some push's background work still holds its shared lock."""
    fd = open(git_dir / "memgit" / LOCK_FILE, "rb")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        fd.close()
    return False


def run_hook(git_dir: Path, old: str, new: str) -> subprocess.CompletedProcess[bytes]:
    """The installed post-receive script, run the way git runs it; returns once the hook
    has exited AND its stdout and stderr are closed (what git waits for)."""
    return subprocess.run([str(git_dir / "hooks" / "post-receive")], cwd=git_dir, env={},
                          input=f"{old} {new} {MAIN}\n".encode(), capture_output=True,
                          timeout=60)


def test_pushes_return_while_their_work_waits_and_two_at_once_are_safe(tmp_path: Path
                                                                        ) -> None:
    drive = Drive(tmp_path, files=base_files())
    conn = state.connect(drive.git_dir)
    try:
        conn.execute("BEGIN IMMEDIATE")  # background processes block on their first write
        for n in (1, 2):
            drive.build(({"people.md": people_text(entry(f"Otter fact {n}", ulid_like(n + 6)))},
                         f"otters {n}"))
            result = drive.push("refs/heads/work")
            assert result.returncode == 0, result.stderr  # git's answer came back ...
        assert background_busy(drive.git_dir)  # ... while both pushes' work still waits
        assert events.counts_with(conn)["push_accepted"] == 0
    finally:
        conn.execute("ROLLBACK")
        conn.close()
    assert wait_for_background(drive.git_dir)
    assert not background_busy(drive.git_dir)
    assert events.counts(drive.git_dir)["push_accepted"] == 2
    head = ref_target(open_drive(drive.git_dir), MAIN)
    assert facts.stats(state.connect(drive.git_dir)).indexed_rev == head == drive.main()
    assert not (drive.git_dir / "memgit" / LOG_FILE).exists()  # neither of them failed


def test_background_failures_go_to_the_log(tmp_path: Path) -> None:
    drive = Drive(tmp_path, files=base_files())
    head = drive.main()
    policy = drive.git_dir / "memgit.yaml"
    policy.write_text("branch: [not, a, name]\n")  # the reindex cannot find its branch
    proc = run_hook(drive.git_dir, head, head)
    assert (proc.returncode, proc.stderr) == (0, b"")
    assert wait_for_background(drive.git_dir)
    log = (drive.git_dir / "memgit" / LOG_FILE).read_text()
    assert log.count("\n") == 1
    assert "branch must be a branch name such as main" in log
