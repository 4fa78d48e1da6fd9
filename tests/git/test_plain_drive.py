"""repository.open_bare_drive: a bare drive opened without pygit2 (memgit purge) reads what
open_drive reads, refuses what it refuses, and publishes the purged ids as pygit2 did."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memgit.errors import NotADriveError
from memgit.git.repository import (
    PlainBareDrive,
    open_bare_drive,
    open_drive,
    require_drive,
)
from memgit.policy.registry import PURGED_IDS_FILE, PURGED_REF
from tests.conftest import ROOT, bare_drive, git


def test_a_bare_drive_is_opened_without_pygit2(tmp_path: Path) -> None:
    bare_drive(tmp_path / "d.git")
    plain = open_bare_drive(tmp_path / "d.git")
    assert isinstance(plain, PlainBareDrive)
    assert plain.git_dir == open_drive(tmp_path / "d.git").git_dir
    assert plain.workdir is None and plain.root == plain.git_dir
    assert open_bare_drive(tmp_path / "d.git" / "objects").git_dir == plain.git_dir
    code = ("import sys; from memgit.git.repository import open_bare_drive, require_drive; "
            f"d = open_bare_drive({str(tmp_path / 'd.git')!r}); "
            "require_drive(d, 'refs/heads/main'); "
            "d.config_value('memgit.policy'); print('pygit2' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True,
                         env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == b"False"
    assert plain.repo.is_bare  # pygit2 once asked for


def test_found_as_pygit2_finds_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bare_drive(tmp_path / "d.git")
    bare_drive(tmp_path / "other.git")
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "other.git"))  # pygit2 ignores it too
    assert open_bare_drive(tmp_path / "d.git").git_dir == (tmp_path / "d.git").resolve()
    monkeypatch.delenv("GIT_DIR")
    git("config", "core.bare", "false", cwd=tmp_path / "d.git")  # not said bare: pygit2's way
    assert not isinstance(open_bare_drive(tmp_path / "d.git"), PlainBareDrive)


def test_a_checkout_or_no_repository_goes_through_open_drive(tmp_path: Path) -> None:
    work = tmp_path / "work"
    git("init", "-q", "-b", "main", str(work))
    found = open_bare_drive(work)
    assert not isinstance(found, PlainBareDrive)
    assert found.workdir == open_drive(work).workdir
    (tmp_path / "plain").mkdir()
    for path in (tmp_path / "plain", tmp_path / "absent"):
        with pytest.raises(NotADriveError) as ours:
            open_bare_drive(path)
        with pytest.raises(NotADriveError) as theirs:
            open_drive(path)
        assert str(ours.value) == str(theirs.value)


def test_config_values_are_those_pygit2_reads(tmp_path: Path) -> None:
    # the repository's own config: git also honours GIT_CONFIG_GLOBAL and
    # GIT_CONFIG_NOSYSTEM (which these tests set), libgit2 reads ~/.gitconfig regardless
    bare_drive(tmp_path / "d.git")
    path = tmp_path / "d.git"
    git("config", "user.name", "Drive Admin", cwd=path)
    git("config", "memgit.purgeLease", "10", cwd=path)
    git("config", "remote.Origin.URL", "https://example.com/A.git", cwd=path)
    git("config", "--add", "memgit.many", "one", cwd=path)
    git("config", "--add", "memgit.many", "two", cwd=path)
    plain, drive = open_bare_drive(path), open_drive(path)
    for key in ("memgit.purgeLease", "memgit.purgelease", "remote.Origin.url", "memgit.many",
                "user.name", "memgit.absent", "remote.origin.url"):
        assert plain.config_value(key) == drive.config_value(key), key
    assert plain.config_value("memgit.purgeLease") == "10"


def test_require_drive_answers_and_refuses_alike(tmp_path: Path) -> None:
    bare_drive(tmp_path / "d.git")
    path = tmp_path / "d.git"
    plain, drive = open_bare_drive(path), open_drive(path)
    assert require_drive(plain, "refs/heads/main") == require_drive(drive, "refs/heads/main")
    for ref in ("refs/heads/trunk", "refs/heads/a b"):
        with pytest.raises(NotADriveError) as ours:
            require_drive(plain, ref)
        with pytest.raises(NotADriveError) as theirs:
            require_drive(drive, ref)
        assert str(ours.value) == str(theirs.value)
    # main without MEMORY.md, then with a folder of that name
    work = tmp_path / "work"
    git("clone", "-q", str(path), str(work))
    git("rm", "-q", "MEMORY.md", cwd=work)
    (work / "notes.md").write_text("- a note\n")
    git("add", "-A", cwd=work)
    git("commit", "-qm", "no memory", cwd=work)
    git("push", "-q", "origin", "main", cwd=work)
    for shape in ("absent", "folder"):
        if shape == "folder":
            (work / "MEMORY.md").mkdir()
            (work / "MEMORY.md" / "x.md").write_text("- x\n")
            git("add", "-A", cwd=work)
            git("commit", "-qm", "a folder", cwd=work)
            git("push", "-q", "origin", "main", cwd=work)
        with pytest.raises(NotADriveError) as ours:
            require_drive(open_bare_drive(path), "refs/heads/main")
        with pytest.raises(NotADriveError) as theirs:
            require_drive(open_drive(path), "refs/heads/main")
        assert str(ours.value) == str(theirs.value), shape


def test_published_ids_are_the_commit_pygit2_made(tmp_path: Path) -> None:
    from memgit.policy.registry import PurgeRegistry
    from memgit.purge.resume import publish_ids

    bare_drive(tmp_path / "a.git")
    git("config", "user.name", "Drive Admin", cwd=tmp_path / "a.git")  # as above: not global
    git("config", "user.email", "admin@example.com", cwd=tmp_path / "a.git")
    PurgeRegistry.append(tmp_path / "a.git", [("m-01j0000000000000000aaaaa", "0" * 64)],
                         "2026-12-05")
    shutil.copytree(tmp_path / "a.git", tmp_path / "b.git")
    publish_ids(open_bare_drive(tmp_path / "a.git"))
    publish_ids(open_drive(tmp_path / "b.git"))

    def shown(name: str) -> tuple[bytes, list[bytes]]:
        raw = git("cat-file", "commit", PURGED_REF, cwd=tmp_path / name).stdout
        headers, _sep, message = raw.partition(b"\n\n")
        # tree, then author and committer without their time (taken a moment apart)
        lines = [h.rsplit(b" ", 2)[0] for h in headers.split(b"\n")]
        return message, lines

    assert shown("a.git") == shown("b.git")
    assert shown("a.git")[1][1] == b"author Drive Admin <admin@example.com>"
    listed = git("show", f"{PURGED_REF}:{PURGED_IDS_FILE}", cwd=tmp_path / "a.git").stdout
    assert listed == b"m-01j0000000000000000aaaaa\n"
