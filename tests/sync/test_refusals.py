"""A commit the server refuses, and the way out its hint names (docs/sync.md, "A refused
commit"); what sync prints on a terminal and without one; a checkout purged alone.

Real bare server drives made by ``memgit init --bare`` (memgit's pre-receive hook),
checkouts made by ``memgit clone``, the real ``memgit`` command line; no mocks.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from memgit.git.repository import open_drive
from memgit.sync.client import sync
from memgit.sync.status import LAST_SYNCED, SYNC_SOURCE
from tests.conftest import commit_all, git, head_entries, memgit, memgit_ok, memgit_on_terminal
from tests.sync.test_client import add, objects_containing

SOURCE = "--source=claude-code:session/42"
# a Slack token's shape, built so this file holds none (tests/policy/test_judge.py)
TOKEN = "xoxb-" + "2048123456-4096123456-Kq8Zm3Nx7Rt2Vb6Kw9Yp4Hd1"


def team_drive(tmp_path: Path) -> tuple[Path, Path]:
    """A team drive (MG109: every entry names its agent) and a checkout of it that lacks
    the team's memgit.yaml, so its own writer lets an entry without --source through."""
    bare = tmp_path / "team.git"
    memgit_ok("init", "--bare", str(bare))
    (bare / "memgit.yaml").write_text("kind: team\n")
    work = tmp_path / "work"
    memgit_ok("clone", bare.as_uri(), str(work))
    return bare, work


def remember(work: Path, text: str, *options: str) -> str:
    """``memgit remember`` through the command line; the new entry's id."""
    out = json.loads(memgit_ok("remember", text, "--json", *options, cwd=work).stdout)
    return str(out["added"][0]["id"])


def server_subjects(bare: Path) -> list[str]:
    return git("log", "--format=%s", "main", cwd=bare).stdout.decode().splitlines()


# --- the refusal as the server said it ---------------------------------------------------



def plain_drive(tmp_path: Path) -> tuple[Path, Path]:
    """A server drive with memgit's hooks (``memgit init --bare``) and a clone of it."""
    bare, work = tmp_path / "drive.git", tmp_path / "work"
    memgit_ok("init", "--bare", str(bare))
    memgit_ok("clone", bare.as_uri(), str(work))
    return bare, work


def test_the_servers_refusal_prints_as_lines(tmp_path: Path) -> None:
    _bare, work = team_drive(tmp_path)
    remember(work, "Releases ship on Thursdays")
    proc = memgit("sync", cwd=work)
    err = proc.stderr.decode()
    assert proc.returncode == 1, err
    assert "\\x0a" not in err
    lines = err.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("memgit: error "))
    assert lines[first].startswith("memgit: error MG007: the server refused commit ")
    # each of the server's lines on a line of its own, its indentation kept, under the first
    assert "  memgit: push refused by the drive policy" in lines
    assert any(line.startswith("    notes.md:3: MG109 source-required: ") for line in lines)
    assert lines[-1].startswith("  hint: ")


# --- a refused entry, then the fix the hint names ------------------------------------------


