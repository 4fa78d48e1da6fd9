"""memgit observe: limits, secret refusal, incognito, never in the tree, retention."""

from __future__ import annotations

import datetime as _dt
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from memgit import state
from memgit.dream.observations import MAX_CHARS, apply_retention, observe
from memgit.dream.run import dream
from memgit.errors import RefusedError, UsageError
from memgit.git.repository import open_drive
from memgit.policy.dream_settings import DreamConfig
from memgit.policy.settings import Policy
from memgit.state import observations
from tests.conftest import git, memgit, refused

# Synthetic credentials in the shapes the scanner knows (none is real).
AWS_KEY = "AKIA" + "Z7QW3RT5YU8IO2PL"
PRIVATE_KEY = "-----BEGIN RSA PRIVATE KEY-----"


@pytest.fixture
def path(new_drive: Any) -> Path:
    return new_drive({"notes.md": "# Notes\n\n- A fact [source: imported:unknown; id: m-a]\n"})


def turns(path: Path) -> list[tuple[str, str, str, str]]:
    if not state.state_path(path / ".git").exists():
        return []  # nothing was ever stored: not even the database was created
    conn = sqlite3.connect(state.state_path(path / ".git"))
    try:
        return conn.execute("SELECT turn_id, session, role, text FROM observations "
                            "ORDER BY seq").fetchall()
    finally:
        conn.close()


def test_a_turn_is_stored_in_the_git_directory_with_a_stable_id(path: Path) -> None:
    tree = git("rev-parse", "HEAD^{tree}", cwd=path).stdout
    proc = memgit("observe", "--session", "sess-1", "--role", "assistant",
                  "Deploys happen on Tuesdays", cwd=path)
    assert proc.returncode == 0, proc.stderr.decode()
    turn_id = proc.stdout.decode().strip()
    assert turn_id.startswith("t-") and len(turn_id) == 28
    assert turns(path) == [(turn_id, "sess-1", "assistant", "Deploys happen on Tuesdays")]
    assert git("status", "--porcelain", "--ignored", cwd=path).stdout == b""
    assert git("rev-parse", "HEAD^{tree}", cwd=path).stdout == tree
    snap_turns = observations.recent(state.connection(open_drive(path).git_dir),
                                    _dt.datetime.now(_dt.UTC) - _dt.timedelta(hours=1), 80)
    assert [t.id for t in snap_turns] == [turn_id]  # the id the proposer will cite


def test_stdin_and_the_600_character_limit(path: Path) -> None:
    text = "word " * 300
    proc = memgit("observe", "--json", "-", cwd=path, input=text.encode())
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["stored"] and result["truncated"] and result["chars"] <= MAX_CHARS
    [(_id, _s, role, kept)] = turns(path)
    assert role == "user" and len(kept) <= MAX_CHARS and text.startswith(kept)
    human = memgit("observe", "x" * 700, cwd=path)
    assert human.returncode == 0 and b"cut to 600 characters" in human.stderr
    assert len(turns(path)) == 2  # stored, cut


def test_the_form_the_agent_hooks_run(path: Path, tmp_path: Path) -> None:
    """``memgit -C DRIVE observe --session ID --role assistant -`` with the turn on stdin:
    what the agent hooks run after ``memgit observe --help`` succeeds (a turn of up to
    4000 characters, several lines, a Claude Code session id)."""
    assert memgit("observe", "--help", cwd=tmp_path).returncode == 0
    session = "0f3c5a52-8f0e-4d7a-9d31-4b2f7f0d9a11"
    text = "Launch moved to March.\n\n" + "The rollout notes follow. " * 160
    proc = memgit("-C", str(path), "observe", "--session", session, "--role", "assistant",
                  "-", cwd=tmp_path, input=text[:4000].encode())
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode().strip().startswith("t-")
    assert b"cut to 600 characters" in proc.stderr
    [(turn_id, got_session, role, kept)] = turns(path)
    assert turn_id == proc.stdout.decode().strip() and got_session == session
    assert role == "assistant" and kept.startswith("Launch moved to March.\n\nThe rollout")
    assert len(kept) <= MAX_CHARS


