"""The warm judge (memgit.githooks.warm) and the hook scripts' way to it
(memgit.githooks.warm_client): real pushes to real bare drives with the installed hooks.

Each test gets its own folder of sockets (tests/warm_support.py's ``runtime``), so its
judges are its own, killed at the end.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import time
from pathlib import Path

import pytest

from memgit.githooks import warm, warm_client
from tests.receive_support import Drive, base_files, entry, people_text, ulid_like
from tests.warm_support import judge_pids, only_the_judge_can_answer, runtime, sockets, wait_for

__all__ = ["runtime"]  # the fixture, used by name

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the warm judge checks its peer by SO_PEERCRED (Linux)")

TOKEN = "ghp_" + "Xq7LmP2vRt9KsW4nBz8YcJ1dHf6GuA3eTo5i"  # the form of a GitHub token


def good_push(drive: Drive, n: int) -> str:
    commit = drive.build(({"people.md": people_text(entry(f"kept {n}", ulid_like(900 + n)))},
                          f"good {n}"))
    result = drive.push("refs/heads/work")
    assert result.returncode == 0, result.stderr
    assert drive.main() == commit[0]
    return commit[0]


def bad_pushes(drive: Drive) -> list[tuple[set[str], str]]:
    """A secret and a file that is not a memory file: both refused; (codes, stderr)."""
    out = []
    for files in ({"people.md": people_text(entry(f"the deploy key is {TOKEN}", ulid_like(77)))},
                  {"notes.txt": "x\n"}):
        before = drive.main()
        drive.build((files, "bad"))
        result = drive.push("refs/heads/work")
        assert result.refused_by_hook, result.stderr
        assert drive.main() == before
        assert TOKEN not in result.stderr and TOKEN[4:] not in result.stderr
        out.append((result.codes(), result.stderr))
    return out


def test_the_first_push_starts_a_judge_and_later_pushes_are_judged_by_it_alike(
        tmp_path: Path, runtime: Path) -> None:
    """Same verdicts, same codes, same lines, with and without the judge; the accepted
    push's background work (the count) is done by the judge's child."""
    cold = Drive(tmp_path / "cold", files=base_files(), env={"MEMGIT_HOOK_SERVER": "0"})
    good_push(cold, 1)
    assert sockets(runtime) == []  # turned off: no judge started
    cold_bad = bad_pushes(cold)

    warm_drive = Drive(tmp_path / "warm", files=base_files())
    good_push(warm_drive, 1)  # no judge yet: judged in the hook's process, which starts one
    wait_for(lambda: len(sockets(runtime)) == 1)
    assert len(judge_pids(runtime)) == 1
    only_the_judge_can_answer(warm_drive.git_dir)
    good_push(warm_drive, 2)
    warm_bad = bad_pushes(warm_drive)
    assert [codes for codes, _ in warm_bad] == [codes for codes, _ in cold_bad]
    assert warm_bad[0][0] and warm_bad[1][0] == {"MG201"}
    for (_, warm_err), (_, cold_err) in zip(warm_bad, cold_bad, strict=True):
        assert [line for line in warm_err.splitlines() if "MG" in line] == \
            [line for line in cold_err.splitlines() if "MG" in line]
    counts = warm_drive.event_counts()
    assert counts["push_accepted"] == 2 and counts["push_refused"] == 2


def test_a_killed_judge_leaves_pushes_judged_and_a_new_judge_starts(
        tmp_path: Path, runtime: Path) -> None:
    drive = Drive(tmp_path, files=base_files())
    good_push(drive, 1)
    wait_for(lambda: len(judge_pids(runtime)) == 1 and len(sockets(runtime)) == 1)
    first = judge_pids(runtime)[0]
    os.kill(first, signal.SIGKILL)
    wait_for(lambda: not Path(f"/proc/{first}/status").exists()
             or "zombie" in Path(f"/proc/{first}/status").read_text())
    assert sockets(runtime)  # left behind by the killed judge
    wait_for(lambda: refused(sockets(runtime)[0]))  # its spares end within a second
    good_push(drive, 2)  # judged in the hook's own process
    assert [codes for codes, _ in bad_pushes(drive)][1] == {"MG201"}
    wait_for(lambda: judge_pids(runtime) and judge_pids(runtime)[0] != first)
    only_the_judge_can_answer(drive.git_dir)
    good_push(drive, 3)


def test_no_judge_is_asked_or_started_in_a_folder_others_may_enter(
        tmp_path: Path, runtime: Path) -> None:
    runtime.mkdir(mode=0o755)
    runtime.chmod(0o755)
    drive = Drive(tmp_path, files=base_files())
    good_push(drive, 1)
    assert [codes for codes, _ in bad_pushes(drive)][1] == {"MG201"}
    time.sleep(1.0)  # a judge would have bound its socket by now
    assert sockets(runtime) == [] and judge_pids(runtime) == []
    assert not warm_client.folder_is_private(str(runtime))


def test_a_judge_answers_only_its_own_python_and_import_path(runtime: Path) -> None:
    """A request naming another identity is declined (no status): the hook would judge in
    its own process. The same request with the judge's identity is answered."""
    ident = warm_client.identity()
    key = warm_client.judge_key(ident)
    warm_client.start_judge(key)
    path = Path(warm_client.socket_path(key))
    wait_for(path.exists)
    other = ident + b" (another install)"
    assert exchange(str(path), warm_client.request(other, ["pre-receive"], b"")) == b"D\0"
    # an unknown hook name: the child runs entry.hook_main, which answers 2
    assert exchange(str(path), warm_client.request(ident, ["no-such-hook"], b"")) == b"S\2"
    assert warm_client.ask_judge(ident, ["no-such-hook"], b"") == 2


