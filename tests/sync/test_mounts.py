"""Mounts against real servers: two agents share a team drive on a local server (file://
and smart HTTP with Basic auth), each mounts it next to its personal drive, writes to it
through its own checkout, and recalls across mounts.

The team drive holds real text nobody on the team wrote: ``apps.md`` of the labelled
semantic-recall set (StackFAQ threads, ML-Recipes/BERT-FAQ at commit 3c18403, MIT; see
tests/data/recall_semantic/ORIGIN.md); agent A's personal drive holds its ``health.md``
(CovidFAQ answers, same origin).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from memgit import state
from memgit.drives.create import create_drive
from memgit.format import entries as fmt
from memgit.git.repository import open_drive
from memgit.githooks.post_receive import wait_for_background
from memgit.safe_text import display_url
from memgit.state import facts
from memgit.sync.mounts import mount_path, recall_with_mounts
from tests.conftest import commit_all, git, memgit, memgit_ok, refused
from tests.servers import READER, FileGitServer, GitServer, HttpGitServer, running

DATA = Path(__file__).parents[1] / "data" / "recall_semantic"
KINDS = {"file": FileGitServer, "http": HttpGitServer}


@pytest.fixture(params=sorted(KINDS))
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GitServer]:
    with running(KINDS[request.param](tmp_path / "servers")) as s:
        yield s


def team_drive(server: GitServer, tmp_path: Path) -> Path:
    """A team drive on ``server`` holding apps.md, pushed through a checkout."""
    bare = server.repo_path("team")
    create_drive(bare, bare=True)
    (bare / "memgit.yaml").write_text("kind: team\n")
    seed = tmp_path / "seed"
    assert memgit("clone", server.url("team"), str(seed)).returncode == 0
    shutil.copy(DATA / "drive" / "apps.md", seed / "apps.md")
    commit_all(seed, "StackFAQ entries")
    assert memgit("sync", cwd=seed).returncode == 0
    wait_for_background(bare)
    return bare


def personal(tmp_path: Path, name: str, files: dict[str, str]) -> Path:
    path = tmp_path / name / "memory"
    assert memgit("init", str(path)).returncode == 0
    for file, text in files.items():
        (path / file).write_text(text)
    if files:
        commit_all(path, "my memory")
    return path


def checkout(server: GitServer, bare: Path, path: Path) -> Path:
    """An agent's checkout of the team drive, judging locally with the server's policy."""
    assert memgit("clone", server.url("team"), str(path)).returncode == 0
    shutil.copy(bare / "memgit.yaml", path / ".git" / "memgit.yaml")
    return path


def outputs(*procs) -> str:
    return "".join(p.stdout.decode() + p.stderr.decode() for p in procs)


@pytest.mark.slow
def test_two_agents_share_a_team_drive_through_mounts(server: GitServer,
                                                      tmp_path: Path) -> None:
    bare = team_drive(server, tmp_path)
    reader_url = server.url("team", READER)
    a = personal(tmp_path, "a", {"health.md": (DATA / "drive" / "health.md").read_text()})
    b = personal(tmp_path, "b", {"notes.md": "# Notes\n\n- Agent B reviews pull requests "
                                 "before lunch [source: codex:session/b1; id: m-b-own]\n"})
    seen = []
    for path in (a, b):
        added = memgit("mount", "add", "team", reader_url, cwd=path)
        assert added.returncode == 0, added.stderr.decode()
        seen.append(added)
    team_a = checkout(server, bare, tmp_path / "a" / "team")
    team_b = checkout(server, bare, tmp_path / "b" / "team")
    wrote = memgit_ok("remember", "--json", "--source", "claude-code:session/a7", "--topic",
                      "ops", "The quarterly incident review happens in the Orion meeting room",
                      cwd=team_a)
    a_id = json.loads(wrote.stdout)["added"][0]["id"]
    nameless = memgit("remember", "Agent B forgot to say who it is", cwd=team_b)
    assert nameless.returncode == 1 and b"MG109" in nameless.stdout  # the team's kind
    wrote = memgit_ok("remember", "--json", "--source", "codex:session/b9", "--topic", "ops",
                      "Flaky build alerts go to the Nebula channel", cwd=team_b)
    b_id = json.loads(wrote.stdout)["added"][0]["id"]
    for work in (team_a, team_b, team_a):
        synced = memgit("sync", cwd=work)
        assert synced.returncode == 0, synced.stderr.decode()
    for path in (a, b):
        synced = memgit("mount", "sync", cwd=path)
        assert synced.returncode == 0, synced.stderr.decode()
        seen.append(synced)
        assert "team:" in synced.stdout.decode()

    # B finds what A wrote to the team drive, labelled with the mount; and its own entries
    hits = json.loads(memgit_ok("recall", "--mounts", "--json", "Orion meeting room",
                                cwd=b).stdout)
    assert (hits[0]["drive"], hits[0]["id"]) == ("team", a_id)
    hits = json.loads(memgit_ok("recall", "--mounts", "--json", "pull requests lunch",
                                cwd=b).stdout)
    assert (hits[0]["drive"], hits[0]["id"]) == ("self", "m-b-own")
    text = memgit_ok("recall", "--mounts", "Nebula channel", cwd=a).stdout.decode()
    assert text.startswith("[team] ops.md:") and b_id in text.splitlines()[0]
    # never in the personal recall index: a plain recall does not see the team drive
    assert memgit("recall", "Nebula channel", cwd=a).returncode == 1
    rows = {r.entry_id for r in facts.cap_rows(state.connection(open_drive(a).git_dir))}
    assert rows and all(i.startswith("cov-") for i in rows)
    mount_rows = {r.entry_id for r in facts.cap_rows(
        state.connection(mount_path(open_drive(a), "team")))}
    assert {a_id, b_id, "web-001"} <= mount_rows and not mount_rows & rows
    assert git("status", "--porcelain", "--ignored", cwd=a).stdout == b""  # nothing tracked

    listing = memgit_ok("mount", "list", cwd=a)
    seen.append(listing)
    assert listing.stdout.decode().startswith(f"team\t{display_url(reader_url)}\tmain at ")
    if isinstance(server, HttpGitServer):  # a URL with credentials: never printed
        password = server.passwords[READER]
        assert f"{READER}:***@" in listing.stdout.decode()
        assert password not in outputs(*seen)
        info = json.loads(memgit_ok("mount", "list", "--json", cwd=a).stdout)
        assert password not in json.dumps(info)
        assert f"{READER}:***@" in json.dumps(info)  # the URL is there, its password not


def test_recall_across_mounts_finds_the_labelled_answers(tmp_path: Path) -> None:
    """The labelled queries of the real set, each answer in one of two drives: the top hit
    of a query that shares words with its answer comes from the drive that holds it
    (measured: 87 of 90 from the right drive, 63 of 90 the right entry, where one index of
    both files finds 60: merging by matched words loses nothing to the split)."""
    with running(FileGitServer(tmp_path / "servers")) as server:
        team_drive(server, tmp_path)
        a = personal(tmp_path, "a", {"health.md": (DATA / "drive" / "health.md").read_text()})
        assert memgit("mount", "add", "team", server.url("team"), cwd=a).returncode == 0
        queries = [q for q in json.loads((DATA / "queries.json").read_text())
                   if not q["paraphrase"] and q["half"] == "report"]
        drive = open_drive(a)
        right_drive = right_entry = 0
        for q in queries:
            found = recall_with_mounts(drive, q["query"], 1, count=False)
            if not found.hits:
                continue
            top = found.hits[0]
            want = "team" if q["relevant"][0].startswith("web-") else "self"
            right_drive += top.drive == want
            right_entry += top.hit.entry_id in q["relevant"]
        assert len(queries) >= 80
        assert right_drive / len(queries) >= 0.9
        assert right_entry / len(queries) >= 0.6


def test_a_mount_prunes_what_its_server_purged(tmp_path: Path) -> None:
    with running(FileGitServer(tmp_path / "servers")) as server:
        bare = team_drive(server, tmp_path)
        a = personal(tmp_path, "a", {"notes.md": "# Notes\n\n- A keeps notes [source: "
                                     "codex:session/1; id: m-a-1]\n"})
        assert memgit("mount", "add", "team", server.url("team"), cwd=a).returncode == 0
        text = fmt.parse_entry(next(line for line in (DATA / "drive" / "apps.md")
                                    .read_text().splitlines() if "id: web-002]" in line))
        assert text is not None
        assert memgit("recall", "--mounts", "--json", "delete facebook account",
                      cwd=a).returncode == 0
        purged = memgit("purge", "--repo", str(bare), "--yes", "web-002")
        assert purged.returncode == 0, purged.stderr.decode()
        synced = memgit_ok("mount", "sync", "--json", cwd=a)
        [report] = json.loads(synced.stdout)
        assert report["history_rewritten"] and report["forgotten"] == 1
        mount = mount_path(open_drive(a), "team")
        after = memgit("recall", "--mounts", "--json", "delete facebook account", cwd=a)
        assert after.returncode == 0, after.stderr  # it ran and found the other entries
        hits = json.loads(after.stdout)
        assert "web-002" not in [h["id"] for h in hits] and hits
        needle = text.text.encode()
        objects = git("cat-file", "--batch-all-objects", "--batch", cwd=mount).stdout
        assert needle not in objects
        # the id survives only in the server's published list of purged ids
        assert objects.count(b"web-002") == 1
        assert git("show", "refs/memgit/purged-from/origin:purged-ids",
                   cwd=mount).stdout == b"web-002\n"
        database = state.state_path(mount)
        assert needle not in database.read_bytes()
        assert b"web-001" in database.read_bytes()  # the mount's index, with what it kept
        assert git("fsck", "--no-dangling", cwd=mount).returncode == 0


@pytest.mark.slow
def test_names_read_only_and_refusals(tmp_path: Path) -> None:
    with running(FileGitServer(tmp_path / "servers")) as server:
        team_drive(server, tmp_path)
        url = server.url("team")
        a = personal(tmp_path, "a", {})
        for bad in ("../x", "a/b", "Team", "self", ".hidden", "x" * 64, "-x"):
            proc = memgit("mount", "add", "--", bad, url, cwd=a)
            assert proc.returncode == 2 and b"MG040" in proc.stderr, bad
        assert memgit("mount", "add", "team", url, cwd=a).returncode == 0
        again = memgit("mount", "add", "team", url, cwd=a)
        assert again.returncode == 2 and b"exists" in again.stderr
        refused(again, "MG040")
        mount = mount_path(open_drive(a), "team")
        wrote = memgit("remember", "--source", "codex:session/1", "Written into a mount",
                       cwd=mount)
        assert wrote.returncode == 2 and b"read-only" in wrote.stderr
        refused(wrote, "MG001")
        assert git("push", "origin", "main", cwd=mount, check=False).returncode != 0
        not_drive = server.create_repo("plain", initial_commit=True)
        plain = memgit("mount", "add", "plain", not_drive.as_uri(), cwd=a)
        assert plain.returncode == 2 and b"not a drive" in plain.stderr
        refused(plain, "MG002")
        missing = memgit("mount", "add", "gone", url + "-missing", cwd=a)
        assert missing.returncode == 2 and b"MG040" in missing.stderr
        assert sorted(p.name for p in mount.parent.iterdir()) == ["team.git"]  # no leftovers
        bare = server.repo_path("team")
        git("branch", "1.0", "main", cwd=bare)  # a branch whose name YAML reads as a number
        assert memgit("mount", "add", "rel", url, "--branch", "1.0", cwd=a).returncode == 0
        listed = json.loads(memgit_ok("mount", "list", "--json", cwd=a).stdout)
        assert [(m["name"], m["branch"]) for m in listed] == [("rel", "1.0"), ("team", "main")]
        assert memgit("mount", "sync", "rel", cwd=a).returncode == 0
        assert memgit("mount", "sync", "nope", cwd=a).returncode == 2
        refused(memgit("mount", "sync", "nope", cwd=a), "MG040")
        assert memgit("mount", "remove", "team", cwd=a).returncode == 0
        assert not mount.exists()
        assert memgit("mount", "remove", "rel", cwd=a).returncode == 0
        assert memgit_ok("mount", "list", cwd=a).stdout.startswith(b"no mounts")
        assert memgit("mount", "remove", "team", cwd=a).returncode == 2
        assert "no mount named team" in refused(memgit("mount", "remove", "team", cwd=a),
                                                "MG040")
