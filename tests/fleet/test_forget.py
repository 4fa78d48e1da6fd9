"""memgit fleet forget over real drives: the plan, forget with and without purge, the
receipt, a locked drive and the re-run, the broad query (docs/fleet.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import commit_all, git, memgit
from tests.fleet_support import (
    JANE,
    everything_in,
    fleet,
    found_hits,
    receipt_without_text,
)

pytestmark = pytest.mark.slow  # real drives and a memgit process per command


def test_forget_without_purge_retires_at_the_heads_only(root: Path) -> None:
    status, plan, _err = fleet("forget", str(root), '"Jane Roe"', "--dry-run", "--json")
    assert status == 0 and plan["entries"] == 3 and plan["dry_run"] is True
    assert [(d["drive"], len(d["forget"])) for d in plan["drives"]] == [("alice.git", 2),
                                                                       ("team/bob.git", 1)]
    assert not (root / ".memgit-fleet" / "receipts").exists()
    status, receipt, err = fleet("forget", str(root), '"Jane Roe"', "--json", "--by", "dpo")
    assert status == 0, err
    assert receipt["totals"] == {"drives": 2, "done": 2, "pending": 0, "forgotten": 3,
                                 "purged": 0}
    assert receipt["runs"][0]["by"] == "dpo"
    receipt_without_text(Path(receipt["path"]), JANE + ["Met Jane Roe at the conference"])
    assert found_hits(root, '"jane roe"') == []
    _s, found, _e = fleet("find", str(root), '"jane roe"', "--history", "--json")
    assert len(found["history"]) == 3  # history keeps them without --purge
    assert not (root / "alice.git" / "memgit-purged").exists()
    assert [h["text"] for h in found_hits(root, "roe")] == ["jane likes roe fish"]


def test_forget_with_purge_removes_history_and_the_registry_refuses_the_text(
        root: Path, tmp_path: Path) -> None:
    status, receipt, err = fleet("forget", str(root), "jane roe", "--purge", "--yes", "--json")
    assert status == 0, err
    assert receipt["totals"]["purged"] == 4 and receipt["totals"]["forgotten"] == 4
    for name in ("alice.git", "team/bob.git"):
        blob = everything_in(root / name)
        assert b"Jane Roe" not in blob and b"roe fish" not in blob, name
        drive = receipt["drives"][name]
        assert drive["status"] == "done" and drive["commits"][-1]["purge"]["new_head"]
    receipt_without_text(Path(receipt["path"]), JANE + ["jane likes roe fish"])
    index_bytes = (root / ".memgit-fleet" / "index.sqlite").read_bytes()
    assert b"budget" not in index_bytes and b"prefers tea" not in index_bytes
    _s, found, _e = fleet("find", str(root), "jane roe", "--history", "--json")
    assert found["hits"] == [] and found["history"] == []
    # the drive's registry refuses the text from now on: a real push bringing it back
    work = tmp_path / "work"
    git("clone", "-q", str(root / "alice.git"), str(work))
    (work / "notes.md").write_text((work / "notes.md").read_text() + f"- {JANE[0]}\n")
    commit_all(work, "bring it back")
    push = git("push", "origin", "main", cwd=work, check=False)
    assert push.returncode != 0 and b"MG607" in push.stderr
    # a re-run finds nothing left and keeps one receipt
    status, again, _err = fleet("forget", str(root), "jane roe", "--purge", "--yes", "--json")
    assert status == 0 and again["path"] == receipt["path"]
    assert len(list((root / ".memgit-fleet" / "receipts").iterdir())) == 1
    assert len(again["runs"]) == 2 and again["totals"]["purged"] == 4


def test_a_drive_locked_by_a_purge_is_listed_and_a_rerun_finishes_it(root: Path) -> None:
    from memgit.policy.registry import PURGE_LOCK_FILE, lock_line

    lock = root / "team/bob.git" / PURGE_LOCK_FILE
    lock.write_text(lock_line())  # this process: alive, so the lock holds
    heads = {n: git("rev-parse", "main", cwd=root / n).stdout for n in ("alice.git",
                                                                        "team/bob.git")}
    status, receipt, _err = fleet("forget", str(root), '"Jane Roe"', "--purge", "--yes",
                                  "--json")
    assert status == 3
    assert receipt["drives"]["alice.git"]["status"] == "done"
    bob = receipt["drives"]["team/bob.git"]
    assert bob["status"] == "pending" and "locked: a purge is running" in bob["reason"]
    assert git("rev-parse", "main", cwd=root / "team/bob.git").stdout == heads["team/bob.git"]
    status, text, err = fleet("forget", str(root), '"Jane Roe"', "--purge", "--yes")
    assert status == 3 and "team/bob.git: PENDING: locked" in err
    lock.unlink()
    status, receipt, err = fleet("forget", str(root), '"Jane Roe"', "--purge", "--yes",
                                 "--json")
    assert status == 0, err
    assert receipt["drives"]["team/bob.git"]["status"] == "done"
    assert receipt["drives"]["team/bob.git"]["purged"] != []
    assert b"Met Jane Roe" not in everything_in(root / "team/bob.git")
    # idempotent: once more changes no drive
    after = {n: git("rev-parse", "main", cwd=root / n).stdout for n in heads}
    status, receipt, _err = fleet("forget", str(root), '"Jane Roe"', "--purge", "--yes",
                                  "--json")
    assert status == 0 and receipt["totals"]["pending"] == 0
    assert {n: git("rev-parse", "main", cwd=root / n).stdout for n in heads} == after


def test_a_query_matching_nearly_everything_asks_first(root: Path) -> None:
    heads = git("rev-parse", "main", cwd=root / "carol.git").stdout
    status, _out, err = fleet("forget", str(root), "e", "--regex")
    assert status == 2 and "matches nearly everything" in err
    assert "7 entries at the heads of 3 drive(s) of 3, of 7 entries in all (100% of them)" in err
    assert git("rev-parse", "main", cwd=root / "carol.git").stdout == heads
    status, _out, err = fleet("forget", str(root), "e", "--regex", "--yes")
    assert status == 0, err
    assert found_hits(root, "carol") == []


def test_forget_reaches_working_memory_values_and_purge_removes_every_version(
        root: Path, tmp_path: Path) -> None:
    """A value that named Jane Roe, since overwritten, lives on only in the working ref's
    history: the plan lists it with --purge (not at the tip without), the purge removes
    every version from every object of the drive, and the other values stay."""
    work = tmp_path / "carol"
    assert memgit("clone", str(root / "carol.git"), str(work)).returncode == 0
    for key, value in (("contact", '{"name": "Jane Roe", "phone": "ext 4411"}'),
                       ("contact", '{"name": "the release desk"}'),
                       ("step", '"review the notes"')):
        assert memgit("set", key, value, "--json", "--agent", "planner",
                      cwd=work).returncode == 0
    assert memgit("sync", cwd=work).returncode == 0
    assert b"ext 4411" in everything_in(root / "carol.git")

    _s, tip_only, _e = fleet("forget", str(root), "jane roe", "--dry-run", "--json")
    assert [d["working"] for d in tip_only["drives"] if d["drive"] == "carol.git"] == []
    _s, planned, _e = fleet("forget", str(root), "jane roe", "--purge", "--dry-run", "--json")
    carol = [d for d in planned["drives"] if d["drive"] == "carol.git"]
    assert len(carol) == 1 and len(carol[0]["working"]) == 1
    assert carol[0]["working"][0].startswith("w-") and carol[0]["purge"] == carol[0]["working"]

    status, receipt, err = fleet("forget", str(root), "jane roe", "--purge", "--yes", "--json")
    assert status == 0, err
    assert receipt["drives"]["carol.git"]["status"] == "done"
    blob = everything_in(root / "carol.git")
    assert b"ext 4411" not in blob and b"Jane Roe" not in blob
    assert memgit("sync", cwd=work).returncode == 0
    shown = memgit("get", "step", "--agent", "planner", cwd=work)
    assert shown.returncode == 0 and shown.stdout.strip() == b"review the notes"
    assert b"ext 4411" not in everything_in(work / ".git")  # the checkout's sync pruned it
