"""memgit fleet census over real drives: every repository, its standing against its
limits, only changed drives described again (docs/fleet.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fleet_support import add_entries, fleet, make_drive

pytestmark = pytest.mark.slow  # real drives and a memgit process per command


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


def test_a_drive_given_as_the_root_is_a_usage_error_and_stays_untouched(
        tmp_path: Path) -> None:
    drive = make_drive(tmp_path / "root", "people.git")
    before = sorted(p.name for p in drive.iterdir())
    for args in (("find", str(drive), "x"), ("census", str(drive))):
        status, _out, err = fleet(*args)
        assert status == 2 and "is a git repository, not a folder of drives" in err, err
    assert sorted(p.name for p in drive.iterdir()) == before  # no .memgit-fleet inside
