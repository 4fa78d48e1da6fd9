"""pre-receive behind real servers on 127.0.0.1: git daemon, smart HTTP (nginx + fcgiwrap +
git http-backend, Basic auth) and gitolite3. Each server is started once for the module.

Over HTTP a refused push still answers HTTP 200 (the refusal travels inside the pack
protocol): the tests read the client's ``git push --porcelain`` output and the server's
refs, and check the status in nginx's access log only to show that it is 200.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import count
from pathlib import Path

import pytest

from tests.receive_support import MAIN, Drive, base_files, entry, people_text, ulid_like
from tests.servers import (
    READER,
    WRITER,
    GitDaemonServer,
    GitoliteServer,
    GitServer,
    HttpGitServer,
    running,
)

SECRET = "ghp_" + "Zq8Lm3Nx7Rt2Vb6Kw9Yp4Hd1Fs5Jc0Ga8Ue3"
_names = count()


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitServer]:
    with running(GitDaemonServer(tmp_path_factory.mktemp("daemon"))) as server:
        yield server


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitServer]:
    with running(HttpGitServer(tmp_path_factory.mktemp("http"))) as server:
        yield server


@pytest.fixture(scope="module")
def gitolite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitServer]:
    with running(GitoliteServer(tmp_path_factory.mktemp("gitolite"))) as server:
        yield server


def served_drive(server: GitServer, tmp_path: Path, user: str = WRITER) -> Drive:
    name = f"mem{next(_names)}"
    if isinstance(server, GitoliteServer):
        git_dir = server.create_repo(name)  # gitolite makes it (and owns hooks/update)
    else:
        git_dir = server.repo_path(name)
    return Drive(tmp_path, files=base_files(), git_dir=git_dir, url=server.url(name, user),
                 env=server.env(user) if isinstance(server, GitoliteServer) else server.env())


BAD = {
    "MG401": {"people.md": people_text(entry(f"token {SECRET}", ulid_like(20)))},
    "MG101": {"people.md": people_text(entry("x", ulid_like(21), source="javascript:x"))},
    "MG201": {"notes.txt": "plain\n"},
    "MG502": {"new.md": "# New\n"},
}


def check_transport(drive: Drive) -> None:
    """A good push lands; each bad push is refused by memgit and leaves nothing behind."""
    good = drive.build(({"people.md": people_text(entry("over the wire", ulid_like(30)))},
                        "good"))
    result = drive.push("refs/heads/work")
    assert result.returncode == 0, result.stderr
    assert f"refs/heads/work:{MAIN}" in result.stdout
    assert drive.main() == good[0]
    for code, changes in BAD.items():
        pushed = drive.build((changes, f"bad {code}"))
        result = drive.push("refs/heads/work")
        assert result.refused_by_hook, (code, result.stdout, result.stderr)
        assert "[remote rejected] (pre-receive hook declined)" in result.stdout
        assert code in result.codes(), result.stderr
        assert drive.main() == good[0]
        assert not drive.has_object(pushed[0])
        assert SECRET not in result.stderr + result.stdout  # each refusal, the MG401 one too
    counts = drive.event_counts()
    assert counts["push_accepted"] == 1
    assert counts["push_refused"] == len(BAD)


def test_git_daemon(daemon: GitServer, tmp_path: Path) -> None:
    check_transport(served_drive(daemon, tmp_path))


def test_smart_http(http: GitServer, tmp_path: Path) -> None:
    assert isinstance(http, HttpGitServer)
    drive = served_drive(http, tmp_path)
    check_transport(drive)
    # the refusals above were HTTP 200 answers: the status code says nothing
    log = (http.dir / "nginx-access.log").read_text()
    repo = re.escape(drive.url.rsplit("/", 1)[-1])
    posts = re.findall(rf'"POST /git/{repo}/git-receive-pack HTTP/1\.1" (\d{{3}})', log)
    assert posts == ["200"] * (1 + len(BAD))  # one POST per push, each answered 200


def test_http_reader_cannot_push(http: GitServer, tmp_path: Path) -> None:
    drive = served_drive(http, tmp_path, user=READER)
    before = drive.main()
    drive.build(({"people.md": people_text(entry("reader", ulid_like(40)))}, "reader"))
    result = drive.push("refs/heads/work")
    assert result.returncode != 0
    assert "403" in result.stderr
    assert "pre-receive" not in result.stdout  # refused by the web server, not the hook
    assert drive.main() == before


def test_http_hook_does_not_see_the_credentials(http: GitServer, tmp_path: Path) -> None:
    assert isinstance(http, HttpGitServer)
    drive = served_drive(http, tmp_path)
    dump = drive.git_dir / "hook-env"
    foreign = drive.git_dir / "hooks" / "pre-receive"
    foreign.unlink()
    foreign.write_text(f"#!/bin/sh\nenv > '{dump}'\n")
    foreign.chmod(0o755)
    from memgit.githooks.install import install_hooks_into

    install_hooks_into(drive.git_dir, chain=True)
    good = drive.build(({"people.md": people_text(entry("env", ulid_like(50)))}, "env"))
    result = drive.push("refs/heads/work")
    assert result.returncode == 0, result.stderr
    assert drive.main() == good[0]
    env = dict(line.split("=", 1) for line in dump.read_text().splitlines() if "=" in line)
    assert env.get("REMOTE_USER") == WRITER  # it is the HTTP hook environment
    assert env.get("HTTP_AUTHORIZATION", "") == ""
    assert http.passwords[WRITER] not in dump.read_text()
    assert "Basic " not in dump.read_text()


def test_gitolite(gitolite: GitServer, tmp_path: Path) -> None:
    drive = served_drive(gitolite, tmp_path)
    assert (drive.git_dir / "hooks" / "update").exists()  # gitolite's own hook stays
    check_transport(drive)


def test_gitolite_reader_is_refused_by_gitolite(gitolite: GitServer, tmp_path: Path) -> None:
    drive = served_drive(gitolite, tmp_path, user=READER)
    before = drive.main()
    drive.build(({"people.md": people_text(entry("reader", ulid_like(60)))}, "reader"))
    result = drive.push("refs/heads/work")
    assert result.returncode != 0
    assert "DENIED" in result.stderr
    assert "MG" not in result.stderr  # memgit never ran
    assert drive.main() == before
    assert drive.event_counts()["push_refused"] == 0
