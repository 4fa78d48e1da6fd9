"""git.roots: the bare repositories under a fleet's root, found by name alone, and the
root a drive belongs to (what post-receive looks up after every push)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memgit.errors import UsageError
from memgit.git.roots import FLEET_DIR, check_root, root_of, walk
from tests.conftest import git


def _bare(path: Path) -> Path:
    git("init", "-q", "--bare", str(path))
    return path


def test_walk_finds_bare_repositories_at_any_depth_in_name_order(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _bare(root / "zed.git")
    _bare(root / "alice.git")
    _bare(root / "org" / "team" / "notes.git")
    _bare(root / "repositories" / "bob" / "drive.git")  # Gitea's owner/name.git
    (root / "empty" / "folder").mkdir(parents=True)
    git("init", "-q", str(root / "users" / "checkout"))
    _bare(root / FLEET_DIR / "hidden.git")  # the fleet's own folder is not walked
    found = list(walk(root))
    assert [(r.name, r.checkout) for r in found] == [
        ("alice.git", False), ("org/team/notes.git", False),
        ("repositories/bob/drive.git", False), ("users/checkout", True), ("zed.git", False)]
    assert found[0].path == root / "alice.git"


def test_walk_never_enters_a_repository_nor_follows_a_symbolic_link(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    outer = _bare(root / "outer.git")
    _bare(outer / "nested.git")  # inside a repository: never looked for
    _bare(outside / "secret.git")
    os.symlink(outside, root / "link")
    os.symlink(outside / "secret.git", root / "linked.git")
    assert [r.name for r in walk(root)] == ["outer.git"]


def test_root_of_is_the_nearest_folder_above_holding_the_fleet_folder(tmp_path: Path) -> None:
    root = tmp_path / "root"
    drive = _bare(root / "org" / "a.git")
    assert root_of(drive) is None
    (root / FLEET_DIR).mkdir()
    assert root_of(drive) == root
    (root / "org" / FLEET_DIR).mkdir()
    assert root_of(drive) == root / "org"
    assert root_of(str(drive) + "/") == root / "org"


def test_check_root_names_what_is_wrong(tmp_path: Path) -> None:
    assert check_root(tmp_path) == tmp_path
    (tmp_path / "file").write_text("x")
    for bad in (tmp_path / "missing", tmp_path / "file"):
        with pytest.raises(UsageError) as caught:
            check_root(bad)
        assert caught.value.code == "MG001" and f"{bad} is not a folder" in caught.value.message
    bare = tmp_path / "people.git"
    git("init", "-q", "--bare", str(bare))
    work = tmp_path / "checkout"
    git("init", "-q", str(work))
    for repository in (bare, work):
        with pytest.raises(UsageError) as caught:
            check_root(repository)
        assert "is a git repository, not a folder of drives" in caught.value.message
        assert str(repository.parent) in caught.value.hint