@pytest.mark.parametrize("secret", [f"my key is {AWS_KEY} ok", f"{PRIVATE_KEY}\nMIIEow"])
def test_a_turn_with_a_credential_is_refused_by_kind(path: Path, secret: str) -> None:
    proc = memgit("observe", "--", secret, cwd=path)
    assert proc.returncode == 1
    err = proc.stderr.decode()
    assert "MG007" in err and "possible credential" in err
    assert AWS_KEY not in err and "BEGIN RSA" not in err
    assert turns(path) == []


def test_a_credential_past_the_cut_is_still_refused(path: Path) -> None:
    with pytest.raises(RefusedError):
        observe(open_drive(path), "x" * 590 + " " + AWS_KEY)
    assert turns(path) == []


def test_incognito_stores_nothing(path: Path) -> None:
    proc = memgit("observe", "--incognito", f"secret plans and {AWS_KEY}", cwd=path)
    assert proc.returncode == 0 and b"nothing stored" in proc.stdout
    assert turns(path) == []
    stored = [p.read_bytes() for p in (path / ".git").rglob("*") if p.is_file()]
    assert not any(AWS_KEY.encode() in data for data in stored)


@pytest.mark.parametrize(("args", "expected"), [
    (["   "], "the turn is empty"),
    (["--session", "bad session!", "hi"], "session id"),
])
def test_bad_input_is_a_usage_error(path: Path, args: list[str], expected: str) -> None:
    proc = memgit("observe", *args, cwd=path)
    assert proc.returncode == 2 and expected.encode() in proc.stderr
    refused(proc, "MG001")
    assert turns(path) == []


def test_unknown_role_is_refused(path: Path) -> None:
    proc = memgit("observe", "--role", "system", "hi", cwd=path)
    assert proc.returncode == 2
    assert b"Invalid value for '--role'" in proc.stderr  # click's usage error (no MG code)
    with pytest.raises(UsageError):
        observe(open_drive(path), "hi", role="system")


def test_retention_by_maintain_and_by_the_next_dream(path: Path) -> None:
    drive = open_drive(path)
    now = _dt.datetime.now(_dt.UTC)
    old = observe(drive, "an old turn", now=now - _dt.timedelta(days=8)).id
    observe(drive, "a recent turn", now=now - _dt.timedelta(days=2))
    proc = memgit("maintain", "--json", "--step", "observations", cwd=path)
    assert proc.returncode == 0, proc.stderr
    [step] = json.loads(proc.stdout)["steps"]  # maintain reports each step (maintenance.py)
    assert {k: step[k] for k in ("observations_deleted", "observations_days")} == \
        {"observations_deleted": 1, "observations_days": 7}
    assert [t[3] for t in turns(path)] == ["a recent turn"] and old not in str(turns(path))
    assert apply_retention(drive, 7) == 0
    observe(drive, "another old turn", now=now - _dt.timedelta(days=2))
    dream(drive, Policy(), DreamConfig(observations_days=1), no_model=True)
    assert turns(path) == []
    # a dry run deletes nothing
    observe(drive, "old again", now=now - _dt.timedelta(days=3))
    dream(drive, Policy(), DreamConfig(observations_days=1), no_model=True, dry_run=True)
    assert [t[3] for t in turns(path)] == ["old again"]


def test_deleted_turns_leave_no_bytes_in_the_database(path: Path) -> None:
    drive = open_drive(path)
    marker = "zebra-quokka-marker-7731"
    observe(drive, f"remember {marker} please",
            now=_dt.datetime.now(_dt.UTC) - _dt.timedelta(days=30))
    assert apply_retention(drive, 7) == 1
    state.close_connections()
    folder = path / ".git" / "memgit"
    files = [p for p in folder.iterdir() if p.is_file()]
    assert folder / "state.sqlite" in files and (folder / "state.sqlite").stat().st_size > 0
    assert all(marker.encode() not in p.read_bytes() for p in files)