def test_a_refused_entry_lands_once_it_is_forgotten_and_the_rest_with_it(
        tmp_path: Path) -> None:
    bare, work = team_drive(tmp_path)
    anonymous = remember(work, "Releases ship on Thursdays")
    named = remember(work, "Builds run on Fridays", SOURCE)
    first = memgit("sync", cwd=work)
    err = first.stderr.decode()
    assert first.returncode == 1, err
    assert "MG109" in err and "\\x0a" not in err
    # the server's lines print as lines, under the error's first line
    lines = err.splitlines()
    assert lines[0].startswith("memgit: error MG007: the server refused commit ")
    assert "  memgit: push refused by the drive policy" in lines
    assert any(line.startswith("    notes.md:3: MG109 source-required") for line in lines)
    assert "memgit forget ID, then memgit remember it again with --source" in err
    assert anonymous in lines[-1] and lines[-1].startswith("  hint: ")

    # memgit edit keeps the source: still refused, and said again
    memgit_ok("edit", anonymous, "Releases ship on Thursdays at noon", cwd=work)
    again = memgit("sync", cwd=work)
    assert again.returncode == 1 and "MG109" in again.stderr.decode()

    # the hint's way out: forget it, remember it again with a source
    memgit_ok("forget", anonymous, cwd=work)
    fixed = remember(work, "Releases ship on Thursdays at noon", SOURCE)
    done = memgit_ok("sync", "--json", cwd=work)
    report = json.loads(done.stdout)
    assert set(head_entries(bare)) == {named, fixed}
    assert head_entries(work) == head_entries(bare)
    assert [h["held"] for h in report["held"]] == [[anonymous]]
    assert git("status", "--porcelain", cwd=work).stdout == b""
    status = json.loads(memgit_ok("status", "--json", cwd=work).stdout)
    assert status["waiting_commits"] == 0
    assert memgit("lint", cwd=work).returncode == 0


def test_a_forgotten_entry_lands_nothing_and_the_commit_it_came_in_lands_the_rest(
        tmp_path: Path) -> None:
    bare, work = team_drive(tmp_path)
    # one commit (plain git, as an agent that writes its files itself): an entry the
    # server refuses (no source) beside one it accepts
    good = add(work, "Deploys need two approvals", "notes.md")
    with (work / "notes.md").open("a") as notes:
        notes.write("- Nobody names this agent [added: 2026-01-02; id: m-anonymous]\n")
    commit_all(work, "two facts")
    later = remember(work, "Backups run hourly", SOURCE)
    first = memgit("sync", cwd=work)
    assert first.returncode == 1 and "m-anonymous" in first.stderr.decode()
    assert set(head_entries(bare)) == set()  # nothing of the refused commit landed
    memgit_ok("forget", "m-anonymous", cwd=work)
    said = memgit_ok("sync", cwd=work).stdout.decode()
    assert "the server had refused" in said and "landed with" in said  # the text says so
    assert set(head_entries(bare)) == {good, later}
    assert "two facts" in server_subjects(bare)  # its own commit, its own message


def test_a_refused_file_lands_once_it_is_removed(tmp_path: Path) -> None:
    bare, work = plain_drive(tmp_path)
    kept = add(work, "The office opens at eight", "notes.md")
    (work / "notes.txt").write_text("plain text\n")
    commit_all(work, "a fact and a text file")
    proc = memgit("sync", cwd=work)
    err = proc.stderr.decode()
    assert proc.returncode == 1 and "MG201" in err
    assert "git rm PATH" in err and "(notes.txt)" in err
    assert "git restore --source=" in err  # the other way out, for a file that must stay
    git("rm", "-q", "notes.txt", cwd=work)
    git("commit", "-q", "-m", "remove the text file", cwd=work)
    memgit_ok("sync", cwd=work)
    assert set(head_entries(bare)) == {kept}
    assert "a fact and a text file" in server_subjects(bare)
    assert git("cat-file", "-e", "main:notes.txt", cwd=bare, check=False).returncode != 0


def test_a_refused_message_names_a_rebase_that_works(tmp_path: Path) -> None:
    bare, work = plain_drive(tmp_path)
    entry = add(work, "The office closes at six", "notes.md")
    bad = commit_all(work, f"notes, token {TOKEN}")
    after = remember(work, "Lunch is at noon", SOURCE)
    proc = memgit("sync", cwd=work)
    err = proc.stderr.decode()
    assert proc.returncode == 1 and "MG403" in err and TOKEN not in err
    assert f"git rebase -i {bad[:10]}~1" in err and "memgit edit and forget cannot" in err
    # forgetting the entry cannot help: the message is what was refused
    memgit_ok("forget", entry, cwd=work)
    assert memgit("sync", cwd=work).returncode == 1
    # the command the hint names, run without a terminal
    env = dict(os.environ, GIT_SEQUENCE_EDITOR="sed -i '1s/^pick/reword/'",
               GIT_EDITOR="sed -i '1s/.*/notes/'")
    subprocess.run(["git", "rebase", "-q", "-i", f"{bad[:10]}~1"], cwd=work, env=env,
                   check=True, capture_output=True)
    memgit_ok("sync", cwd=work)
    assert set(head_entries(bare)) == {after}
    assert not any(TOKEN in s for s in server_subjects(bare))


