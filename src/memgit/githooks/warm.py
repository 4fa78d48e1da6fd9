"""The warm judge: one process per user and hook installation that has imported memgit and
set up the secret scanner once, and forks a child for each hook run.

Why: a push's hooks are two new Python processes, and most of what they cost is importing
memgit and compiling the scanner's patterns, the same work on every push (both hooks added
about 146 ms to a one-commit push, of which the push's own judging is a fraction). With a
judge listening, an installed hook script (memgit.githooks.warm_client) starts Python
without ``site``, reads its stdin and hands the run to the judge; the judge forks, and the
child takes on the hook's working directory, environment, umask and output descriptors,
then runs exactly what the hook would have run in its own process
(:func:`memgit.githooks.entry.hook_main`). So:

* git's quarantine reaches the child's git processes through the environment the hook was
  given (``GIT_QUARANTINE_PATH``, ``GIT_OBJECT_DIRECTORY``...); nothing is shared between
  two runs but what was imported before the fork.
* The push queue's turn (an ``flock`` memgit.githooks.queue takes) is held by the child and
  let go when it ends, however it ends; the note it leaves names the receive-pack the hook
  was started by (the client sends its parent's pid), not the judge.
* The child answers with the exit status only after its output is flushed and the hook's
  descriptors are closed; without that answer the hook judges in its own process.

Lifetime: the first hook run that finds no judge runs in its own process, then starts one
(warm_client.start_judge, detached: git does not wait for it). A judge exits after
:data:`IDLE_SECONDS` without a run (``MEMGIT_HOOK_SERVER_IDLE``), when its socket is taken
away, and as soon as a file of memgit's it loaded has changed on disk (an upgrade): it
declines that run and the hook judges in its own process and starts a new judge. Two
judges of one key never run at once (an ``flock`` on ``KEY.lock``). Linux only (the peer
check uses ``SO_PEERCRED``). ``KEY.lock`` holds the judge's pid.
"""

from __future__ import annotations

import fcntl
import os
import select
import signal
import socket
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NoReturn

from memgit.githooks import hook_io
from memgit.githooks.hook_io import hook_git_dir
from memgit.githooks.warm_client import (
    PROTOCOL,
    folder_is_private,
    identity,
    runtime_folder,
    socket_path,
)

IDLE_SECONDS = 300.0
READ_TIMEOUT = 30.0  # a hook sends its request at once; a peer that does not is dropped
MAX_REQUEST = 256 * 1024 * 1024  # stdin of a push of very many refs, with room to spare
_IDENTITY = b""  # the judge's own (warm_client.identity), set when it starts serving


@dataclass(frozen=True)
class Request:
    """One hook run, as a hook script sent it (memgit.githooks.warm_client.request)."""

    identity: bytes
    cwd: bytes
    umask: int
    parent: int
    stdin: bytes
    args: list[str]
    env: dict[bytes, bytes]


class BadRequest(Exception):
    """A request this judge cannot take; the hook then judges in its own process."""


# --- the judge -------------------------------------------------------------------------------


