"""Tests of the test servers themselves (tests/servers.py): real git, real servers."""

from __future__ import annotations

import base64
import os
import socket
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.servers import *  # noqa: F403  (the fixtures; conftest.py may register them too)
from tests.servers import (
    DEFAULT_BRANCH,
    HOST,
    READER,
    WRITER,
    GitDaemonServer,
    GitoliteServer,
    GitServer,
    HttpGitServer,
    git_client_env,
    process_group_alive,
    run_git,
)

REFUSING_HOOK = """#!/bin/sh
cat >/dev/null
echo "refused by test hook" >&2
exit 1
"""

MAIN = f"refs/heads/{DEFAULT_BRANCH}"


def clone(server: GitServer, name: str, dest: Path, env: dict[str, str], user: str = WRITER):
    run_git("clone", "-q", server.url(name, user), dest, env={**env, **server.env()})
    return dest


def commit(work: Path, env: dict[str, str], text: str) -> str:
    (work / "notes.txt").write_text(text)
    run_git("add", "notes.txt", cwd=work, env=env)
    run_git("commit", "-q", "-m", text, cwd=work, env=env)
    return run_git("rev-parse", "HEAD", cwd=work, env=env).stdout.strip()


def push(server: GitServer, work: Path, env: dict[str, str], user: str = WRITER):
    return run_git(
        "push", "--porcelain", server.url("mem", user), f"HEAD:{MAIN}",
        cwd=work, env={**env, **server.env()}, check=False,
    )


def test_push_then_hook_refusal(git_server: GitServer, git_env, tmp_path: Path) -> None:
    repo = git_server.create_repo("mem", initial_commit=True)
    first = git_server.ref("mem")
    assert first is not None
    work = clone(git_server, "mem", tmp_path / "work", git_env)
    assert run_git("rev-parse", "HEAD", cwd=work, env=git_env).stdout.strip() == first

    second = commit(work, git_env, "remember this")
    proc = push(git_server, work, git_env)
    assert proc.returncode == 0, proc.stderr
    assert git_server.ref("mem") == second
    assert run_git("--git-dir", repo, "rev-parse", MAIN).stdout.strip() == second

    git_server.install_hook("mem", "pre-receive", REFUSING_HOOK)
    third = commit(work, git_env, "and this")
    proc = push(git_server, work, git_env)
    assert proc.returncode != 0
    assert f"!\tHEAD:{MAIN}\t[remote rejected] (pre-receive hook declined)" in proc.stdout
    assert "remote: refused by test hook" in proc.stderr
    assert git_server.ref("mem") == second != third


def test_create_repo_is_bare_and_empty(git_server: GitServer) -> None:
    path = git_server.create_repo("team/agent")
    assert path == git_server.repo_path("team/agent.git")
    assert (path / "HEAD").read_text().strip() == f"ref: {MAIN}"
    assert run_git("--git-dir", path, "rev-parse", "--is-bare-repository").stdout.strip() == "true"
    assert git_server.ref("team/agent") is None


# --------------------------------------------------------------------------- bind + teardown


