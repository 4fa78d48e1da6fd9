"""git's own ``git http-backend`` as a CGI, streamed both ways (memgit serve's git traffic).

git does the protocol; memgit's hooks judge every push inside ``git receive-pack`` as on
any server. For each smart-HTTP request (``info/refs?service=...``, ``git-upload-pack``,
``git-receive-pack``) one ``git http-backend`` runs with the CGI variables RFC 3875 names
and git reads:

* ``GIT_PROJECT_ROOT`` is the served root and ``PATH_INFO`` the checked drive path, so
  http-backend resolves nothing a client chose; ``GIT_HTTP_EXPORT_ALL`` serves drives
  without a ``git-daemon-export-ok`` file;
* ``REMOTE_USER`` (``token-<id>``) is set for a write token only: http-backend enables
  receive-pack only when ``REMOTE_USER`` is set (``http.receivepack`` unset), so even a
  request that got past the app's check could not push without one;
* ``HTTP_GIT_PROTOCOL`` carries the client's ``Git-Protocol`` header (http-backend turns it
  into ``GIT_PROTOCOL``: protocol v2), ``HTTP_CONTENT_ENCODING`` the gzip that git uses
  for large upload-pack requests, and no ``CONTENT_LENGTH`` for a chunked body (http-backend
  then reads its standard input to the end);
* the environment is otherwise empty but for ``PATH``, ``HOME``, ``LANG`` and git's
  ``GIT_CONFIG_GLOBAL``/``GIT_CONFIG_NOSYSTEM`` when the server has them: never the
  ``Authorization`` header, so no token reaches http-backend, a hook or a log.

The request body goes to the CGI's standard input chunk by chunk and its output to the
client chunk by chunk, each with back-pressure (``drain``; the server's flow control), so a
pack is never held in memory whole. The caller gives the deadlines: a client that sends
nothing, or reads nothing, for ``idle`` seconds, or a body over ``max_body`` bytes, ends
the CGI (its process group killed) with 408 or 413 when the answer has not started.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memgit.safe_text import printable

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
CHUNK = 64 * 1024
HEADER_LIMIT = 64 * 1024  # the CGI's own header block
_PASS_ENV = ("PATH", "HOME", "LANG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")
_SKIP_HEADERS = {b"connection", b"transfer-encoding", b"keep-alive", b"status"}


class TooLarge(Exception):
    """The request body went over the limit."""


class TooSlow(Exception):
    """The client sent or read nothing for the idle deadline."""


@dataclass
class Request:
    """One smart-HTTP request for http-backend, its drive path checked by the caller."""

    root: Path
    path_info: str  # /owner/drive.git/info/refs ...
    method: str
    query: str
    headers: dict[bytes, bytes]
    remote_user: str | None
    remote_addr: str


@dataclass
class Outcome:
    status: int
    sent_bytes: int
    received_bytes: int


def cgi_env(req: Request) -> dict[str, str]:
    """The CGI variables for ``req`` (see the module docstring)."""
    env = {k: os.environ[k] for k in _PASS_ENV if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update({
        "GATEWAY_INTERFACE": "CGI/1.1",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "SERVER_SOFTWARE": "memgit-serve",
        "GIT_PROJECT_ROOT": str(req.root),
        "GIT_HTTP_EXPORT_ALL": "1",
        "PATH_INFO": req.path_info,
        "REQUEST_METHOD": req.method,
        "QUERY_STRING": req.query,
        "REMOTE_ADDR": req.remote_addr,
    })
    header = req.headers.get
    if header(b"content-type"):
        env["CONTENT_TYPE"] = header(b"content-type", b"").decode("latin-1")
    if header(b"content-length") and not header(b"transfer-encoding"):
        env["CONTENT_LENGTH"] = header(b"content-length", b"").decode("latin-1")
    for name, var in ((b"content-encoding", "HTTP_CONTENT_ENCODING"),
                      (b"git-protocol", "HTTP_GIT_PROTOCOL")):
        if header(name):
            env[var] = header(name, b"").decode("latin-1")
    if req.remote_user:
        env["REMOTE_USER"] = req.remote_user
    return env


async def _pump_body(receive: Receive, stdin: asyncio.StreamWriter, *, idle: float,
                     max_body: int) -> int:
    """Copy the request body into the CGI's standard input; close it at the end."""
    total = 0
    try:
        while True:
            try:
                message = await asyncio.wait_for(receive(), idle)
            except TimeoutError as exc:
                raise TooSlow from exc
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            total += len(chunk)
            if total > max_body:
                raise TooLarge
            if chunk:
                stdin.write(chunk)
                await stdin.drain()
            if not message.get("more_body", False):
                break
    except (BrokenPipeError, ConnectionResetError):
        pass  # the CGI stopped reading (it answers with an error of its own)
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            stdin.close()
    return total