def test_a_child_that_cannot_take_on_the_hook_gives_no_answer(runtime: Path,
                                                               tmp_path: Path) -> None:
    """The hook's working directory is gone by the time the child would enter it: no
    status comes back (the hook then judges in its own process)."""
    ident = warm_client.identity()
    key = warm_client.judge_key(ident)
    warm_client.start_judge(key)
    path = Path(warm_client.socket_path(key))
    wait_for(path.exists)
    gone = tmp_path / "gone"
    gone.mkdir()
    os.chdir(gone)
    try:
        message = warm_client.request(ident, ["pre-receive"], b"")
    finally:
        os.chdir(tmp_path)
    gone.rmdir()
    assert exchange(str(path), message) == b""


def test_an_idle_judge_ends_and_takes_its_socket_away(runtime: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGIT_HOOK_SERVER_IDLE", "1")
    key = warm_client.judge_key(warm_client.identity())
    warm_client.start_judge(key)
    path = Path(warm_client.socket_path(key))
    wait_for(path.exists)
    wait_for(lambda: not path.exists() and not judge_pids(runtime))


def test_a_request_is_parsed_back_to_what_the_hook_sent(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_QUARANTINE_PATH", "/q/x=y")
    message = warm_client.request(b"ident", ["pre-receive", "--chain", "c d"], b"a b c\n\0z")
    assert int.from_bytes(message[:8], "big") == len(message) - 8
    got = warm.parse_request(message[8:])
    assert got.identity == b"ident" and got.cwd == os.fsencode(tmp_path)
    assert got.args == ["pre-receive", "--chain", "c d"] and got.stdin == b"a b c\n\0z"
    assert got.env[b"GIT_QUARANTINE_PATH"] == b"/q/x=y" and got.parent == os.getppid()
    with pytest.raises(warm.BadRequest):
        warm.parse_request(message[8:].replace(warm_client.PROTOCOL, b"memgit-hook-0"))


def refused(path: Path) -> bool:
    """Nothing listens on the socket any more."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        try:
            sock.connect(str(path))
        except ConnectionRefusedError:
            return True
        return False


def exchange(path: str, message: bytes) -> bytes:
    """Send ``message`` with this process's stdout and stderr, as a hook script does; what
    came back before the judge closed the connection."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        fds = b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in (1, 2))
        sock.sendmsg([message], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
        reply = b""
        while chunk := sock.recv(16):
            reply += chunk
        return reply
