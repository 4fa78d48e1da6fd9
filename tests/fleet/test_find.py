"""memgit fleet find over real drives: words, phrase, regex, --history, and the index
giving the same answer as a scan of every drive (docs/fleet.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fleet_support import JANE, fleet, found_hits, ids

pytestmark = pytest.mark.slow  # real drives and a memgit process per command


def test_find_words_phrase_regex_and_history(root: Path) -> None:
    status, found, _err = fleet("find", str(root), "jane ROE", "--json")
    assert status == 0 and isinstance(found, dict)
    assert ids(found) == [("alice.git", JANE[0]), ("alice.git", JANE[1]),
                           ("team/bob.git", "Met Jane Roe at the conference"),
                           ("team/bob.git", "jane likes roe fish")]
    assert {h["topic"] for h in found["hits"]} == {"notes.md", "people.md"}
    assert all(h["date"] and h["source"] and h["entry_id"] for h in found["hits"])
    status, found, _err = fleet("find", str(root), '"Jane Roe"', "--json")
    assert [t for _d, t in ids(found)] == [JANE[0], JANE[1], "Met Jane Roe at the conference"]
    status, found, _err = fleet("find", str(root), r"q\d budget", "--regex", "--json")
    assert ids(found) == [("alice.git", JANE[1])]
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
    assert status == 0 and ids(found, "history") == [("team/bob.git",
                                                       "Met Jane Roe at the conference")]
    # reading every drive gives the same answer as the index
    for query, extra in (("jane roe", []), ('"Jane Roe"', []), ("conference", ["--history"]),
                         (r"q\d", ["--regex"])):
        _s, indexed, _e = fleet("find", str(root), query, "--json", *extra)
        _s, scanned, _e = fleet("find", str(root), query, "--json", "--scan", *extra)
        assert ids(indexed) == ids(scanned) and \
            ids(indexed, "history") == ids(scanned, "history"), query
        assert scanned["index"] == "scan" and indexed["index"] == "sqlite"


def test_a_regex_matching_every_text_is_refused(root: Path) -> None:
    status, _out, err = fleet("find", str(root), "x*", "--regex")
    assert status == 2 and "MG001" in err and "matches every text" in err


def test_a_page_names_every_drive_and_the_totals_and_no_refresh_reads_the_index(
        root: Path) -> None:
    from tests.fleet_support import add_entries

    status, whole, _err = fleet("find", str(root), "jane", "--json")
    assert status == 0 and whole["total"] == 4 and len(whole["hits"]) == 4
    status, page, _err = fleet("find", str(root), "jane", "--json", "--limit", "1")
    assert page["hits"] == whole["hits"][:1] and page["total"] == 4
    assert page["drives"] == whole["drives"] == ["alice.git", "team/bob.git"]
    status, out, err = fleet("find", str(root), "jane", "--limit", "3")
    assert status == 0 and len(str(out).splitlines()) == 3
    assert "4 entries at the heads, 0 in history only, in 2 drive(s)" in err
    assert "listed the first 3 and 0: --limit N or --all lists more" in err
    status, out, err = fleet("find", str(root), "jane", "--all")
    assert len(str(out).splitlines()) == 4 and "listed the first" not in err
    # a drive changed without a push: --no-refresh answers from the index as it stands
    add_entries(root / "carol.git", ["Jane Roe visited Carol"])
    status, stale, _err = fleet("find", str(root), "jane", "--json", "--no-refresh")
    assert stale["total"] == 4 and "carol.git" not in stale["drives"]
    status, fresh, _err = fleet("find", str(root), "jane", "--json")
    assert fresh["total"] == 5 and "carol.git" in fresh["drives"]