async def _read_head(stdout: asyncio.StreamReader) -> tuple[int, list[tuple[bytes, bytes]],
                                                            bytes]:
    """The CGI's status, headers and the first bytes of its body."""
    data = b""
    while b"\r\n\r\n" not in data and b"\n\n" not in data:
        chunk = await stdout.read(CHUNK)
        if not chunk:
            break
        data += chunk
        if len(data) > HEADER_LIMIT:
            break
    crlf, lf = data.find(b"\r\n\r\n"), data.find(b"\n\n")
    if crlf < 0 and lf < 0:
        return 502, [], b""
    if lf < 0 or 0 <= crlf < lf:
        head, rest = data[:crlf], data[crlf + 4:]
    else:
        head, rest = data[:lf], data[lf + 2:]
    status = 200
    headers: list[tuple[bytes, bytes]] = []
    for line in head.replace(b"\r\n", b"\n").split(b"\n"):
        name, _, value = line.partition(b":")
        key = name.strip().lower()
        if key == b"status":
            with contextlib.suppress(ValueError):
                status = int(value.strip().split(b" ", 1)[0])
        elif key and key not in _SKIP_HEADERS:
            headers.append((key, value.strip()))
    return status, headers, rest


async def _send(send: Send, message: dict[str, Any], idle: float) -> None:
    try:
        await asyncio.wait_for(send(message), idle)
    except TimeoutError as exc:
        raise TooSlow from exc


def _kill(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


async def run(req: Request, receive: Receive, send: Send, *, idle: float, max_body: int,
              log: Callable[[str], None]) -> Outcome:
    """Answer ``req`` with ``git http-backend``; the CGI's errors go to ``log``.

    The answer starts only once the request body is in (http-backend writes its headers
    before it reads a push): up to :data:`HOLD` bytes of the CGI's output are read ahead
    meanwhile, so neither side waits on the other. So a body that is too large or too slow
    raises :class:`TooLarge` or :class:`TooSlow` before anything was sent (the caller
    answers 413 or 408); a client that stops reading the answer ends the CGI and the
    connection (git reports a cut answer)."""
    proc = await asyncio.create_subprocess_exec(
        "git", "http-backend", env=cgi_env(req), stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        start_new_session=True, limit=CHUNK)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    stdout = proc.stdout
    pump = asyncio.ensure_future(_pump_body(receive, proc.stdin, idle=idle, max_body=max_body))
    errors = asyncio.ensure_future(_collect_errors(proc.stderr, log))
    started = False
    try:
        head = asyncio.ensure_future(_read_head(stdout))
        await asyncio.wait({pump, head}, return_when=asyncio.FIRST_COMPLETED)
        _raise_from(pump, head)
        status, headers, first = await head
        ahead, eof, reading = await _read_ahead(stdout, pump, first)
        _raise_from(pump)
        if eof and not pump.done():
            pump.cancel()  # the CGI answered without reading all: the rest is not needed
        await _send(send, {"type": "http.response.start", "status": status,
                           "headers": headers}, idle)
        started = True
        sent = 0
        for chunk in ahead:
            sent += len(chunk)
            await _send(send, {"type": "http.response.body", "body": chunk,
                               "more_body": True}, idle)
        while not eof:
            chunk = await (reading or stdout.read(CHUNK))
            reading = None
            if not chunk:
                break
            sent += len(chunk)
            await _send(send, {"type": "http.response.body", "body": chunk,
                               "more_body": True}, idle)
        received = 0 if pump.cancelled() else await pump
        await _send(send, {"type": "http.response.body", "body": b"", "more_body": False},
                    idle)
        await proc.wait()
        await errors
        return Outcome(status, sent, received)
    except BaseException:
        _kill(proc)
        pump.cancel()
        errors.cancel()
        with contextlib.suppress(Exception):
            await proc.wait()
        if started:
            raise ConnectionAbortedError("the answer was cut") from None
        raise


HOLD = 1024 * 1024  # bytes of the CGI's answer read ahead while the request body arrives


def _raise_from(pump: asyncio.Future[int], *others: asyncio.Future[Any]) -> None:
    """Re-raise the body pump's failure (too large, too slow), cancelling ``others``."""
    if pump.done() and not pump.cancelled() and pump.exception() is not None:
        for other in others:
            other.cancel()
        raise pump.exception()  # type: ignore[misc]


async def _read_ahead(stdout: asyncio.StreamReader, pump: asyncio.Future[int], first: bytes
                      ) -> tuple[list[bytes], bool, asyncio.Future[bytes] | None]:
    """Read the CGI's answer until the body is in, its end, or :data:`HOLD` bytes: (the
    chunks read, whether the answer ended, a read still under way)."""
    chunks = [first] if first else []
    size = len(first)
    reading: asyncio.Future[bytes] | None = None
    while not pump.done() and size < HOLD:
        reading = reading or asyncio.ensure_future(stdout.read(CHUNK))
        waiting: set[asyncio.Future[Any]] = {pump, reading}
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        if reading.done():
            chunk = reading.result()
            reading = None
            if not chunk:
                return chunks, True, None
            chunks.append(chunk)
            size += len(chunk)
    return chunks, False, reading


async def _collect_errors(stderr: asyncio.StreamReader, log: Callable[[str], None]) -> None:
    """The CGI's standard error, line by line into the log (printable, 500 characters)."""
    while True:
        line = await stderr.readline()
        if not line:
            return
        text = printable(line.decode("utf-8", "replace").rstrip("\n"), 500)
        if text:
            log(f"git http-backend: {text}")
