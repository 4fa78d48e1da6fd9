"""write_plan.preview_write_ops: a write planned and judged as applying would, and not made."""

from __future__ import annotations

from typing import Any

from memgit.git.repository import open_drive, ref_target
from memgit.policy.settings import Policy
from memgit.write.ops import prepare_facts
from memgit.write.plan import preview_write_ops
from memgit.write.writer import apply_write_ops

NOTES = "# Notes\n\n- First fact [source: imported:unknown; id: m-one]\n"


def test_preview_shows_the_commit_and_makes_none(new_drive: Any) -> None:
    path = new_drive({"notes.md": NOTES})
    drive = open_drive(path)
    before = ref_target(drive, "refs/heads/main")
    ops, skipped = prepare_facts(["Second fact"], ["m-one"], policy=Policy())
    assert skipped == []
    preview = preview_write_ops(drive, ops, policy=Policy())
    assert preview.result.status == "planned" and preview.result.retired == ["m-one"]
    old, new = preview.changes["notes.md"]
    assert old == NOTES and "Second fact" in (new or "") and "m-one" not in (new or "")
    assert ref_target(drive, "refs/heads/main") == before
    assert (path / "notes.md").read_text() == NOTES
    committed = apply_write_ops(drive, ops, "same ops")
    assert committed.added[0].id == preview.result.added[0].id  # the ids prepared once
    assert (path / "notes.md").read_text() == new
    assert preview_write_ops(drive, [], policy=Policy()).result.status == "unchanged"