def _connect(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


@pytest.mark.parametrize("cls", [GitDaemonServer, HttpGitServer], ids=["daemon", "http"])
def test_listens_on_127_0_0_1_only_and_stops_cleanly(cls, tmp_path: Path) -> None:
    server = cls(tmp_path)
    with server:
        assert server.startup_seconds < 5
        assert _connect(HOST, server.port)
        # 127.0.0.2 is loopback too: a wildcard listener would answer there
        assert not _connect("127.0.0.2", server.port)
        pgids = [p.pid for p in server.procs]
    assert not server.procs
    for pgid in pgids:
        assert not process_group_alive(pgid)
    assert not _connect(HOST, server.port)


# --------------------------------------------------------------------------- git daemon


def test_daemon_url(git_daemon_server: GitDaemonServer) -> None:
    assert git_daemon_server.url("mem") == f"git://{HOST}:{git_daemon_server.port}/mem.git"


# --------------------------------------------------------------------------- HTTP


def _status(url: str, auth: str | None = None, method: str = "GET") -> int:
    req = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    if auth:
        req.add_header("Authorization", auth)
    if method == "POST":
        req.add_header("Content-Type", "application/x-git-receive-pack-request")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as e:
        return int(e.code)


def test_http_urls(http_git_server: HttpGitServer) -> None:
    s = http_git_server
    pw = s.passwords[WRITER]
    assert s.url("mem") == f"http://writer:{pw}@{HOST}:{s.port}/git/mem.git"
    assert s.url("mem", None) == f"http://{HOST}:{s.port}/git/mem.git"


def test_http_status_codes(http_git_server: HttpGitServer) -> None:
    s = http_git_server
    s.create_repo("mem", initial_commit=True)
    base = s.url("mem", None)
    pull = f"{base}/info/refs?service=git-upload-pack"
    push_refs = f"{base}/info/refs?service=git-receive-pack"
    post = f"{base}/git-receive-pack"
    writer, reader = s.auth_header(WRITER), s.auth_header(READER)
    bad = "Basic " + base64.b64encode(b"writer:wrong").decode()

    assert _status(pull) == 401
    assert _status(pull, bad) == 401
    assert _status(pull, reader) == 200
    assert _status(pull, writer) == 200
    assert _status(push_refs) == 401
    assert _status(push_refs, reader) == 403
    assert _status(post, reader, "POST") == 403
    assert _status(push_refs, writer) == 200
    assert _status(f"http://{HOST}:{s.port}/elsewhere", writer) == 404


def test_http_reader_fetches_but_cannot_push(
    http_git_server: HttpGitServer, git_env, tmp_path: Path
) -> None:
    s = http_git_server
    first = s.create_repo("mem", initial_commit=True) and s.ref("mem")
    work = clone(s, "mem", tmp_path / "work", git_env, user=READER)
    commit(work, git_env, "reader was here")
    proc = push(s, work, git_env, user=READER)
    assert proc.returncode != 0
    assert "403" in proc.stderr, proc.stderr
    assert s.ref("mem") == first

    anon = push(s, work, git_env, user=None)
    assert anon.returncode != 0
    assert s.ref("mem") == first


def test_http_hook_sees_remote_user_but_no_credentials(
    http_git_server: HttpGitServer, git_env, tmp_path: Path
) -> None:
    s = http_git_server
    s.create_repo("mem", initial_commit=True)
    dump = tmp_path / "hook-env.txt"
    s.install_hook("mem", "pre-receive", f"#!/bin/sh\ncat >/dev/null\nenv > '{dump}'\n")
    work = clone(s, "mem", tmp_path / "work", git_env)
    pushed = commit(work, git_env, "hello")
    proc = push(s, work, git_env)
    assert proc.returncode == 0, proc.stderr
    assert s.ref("mem") == pushed

    env = dict(
        line.split("=", 1) for line in dump.read_text().splitlines() if "=" in line
    )
    assert env.get("REMOTE_USER") == WRITER
    assert not env.get("HTTP_AUTHORIZATION")
    assert s.passwords[WRITER] not in dump.read_text()
    assert base64.b64encode(f"{WRITER}:".encode()).decode()[:8] not in dump.read_text()
    # fcgiwrap started with an empty environment: nothing of ours leaks through
    assert "PYTEST_CURRENT_TEST" not in env
    assert env["HOME"] == str(s.home)


# --------------------------------------------------------------------------- gitolite


def test_gitolite_reader_denied_writer_accepted(
    gitolite_server: GitoliteServer, git_env, tmp_path: Path
) -> None:
    s = gitolite_server
    s.create_repo("mem", initial_commit=True)
    first = s.ref("mem")
    assert s.url("mem", READER) == f"ssh://reader@{HOST}/mem"

    work = clone(s, "mem", tmp_path / "work", git_env, user=READER)
    mine = commit(work, git_env, "reader was here")
    proc = push(s, work, git_env, user=READER)
    assert proc.returncode != 0
    assert "DENIED" in proc.stderr, proc.stderr
    assert s.ref("mem") == first

    proc = push(s, work, git_env, user=WRITER)
    assert proc.returncode == 0, proc.stderr
    assert s.ref("mem") == mine


def test_gitolite_unknown_user_and_forced_user(
    gitolite_server: GitoliteServer, git_env, tmp_path: Path
) -> None:
    s = gitolite_server
    s.create_repo("mem", initial_commit=True)
    proc = run_git(
        "ls-remote", s.url("mem", "mallory"), env={**git_env, **s.env()}, check=False
    )
    assert proc.returncode != 0
    assert "DENIED" in proc.stderr
    # env(user) overrides whatever user the URL names
    proc = run_git(
        "ls-remote", s.url("mem", "mallory"), env={**git_env, **s.env(READER)}, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert s.ref("mem") in proc.stdout


def test_gitolite_hook_environment_and_update_hook_kept(
    gitolite_server: GitoliteServer, git_env, tmp_path: Path
) -> None:
    s = gitolite_server
    repo = s.create_repo("mem", initial_commit=True)
    update = repo / "hooks" / "update"
    assert update.is_symlink()
    with pytest.raises(ValueError):
        s.install_hook("mem", "update", "#!/bin/sh\n")
    dump = tmp_path / "hook-env.txt"
    s.install_hook("mem", "pre-receive", f"#!/bin/sh\ncat >/dev/null\nenv > '{dump}'\n")
    # a later compile (e.g. another repo) leaves our pre-receive alone
    s.create_repo("other")
    assert (repo / "hooks" / "pre-receive").read_text().endswith(f"env > '{dump}'\n")
    assert update.is_symlink()

    work = clone(s, "mem", tmp_path / "work", git_env)
    pushed = commit(work, git_env, "hello")
    proc = push(s, work, git_env)
    assert proc.returncode == 0, proc.stderr
    assert s.ref("mem") == pushed
    env = dict(line.split("=", 1) for line in dump.read_text().splitlines() if "=" in line)
    assert env["GL_USER"] == WRITER
    assert env["GL_REPO"] == "mem"
    assert env["HOME"] == str(s.home)


def test_git_client_env_is_isolated(tmp_path: Path) -> None:
    env = git_client_env(tmp_path / "h", base={"PATH": os.environ["PATH"], "GIT_DIR": "/x"})
    assert "GIT_DIR" not in env
    assert env["HOME"] == str(tmp_path / "h")
    out = run_git("config", "--get", "init.defaultBranch", env=env).stdout.strip()
    assert out == DEFAULT_BRANCH
