"""Running memgit serve: uvicorn with its h11 protocol, plus a deadline for a request's head.

Why uvicorn (docs/serve.md, "The web server"): git's traffic is long streams (a clone's
pack out, a push's pack in) that must flow with back-pressure both ways and never be held
whole; an asyncio server holds each stream as a coroutine, so 16 clones at once cost 16
pipes, not 16 threads, and a client that stalls costs a socket, not a worker. uvicorn is
the ASGI server most Python services run in production, and memgit's ``mcp`` extra already
brings it.

What uvicorn does not do itself, this module adds: uvicorn times out only an idle
keep-alive connection, not a client that trickles a request's head byte by byte, so
:class:`HeadDeadline` closes a connection whose request head is not complete within the
client deadline (408), on a new connection and between keep-alive requests alike. The
body and the answer have the same deadline per chunk (memgit.serve.backend).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import sys
from pathlib import Path
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from memgit.errors import UsageError
from memgit.safe_text import append_log_line
from memgit.serve.app import App, Settings
from memgit.serve.tokens import any_usable

MAX_HEAD = 16 * 1024  # bytes of a request's line and headers
LIMIT_CONCURRENCY = 128  # connections and tasks before uvicorn answers 503
_TIMEOUT_TEXT = b"the request's head did not arrive in time\n"
TIMEOUT_ANSWER = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
                  b"connection: close\r\ncontent-length: %d\r\n\r\n%s"
                  % (len(_TIMEOUT_TEXT), _TIMEOUT_TEXT))


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or a name) is a loopback address only."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(i[4][0]).is_loopback for i in infos)


def check_bind(root: Path, host: str) -> bool:
    """Loopback or not; a UsageError for another address while the root has no token."""
    if is_loopback(host):
        return True
    if not any_usable(root):
        raise UsageError(f"refusing to listen on {host}: it is not a loopback address and "
                         f"{root} has no token, so anyone who can reach it would be refused "
                         "everything or see the dashboard",
                         "make a token first (memgit token add OWNER/DRIVE --read|--write), "
                         "or listen on 127.0.0.1")
    return False


def head_deadline(seconds: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol, closing a connection with 408 when a request's head has not
    arrived within ``seconds`` of the connection's start or of the previous answer."""

    class HeadDeadline(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
            super().connection_lost(exc)

        def _arm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
            waiting_for = self.cycle  # a new request makes a new cycle
            self._head_timer = self.loop.call_later(seconds, self._expire, waiting_for)

        def _expire(self, waiting_for: Any) -> None:
            if self.transport.is_closing() or self.cycle is not waiting_for:
                return
            if self.conn.their_state is h11.IDLE and not self.conn.trailing_data[0]:
                self.transport.close()  # nothing of a request arrived: just close
                return
            self.transport.write(TIMEOUT_ANSWER)
            self.transport.close()

    return HeadDeadline


def make_logger(log_file: Path | None) -> Any:
    """One line per message: appended to ``log_file`` (0600, never through a symlink), or
    printed on standard error."""
    if log_file is not None:
        path = str(log_file)
        return lambda line: append_log_line(path, line)

    def to_stderr(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    return to_stderr


def config(root: Path, host: str, port: int, *, idle: float = 30.0,
           max_body: int = 256 * 1024 * 1024, log_file: Path | None = None) -> uvicorn.Config:
    """The uvicorn configuration of a server for ``root`` (its bind checked first)."""
    loopback = check_bind(root, host)
    app = App(Settings(root=root, loopback=loopback, idle=idle, max_body=max_body,
                       log=make_logger(log_file)))
    return uvicorn.Config(
        app, host=host, port=port, http=head_deadline(idle), lifespan="off",
        access_log=False, log_level="warning", server_header=False, date_header=True,
        timeout_keep_alive=5, limit_concurrency=LIMIT_CONCURRENCY,
        h11_max_incomplete_event_size=MAX_HEAD, ws="none", interface="asgi3")


def listen(host: str, port: int) -> socket.socket:
    """The server's socket, bound before anything is printed: a port another process holds
    is the user's error, said with the fix (uvicorn would log it after the banner and exit
    without a code). ``SO_REUSEADDR`` as uvicorn sets it: a port left in TIME_WAIT by the
    last run may be bound again at once; one a live process listens on may not."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}: {exc.strerror or exc}",
                         "give --host an address of this machine (default 127.0.0.1)") from exc
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host} port {port}: {exc.strerror or exc}",
                         "stop the server that holds the port, or give --port another "
                         "number (0: any free port)") from exc
    return sock


def serve(cfg: uvicorn.Config, sock: socket.socket) -> None:
    """Run on ``sock`` (:func:`listen`'s) until interrupted (SIGINT or SIGTERM: uvicorn
    finishes the answers under way)."""
    uvicorn.Server(cfg).run(sockets=[sock])
