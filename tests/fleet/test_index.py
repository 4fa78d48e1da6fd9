"""The fleet index kept current by post-receive (memgit fleet index --drive, run from
the hook's detached process) over a real push (docs/fleet.md)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import commit_all, git
from tests.fleet_support import fleet

pytestmark = pytest.mark.slow  # real drives and a memgit process per command


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


def test_fleet_index_drive_updates_one_row_and_refuses_a_drive_outside_a_fleet(
        root: Path, tmp_path: Path) -> None:
    from memgit.fleet.index import FleetIndex
    from tests.fleet_support import add_entries, make_drive

    assert fleet("census", str(root))[0] == 0
    add_entries(root / "carol.git", ["Carol adopted a heron"])  # the writer: no push, no hook
    status, out, err = fleet("index", "--drive", str(root / "carol.git"), "--json")
    assert status == 0, err
    assert out == {"drive": str(root / "carol.git"), "root": str(root), "updated": True}
    index = FleetIndex(root)
    try:
        rows = index.embedded.drives(index.origin)
        assert rows[(index.origin, "carol.git")].entries == 2
        assert [h.text for h in index.embedded.versions(index.origin, "carol.git")
                if h.at_head and "heron" in h.text] == ["Carol adopted a heron"]
    finally:
        index.close()
    alone = make_drive(tmp_path / "elsewhere", "solo.git", ["Nothing shared"])
    status, out, err = fleet("index", "--drive", str(alone), "--json")
    assert status == 1 and out["updated"] is False and out["root"] == ""
    assert not (tmp_path / "elsewhere" / ".memgit-fleet").exists()
    status, _out, err = fleet("index", "--drive", str(alone))
    assert status == 1 and "is under no fleet root" in err


def test_fleet_index_needs_a_root_or_a_drive_alone(root: Path) -> None:
    status, _out, err = fleet("index")
    assert status == 2 and "MG001" in err and "name the ROOT folder" in err
    status, _out, err = fleet("index", str(root), "--drive", str(root / "carol.git"))
    assert status == 2 and "MG001" in err and "--drive names the drive alone" in err
    assert not (root / ".memgit-fleet").exists()  # refused before anything was written