def serve(key: str) -> None:
    """Listen for hook runs of ``key`` until idle; return when another judge has the key,
    when the folder of the sockets is not private, or when done."""
    global _IDENTITY
    _IDENTITY = identity()
    folder = runtime_folder()
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    if not folder_is_private(folder):
        return
    lock = os.open(os.path.join(folder, key + ".lock"),
                   os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return  # another judge of this key is running
    os.ftruncate(lock, 0)
    os.write(lock, b"%d\n" % os.getpid())  # who the judge is, for an admin (and tests)
    warm_up()
    if _threads() != 1:
        return  # a fork would keep one of them: judge in each hook's own process instead
    loaded = module_files()
    idle = _idle_seconds()
    path = socket_path(key)
    listener = _listen(path)
    mine = os.stat(path).st_ino
    try:
        _accept_loop(listener, lock, loaded, idle, lambda: _still_mine(path, mine))
    finally:
        if _still_mine(path, mine):
            os.unlink(path)
        listener.close()


def _listen(path: str) -> socket.socket:
    """A socket bound at ``path`` (a stale one left by a judge that died is replaced: the
    lock says no judge of this key is running)."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    listener.settimeout(1.0)
    return listener


def _still_mine(path: str, inode: int) -> bool:
    try:
        return os.stat(path).st_ino == inode
    except OSError:
        return False


def _idle_seconds() -> float:
    try:
        return max(1.0, float(os.environ.get("MEMGIT_HOOK_SERVER_IDLE", IDLE_SECONDS)))
    except ValueError:
        return IDLE_SECONDS


SPARES = 2  # children waiting in accept(): a hook run never waits for a fork


def _accept_loop(listener: socket.socket, lock: int, loaded: dict[str, tuple[int, int]],
                 idle: float, still_mine: Callable[[], bool]) -> None:
    """Keep :data:`SPARES` children waiting for hook runs (each takes one connection and
    says so on a pipe, and a new spare is forked while it works); end when idle, when the
    socket is no longer this judge's, or when memgit changed on disk, ending the spares
    that are still waiting."""
    taken_r, taken_w = os.pipe()
    spares: set[int] = set()
    last = time.monotonic()
    try:
        while True:
            spares.difference_update(_reap())  # a spare that ended without a run
            while len(spares) < SPARES:
                spares.add(_fork_spare(listener, lock, taken_r, taken_w, loaded))
            ready, _w, _x = select.select([taken_r], [], [], 1.0)
            if ready:
                for chunk in os.read(taken_r, 4096).split(b"\n"):
                    if chunk.isdigit():
                        spares.discard(int(chunk))
                last = time.monotonic()
            elif time.monotonic() - last > idle or not still_mine() or module_files() != loaded:
                return
    finally:
        for pid in spares:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        os.close(taken_r)
        os.close(taken_w)


def _fork_spare(listener: socket.socket, lock: int, taken_r: int, taken_w: int,
                loaded: dict[str, tuple[int, int]]) -> int:
    pid = os.fork()
    if pid:
        return pid
    try:
        os.close(lock)
        os.close(taken_r)
        conn = _wait_for_a_run(listener)
        os.write(taken_w, b"%d\n" % os.getpid())  # the judge forks the next spare now
        os.close(taken_w)
        listener.close()
        if module_files() != loaded or not _same_user(conn):
            _decline(conn)  # memgit changed on disk (the judge ends within a second)
            os._exit(0)
    except BaseException:  # noqa: BLE001 - a spare that fails takes no run
        os._exit(0)
    serve_one(conn)


def _wait_for_a_run(listener: socket.socket) -> socket.socket:
    """accept() the next hook run; a spare whose judge is gone ends instead (the judge's
    lock is then free and a new judge may be listening elsewhere)."""
    judge = os.getppid()
    while True:
        try:
            conn, _addr = listener.accept()
            return conn
        except TimeoutError:
            if os.getppid() != judge:
                os._exit(0)


def _threads() -> int:
    """How many threads this process runs (Linux: ``/proc/self/task``; C libraries' own
    threads included, which ``threading`` does not see)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 0


def _reap() -> list[int]:
    """Collect the children that have ended (the judge never waits for one)."""
    ended: list[int] = []
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return ended
        if pid == 0:
            return ended
        ended.append(pid)


def _same_user(conn: socket.socket) -> bool:
    cred = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
    return int.from_bytes(cred[4:8], sys.byteorder) == os.getuid()


def _decline(conn: socket.socket) -> None:
    try:
        conn.sendall(b"D\0")
    except OSError:
        pass
    conn.close()


def warm_up() -> None:
    """Import what the hooks use, compile the patterns they compile on first use and run
    the judge once on sample text; nothing here reads a repository or starts a thread (a
    fork keeps only the thread that forks). The deep scan (``secrets: {deep: true}``) is
    left to the child: its other scanners' libraries start threads of their own."""
    from memgit.githooks import entry

    entry.defer_inspect()
    import memgit.githooks.post_receive
    import memgit.githooks.queue
    import memgit.githooks.receive
    import memgit.policy.registry_refs
    import memgit.state.blob_ids
    import memgit.state.events
    from memgit.githooks.old_files import ids_salt
    from memgit.policy.judge import check_blob
    from memgit.policy.settings import policy_from_mapping
    from memgit.secrets import scan_text, values

    for name in values.patterns():
        getattr(values.R, name)
    scan_text(WARM_UP_TEXT)
    ids_salt()
    memgit.state.sqlite3.connect(":memory:").close()  # SQLite's own set-up, done once
    check_blob("notes.md", WARM_UP_TEXT.encode(), policy_from_mapping({}))
    del memgit


# Lines of the forms the scanner and the judge meet (none is a real credential): judging
# them once compiles what is compiled on first use.
_SOURCE = "[source: https://example.com/s/1; added: 2026-01-02"
WARM_UP_TEXT = "\n".join((
    "# Notes", "",
    f"- The note says password: Example-Not-A-Secret-1 {_SOURCE}; id: m-{1:026d}]",
    f"- export API_TOKEN=example and curl -u admin:example https://example.com/x {_SOURCE}]",
    f"- postgres://user:example@db.example.com/app; Server=db;Password=example; {_SOURCE}]",
    f'- {{"client_secret": "example"}} Authorization: Bearer example.example {_SOURCE}]',
    f"- see [the runbook](runbook.md) {_SOURCE}; id: m-{3:026d}]", ""))

def module_files() -> dict[str, tuple[int, int]]:
    """(mtime, size) of every file of memgit's this process has loaded: a judge serves
    only while they are what it loaded."""
    files: dict[str, tuple[int, int]] = {}
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) if name.startswith("memgit") else None
        if path:
            try:
                st = os.stat(path)
            except OSError:
                files[path] = (-1, -1)
                continue
            files[path] = (st.st_mtime_ns, st.st_size)
    return files


