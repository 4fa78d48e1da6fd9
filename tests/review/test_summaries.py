"""What memgit approve and reject say they did: each entry once, under what happened to it
(the writer lists an id per operation, and one approval or rejection is several), in the
text and in the JSON. The README's team drive, the real command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import git, memgit_ok
from tests.review.support import team_drive


def _propose(path: Path, text: str) -> str:
    out = memgit_ok("-C", str(path), "remember", text, "--topic", "decisions",
                    "--source", "codex:session/7", "--json").stdout
    pid: str = json.loads(out)["proposed"][0]
    return pid


def _run(path: Path, *args: str) -> tuple[list[str], dict[str, Any]]:
    """The text lines of a command and its JSON, each run on the state before it (git
    reset undoes each run)."""
    head = git("rev-parse", "HEAD", cwd=path).stdout.decode().strip()
    text = memgit_ok("-C", str(path), *args).stdout.decode().splitlines()
    git("reset", "-q", "--hard", head, cwd=path)
    result: dict[str, Any] = json.loads(memgit_ok("-C", str(path), *args, "--json").stdout)
    git("reset", "-q", "--hard", head, cwd=path)
    return text, result


def _owner_writes(path: Path, text: str) -> str:
    git("config", "user.email", "owner@people.example", cwd=path)  # the owner writes
    out = memgit_ok("-C", str(path), "remember", text, "--topic", "decisions",
                    "--source", "https://example.com/adr/3", "--json").stdout
    git("config", "user.email", "agent@example.com", cwd=path)  # an agent's checkout again
    entry: str = json.loads(out)["added"][0]["id"]
    return entry


def _summary(lines: list[str]) -> str:
    return lines[0].split(": ", 1)[1]


def test_approve_with_a_new_text_says_edited_once(new_drive: Any) -> None:
    path = team_drive(new_drive)
    pid = _propose(path, "Releases are frozen in December")
    lines, result = _run(path, "approve", pid, "--text", "Releases are frozen in January")
    assert _summary(lines) == "edited 1" and lines[1:] == [f"  ~ {pid}"]
    assert (result["edited"], result["updated"]) == ([pid], [])


def test_approve_of_an_add_and_of_an_edit(new_drive: Any) -> None:
    path = team_drive(new_drive)
    pid = _propose(path, "Design reviews happen on Thursdays")
    lines, result = _run(path, "approve", pid)
    assert _summary(lines) == "updated 1" and result["updated"] == [pid]
    old = _owner_writes(path, "Payments use PostgreSQL 15")
    new = json.loads(memgit_ok("-C", str(path), "edit", old, "Payments use PostgreSQL 16",
                               "--json").stdout)["proposed"][0]
    lines, result = _run(path, "approve", new)
    assert _summary(lines) == "retired 1, updated 1"
    assert lines[1:] == [f"  - {old}", f"  ~ {new}"]
    assert (result["retired"], result["updated"]) == ([old], [new])


def test_reject_says_updated_once_per_proposal(new_drive: Any) -> None:
    path = team_drive(new_drive)
    first = _propose(path, "Every service moves to Kubernetes next week")
    second = _propose(path, "Every service moves to Nomad next week")
    lines, result = _run(path, "reject", first, "--reason", "not agreed")
    assert _summary(lines) == "updated 1" and lines[1:] == [f"  ~ {first}"]
    assert result["updated"] == [first]
    lines, result = _run(path, "reject", first, second, "--reason", "not agreed")
    assert _summary(lines) == "updated 2" and result["updated"] == [first, second]
    kept = _owner_writes(path, "Payments use PostgreSQL 16")
    assert json.loads(memgit_ok("-C", str(path), "forget", kept, "--json").stdout
                      )["proposed"] == [kept]
    lines, result = _run(path, "reject", kept, "--reason", "still true")
    assert _summary(lines) == "updated 1" and lines[1:] == [f"  ~ {kept}"]
    assert result["updated"] == [kept]
