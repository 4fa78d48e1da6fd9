"""writer.preview_ops, prepare_facts and restore_files (the writer's additions for memgit dream)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import git
from memgit.repo import open_drive, ref_target
from memgit.writer import (
    NewFact,
    apply_ops,
    commit_facts,
    prepare_facts,
    preview_ops,
    restore_files,
)

NOTES = "# Notes\n\n- First fact [source: imported:unknown; id: m-one]\n"


@pytest.fixture
def path(new_drive: Any) -> Path:
    return new_drive({"notes.md": NOTES})


def head(path: Path) -> str:
    return git("rev-parse", "HEAD", cwd=path).stdout.decode().strip()


def test_preview_shows_the_commit_and_makes_none(path: Path) -> None:
    from memgit.policy import Policy

    drive = open_drive(path)
    before = head(path)
    ops, skipped = prepare_facts(["Second fact"], ["m-one"], policy=Policy())
    assert skipped == []
    preview = preview_ops(drive, ops)
    assert preview.result.status == "planned" and preview.result.retired == ["m-one"]
    old, new = preview.changes["notes.md"]
    assert old == NOTES and "Second fact" in (new or "") and "m-one" not in (new or "")
    assert head(path) == before and (path / "notes.md").read_text() == NOTES
    committed = apply_ops(drive, ops, "same ops")
    assert committed.added[0].id == preview.result.added[0].id  # the ids prepared once
    assert (path / "notes.md").read_text() == new


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
