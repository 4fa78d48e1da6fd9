"""Real git servers on 127.0.0.1 for memgit's tests (no mocks).

Four transports, one interface (:class:`GitServer`):

* :class:`FileGitServer`    -- ``file://`` URLs, no process at all;
* :class:`GitDaemonServer`  -- ``git daemon --enable=receive-pack`` (``git://``);
* :class:`HttpGitServer`    -- nginx + fcgiwrap + ``git http-backend`` (smart HTTP,
  Basic auth: ``writer`` may push, ``reader`` may only fetch);
* :class:`GitoliteServer`   -- gitolite3 driven through ``gitolite-shell`` by a fake
  ``ssh`` command (no sshd; ``writer`` is ``RW+``, ``reader`` is ``R``).

Every server lives in a directory of its own under a given base directory (the
fixtures use pytest's ``tmp_path``), listens on 127.0.0.1 only, on a free port, and
is stopped by killing its whole process group.  Each server offers:

``create_repo(name, initial_commit=False) -> Path``  a bare repo served by it
``seed_repo(name) -> str``                           push a first commit (file://)
``repo_path(name) -> Path``                          where a repo lives (for hooks)
``install_hook(name, hook, script) -> Path``         write an executable hook
``url(name, user="writer") -> str``                  a URL for ``git clone``/``push``
``env(user=None) -> dict``                           extra client environment needed
``direct_env() -> dict``                             env for pushing straight into
                                                     ``repo_path`` with ``file://``
``ref(name, ref="refs/heads/main") -> str | None``   what the server has

Run git as a client with :func:`git_client_env` (an isolated HOME and config) updated
with ``server.env()``.
"""

from __future__ import annotations

import base64
import contextlib
import grp
import hashlib
import os
import pwd
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

HOST = "127.0.0.1"
START_TIMEOUT = 10.0
STOP_TIMEOUT = 5.0
DEFAULT_BRANCH = "main"
WRITER = "writer"
READER = "reader"
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

__all__ = [
    "DEFAULT_BRANCH",
    "FileGitServer",
    "GitDaemonServer",
    "GitServer",
    "GitoliteServer",
    "HOST",
    "HttpGitServer",
    "READER",
    "ServerError",
    "WRITER",
    "file_git_server",
    "free_port",
    "git_client_env",
    "git_client_home",
    "git_daemon_server",
    "git_env",
    "git_server",
    "gitolite_server",
    "http_git_server",
    "init_bare_repo",
    "process_group_alive",
    "rev_parse",
    "run_git",
    "server_path",
]


class ServerError(RuntimeError):
    """A test server could not be set up, started or stopped."""


# --------------------------------------------------------------------------- helpers


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def server_path() -> str:
    """PATH given to server-side processes (and so to hooks).

    The directory of the running interpreter comes first so that hooks find the
    same ``python3`` (and the ``memgit`` entry point) that runs the tests.
    """
    return os.pathsep.join([os.path.dirname(sys.executable), SYSTEM_PATH])


def _server_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A clean environment, as a daemon started by init or sshd would have it."""
    user = _user_name()
    env = {
        "PATH": server_path(),
        "HOME": str(home),
        "USER": user,
        "LOGNAME": user,
        "LANG": "C.UTF-8",
        "SHELL": "/bin/sh",
    }
    env.update(extra or {})
    return env


def _user_name() -> str:
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return str(os.geteuid())


def _write_gitconfig(home: Path, name: str, email: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text(
        "[user]\n"
        f"\tname = {name}\n"
        f"\temail = {email}\n"
        "[init]\n"
        f"\tdefaultBranch = {DEFAULT_BRANCH}\n"
        "[advice]\n"
        "\tdetachedHead = false\n"
    )


def git_client_env(home: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment for running git as a client, isolated from the user's config.

    HOME is ``home`` (created, with a ``.gitconfig`` naming a test identity and
    ``init.defaultBranch = main``); system config, credential prompts and any
    ``GIT_*`` variables of the calling environment are cut off.
    """
    env = {
        k: v
        for k, v in (os.environ if base is None else base).items()
        if not k.startswith(("GIT_", "SSH_ASKPASS", "XDG_CONFIG_HOME"))
    }
    _write_gitconfig(home, "memgit test", "memgit-test@example.invalid")
    env.update(
        {
            "HOME": str(home),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_ASKPASS": "/bin/false",
        }
    )
    return env


