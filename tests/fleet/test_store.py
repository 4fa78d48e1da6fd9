"""The fleet index on a real PostgreSQL server (tests/servers.py starts one on 127.0.0.1):
the same rows and the same answers as the embedded index; an unreachable URL is a clear
error and the embedded index keeps working."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fleet_support import fleet, make_drive
from tests.servers import free_port

pytestmark = pytest.mark.slow

TEXTS = ["Jane Roe prefers tea in the morning", "Call Jane Roe about the Q3 budget",
         "Jörg Müller leads the Zürich office", "jane likes roe fish",
         "The e-mail of the desk is desk.team@example.org", "Deploys happen on Tuesdays"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    make_drive(root, "a.git", TEXTS[:3])
    make_drive(root, "deep/b.git", TEXTS[3:])
    make_drive(root, "c.git", ["Nothing about anyone here"])
    return root


QUERIES = [("jane roe", []), ('"Jane Roe"', []), ("jörg müller", []), ("JÖRG", []),
           ("zurich", []), ("desk", []), ("example org", []), ('"desk team"', []),
           (r"q\d+ budget", ["--regex"]), ("tuesdays", []), ("roe", ["--history"])]


def _answer(root: Path, query: str, extra: list[str]) -> tuple[list, list, str]:
    status, found, err = fleet("find", str(root), query, "--json", *extra)
    assert status in (0, 1), err
    key = [(h["drive"], h["entry_id"], h["topic"], h["source"], h["date"], h["text"])
           for h in found["hits"]]
    return key, [(h["drive"], h["text"]) for h in found["history"]], found["index"]


def test_both_backends_give_the_same_answers(root: Path, postgres_url: str) -> None:
    from memgit.git.repository import open_drive
    from memgit.write.writer import commit_facts

    assert fleet("census", str(root))[0] == 0
    # history: one entry leaves the head
    _s, found, _e = fleet("find", str(root), "roe fish", "--json")
    assert commit_facts(open_drive(root / "deep/b.git"), (),
                        [found["hits"][0]["entry_id"]]).status == "committed"
    embedded = {q: _answer(root, q, e) for q, e in QUERIES}
    assert all(index == "sqlite" for _h, _o, index in embedded.values())
    status, data, err = fleet("index", str(root), "--url", postgres_url, "--json")
    assert status == 0, err
    assert data["postgresql"].startswith("postgresql://memgit@127.0.0.1:")
    assert postgres_url.split("@")[0].split(":")[-1] not in json.dumps(data)  # no password
    assert data["drives"] == 3 and data["copied"] == 3
    shared = {q: _answer(root, q, e) for q, e in QUERIES}
    assert all(index == "postgresql" for _h, _o, index in shared.values())
    assert {q: a[:2] for q, a in shared.items()} == {q: a[:2] for q, a in embedded.items()}
    assert embedded['"Jane Roe"'][0] and embedded["roe"][1] and embedded["jörg müller"][0]
    # census reads the same rows from both
    _s, census_pg, _e = fleet("census", str(root), "--json")
    assert census_pg["summary"]["drives"] == 3


def test_several_roots_feed_one_postgresql_index(tmp_path: Path, postgres_url: str) -> None:
    one, two = tmp_path / "host1", tmp_path / "host2"
    make_drive(one, "x.git", ["Jane Roe visits on Monday"])
    make_drive(two, "y.git", ["Jane Roe signed the contract"])
    for root in (one, two):
        assert fleet("index", str(root), "--url", postgres_url)[0] == 0
    status, found, _err = fleet("find", str(one), '"jane roe"', "--json")
    assert status == 0 and sorted(h["drive"] for h in found["hits"]) == ["x.git", "y.git"]
    assert len({h["origin"] for h in found["hits"]}) == 2
    status, plan, _err = fleet("forget", str(one), '"jane roe"', "--dry-run", "--json")
    assert [d["drive"] for d in plan["drives"]] == ["x.git"]  # only this host's drives
    assert list(plan["elsewhere"].values()) == [1]


def test_an_unreachable_postgresql_url_is_a_clear_error(root: Path) -> None:
    url = f"postgresql://memgit:s3cret-pw@127.0.0.1:{free_port()}/fleet"
    status, _out, err = fleet("index", str(root), "--url", url)
    assert status == 2 and "MG050" in err and "cannot reach the PostgreSQL fleet index" in err
    assert "s3cret-pw" not in err
    settings = root / ".memgit-fleet" / "settings.json"
    assert not settings.exists() or json.loads(settings.read_text())["url"] == ""
    status, found, _err = fleet("find", str(root), "jane", "--json")
    assert status == 0 and found["index"] == "sqlite" and found["warning"] == ""
    # configured earlier, unreachable now: a warning, and the embedded index answers
    origin = found["hits"][0]["origin"]
    settings.write_text(json.dumps({"origin": origin, "url": url}))
    status, found, err = fleet("find", str(root), "jane", "--json")
    assert status == 0 and found["index"] == "sqlite" and len(found["hits"]) == 3
    assert "cannot reach" in found["warning"] and "s3cret-pw" not in found["warning"]
    status, _out, err = fleet("find", str(root), "jane")
    assert status == 0 and "warning" in err and "s3cret-pw" not in err