def test_a_sync_killed_while_changes_are_held_loses_none_of_them(tmp_path: Path) -> None:
    bare, work = team_drive(tmp_path)
    anonymous = remember(work, "Releases ship on Thursdays")
    named = remember(work, "Builds run on Fridays", SOURCE)
    memgit_ok("forget", anonymous, cwd=work)
    start = git("rev-parse", "HEAD~3", cwd=work).stdout.decode().strip()

    def killed(message: str) -> None:
        if message.startswith("[3/3]"):
            raise KeyboardInterrupt  # after the first two landed, before the forget

    with pytest.raises(KeyboardInterrupt):
        sync(open_drive(work), step=killed)
    assert set(head_entries(bare)) == {named}
    # the refused commit's changes were held: the next sync starts before it again
    assert git("rev-parse", SYNC_SOURCE, cwd=work).stdout.decode().strip() == start
    assert git("rev-parse", LAST_SYNCED, cwd=work).stdout.decode().strip() == \
        git("rev-parse", "main", cwd=bare).stdout.decode().strip()
    report = sync(open_drive(work))
    assert set(head_entries(bare)) == {named}
    assert head_entries(work) == head_entries(bare)
    assert report.held and report.held[0][2] == [anonymous]


def test_held_changes_land_with_batched_pushes_too(tmp_path: Path) -> None:
    bare, work = team_drive(tmp_path)
    first = remember(work, "A good one", SOURCE)
    anonymous = remember(work, "Releases ship on Thursdays")
    facts = [remember(work, f"Fact {n}", SOURCE) for n in range(3)]
    assert memgit("sync", "--batch", "10", cwd=work).returncode == 1
    assert set(head_entries(bare)) == {first}  # the batch fell back to one at a time
    memgit_ok("forget", anonymous, cwd=work)
    last = remember(work, "Fact 3", SOURCE)
    report = json.loads(memgit_ok("sync", "--batch", "10", "--json", cwd=work).stdout)
    assert set(head_entries(bare)) == {first, *facts, last}
    assert head_entries(work) == head_entries(bare)
    assert len(report["pushed"]) == 4 and report["held"][0]["held"] == [anonymous]
    assert len(server_subjects(bare)) == 6  # one server commit per commit that changed it


# --- what sync prints as it goes ------------------------------------------------------------


def test_progress_shows_on_a_terminal_only(tmp_path: Path) -> None:
    bare, work = plain_drive(tmp_path)
    remember(work, "First fact", SOURCE)
    remember(work, "Second fact", SOURCE)
    piped = memgit_ok("sync", cwd=work)
    assert piped.stderr == b"" and b"pushed 2 commits" in piped.stdout
    remember(work, "Third fact", SOURCE)
    remember(work, "Fourth fact", SOURCE)
    status, out, shown = memgit_on_terminal("sync", cwd=work)
    assert status == 0 and b"pushed 2 commits" in out
    assert b"[1/2] " in shown and b"[2/2] " in shown
    remember(work, "Fifth fact", SOURCE)
    status, out, shown = memgit_on_terminal("sync", "--json", cwd=work)
    assert status == 0 and json.loads(out)["pushed"] and shown == b""


# --- a checkout purged alone -----------------------------------------------------------------