def run_git(
    *args: str | os.PathLike[str],
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    timeout: float = 60.0,
) -> subprocess.CompletedProcess[str]:
    """Run ``git ARGS`` (text mode, output captured, no stdin)."""
    proc = subprocess.run(
        ["git", *map(str, args)],
        cwd=cwd,
        env=dict(env) if env is not None else None,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if check and proc.returncode != 0:
        raise ServerError(
            f"git {' '.join(map(str, args))} failed ({proc.returncode}):\n"
            f"{proc.stdout}{proc.stderr}"
        )
    return proc


def rev_parse(git_dir: Path, ref: str = f"refs/heads/{DEFAULT_BRANCH}") -> str | None:
    """The object a ref names in ``git_dir``, or None when the ref does not exist."""
    proc = subprocess.run(
        ["git", "--git-dir", str(git_dir), "rev-parse", "--verify", "-q", ref],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"},
    )
    return proc.stdout.strip() or None


def init_bare_repo(path: Path, env: Mapping[str, str] | None = None) -> Path:
    """``git init --bare`` with HEAD on ``main``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    run_git("init", "-q", "--bare", f"--initial-branch={DEFAULT_BRANCH}", path, env=env)
    return path


def _wait_for_port(port: int, procs: Sequence[subprocess.Popen[bytes]], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        for proc in procs:
            if proc.poll() is not None:
                raise ServerError(f"{proc.args!r} exited with {proc.returncode}")
        try:
            with socket.create_connection((HOST, port), timeout=0.5):
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise ServerError(f"nothing listens on {HOST}:{port} after {timeout}s")
        time.sleep(0.01)


def _wait_for_unix_socket(
    path: Path, proc: subprocess.Popen[bytes], timeout: float
) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise ServerError(f"{proc.args!r} exited with {proc.returncode}")
        if path.exists():
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                try:
                    s.connect(str(path))
                    return
                except OSError:
                    pass
        if time.monotonic() > deadline:
            raise ServerError(f"nothing listens on {path} after {timeout}s")
        time.sleep(0.01)


def _spawn(
    argv: Sequence[str], log: Path, env: Mapping[str, str], cwd: Path | None = None
) -> subprocess.Popen[bytes]:
    """Start a process in a new session (so its process group can be killed)."""
    with open(log, "ab") as out:
        return subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
        )


def _kill_group(proc: subprocess.Popen[bytes], timeout: float = STOP_TIMEOUT) -> None:
    """SIGTERM the process group of ``proc``, then SIGKILL whatever is left."""
    pgid = proc.pid  # start_new_session: the leader's pid is the group id
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        pass
    # children (CGI processes, daemon connection handlers) may outlive the leader
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=timeout)
    # orphaned members are reaped by init, asynchronously: wait until they are gone
    deadline = time.monotonic() + timeout
    while process_group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.005)


def process_group_alive(pgid: int) -> bool:
    """Whether a process of group ``pgid`` still runs (zombies do not count).

    Orphans left by a killed leader are reaped by PID 1, which in some containers
    does it only every second or two; a zombie holds nothing, so it is ignored.
    """
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ..."; comm may contain spaces and parens
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) >= 3 and int(fields[2]) == pgid and fields[0] != b"Z":
            return True
    return False


def _tail(path: Path, n: int = 4000) -> str:
    try:
        return path.read_text(errors="replace")[-n:]
    except OSError:
        return ""


def _repo_dir_name(name: str) -> str:
    name = name.strip("/")
    if not name or ".." in name.split("/"):
        raise ValueError(f"bad repository name: {name!r}")
    return name if name.endswith(".git") else f"{name}.git"


def _write_script(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


# --------------------------------------------------------------------------- base


class GitServer:
    """What every test server offers; see the module docstring."""

    kind = "abstract"

    def __init__(self, base_dir: Path) -> None:
        base_dir.mkdir(parents=True, exist_ok=True)
        self.dir = Path(tempfile.mkdtemp(prefix=f"{self.kind}-", dir=base_dir))
        self.root = self.dir / "repos"
        self.root.mkdir()
        self.client_env = git_client_env(self.dir / "client-home")
        self.procs: list[subprocess.Popen[bytes]] = []
        self.startup_seconds = 0.0

    # lifecycle ---------------------------------------------------------------
    def start(self) -> GitServer:
        t0 = time.monotonic()
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - t0
        return self

    def _start(self) -> None:
        pass

    def stop(self) -> None:
        # stop in reverse start order (nginx before fcgiwrap)
        while self.procs:
            _kill_group(self.procs.pop())

    def __enter__(self) -> GitServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # repositories ------------------------------------------------------------
    def repo_path(self, name: str) -> Path:
        return self.root / _repo_dir_name(name)

    def create_repo(self, name: str, initial_commit: bool = False) -> Path:
        """Create the bare repo ``name`` (``.git`` optional) and return its path."""
        path = init_bare_repo(self.repo_path(name), env=self.client_env)
        if initial_commit:
            self.seed_repo(name)
        return path

    def seed_repo(self, name: str, message: str = "initial commit") -> str:
        """Push a first commit on ``main`` straight into the bare repo (file://)."""
        work = Path(tempfile.mkdtemp(prefix="seed-", dir=self.dir))
        try:
            env = self.client_env
            run_git("init", "-q", f"--initial-branch={DEFAULT_BRANCH}", work, env=env)
            (work / "README.md").write_text(f"# {name}\n")
            run_git("add", "README.md", cwd=work, env=env)
            run_git("commit", "-q", "-m", message, cwd=work, env=env)
            url = self.repo_path(name).as_uri()
            run_git(
                "push", "-q", url, f"HEAD:refs/heads/{DEFAULT_BRANCH}",
                cwd=work, env={**env, **self.direct_env()},
            )
            return run_git("rev-parse", "HEAD", cwd=work, env=env).stdout.strip()
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def install_hook(self, name: str, hook: str, script: str) -> Path:
        """Write ``hooks/<hook>`` (executable) into the bare repo ``name``."""
        return _write_script(self.repo_path(name) / "hooks" / hook, script)

    def ref(self, name: str, ref: str = f"refs/heads/{DEFAULT_BRANCH}") -> str | None:
        return rev_parse(self.repo_path(name), ref)

    # client side -------------------------------------------------------------
    def url(self, name: str, user: str | None = WRITER) -> str:
        raise NotImplementedError

    def env(self, user: str | None = None) -> dict[str, str]:
        """Extra environment a git client needs for this server's URLs."""
        return {}

    def direct_env(self) -> dict[str, str]:
        """Extra environment for pushing into ``repo_path()`` directly via file://."""
        return {}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.dir}>"


class FileGitServer(GitServer):
    """Bare repos reached through ``file://`` URLs; no process."""

    kind = "file"

    def url(self, name: str, user: str | None = WRITER) -> str:
        return self.repo_path(name).as_uri()


# --------------------------------------------------------------------------- git daemon


class GitDaemonServer(GitServer):
    """``git daemon --enable=receive-pack`` on 127.0.0.1 (anonymous push!)."""

    kind = "daemon"

    def __init__(self, base_dir: Path, extra_env: Mapping[str, str] | None = None) -> None:
        super().__init__(base_dir)
        self.port = 0
        self.extra_env = dict(extra_env or {})
        self.log = self.dir / "git-daemon.log"
        self.home = self.dir / "home"
        _write_gitconfig(self.home, "git daemon", "daemon@example.invalid")

    def _start(self) -> None:
        env = _server_env(self.home, self.extra_env)
        last: Exception | None = None
        for _ in range(3):  # the free port may be taken between probe and bind
            self.port = free_port()
            proc = _spawn(
                [
                    "git", "daemon", "--reuseaddr", "--verbose", "--informative-errors",
                    f"--base-path={self.root}", "--export-all", "--enable=receive-pack",
                    f"--listen={HOST}", f"--port={self.port}", str(self.root),
                ],
                self.log, env,
            )
            self.procs.append(proc)
            try:
                _wait_for_port(self.port, [proc], START_TIMEOUT)
                return
            except ServerError as e:
                last = e
                self.stop()
        raise ServerError(f"git daemon did not start: {last}\n{_tail(self.log)}")

    def url(self, name: str, user: str | None = WRITER) -> str:
        return f"git://{HOST}:{self.port}/{_repo_dir_name(name)}"


# --------------------------------------------------------------------------- smart HTTP

_NGINX_CONF = """\
{user_directive}
worker_processes 1;
daemon off;
master_process on;
pid {dir}/nginx.pid;
error_log {dir}/nginx-error.log info;

events {{
    worker_connections 256;
}}

http {{
    access_log {dir}/nginx-access.log;
    client_body_temp_path {dir}/tmp/client_body;
    proxy_temp_path {dir}/tmp/proxy;
    fastcgi_temp_path {dir}/tmp/fastcgi;
    uwsgi_temp_path {dir}/tmp/uwsgi;
    scgi_temp_path {dir}/tmp/scgi;
    client_max_body_size 0;
    default_type application/octet-stream;
    server_tokens off;
    geo $memgit_dollar {{
        default "$";
    }}

    # a push is GET .../info/refs?service=git-receive-pack + POST .../git-receive-pack
    map $arg_service $memgit_push_query {{
        git-receive-pack 1;
        default 0;
    }}
    map $uri $memgit_push {{
        ~/git-receive-pack$ 1;
        default $memgit_push_query;
    }}
    # an authenticated user other than a writer may not push: 403.  Requests
    # without credentials fall through to auth_basic (401) so clients retry.
    map "$memgit_push:$remote_user" $memgit_push_denied {{
        default 0;
{writer_map}
        ~^1:. 1;
    }}

    server {{
        listen {host}:{port};
        server_name localhost;

        location ~ ^/git(?<memgit_path>/.*)$ {{
            auth_basic "memgit test";
            auth_basic_user_file {dir}/htpasswd;
            if ($memgit_push_denied) {{
                return 403;
            }}
            fastcgi_pass unix:{socket};
            fastcgi_pass_request_headers on;
            fastcgi_param SCRIPT_FILENAME {backend};
            fastcgi_param GIT_PROJECT_ROOT {root};
            fastcgi_param GIT_HTTP_EXPORT_ALL 1;
            fastcgi_param PATH_INFO $memgit_path;
            fastcgi_param QUERY_STRING $query_string;
            fastcgi_param REQUEST_METHOD $request_method;
            fastcgi_param CONTENT_TYPE $content_type;
            fastcgi_param CONTENT_LENGTH $content_length;
            fastcgi_param REQUEST_URI $request_uri;
            fastcgi_param SCRIPT_NAME /git;
            fastcgi_param SERVER_PROTOCOL $server_protocol;
            fastcgi_param GATEWAY_INTERFACE CGI/1.1;
            fastcgi_param SERVER_SOFTWARE nginx;
            fastcgi_param SERVER_NAME $server_name;
            fastcgi_param SERVER_ADDR $server_addr;
            fastcgi_param SERVER_PORT $server_port;
            fastcgi_param REMOTE_ADDR $remote_addr;
            fastcgi_param REMOTE_PORT $remote_port;
            fastcgi_param REMOTE_USER $remote_user;
            # never hand the credentials to http-backend or the hooks
            fastcgi_param HTTP_AUTHORIZATION "";
{extra_params}
        }}

        location / {{
            return 404;
        }}
    }}
}}
"""


def _ssha(password: str) -> str:
    """An htpasswd ``{SSHA}`` entry (accepted by nginx since 1.0.3)."""
    salt = secrets.token_bytes(8)
    digest = hashlib.sha1(password.encode() + salt).digest()
    return "{SSHA}" + base64.b64encode(digest + salt).decode()


def _nginx_quote(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("$", "${memgit_dollar}") + '"'


class HttpGitServer(GitServer):
    """Smart HTTP: nginx (Basic auth) -> fcgiwrap -> ``git http-backend``.

    Users: ``writer`` (fetch + push) and ``reader`` (fetch only; a push gets 403).
    ``passwords`` maps each user to its password.  fcgiwrap runs with an empty
    environment; what the CGI (and so the hooks) see comes from fastcgi_param:
    the CGI variables, PATH, HOME, plus ``extra_env``.  ``HTTP_AUTHORIZATION``
    is passed blank.
    """

    kind = "http"

    def __init__(
        self,
        base_dir: Path,
        users: Mapping[str, str] | None = None,
        writers: Sequence[str] = (WRITER,),
        extra_env: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(base_dir)
        for exe in ("nginx", "fcgiwrap"):
            if not _which(exe):
                raise ServerError(f"{exe} not found (run .ci/install-system-deps.sh)")
        self.passwords = dict(
            users or {WRITER: secrets.token_hex(8), READER: secrets.token_hex(8)}
        )
        self.writers = tuple(writers)
        self.extra_env = dict(extra_env or {})
        self.port = 0
        self.children = 4  # fcgiwrap's CGI processes at once (-c)
        self.home = self.dir / "home"
        _write_gitconfig(self.home, "http backend", "http@example.invalid")
        # AF_UNIX paths are limited to ~107 bytes; tmp_path can be longer
        self.sock_dir = Path(tempfile.mkdtemp(prefix="memgit-fcgi-", dir=_short_tmp()))
        self.socket = self.sock_dir / "fcgiwrap.sock"
        (self.dir / "tmp").mkdir()
        (self.dir / "htpasswd").write_text(
            "".join(f"{u}:{_ssha(p)}\n" for u, p in self.passwords.items())
        )

    @property
    def error_log(self) -> Path:
        return self.dir / "nginx-error.log"

    def _config(self) -> str:
        user_directive = ""
        if os.geteuid() == 0:
            # workers would run as nobody and could not read tmp_path (0700)
            group = grp.getgrgid(os.getegid()).gr_name
            user_directive = f"user {_user_name()} {group};"
        params = {"PATH": server_path(), "HOME": str(self.home), **self.extra_env}
        return _NGINX_CONF.format(
            user_directive=user_directive,
            dir=self.dir,
            host=HOST,
            port=self.port,
            socket=self.socket,
            backend=_http_backend(),
            root=self.root,
            writer_map="\n".join(f'        "1:{w}" 0;' for w in self.writers),
            extra_params="\n".join(
                f"            fastcgi_param {k} {_nginx_quote(v)};" for k, v in params.items()
            ),
        )

    def _start(self) -> None:
        fcgi = _spawn(
            [
                "env", "-i", _which("fcgiwrap") or "fcgiwrap", "-c", str(self.children),
                "-s", f"unix:{self.socket}", "-p", _http_backend(),
            ],
            self.dir / "fcgiwrap.log", {"PATH": SYSTEM_PATH},
        )
        self.procs.append(fcgi)
        _wait_for_unix_socket(self.socket, fcgi, START_TIMEOUT)
        last: Exception | None = None
        for _ in range(3):  # the free port may be taken between probe and bind
            self.port = free_port()
            conf = self.dir / "nginx.conf"
            conf.write_text(self._config())
            nginx = _spawn(
                [_which("nginx") or "nginx", "-p", str(self.dir), "-c", str(conf),
                 "-e", str(self.error_log)],
                self.dir / "nginx.log", {"PATH": SYSTEM_PATH},
            )
            self.procs.append(nginx)
            try:
                _wait_for_port(self.port, [nginx, fcgi], START_TIMEOUT)
                return
            except ServerError as e:
                last = e
                _kill_group(self.procs.pop())
        raise ServerError(f"nginx did not start: {last}\n{_tail(self.error_log)}")

    def stop(self) -> None:
        super().stop()
        shutil.rmtree(self.sock_dir, ignore_errors=True)

    def base_url(self, user: str | None = WRITER) -> str:
        cred = f"{user}:{self.passwords[user]}@" if user else ""
        return f"http://{cred}{HOST}:{self.port}/git"

    def url(self, name: str, user: str | None = WRITER) -> str:
        """``http://USER:PW@127.0.0.1:PORT/git/NAME.git``; user=None: no credentials."""
        return f"{self.base_url(user)}/{_repo_dir_name(name)}"

    def auth_header(self, user: str) -> str:
        token = base64.b64encode(f"{user}:{self.passwords[user]}".encode()).decode()
        return f"Basic {token}"


def _which(exe: str) -> str | None:
    return shutil.which(exe, path=os.pathsep.join([os.environ.get("PATH", ""), SYSTEM_PATH]))


def _http_backend() -> str:
    exec_path = subprocess.run(
        ["git", "--exec-path"], capture_output=True, text=True, check=True
    ).stdout.strip()
    return os.path.join(exec_path, "git-http-backend")


def _short_tmp() -> str | None:
    return "/tmp" if os.path.isdir("/tmp") else None


# --------------------------------------------------------------------------- gitolite

_FAKE_SSH = """\
#!/bin/sh
# Stand-in for ssh: runs gitolite-shell as sshd would for an authorized key.
# git calls it (GIT_SSH_VARIANT=simple) as: fake-ssh [--gl-user U] [USER@]HOST COMMAND
forced=
if [ "$1" = "--gl-user" ]; then forced=$2; shift 2; fi
if [ $# -lt 2 ]; then echo "fake-ssh: usage: [USER@]HOST COMMAND" >&2; exit 255; fi
eval "host=\\${{$(($# - 1))}}"
eval "cmd=\\${{$#}}"
case "$host" in *@*) user=${{host%@*}} ;; *) user= ;; esac
[ -n "$forced" ] && user=$forced
if [ -z "$user" ]; then echo "fake-ssh: no gitolite user in '$host'" >&2; exit 255; fi
exec env -i {env} SSH_CONNECTION="127.0.0.1 50000 127.0.0.1 22" \\
    SSH_CLIENT="127.0.0.1 50000 22" SSH_ORIGINAL_COMMAND="$cmd" \\
    {shell} "$user"
"""


def _gitolite_bindir() -> Path:
    gitolite = _which("gitolite")
    if not gitolite:
        raise ServerError("gitolite not found (run .ci/install-system-deps.sh)")
    candidates = [Path("/usr/share/gitolite3"), Path(os.path.realpath(gitolite)).parent]
    try:  # Debian's /usr/bin/gitolite hard-codes GL_BINDIR
        for line in Path(gitolite).read_text(errors="replace").splitlines():
            if "GL_BINDIR} = '" in line:
                candidates.insert(0, Path(line.split("'")[1]))
    except OSError:
        pass
    for c in candidates:
        if (c / "gitolite-shell").is_file() and (c / "lib").is_dir():
            return c
    raise ServerError("gitolite-shell not found")


class GitoliteServer(GitServer):
    """gitolite3 in a temporary HOME, reached through a fake ``ssh``.

    ``url(name, user)`` is ``ssh://USER@127.0.0.1/NAME``; with ``env()`` in the
    client's environment (``GIT_SSH_COMMAND`` + ``GIT_SSH_VARIANT=simple``) git
    runs ``gitolite-shell USER`` with ``SSH_ORIGINAL_COMMAND`` instead of ssh.
    Repos made by ``create_repo`` give ``writers`` RW+ and ``readers`` R.
    Repos live in ``home/repositories``; gitolite's ``update`` hook is there and
    must stay, ``pre-receive``/``post-receive`` are free for tests.
    """

    kind = "gitolite"
    #: rc features commented out before ``gitolite setup`` (not needed without
    #: gitweb or git-daemon; they make every compile ~0.3 s slower)
    disabled_features: tuple[str, ...] = ("daemon", "gitweb")

    def __init__(
        self,
        base_dir: Path,
        writers: Sequence[str] = (WRITER,),
        readers: Sequence[str] = (READER,),
        extra_env: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(base_dir)
        self.bindir = _gitolite_bindir()
        self.home = self.dir / "home"
        self.root.rmdir()
        self.root = self.home / "repositories"  # gitolite's GL_REPO_BASE
        self.writers = tuple(writers)
        self.readers = tuple(readers)
        self.extra_env = dict(extra_env or {})
        self.fake_ssh = self.dir / "fake-ssh"
        self.log = self.dir / "gitolite.log"

    @property
    def conf(self) -> Path:
        return self.home / ".gitolite" / "conf" / "gitolite.conf"

    def _env(self) -> dict[str, str]:
        return _server_env(self.home, self.extra_env)

    def gitolite(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run the ``gitolite`` admin command as the hosting user."""
        proc = subprocess.run(
            [_which("gitolite") or "gitolite", *args],
            env=self._env(), stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=60,
        )
        with open(self.log, "a") as log:
            log.write(f"$ gitolite {' '.join(args)}\n{proc.stdout[-2000:]}{proc.stderr}")
        if proc.returncode != 0:
            raise ServerError(f"gitolite {' '.join(args)} failed:\n{proc.stdout}{proc.stderr}")
        return proc

    def _start(self) -> None:
        _write_gitconfig(self.home, "gitolite", "gitolite@example.invalid")
        key = self.dir / "admin"
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "admin", "-f", str(key)],
            check=True, stdin=subprocess.DEVNULL, capture_output=True,
        )
        # `gitolite setup` keeps an existing rc: write the default one minus the
        # features that only feed gitweb and git-daemon (they cost ~0.3 s a compile)
        (self.home / ".gitolite" / "logs").mkdir(parents=True)  # else gitolite dies
        rc = self.gitolite("print-default-rc").stdout
        for feature in self.disabled_features:
            rc = re.sub(rf"^(\s*)'{re.escape(feature)}',", rf"\1# '{feature}',", rc, flags=re.M)
        (self.home / ".gitolite.rc").write_text(rc)
        self.gitolite("setup", "-pk", str(key.with_suffix(".pub")))
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in self._env().items())
        _write_script(
            self.fake_ssh,
            _FAKE_SSH.format(env=env, shell=shlex.quote(str(self.bindir / "gitolite-shell"))),
        )

    def create_repo(self, name: str, initial_commit: bool = False) -> Path:
        return self.create_repos([name], initial_commit=initial_commit)[0]

    def create_repos(self, names: Sequence[str], initial_commit: bool = False) -> list[Path]:
        """Declare repos in gitolite.conf and compile once (cheaper than one by one)."""
        rules = [f"    RW+ = {' '.join(self.writers)}\n"] if self.writers else []
        if self.readers:
            rules.append(f"    R = {' '.join(self.readers)}\n")
        with open(self.conf, "a") as conf:
            for name in names:
                conf.write(f"\nrepo {self.gl_name(name)}\n{''.join(rules)}")
        self.compile()
        paths = [self.repo_path(n) for n in names]
        for name, path in zip(names, paths, strict=True):
            if not (path / "hooks" / "update").exists():
                raise ServerError(f"gitolite did not create {path}")
            if initial_commit:
                self.seed_repo(name)
        return paths

    def compile(self) -> None:
        """After editing :attr:`conf`: compile and run the POST_COMPILE triggers."""
        self.gitolite("compile")
        self.gitolite("trigger", "POST_COMPILE")

    @staticmethod
    def gl_name(name: str) -> str:
        return _repo_dir_name(name)[: -len(".git")]

    def install_hook(self, name: str, hook: str, script: str) -> Path:
        if hook == "update":
            raise ValueError("gitolite owns hooks/update; use pre-receive (or update.secondary)")
        return super().install_hook(name, hook, script)

    def url(self, name: str, user: str | None = WRITER) -> str:
        return f"ssh://{user or 'git'}@{HOST}/{self.gl_name(name)}"

    def env(self, user: str | None = None) -> dict[str, str]:
        """GIT_SSH_COMMAND for the fake ssh; ``user`` forces that gitolite user."""
        cmd = shlex.quote(str(self.fake_ssh))
        if user:
            cmd += f" --gl-user {shlex.quote(user)}"
        return {"GIT_SSH_COMMAND": cmd, "GIT_SSH_VARIANT": "simple"}

    def direct_env(self) -> dict[str, str]:
        # gitolite's update hook needs its libs and rc; GL_BYPASS_ACCESS_CHECKS is
        # what `gitolite push` sets for admins pushing on the server itself
        return {
            "HOME": str(self.home),
            "GL_BINDIR": str(self.bindir),
            "GL_LIBDIR": str(self.bindir / "lib"),
            "GL_BYPASS_ACCESS_CHECKS": "1",
        }


# --------------------------------------------------------------------------- fixtures


@contextlib.contextmanager
def running(server: GitServer) -> Iterator[GitServer]:
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def git_client_home(tmp_path: Path) -> Path:
    return tmp_path / "client-home"


@pytest.fixture
def git_env(git_client_home: Path) -> dict[str, str]:
    """Isolated environment for git clients (see :func:`git_client_env`)."""
    return git_client_env(git_client_home)


@pytest.fixture
def file_git_server(tmp_path: Path) -> Iterator[FileGitServer]:
    with running(FileGitServer(tmp_path)) as s:
        assert isinstance(s, FileGitServer)
        yield s


@pytest.fixture
def git_daemon_server(tmp_path: Path) -> Iterator[GitDaemonServer]:
    with running(GitDaemonServer(tmp_path)) as s:
        assert isinstance(s, GitDaemonServer)
        yield s


@pytest.fixture
def http_git_server(tmp_path: Path) -> Iterator[HttpGitServer]:
    with running(HttpGitServer(tmp_path)) as s:
        assert isinstance(s, HttpGitServer)
        yield s


@pytest.fixture
def gitolite_server(tmp_path: Path) -> Iterator[GitoliteServer]:
    with running(GitoliteServer(tmp_path)) as s:
        assert isinstance(s, GitoliteServer)
        yield s


SERVER_KINDS: dict[str, type[GitServer]] = {
    "file": FileGitServer,
    "daemon": GitDaemonServer,
    "http": HttpGitServer,
    "gitolite": GitoliteServer,
}


@pytest.fixture(params=list(SERVER_KINDS))
def git_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GitServer]:
    """Each transport in turn: file, daemon, http, gitolite."""
    with running(SERVER_KINDS[request.param](tmp_path)) as s:
        yield s
