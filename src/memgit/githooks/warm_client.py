"""The first thing an installed hook script runs: hand the push to the warm judge, if one is
listening (memgit.githooks.warm).

A hook is a new Python process for every push, and most of what it costs is importing
memgit and setting up the secret scanner (docs/performance.md, "The push"). The warm judge
is a process of the same user that has done that once; for each push it forks a child that
runs the very same hook code. This module is what stands between: on the way to the judge
it imports nothing but the built-in ``posix`` and ``_socket`` (not even ``os``: every
millisecond here is paid twice a push), reads the hook's stdin, and sends the judge the
hook's arguments, stdin, working directory, environment, umask, parent process id and its
stdout and stderr (the descriptors themselves, so what the child prints goes straight to
git).

Invariants:

* The push is decided by a child of the judge only when that child answers with its exit
  status; anything else (no judge, a judge of another user, a refusal to serve, a
  connection closed before the status) and the hook runs in this process as before, with
  the stdin it read. A push is never accepted for lack of an answer.
* Only a judge of the same user is spoken to: the folder of the sockets must belong to
  this user and be closed to others, and the peer's credentials (``SO_PEERCRED``) must name
  this user. Elsewhere than Linux there is no ``SO_PEERCRED`` and no warm judge.
* ``MEMGIT_HOOK_SERVER=0`` (or ``off``, ``no``, ``false``) turns the judge off for a push.
"""

import posix  # os without its imports: this module runs before every push (os on fallback)
import sys

PROTOCOL = b"memgit-hook-1"
OFF = (b"0", b"off", b"no", b"false")
WANTED: str | None = None  # the key of a judge to start, when none answered (entry.exit_now)


def turned_off() -> bool:
    """``MEMGIT_HOOK_SERVER=0`` (``off``, ``no``, ``false``) in the hook's environment."""
    return (posix.environ.get(b"MEMGIT_HOOK_SERVER") or b"1").lower() in OFF


def runtime_folder() -> str:
    """Where the judges of this user listen: ``$TMPDIR`` (else ``/tmp``) /
    ``memgit-hooks-UID``, a folder only this user may enter."""
    base = posix.environ.get(b"TMPDIR") or b"/tmp"
    text = base.decode(sys.getfilesystemencoding(), "surrogateescape").rstrip("/")
    return f"{text}/memgit-hooks-{posix.getuid()}"


def identity() -> bytes:
    """What makes two hook processes run the same memgit: the Python and its import path
    (the judge compares it with its own and declines a run that differs)."""
    return repr((sys.executable, sys.path)).encode("utf-8", "surrogateescape")


def judge_key(ident: bytes) -> str:
    """The name of the judge's socket for ``ident``: its 64-bit FNV-1a hash (a rendezvous,
    not a proof: the judge checks the identity itself)."""
    value = 0xCBF29CE484222325
    for byte in ident:
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"j{value:016x}"


def socket_path(key: str) -> str:
    """The judge's socket for hooks of ``key``."""
    return f"{runtime_folder()}/{key}.sock"


def folder_is_private(folder: str) -> bool:
    """The folder is a real directory (not a link), owned by this user, closed to others."""
    try:
        st = posix.lstat(folder)
    except OSError:
        return False
    return (st.st_mode & 0o170000 == 0o040000 and st.st_uid == posix.getuid()
            and not st.st_mode & 0o077)


def _field(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def request(ident: bytes, args: list[str], stdin: bytes) -> bytes:
    """The message for the judge: length-prefixed fields (see warm.parse_request)."""
    mask = posix.umask(0o022)
    posix.umask(mask)
    encoding = sys.getfilesystemencoding()
    fields = [PROTOCOL, ident, posix.getcwdb(), b"%d" % mask, b"%d" % posix.getppid(), stdin,
              b"\0".join(a.encode(encoding, "surrogateescape") for a in args)]
    fields += [k + b"=" + v for k, v in posix.environ.items()]
    body = b"".join(_field(f) for f in fields)
    return len(body).to_bytes(8, "big") + body


def ask_judge(ident: bytes, args: list[str], stdin: bytes) -> int | None:
    """The exit status the warm judge's child gave for this hook run, or None when there
    was no answer (then the hook runs here)."""
    if turned_off():
        return None
    import _socket

    peercred = getattr(_socket, "SO_PEERCRED", None)
    if peercred is None or not folder_is_private(runtime_folder()):
        return None
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.connect(socket_path(judge_key(ident)))
        cred = sock.getsockopt(_socket.SOL_SOCKET, peercred, 12)  # struct ucred: pid, uid, gid
        if int.from_bytes(cred[4:8], sys.byteorder) != posix.getuid():
            return None
        message = request(ident, args, stdin)
        fds = b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in (1, 2))
        sent = sock.sendmsg([message], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
        if sent < len(message):
            sock.sendall(message[sent:])
        reply = b""
        while len(reply) < 2:
            chunk = sock.recv(2 - len(reply))
            if not chunk:
                return None
            reply += chunk
    except OSError:
        return None
    finally:
        sock.close()
    return reply[1] if reply[:1] == b"S" else None


def ask() -> None:
    """Run the hook by the warm judge and end the process with its status; return (with
    the stdin put back for :func:`memgit.githooks.entry.hook_main`) when it did not answer.
    ``--version`` (install-hooks --check's probe) is always answered here."""
    global WANTED
    args = sys.argv[1:]
    if not args or args[0] == "--version":
        return
    try:
        stdin = sys.stdin.buffer.read() if sys.stdin is not None else b""
    except OSError:
        stdin = b""
    ident = identity()
    status = ask_judge(ident, args, stdin)
    if status is not None:
        posix._exit(status)  # this process wrote nothing: the child wrote to git
    import io

    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    if not turned_off():
        WANTED = judge_key(ident)


def start_judge(key: str) -> None:
    """Start a judge for ``key`` (memgit.githooks.warm.serve) in a detached process (two
    forks and a ``setsid``, every inherited descriptor closed, so git never waits for it)
    and return at once. The judge runs this Python with this process's ``sys.path`` (so
    the same identity); git's variables of the push that started it are left out of its
    environment."""
    import _socket
    import os

    from memgit.githooks.detach import detached, let_go

    if turned_off() or not hasattr(_socket, "SO_PEERCRED"):
        return
    code = (f"import sys; sys.path[:] = {sys.path!r}; "
            f"from memgit.githooks.warm import serve; serve({key!r})")
    # -S as the installed hooks run; with site when this process has it (the generic
    # hook template, or a test): an editable install is found through site's .pth files
    site = ["-S"] if sys.flags.no_site else []
    argv = [sys.executable, "-I", *site, "-X", "utf8", "-c", code]
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}

    def judge() -> None:
        let_go()
        os.chdir("/")
        os.execve(sys.executable, argv, env)

    detached(judge)