def test_a_purge_in_a_checkout_is_not_undone_by_sync(tmp_path: Path) -> None:
    private = b"card PIN is 4321"
    bare, work = plain_drive(tmp_path)
    secret = remember(work, "My card PIN is 4321", SOURCE)
    kept = remember(work, "Builds run on Fridays", SOURCE)
    memgit_ok("sync", cwd=work)
    memgit_ok("purge", secret, "--yes", "--repo", str(work))
    later = remember(work, "Lunch is at noon", SOURCE)
    proc = memgit("sync", cwd=work)
    err = proc.stderr.decode()
    assert proc.returncode == 1, err
    assert "this checkout's history was purged" in err and "rewritten" not in err
    assert f"memgit purge {secret} --repo SERVER_DRIVE" in err
    # nothing came back: not the entry, not one object holding its text
    assert secret not in head_entries(work)
    assert not objects_containing(open_drive(work).git_dir, private)
    assert memgit("lint", cwd=work).returncode == 0
    assert set(head_entries(bare)) == {secret, kept}  # the server is as it was

    # the way out the hint names: purge the server drive, sync again
    memgit_ok("purge", secret, "--yes", "--repo", str(bare))
    memgit_ok("sync", cwd=work)
    assert set(head_entries(bare)) == {kept, later}
    assert head_entries(work) == head_entries(bare)
    assert not objects_containing(open_drive(work).git_dir, private)
    assert memgit("lint", cwd=work).returncode == 0


def test_a_purge_of_an_entry_the_server_never_had_needs_nothing_more(tmp_path: Path) -> None:
    bare, work = plain_drive(tmp_path)
    kept = remember(work, "Builds run on Fridays", SOURCE)
    memgit_ok("sync", cwd=work)
    secret = remember(work, "My card PIN is 4321", SOURCE)
    memgit_ok("purge", secret, "--yes", "--repo", str(work))
    memgit_ok("sync", cwd=work)
    assert set(head_entries(bare)) == {kept}
    assert memgit("lint", cwd=work).returncode == 0


# --- reading a refusal -------------------------------------------------------------------------


def test_a_refusal_is_read_as_the_hook_prints_it() -> None:
    """read_refusal parses the lines memgit's pre-receive prints (githooks.verdict.report),
    as git relays them (indentation kept by parse_push)."""
    from memgit.githooks.verdict import Finding, Verdict, report
    from memgit.policy.judge import WARNING, Violation
    from memgit.sync.client import parse_push
    from memgit.sync.refusal import read_refusal

    commit = "0" * 40
    found = [Violation("MG109", "notes.md", 3, "the entry names no agent"),
             Violation("MG201", "notes.txt", 0, "only .md files may be stored"),
             Violation("MG303", "notes.md", 1, "raw HTML"),
             Violation("MG403", "", 0, "line 1 of the commit message holds a credential"),
             Violation("MG610", "", 0, "a purge is running"),
             Violation("MG504", "MEMORY.md", 2, "omit .md", severity=WARNING)]
    verdict = Verdict([Finding(v, commit=commit) for v in found], {commit: "subject"})
    stderr = "".join(f"remote: {line}\n" for line in report(verdict))
    outcome = parse_push(1, f"!\t{commit}:refs/heads/main\t[remote rejected] (hook)\n",
                         stderr)
    assert outcome.status == "refused"
    assert "\n  notes.md:3: MG109 source-required: " in outcome.message
    tree = {"notes.md": "<b>Notes</b>\n\n- A fact [added: 2026-01-02; id: m-a]\n",
            "notes.txt": "text\n", "MEMORY.md": "# Memory\n"}
    refused = read_refusal(outcome.message, tree)
    assert refused.ids == {"m-a"}
    assert refused.paths == {"notes.txt", "notes.md"}  # a file, and a line that is no entry
    assert refused.commit == ("MG403",) and refused.push == ("MG610",)
    assert not refused.whole and not refused.fixable