# --- one hook run, in a child of the judge -----------------------------------------------------


def serve_one(conn: socket.socket) -> NoReturn:
    """Take on the hook's context, run it, answer with its exit status, end. Any failure
    before the answer leaves the hook to judge in its own process."""
    try:
        conn.settimeout(READ_TIMEOUT)
        request, fds = receive(conn)
        conn.settimeout(None)
        if request.identity != _IDENTITY:
            _decline(conn)  # hooks of another Python or import path: not this judge's code
            os._exit(0)
        adopt(request, fds)
        status = run(request)
        later = _hold_background_lock() if hook_io.AFTER_ANSWER else None
        _let_go_of_output()
        conn.sendall(b"S" + bytes([status & 0xFF]))
        conn.close()
    except BaseException:  # noqa: BLE001 - no answer: the hook judges itself
        os._exit(0)
    try:
        if hook_io.AFTER_ANSWER:
            os.nice(10)  # the push's own processes (git, the hook) finish first
        for work in hook_io.AFTER_ANSWER or ():
            work()
    finally:
        if later is not None:
            try:
                os.close(later)
            except OSError:
                pass  # post-receive's work let go of every descriptor but its own lock
        os._exit(0)


def _hold_background_lock() -> int | None:
    """post-receive.lock of the hook's repository, held shared until the work after the
    answer is done (post_receive.wait_for_background then waits for it)."""
    from memgit.githooks.post_receive import background_lock

    try:
        return background_lock(hook_git_dir())
    except OSError:
        return None


def receive(conn: socket.socket) -> tuple[Request, list[int]]:
    """Read one request and the two descriptors (stdout, stderr) sent with it."""
    space = socket.CMSG_SPACE(2 * 4)
    data, ancillary, _flags, _addr = conn.recvmsg(65536, space)
    fds: list[int] = []
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds += [int.from_bytes(payload[i:i + 4], sys.byteorder, signed=True)
                    for i in range(0, len(payload) - len(payload) % 4, 4)]
    if len(fds) != 2 or len(data) < 8:
        raise BadRequest("a request comes with the hook's stdout and stderr")
    size = int.from_bytes(data[:8], "big")
    if size > MAX_REQUEST:
        raise BadRequest("request too large")
    body = bytearray(data[8:])
    while len(body) < size:
        chunk = conn.recv(min(1 << 20, size - len(body)))
        if not chunk:
            raise BadRequest("the hook went away")
        body += chunk
    return parse_request(bytes(body)), fds


def _fields(body: bytes) -> Iterator[bytes]:
    at = 0
    while at < len(body):
        size = int.from_bytes(body[at:at + 4], "big")
        yield body[at + 4:at + 4 + size]
        at += 4 + size


def parse_request(body: bytes) -> Request:
    """Fields: protocol, key, cwd, umask, parent pid, stdin, arguments (NUL-separated),
    then one ``NAME=VALUE`` per environment variable."""
    fields = list(_fields(body))
    if len(fields) < 7 or fields[0] != PROTOCOL:
        raise BadRequest("not a request of this memgit")
    args = [os.fsdecode(a) for a in fields[6].split(b"\0")] if fields[6] else []
    env = dict(f.partition(b"=")[::2] for f in fields[7:])
    return Request(fields[1], fields[2], int(fields[3]), int(fields[4]), fields[5],
                   args, env)


def adopt(request: Request, fds: list[int]) -> None:
    """Become the hook: its directory, umask, environment, stdout and stderr; no stdin
    (the hook sent it)."""
    os.chdir(request.cwd)
    os.umask(request.umask)
    os.environb.clear()
    os.environb.update(request.env)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(fds[0], 1)
    os.dup2(fds[1], 2)
    for fd in (null, *fds):
        if fd > 2:
            os.close(fd)


def run(request: Request) -> int:
    """Run the hook as its own process would (memgit.githooks.entry.hook_main)."""
    from memgit.githooks import entry, queue, timing

    queue.PARENT_PID = request.parent
    hook_io.AFTER_ANSWER = []
    timing.reset_timing()
    return entry.hook_main(request.args, stdin=request.stdin)


def _let_go_of_output() -> None:
    """Flush and close the hook's stdout and stderr: git sees the end of the hook's output
    before the hook process ends."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:
        pass
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
