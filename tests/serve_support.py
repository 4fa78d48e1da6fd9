"""A real ``memgit serve`` on 127.0.0.1 for the tests and the benchmark (no mocks).

:class:`ServeServer` makes a root, creates drives and tokens with the real command line
(``memgit serve --create``, ``memgit token add --json``), runs ``memgit serve`` as its own
process group on a free port, and offers plain HTTP requests (``http.client``) and raw
socket ones (for what an HTTP library would refuse to send).
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.servers import HOST, _kill_group, _wait_for_port, free_port, git_client_env

SRC = Path(__file__).resolve().parent.parent / "src"


def memgit_cli(*args: str, cwd: Path | None = None, check: bool = True
               ) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "memgit", *args], cwd=cwd, text=True,
                          capture_output=True, env=dict(os.environ, PYTHONPATH=str(SRC)),
                          timeout=120)
    if check and proc.returncode != 0:
        raise AssertionError(f"memgit {' '.join(args)} failed ({proc.returncode}):\n"
                             f"{proc.stdout}{proc.stderr}")
    return proc


class ServeServer:
    """``memgit serve ROOT`` in a directory of its own under ``base``."""

    def __init__(self, base: Path, *, args: Sequence[str] = ()) -> None:
        self.dir = base
        self.root = base / "root"
        self.root.mkdir(parents=True, exist_ok=True)
        self.log = base / "serve.log"
        self.out = base / "serve.out"
        self.args = list(args)
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.client_env = git_client_env(base / "client-home")

    # --- drives and tokens ------------------------------------------------------------
    def create(self, name: str) -> Path:
        memgit_cli("serve", str(self.root), "--create", name)
        return self.root / f"{name}.git"

    def token(self, drive: str | None, access: str, *extra: str) -> dict[str, str]:
        args = ["token", "add", *([drive] if drive else []), f"--{access}", "--json",
                "--root", str(self.root), *extra]
        return json.loads(memgit_cli(*args).stdout)

    # --- the process ------------------------------------------------------------------
    def start(self) -> ServeServer:
        self.port = free_port()
        argv = [sys.executable, "-m", "memgit", "serve", str(self.root), "--port",
                str(self.port), "--log", str(self.log), *self.args]
        with open(self.out, "ab") as out:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True,
                                         env=dict(os.environ, PYTHONPATH=str(SRC)))
        _wait_for_port(self.port, [self.proc], 30.0)
        return self

    def stop(self) -> None:
        if self.proc is not None:
            _kill_group(self.proc)
            self.proc = None

    def __enter__(self) -> ServeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- clients ----------------------------------------------------------------------
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def url(self, name: str, token: str | None = None, user: str = "agent") -> str:
        auth = f"{user}:{token}@" if token else ""
        return f"http://{auth}{HOST}:{self.port}/{name}.git"

    def request(self, path: str, *, method: str = "GET", body: bytes | None = None,
                headers: Mapping[str, str] | None = None, token: str | None = None,
                bearer: bool = False) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection(HOST, self.port, timeout=60)
        sent = dict(headers or {})
        if token is not None:
            if bearer:
                sent["Authorization"] = f"Bearer {token}"
            else:
                import base64

                pair = base64.b64encode(f"anyone:{token}".encode()).decode()
                sent["Authorization"] = f"Basic {pair}"
        conn.request(method, path, body=body, headers=sent)
        resp = conn.getresponse()
        data = resp.read()
        conn.close()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data

    def raw(self, data: bytes, timeout: float = 10.0) -> bytes:
        """Send ``data`` as it is and read the answer until the server closes."""
        with socket.create_connection((HOST, self.port), timeout=timeout) as s:
            s.sendall(data)
            chunks = []
            while True:
                try:
                    chunk = s.recv(65536)
                except TimeoutError:
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            return b"".join(chunks)

    def git(self, *args: str | os.PathLike[str], cwd: Path | None = None,
            check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(["git", *map(str, args)], cwd=cwd, env=self.client_env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=120)
        if check and proc.returncode != 0:
            raise AssertionError(f"git {' '.join(map(str, args))} failed:\n{proc.stderr}")
        return proc
