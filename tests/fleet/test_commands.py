"""memgit fleet over real drives: census, find, forget (with and without purge), receipts,
the index kept by post-receive (docs/fleet.md)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import commit_all, git
from tests.fleet_support import add_entries, everything_in, fleet, make_drive

pytestmark = pytest.mark.slow  # real drives and a memgit process per command: ~10 s each

JANE = ["Jane Roe prefers tea in the morning", "Call Jane Roe about the Q3 budget"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """alice (Jane twice), team/bob (Jane once, and 'jane ... roe' apart), carol (none),
    a gitolite-style admin repository (no branch main) and a checkout."""
    root = tmp_path / "root"
    make_drive(root, "alice.git", JANE + ["The build uses make"])
    make_drive(root, "team/bob.git", ["Met Jane Roe at the conference",
                                      "jane likes roe fish", "Deploys happen on Tuesdays"],
               topic="people")
    make_drive(root, "carol.git", ["Carol keeps the release notes"])
    admin = root / "gitolite-admin.git"
    git("init", "-q", "--bare", "-b", "master", str(admin))
    git("init", "-q", str(root / "users" / "checkout"))
    return root


def test_census_lists_every_repository_with_its_standing(root: Path) -> None:
    make_drive(root, "full.git", [f"Fact number {n} about birds" for n in range(5)],
               policy="limits: {files: 2}\n")
    status, data, _err = fleet("census", str(root), "--json")
    assert status == 0, data
    assert isinstance(data, dict)
    by_name = {r["name"]: r for r in data["drives"]}
    assert sorted(by_name) == ["alice.git", "carol.git", "full.git", "gitolite-admin.git",
                               "team/bob.git", "users/checkout"]
    assert by_name["alice.git"]["status"] == "drive" and by_name["alice.git"]["entries"] == 3
    assert by_name["team/bob.git"]["kind"] == "personal"
    assert by_name["gitolite-admin.git"]["status"] == "not_drive"
    assert "no branch main" in by_name["gitolite-admin.git"]["reason"]
    assert by_name["users/checkout"]["status"] == "not_drive"
    assert by_name["full.git"]["over"] == [] and by_name["full.git"]["near"] == ["files"]
    assert data["summary"]["drives"] == 4 and data["summary"]["not_drives"] == 2
    assert data["summary"]["near_limit"] == 1 and data["summary"]["described"] == 6
    # a second census describes only the drive that changed since
    add_entries(root / "carol.git", ["Carol moved to Lisbon"])
    status, data, _err = fleet("census", str(root), "--json")
    assert status == 0 and data["summary"]["described"] == 1
    assert {r["name"]: r["entries"] for r in data["drives"]}["carol.git"] == 2
    # text output: one line per repository, non-drives said to be skipped
    status, text, _err = fleet("census", str(root))
    line = next(x for x in text.splitlines() if x.startswith("gitolite-admin.git: "))
    assert status == 0 and line.startswith("gitolite-admin.git: not a drive: the drive has "
                                           "no branch main (the repository has no commit yet)")
    assert line.endswith("(skipped)")


def test_census_of_a_path_that_is_not_a_folder_is_a_usage_error(tmp_path: Path) -> None:
    status, _out, err = fleet("census", str(tmp_path / "missing"))
    assert status == 2 and "MG001" in err and "is not a folder" in err


def _ids(found: dict, key: str = "hits") -> list[tuple[str, str]]:
    return [(h["drive"], h["text"]) for h in found[key]]


def test_find_words_phrase_regex_and_history(root: Path) -> None:
    status, found, _err = fleet("find", str(root), "jane ROE", "--json")
    assert status == 0 and isinstance(found, dict)
    assert _ids(found) == [("alice.git", JANE[0]), ("alice.git", JANE[1]),
                           ("team/bob.git", "Met Jane Roe at the conference"),
                           ("team/bob.git", "jane likes roe fish")]
    assert {h["topic"] for h in found["hits"]} == {"notes.md", "people.md"}
    assert all(h["date"] and h["source"] and h["entry_id"] for h in found["hits"])
    status, found, _err = fleet("find", str(root), '"Jane Roe"', "--json")
    assert [t for _d, t in _ids(found)] == [JANE[0], JANE[1], "Met Jane Roe at the conference"]
    status, found, _err = fleet("find", str(root), r"q\d budget", "--regex", "--json")
    assert _ids(found) == [("alice.git", JANE[1])]
    status, _found, _err = fleet("find", str(root), "nobody mentions this", "--json")
    assert status == 1
    # an entry forgotten in the usual way leaves the head, and only --history finds it
    from memgit.git.repository import open_drive
    from memgit.write.writer import commit_facts

    bob = open_drive(root / "team/bob.git")
    hit = next(h for h in found_hits(root, "conference") if h["drive"] == "team/bob.git")
    assert commit_facts(bob, (), [hit["entry_id"]]).status == "committed"
    status, found, _err = fleet("find", str(root), "conference", "--json")
    assert status == 1 and found["hits"] == []
    status, found, _err = fleet("find", str(root), "conference", "--history", "--json")
    assert status == 0 and _ids(found, "history") == [("team/bob.git",
                                                       "Met Jane Roe at the conference")]
    # reading every drive gives the same answer as the index
    for query, extra in (("jane roe", []), ('"Jane Roe"', []), ("conference", ["--history"]),
                         (r"q\d", ["--regex"])):
        _s, indexed, _e = fleet("find", str(root), query, "--json", *extra)
        _s, scanned, _e = fleet("find", str(root), query, "--json", "--scan", *extra)
        assert _ids(indexed) == _ids(scanned) and \
            _ids(indexed, "history") == _ids(scanned, "history"), query
        assert scanned["index"] == "scan" and indexed["index"] == "sqlite"


def found_hits(root: Path, query: str) -> list[dict]:
    _status, found, _err = fleet("find", str(root), query, "--json")
    assert isinstance(found, dict)
    return found["hits"]


def test_a_regex_matching_every_text_is_refused(root: Path) -> None:
    status, _out, err = fleet("find", str(root), "x*", "--regex")
    assert status == 2 and "MG001" in err and "matches every text" in err


def _receipt_has_no_text(receipt_path: Path, texts: list[str]) -> dict:
    raw = receipt_path.read_text()
    for text in texts:
        for word in text.split():
            if len(word) > 3:
                assert word.lower() not in raw.lower(), word
    assert oct(receipt_path.stat().st_mode & 0o777) == "0o600"
    return json.loads(raw)


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
    _receipt_has_no_text(Path(receipt["path"]), JANE + ["Met Jane Roe at the conference"])
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
    _receipt_has_no_text(Path(receipt["path"]), JANE + ["jane likes roe fish"])
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


def test_post_receive_keeps_the_index_current(root: Path, tmp_path: Path) -> None:
    from memgit.githooks.post_receive import wait_for_background

    assert fleet("census", str(root))[0] == 0  # the index exists: the root is a fleet
    work = tmp_path / "work"
    git("clone", "-q", str(root / "carol.git"), str(work))
    (work / "notes.md").write_text((work / "notes.md").read_text()
                                   + "- Jane Roe joined the choir [source: imported:unknown]\n")
    commit_all(work, "choir")
    git("push", "-q", "origin", "main", cwd=work)
    assert wait_for_background(root / "carol.git")
    from memgit.fleet.find import find
    from memgit.fleet.index import FleetIndex
    from memgit.fleet.match import parse_query

    index = FleetIndex(root)  # read without a refresh: the push alone put the row there
    try:
        found = find(index, parse_query("choir"))
        assert [(h.drive, h.text) for h in found.hits] == [("carol.git",
                                                            "Jane Roe joined the choir")]
        record = index.embedded.drives(index.origin)[(index.origin, "carol.git")]
        assert record.last_push and record.entries == 2
    finally:
        index.close()
    log = root / "carol.git" / "memgit" / "post-receive.log"
    assert not log.exists() or log.read_text() == ""
    os.sync()
