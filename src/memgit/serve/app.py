"""memgit serve's ASGI application: routing, access, limits and the access log.

URLs (``NAME`` is ``owner/drive``; memgit.serve.paths checks it):

* ``/NAME.git/info/refs?service=git-upload-pack|git-receive-pack``,
  ``/NAME.git/git-upload-pack``, ``/NAME.git/git-receive-pack`` (also without ``.git``):
  git's smart HTTP, answered by ``git http-backend`` (memgit.serve.backend). Always with a
  token: none gives 401 and ``WWW-Authenticate`` (git then asks its credential helper); a
  wrong, expired or revoked one 401 again; a token of another drive, or of a drive that
  does not exist, 403 with the same words (nothing says whether the drive exists); a read
  token asking for receive-pack 403. Other paths under a drive (git's dumb protocol) 404.
* ``/``, ``/NAME``, ``/NAME/topics/PATH``, ``/NAME/search?q=``, ``/NAME/entries/ID``,
  ``/NAME/questions``, ``/NAME/dreams``, ``/NAME/mounts``: the read-only dashboard
  (memgit.serve.views). Open when the server listens on a loopback address; otherwise a
  token of the drive (read or write) is needed, and ``/`` lists that drive only.
* ``/metrics``: Prometheus text (memgit.serve.metrics); open on loopback, otherwise a
  metrics token.

Every refusal is counted (``memgit_serve_refusals_total``). The access log has one line per
request: time, client, method, path (with ``?service=`` for git, never a page's query),
status, bytes, milliseconds and the token's public id; never a header, never a token.
Dashboard pages and /metrics run in worker threads, one at a time per drive (they share
the drive's cached state connection); git traffic stays on the event loop.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from memgit.safe_text import printable
from memgit.secrets import redact
from memgit.serve import backend
from memgit.serve.metrics import ServeMetrics, drive_row
from memgit.serve.paths import DriveName, drive_dir, list_drives, parse_name
from memgit.serve.tokens import Checker, Grant
from memgit.state.events import prometheus

GIT_PATHS = {("info", "refs"): "info_refs", ("git-upload-pack",): "upload_pack",
             ("git-receive-pack",): "receive_pack"}
SERVICES = ("git-upload-pack", "git-receive-pack")
AUTHENTICATE = (b"www-authenticate", b'Basic realm="memgit", charset="UTF-8"')
NO_ACCESS = "no access: this token does not grant that drive, or there is no such drive\n"
PAGE_HEADERS = [
    (b"content-security-policy", b"default-src 'none'; style-src 'unsafe-inline'; "
                                 b"img-src 'self'; form-action 'self'; base-uri 'none'; "
                                 b"frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
]


@dataclass
class Settings:
    """How one server runs: its root, whether it listens on loopback only, its limits."""

    root: Path
    loopback: bool
    idle: float = 30.0  # seconds a client may send or read nothing
    max_body: int = 256 * 1024 * 1024  # bytes of one request body
    log: Callable[[str], None] = print


@dataclass
class Answer:
    """A whole answer (pages, refusals, metrics), not a stream."""

    status: int
    body: bytes
    content_type: bytes = b"text/plain; charset=utf-8"
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)


class App:
    """The ASGI application of one served root."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.root = settings.root
        self.tokens = Checker(settings.root)
        self.metrics = ServeMetrics()
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    # --- ASGI -------------------------------------------------------------------------

    async def __call__(self, scope: dict[str, Any], receive: backend.Receive,
                       send: backend.Send) -> None:
        if scope["type"] != "http":
            return  # lifespan is off; websockets are not served
        started = time.monotonic()
        self.metrics.in_flight += 1
        route, status, size, grant = "other", 500, 0, None
        try:
            route, status, size, grant = await self._handle(scope, receive, send)
        finally:
            self.metrics.in_flight -= 1
            seconds = time.monotonic() - started
            self.metrics.observe(route, status, seconds)
            self._access_log(scope, route, status, size, seconds, grant)

    async def _handle(self, scope: dict[str, Any], receive: backend.Receive,
                      send: backend.Send) -> tuple[str, int, int, Grant | None]:
        path: str = scope["path"]
        method: str = scope["method"]
        headers = {k.lower(): v for k, v in scope["headers"]}
        grant = self._grant(headers)
        parts = [p for p in path.split("/") if p]
        if len(parts) >= 2 and tuple(parts[2:]) in GIT_PATHS:
            route = GIT_PATHS[tuple(parts[2:])]
            return await self._git(scope, receive, send, parts, route, headers, grant)
        route = "metrics" if parts == ["metrics"] else "page"
        answer = await self._page(scope, method, parts, headers, grant, route)
        await _send_answer(send, answer)
        return route, answer.status, len(answer.body), _grant_or_none(grant)

    # --- access -------------------------------------------------------------------------

    def _grant(self, headers: dict[bytes, bytes]) -> Grant | None | bool:
        """The grant of the request's token; None without one; False for a bad one."""
        text = _token_text(headers.get(b"authorization", b""))
        if text is None:
            return None
        return self.tokens.check(text, time.monotonic()) or False

    def _refuse(self, reason: str, status: int, message: str) -> Answer:
        self.metrics.refuse(reason)
        headers = [AUTHENTICATE] if status == 401 else []
        return Answer(status, message.encode("utf-8"), headers=headers)

    def _need_token(self, grant: Grant | None | bool) -> Answer | None:
        if grant is None:
            return self._refuse("no_token", 401, "a token is needed: use it as the password "
                                "(any user name) or as a Bearer token\n")
        if grant is False:
            return self._refuse("bad_token", 401, "this token is not valid here (wrong, "
                                "expired or revoked)\n")
        return None

    def _drive_access(self, name: DriveName, grant: Grant | None | bool,
                      write: bool) -> Answer | Path:
        """The drive's folder when ``grant`` may use it, else the refusal."""
        refused = self._need_token(grant)
        if refused is not None:
            return refused
        assert isinstance(grant, Grant)
        if not grant.may_read(name):
            return self._refuse("other_drive", 403, NO_ACCESS)
        folder = drive_dir(self.root, name)
        if folder is None:
            return Answer(404, f"no drive {name} (its token remains valid)\n".encode())
        if write and not grant.may_write(name):
            return self._refuse("read_only", 403, "this token may only read: pushing needs "
                                "a write token (memgit token add NAME --write)\n")
        return folder

    # --- git ----------------------------------------------------------------------------

    async def _git(self, scope: dict[str, Any], receive: backend.Receive, send: backend.Send,
                   parts: list[str], route: str, headers: dict[bytes, bytes],
                   grant: Grant | None | bool) -> tuple[str, int, int, Grant | None]:
        answer = self._git_checks(scope, parts, route, headers, grant)
        if isinstance(answer, Answer):
            await _send_answer(send, answer)
            return route, answer.status, len(answer.body), _grant_or_none(grant)
        name = answer
        assert isinstance(grant, Grant)
        client = scope.get("client") or ("", 0)
        req = backend.Request(
            root=self.root, path_info=f"/{name}.git/{'/'.join(parts[2:])}",
            method=scope["method"], query=scope.get("query_string", b"").decode("latin-1"),
            headers=headers,
            remote_user=f"token-{grant.id}" if grant.access == "write" else None,
            remote_addr=str(client[0]))
        try:
            outcome = await backend.run(req, receive, send, idle=self.settings.idle,
                                        max_body=self.settings.max_body,
                                        log=self.settings.log)
        except backend.TooLarge:
            refused = self._refuse("too_large", 413, f"the request body is over the server's "
                                   f"limit of {self.settings.max_body} bytes\n")
            await _send_answer(send, refused, close=True)
            return route, 413, 0, _grant_or_none(grant)
        except backend.TooSlow:
            refused = self._refuse("too_slow", 408, f"the client sent nothing for "
                                   f"{self.settings.idle:g} seconds\n")
            with contextlib.suppress(Exception):
                await _send_answer(send, refused, close=True)
            return route, 408, 0, _grant_or_none(grant)
        return route, outcome.status, outcome.sent_bytes, _grant_or_none(grant)

    def _git_checks(self, scope: dict[str, Any], parts: list[str], route: str,
                    headers: dict[bytes, bytes], grant: Grant | None | bool
                    ) -> Answer | DriveName:
        name = parse_name(f"{parts[0]}/{parts[1]}")
        if name is None:
            return self._refuse("bad_name", 400, "not a drive name: OWNER/DRIVE, each 1-64 "
                                "letters, digits, '.', '_' or '-'\n")
        method = scope["method"]
        if route == "info_refs":
            service = parse_qs(scope.get("query_string", b"").decode("latin-1")).get(
                "service", [""])[0]
            if service not in SERVICES:
                return self._refuse("not_smart_http", 403, "memgit serve speaks git's smart "
                                    "HTTP only (git 1.6.6 or newer)\n")
            want_method, write = "GET", service == "git-receive-pack"
        else:
            want_method, write = "POST", route == "receive_pack"
        if method != want_method:
            return Answer(405, f"use {want_method}\n".encode(), headers=[
                (b"allow", want_method.encode())])
        length = headers.get(b"content-length", b"0")
        if length.isdigit() and int(length) > self.settings.max_body:
            return self._refuse("too_large", 413, f"the request body is over the server's "
                                f"limit of {self.settings.max_body} bytes\n")
        access = self._drive_access(name, grant, write)
        return access if isinstance(access, Answer) else name

    # --- pages and metrics ----------------------------------------------------------------

    async def _page(self, scope: dict[str, Any], method: str, parts: list[str],
                    headers: dict[bytes, bytes], grant: Grant | None | bool,
                    route: str) -> Answer:
        if method not in ("GET", "HEAD"):
            return Answer(405, b"the dashboard is read-only\n", headers=[(b"allow", b"GET")])
        query = parse_qs(scope.get("query_string", b"").decode("utf-8", "replace"))
        if route == "metrics":
            return await self._metrics(grant)
        if not parts:
            return await self._home(grant)
        if len(parts) < 2:
            return Answer(404, b"not found\n")
        name = parse_name(f"{parts[0]}/{parts[1]}")
        if name is None:
            return self._refuse("bad_name", 400, "not a drive name: OWNER/DRIVE, each 1-64 "
                                "letters, digits, '.', '_' or '-'\n")
        if parts[1].endswith(".git"):
            return Answer(404, b"memgit serve speaks git's smart HTTP only; the drive's "
                               b"page is at /OWNER/DRIVE\n")
        if self.settings.loopback:
            folder = drive_dir(self.root, name)
            if folder is None:
                return Answer(404, f"no drive {name}\n".encode())
        else:
            access = self._drive_access(name, grant, write=False)
            if isinstance(access, Answer):
                return access
            folder = access
        from memgit.serve import views

        return await self._in_thread(name, views.drive_page, self.root, name, folder,
                                     parts[2:], {k: v[0] for k, v in query.items()})

    async def _home(self, grant: Grant | None | bool) -> Answer:
        names = list_drives(self.root)
        if not self.settings.loopback:
            refused = self._need_token(grant)
            if refused is not None:
                return refused
            assert isinstance(grant, Grant)
            names = [n for n in names if grant.may_read(n)]
        from memgit.serve import views

        return await self._in_thread("", views.home_page, self.root, names)

    async def _metrics(self, grant: Grant | None | bool) -> Answer:
        if not self.settings.loopback:
            refused = self._need_token(grant)
            if refused is not None:
                return refused
            assert isinstance(grant, Grant)
            if grant.access != "metrics":
                return self._refuse("other_drive", 403, "/metrics needs a metrics token "
                                    "(memgit token add --metrics)\n")
        own = self.metrics.text()  # a snapshot taken on the event loop
        drives = [(n, p) for n in list_drives(self.root)
                  if (p := drive_dir(self.root, n)) is not None]
        text = await asyncio.to_thread(self._locked_all, drives)
        return Answer(200, (text + own).encode("utf-8"),
                      b"text/plain; version=0.0.4; charset=utf-8")

    def _lock(self, key: str) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(key, threading.Lock())

    def _locked_all(self, drives: list[tuple[DriveName, Path]]) -> str:
        rows = []
        for name, path in drives:
            with self._lock(name):
                row = drive_row(name, path)
            if row is not None:
                rows.append(row)
        return prometheus(rows)

    async def _in_thread(self, key: str, fn: Callable[..., tuple[int, str]],
                         *args: Any) -> Answer:
        def run() -> tuple[int, str]:
            with self._lock(key):
                return fn(*args)

        status, html = await asyncio.to_thread(run)
        return Answer(status, html.encode("utf-8"), b"text/html; charset=utf-8",
                      list(PAGE_HEADERS))

    # --- log ----------------------------------------------------------------------------

    def _access_log(self, scope: dict[str, Any], route: str, status: int, size: int,
                    seconds: float, grant: Grant | None | bool) -> None:
        path = scope.get("path", "")
        if route == "info_refs":
            service = parse_qs(scope.get("query_string", b"").decode("latin-1")).get(
                "service", [""])[0]
            path += f"?service={service}"
        client = (scope.get("client") or ("-", 0))[0]
        token = grant.id if isinstance(grant, Grant) else "-"
        # the path and service are the client's bytes: a token in them (a remote URL with
        # a GitHub or memgit token pasted into its path) is redacted, never logged
        # (hostile sweep, branch hostile42)
        path = redact(path, as_words=True)
        self.settings.log(printable(f"{client} {scope.get('method', '-')} {path} {status} "
                                    f"{size}B {seconds * 1000:.1f}ms token={token}", 600))


def _grant_or_none(grant: Grant | None | bool) -> Grant | None:
    return grant if isinstance(grant, Grant) else None


def _token_text(value: bytes) -> str | None:
    """The token in an Authorization header: Bearer, or Basic with the token as the
    password (any user name) or, with no password, as the user name."""
    scheme, _, rest = value.decode("latin-1").strip().partition(" ")
    rest = rest.strip()
    if scheme.lower() == "bearer" and rest:
        return rest
    if scheme.lower() != "basic" or not rest:
        return None
    try:
        user, _, password = base64.b64decode(rest, validate=True).decode("utf-8").partition(":")
    except (ValueError, UnicodeDecodeError):
        return None
    return password or user or None


async def _send_answer(send: backend.Send, answer: Answer, *, close: bool = False) -> None:
    headers = [(b"content-type", answer.content_type),
               (b"content-length", str(len(answer.body)).encode()), *answer.headers]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": answer.status, "headers": headers})
    await send({"type": "http.response.body", "body": answer.body, "more_body": False})
