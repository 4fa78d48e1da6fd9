"""The warm judge in tests: a folder of sockets of the test's own (``TMPDIR``), so its
judges are its own; every judge started in it is killed at the end (their pids are in
``KEY.lock``)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memgit.githooks import warm_client
from memgit.githooks.install import ASK_CALL, HOOK_CALL


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """This test's folder of judges' sockets; every judge started in it is killed after."""
    base = tmp_path / "rt"
    base.mkdir()
    monkeypatch.setenv("TMPDIR", str(base))
    monkeypatch.delenv("MEMGIT_HOOK_SERVER", raising=False)
    folder = Path(warm_client.runtime_folder())
    yield folder
    for pid in judge_pids(folder):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def judge_pids(folder: Path) -> list[int]:
    pids = []
    for lock in folder.glob("*.lock") if folder.is_dir() else ():
        text = lock.read_text().strip()
        if text.isdigit() and Path(f"/proc/{text}").exists():
            pids.append(int(text))
    return pids


def wait_for(what: Callable[[], object], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not what():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def sockets(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.sock")) if folder.is_dir() else []


def only_the_judge_can_answer(git_dir: Path) -> None:
    """Rewrite the hook scripts so that their own process cannot judge (it exits 97 after
    asking the judge): a push judged right afterwards was judged by the warm judge. The
    identity (Python and import path) is unchanged, so the same judge is asked."""
    for name in ("pre-receive", "post-receive"):
        hook = git_dir / "hooks" / name
        script = hook.read_text()
        assert ASK_CALL in script and HOOK_CALL in script
        hook.write_text(script.replace(HOOK_CALL, "sys.exit(97)"))
