"""git/files.py: the git directory found as pygit2 finds it, refs read from the ref files,
the config files (real repositories made by the real git)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memgit.git.files import (
    Location,
    Unsure,
    config_texts,
    discover,
    is_oid,
    object_type,
    ref_commit,
)
from memgit.git.repository import open_drive
from tests.conftest import git


def checkout(path: Path) -> Path:
    git("init", "-q", "-b", "main", str(path))
    (path / "MEMORY.md").write_text("# Memory\n\n## Index\n")
    git("add", "-A", cwd=path)
    git("commit", "-qm", "first", cwd=path)
    return path


def head_of(path: Path, ref: str = "refs/heads/main") -> str:
    return git("rev-parse", ref, cwd=path).stdout.decode().strip()


def same_as_pygit2(start: Path) -> Location:
    """discover(start) finds what open_drive(start) opens: git dir and work tree."""
    found = discover(str(start))
    drive = open_drive(start)
    assert Path(found.git_dir) == drive.git_dir
    assert (Path(found.workdir) if found.workdir else None) == drive.workdir
    return found


def test_checkouts_subfolders_and_bare_repositories_are_found_as_pygit2_finds_them(
        tmp_path: Path) -> None:
    work = checkout(tmp_path / "work")
    (work / "people" / "team").mkdir(parents=True)
    assert same_as_pygit2(work).common_dir == str(work / ".git")
    same_as_pygit2(work / "people" / "team")
    git("clone", "-q", "--bare", str(work), str(tmp_path / "server.git"))
    bare = same_as_pygit2(tmp_path / "server.git")
    assert bare.workdir is None
    same_as_pygit2(tmp_path / "server.git" / "refs" / "heads")  # inside a bare repository
    link = tmp_path / "link"
    link.symlink_to(work / "people")
    assert same_as_pygit2(link).workdir == str(work)  # the start is resolved first


def test_a_nested_repository_wins_over_the_one_around_it(tmp_path: Path) -> None:
    outer = checkout(tmp_path / "outer")
    inner = checkout(outer / "vendor" / "inner")
    assert same_as_pygit2(inner).workdir == str(inner)
    assert same_as_pygit2(outer / "vendor").workdir == str(outer)


def test_linked_worktrees_and_separate_git_dirs_follow_their_gitdir_file(
        tmp_path: Path) -> None:
    work = checkout(tmp_path / "work")
    git("worktree", "add", "-q", "-b", "side", str(tmp_path / "side"), cwd=work)
    found = same_as_pygit2(tmp_path / "side")
    assert found.git_dir == str(work / ".git" / "worktrees" / "side")
    assert found.common_dir == str(work / ".git")  # branches live in the shared folder
    assert ref_commit(found, "refs/heads/main") == head_of(work)
    git("init", "-q", "-b", "main", f"--separate-git-dir={tmp_path / 'store.git'}",
        str(tmp_path / "sep"))
    separate = discover(str(tmp_path / "sep"))
    assert Path(separate.git_dir) == open_drive(tmp_path / "sep").git_dir
    assert separate.workdir is None  # pygit2 takes store.git's parent: not known here


def test_no_repository_or_a_broken_gitfile_is_unsure(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (tmp_path / "ceiling").mkdir()
    with pytest.raises(Unsure):
        discover(str(tmp_path / "missing"))
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / ".git").write_text("not a gitdir line\n")
    with pytest.raises(Unsure):
        discover(str(broken))
    dangling = tmp_path / "dangling"
    dangling.mkdir()
    (dangling / ".git").symlink_to(tmp_path / "nowhere")
    with pytest.raises(Unsure):
        discover(str(dangling))


def test_refs_are_read_loose_then_packed_and_missing_ones_are_none(tmp_path: Path) -> None:
    work = checkout(tmp_path / "work")
    where = discover(str(work))
    first = head_of(work)
    assert is_oid(first) and ref_commit(where, "refs/heads/main") == first
    git("update-ref", "refs/memgit/last-synced", first, cwd=work)
    git("pack-refs", "--all", cwd=work)
    assert not (work / ".git" / "refs" / "heads" / "main").exists()
    assert ref_commit(where, "refs/heads/main") == first  # from packed-refs
    assert ref_commit(where, "refs/memgit/last-synced") == first
    (work / "notes.md").write_text("- a note [source: imported:unknown]\n")
    git("add", "-A", cwd=work)
    git("commit", "-qm", "second", cwd=work)
    second = head_of(work)
    assert second != first and ref_commit(where, "refs/heads/main") == second  # loose wins
    assert ref_commit(where, "refs/heads/other") is None
    assert ref_commit(where, "refs/memgit/sync-source") is None


def test_symbolic_refs_odd_names_and_reftable_are_unsure(tmp_path: Path) -> None:
    work = checkout(tmp_path / "work")
    where = discover(str(work))
    git("symbolic-ref", "refs/heads/alias", "refs/heads/main", cwd=work)
    for name in ("refs/heads/alias", "refs/heads/../../config", "HEAD", "refs/heads/x.lock",
                 "refs/heads/.hidden", "refs//main"):
        with pytest.raises(Unsure):
            ref_commit(where, name)
    (work / ".git" / "reftable").mkdir()
    with pytest.raises(Unsure):
        ref_commit(where, "refs/heads/main")


def test_config_texts_are_none_when_the_files_may_not_say(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    work = checkout(tmp_path / "work")
    where = discover(str(work))
    git("config", "memgit.policy", "/srv/policy.yaml", cwd=work)
    texts = config_texts(where)
    assert texts is not None and any(b"policy = /srv/policy.yaml" in t for t in texts)
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'memgit.policy'='/elsewhere.yaml'")
    assert config_texts(where) is None
    monkeypatch.delenv("GIT_CONFIG_PARAMETERS")
    (tmp_path / "extra.config").write_text("[memgit]\n\tpolicy = /other.yaml\n")
    git("config", "include.path", str(tmp_path / "extra.config"), cwd=work)
    assert config_texts(where) is None  # an include may set anything


def test_a_repository_owned_by_another_user_is_unsure(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("changing a folder's owner needs root")
    work = checkout(tmp_path / "work")
    os.chown(work / ".git", 4321, 4321)
    with pytest.raises(Unsure):
        discover(str(work))


def test_object_type_answers_as_git_cat_file(tmp_path: Path, monkeypatch) -> None:
    """The quick path's one git call: blob, tree, none for a missing path; git that cannot
    be started is Unsure (the full path then answers)."""
    work = tmp_path / "w"
    git("init", "-q", "-b", "main", str(work))
    (work / "docs").mkdir()
    (work / "docs" / "a.md").write_text("a\n")
    (work / "MEMORY.md").write_text("# Memory\n")
    git("add", "-A", cwd=work)
    git("commit", "-qm", "one", cwd=work)
    location = discover(str(work))
    assert object_type(location, "HEAD:MEMORY.md") == "blob"
    assert object_type(location, "HEAD:docs") == "tree"
    assert object_type(location, "HEAD") == "commit"
    assert object_type(location, "HEAD:missing.md") is None
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    with pytest.raises(Unsure, match="git could not be started"):
        object_type(location, "HEAD:MEMORY.md")
