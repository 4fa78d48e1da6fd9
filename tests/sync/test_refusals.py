"""A commit the server refuses, and the way out its hint names (docs/sync.md, "A refused
commit"); what sync prints on a terminal and without one; a checkout purged alone.

Real bare server drives made by ``memgit init --bare`` (memgit's pre-receive hook),
checkouts made by ``memgit clone``, the real ``memgit`` command line; no mocks.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import git, memgit, memgit_ok, memgit_on_terminal

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


# --- what sync prints as it goes ------------------------------------------------------------


def test_progress_shows_on_a_terminal_only(tmp_path: Path) -> None:
    bare = tmp_path / "drive.git"
    memgit_ok("init", "--bare", str(bare))
    work = tmp_path / "work"
    memgit_ok("clone", bare.as_uri(), str(work))
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
