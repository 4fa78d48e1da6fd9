"""quick_read: the drive's branch as the policy gives it, when the quick path may answer,
and the ref files' history agreeing with pygit2's (real repositories, the real git)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgit.cli import quick_read
from memgit.git import DEFAULT_BRANCH
from memgit.git.repository import open_drive
from memgit.policy.settings import Policy
from memgit.sync.client import DriveHistory
from tests.conftest import commit_all, git, memgit


def test_the_default_branch_is_the_policys_default() -> None:
    assert DEFAULT_BRANCH == Policy().branch == "main"


def test_the_branch_comes_from_memgit_yaml_then_the_config_key(new_drive,
                                                               tmp_path: Path) -> None:
    path = new_drive({"notes.md": "- Kestrels hover [source: imported:unknown]\n"})
    where = quick_read.locate(str(path))
    assert quick_read.branch_of(where) == "main"
    policy = tmp_path / "team.yaml"
    policy.write_text("branch: team\n")
    git("config", "memgit.policy", str(policy), cwd=path)
    assert quick_read.branch_of(where) == "team"
    (path / ".git" / "memgit.yaml").write_text("branch: local\n")  # wins over the config
    assert quick_read.branch_of(where) == "local"


def test_only_a_current_index_with_nothing_queued_is_quick(new_drive) -> None:
    path = new_drive({"notes.md": "- Kestrels hover [source: imported:unknown]\n"})
    with pytest.raises(quick_read.NotQuick, match="no state database"):
        quick_read.open_current(str(path))
    assert memgit("index", cwd=path).returncode == 0
    current = quick_read.open_current(str(path / "."))
    assert current.head == git("rev-parse", "main", cwd=path).stdout.decode().strip()
    assert [h.entry_id for h in quick_read.recall(current, "kestrels", 5)]
    (path / "notes.md").write_text("- Kestrels hover over verges [source: imported:unknown]\n")
    commit_all(path, "around memgit")
    with pytest.raises(quick_read.NotQuick, match="behind the branch"):
        quick_read.open_current(str(path))
    with pytest.raises(quick_read.NotQuick):
        quick_read.open_current(str(path.parent / "missing"))


def test_the_ref_files_history_answers_as_pygit2s(new_drive) -> None:
    """A history with a merge: ancestry, merge bases and first-parent chains agree."""
    path = new_drive({"notes.md": "- Kestrels hover [source: imported:unknown]\n"})
    base = git("rev-parse", "HEAD", cwd=path).stdout.decode().strip()
    git("checkout", "-q", "-b", "side", cwd=path)
    (path / "side.md").write_text("- Owls hunt at night [source: imported:unknown]\n")
    side = commit_all(path, "side")
    git("checkout", "-q", "main", cwd=path)
    (path / "main.md").write_text("- Swifts sleep aloft [source: imported:unknown]\n")
    ahead = commit_all(path, "main")
    git("merge", "-q", "--no-edit", "--no-verify", "side", cwd=path)
    merged = git("rev-parse", "HEAD", cwd=path).stdout.decode().strip()
    raw = quick_read.FileHistory(quick_read.locate(str(path)))
    full = DriveHistory(open_drive(path))
    commits = [base, side, ahead, merged]
    for a in commits:
        for b in commits:
            assert raw.is_ancestor(a, b) == full.is_ancestor(a, b), (a, b)
            assert raw.first_parent_chain(a, b) == full.first_parent_chain(a, b), (a, b)
    assert raw.merge_base(side, ahead) == full.merge_base(side, ahead) == base
    assert raw.first_parent_chain(merged, None) == full.first_parent_chain(merged, None)
    for ref in ("refs/heads/main", "refs/heads/side", "refs/heads/none"):
        assert raw.ref_target(ref) == full.ref_target(ref)


def test_only_a_head_with_a_memory_md_file_is_served_to_agents(new_drive) -> None:
    from memgit.format import entries as fmt

    assert quick_read.MEMORY_FILE == fmt.MEMORY_FILE
    path = new_drive({"notes.md": "- Kestrels hover [source: imported:unknown]\n"})
    assert memgit("index", cwd=path).returncode == 0
    quick_read.require_memory(quick_read.open_current(str(path)))
    git("rm", "-q", fmt.MEMORY_FILE, cwd=path)
    (path / fmt.MEMORY_FILE).mkdir()
    (path / fmt.MEMORY_FILE / "x.md").write_text("a folder named like the file\n")
    git("add", "-A", cwd=path)
    git("commit", "-q", "--no-verify", "-m", "a folder", cwd=path)
    assert memgit("-C", str(path), "index").returncode == 0  # named: no personal drive
    with pytest.raises(quick_read.NotQuick, match="no MEMORY.md"):
        quick_read.require_memory(quick_read.open_current(str(path)))
