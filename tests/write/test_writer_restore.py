"""writer.restore_files and write_ops.prepare_facts (the writer's additions for memgit dream)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memgit.git.repository import open_drive, ref_target
from memgit.write.ops import NewFact
from memgit.write.writer import commit_facts, restore_files
from tests.conftest import git

NOTES = "# Notes\n\n- First fact [source: imported:unknown; id: m-one]\n"


@pytest.fixture
def path(new_drive: Any) -> Path:
    return new_drive({"notes.md": NOTES})


def head(path: Path) -> str:
    return git("rev-parse", "HEAD", cwd=path).stdout.decode().strip()


def test_restore_files_writes_creates_and_removes_whole_files(path: Path) -> None:
    drive = open_drive(path)
    commit_facts(drive, ["A fact in a topic"], message="x")
    commit_facts(drive, [NewFact("Elsewhere", topic="other")], message="y")
    base = head(path)
    result = restore_files(drive, base, {"notes.md": NOTES, "other.md": None,
                                         "new.md": "# New\n\n- Restored [id: m-r]\n"}, "restore")
    assert result.status == "committed" and sorted(result.rewritten) == \
        ["new.md", "notes.md", "other.md"]
    assert (path / "notes.md").read_text() == NOTES and not (path / "other.md").exists()
    memory = (path / "MEMORY.md").read_text()
    assert "[[new]]" in memory and "[[other]]" not in memory  # the Index follows
    assert git("status", "--porcelain", cwd=path).stdout == b""
    body = git("log", "-1", "--format=%b", cwd=path).stdout.decode()
    assert "File: other.md" in body and "Restored" not in body


def test_restore_files_is_all_or_nothing_when_a_file_moved_on(path: Path) -> None:
    drive = open_drive(path)
    base = head(path)
    commit_facts(drive, ["Written after base"], message="later")
    moved = ref_target(drive, "refs/heads/main")
    result = restore_files(drive, base, {"notes.md": NOTES + "- Extra [id: m-x]\n",
                                         "fresh.md": "# Fresh\n"}, "restore")
    assert result.status == "unchanged"
    assert {s.reason for s in result.skipped} == {"changed"} and len(result.skipped) == 2
    assert ref_target(drive, "refs/heads/main") == moved and not (path / "fresh.md").exists()


def test_restore_files_are_judged_by_the_policy(path: Path) -> None:
    drive = open_drive(path)
    result = restore_files(drive, head(path), {"notes.md": NOTES + "- <b>bold</b> [id: m-h]\n",
                                               "ok.md": "# Ok\n"}, "restore")
    assert result.status == "unchanged"
    assert {s.reason for s in result.skipped} == {"policy"}
    assert "MG303" in result.skipped[0].detail
