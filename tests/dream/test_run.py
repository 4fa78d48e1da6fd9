"""memgit dream end to end: dry run, the one commit, the report, events, --due and the lease."""

from __future__ import annotations

import datetime as _dt
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memgit import state
from memgit.dream.observations import observe
from memgit.dream.run import dream
from memgit.git.repository import Drive, open_drive
from memgit.policy.dream_settings import DreamConfig
from memgit.policy.settings import Policy
from memgit.recall.read_path import recall
from memgit.state import dream as dream_runs
from memgit.state import events
from tests.conftest import git, memgit, memgit_ok, refused
from tests.dream_support import (
    ChatServer,
    Reply,
    chat_server,
    error_body,
    make_dream_drive,
    refs_of,
)

ALWAYS = (0, 24 * 60)
WEEKLY = "Joe writes his weekly update in Google Docs and sends it on Fridays"


def at(hour: int, minute: int = 0) -> _dt.datetime:
    return _dt.datetime.combine(_dt.date.today(), _dt.time(hour, minute), tzinfo=_dt.UTC)


@pytest.fixture
def path(new_drive: Any) -> Path:
    return make_dream_drive(new_drive)


@pytest.fixture
def drive(path: Path) -> Drive:
    return open_drive(path)


@pytest.fixture
def server() -> Iterator[ChatServer]:
    yield from chat_server()


def state_rows(path: Path) -> list[str]:
    """Every row of the state database, as SQL text."""
    conn = sqlite3.connect(state.state_path(path / ".git"))
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def worktree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(path).parts}


def subject_and_body(path: Path) -> tuple[str, str]:
    out = git("log", "-1", "--format=%s%x00%b", cwd=path).stdout.decode()
    subject, _, body = out.partition("\x00")
    return subject, body


def test_dry_run_prints_the_diff_and_changes_nothing(path: Path) -> None:
    observe(open_drive(path), "The weekly update moves to Thursdays", session="s1")
    assert memgit("index", cwd=path).returncode == 0
    before = (refs_of(path), worktree(path), state_rows(path))
    proc = memgit("dream", "--dry-run", cwd=path)
    out = proc.stdout.decode()
    assert proc.returncode == 0, proc.stderr.decode()
    assert "--- a/dream.md\n+++ b/dream.md\n" in out
    assert f"\n-- {WEEKLY} [source: claude-code:session/90" in out
    assert "dry run: nothing was changed" in out and "applied merge #1" in out
    assert (refs_of(path), worktree(path), state_rows(path)) == before
    assert git("status", "--porcelain", cwd=path).stdout == b""


def test_a_dream_is_one_commit_with_ids_and_no_text_and_a_stored_report(drive: Drive,
                                                                         path: Path) -> None:
    head = git("rev-parse", "HEAD", cwd=path).stdout.decode().strip()
    outcome = dream(drive, Policy(), DreamConfig(), no_model=True)
    assert outcome.status == "applied", outcome.reason
    assert git("rev-parse", "HEAD~1", cwd=path).stdout.decode().strip() == head
    subject, body = subject_and_body(path)
    assert subject == f"Dream {outcome.day}"
    assert "Retired: dup-weekly" in body and "Joe" not in body and "Google" not in body
    assert WEEKLY in (path / "tools.md").read_text()
    assert "dup-weekly" not in (path / "dream.md").read_text()
    assert git("status", "--porcelain", cwd=path).stdout == b""  # the checkout follows
    [run] = dream_runs.runs(state.connection(drive.git_dir))
    assert (run.status, run.commit, run.proposer) == ("applied", outcome.commit, "rules")
    merge = next(a for a in run.report["applied"] if "dup-weekly" in a["ids"])
    assert {c["id"]: (c["before"], c["after"]) for c in merge["changes"]} == {
        "tools-weekly-update": (WEEKLY, WEEKLY), "dup-weekly": (WEEKLY, None)}
    assert events.counts(drive.git_dir)["dream_applied"] == 1
    again = dream(drive, Policy(), DreamConfig(), no_model=True)
    assert again.status == "no_changes"
    assert events.counts(drive.git_dir)["dream_no_changes"] == 1
    assert memgit("lint", cwd=path).returncode == 0


def test_prunes_only_with_prune_true(new_drive: Any) -> None:
    from tests.dream_support import days_ago

    path = new_drive({"notes.md": "# Notes\n\n"
                      f"- The office plant is watered on Mondays [source: imported:unknown; "
                      f"added: {days_ago(400)}; id: m-plant]\n"
                      f"- The badge reader was replaced [source: imported:unknown; "
                      f"added: {days_ago(45)}; id: m-badge]\n"
                      f"- The coffee machine is on floor 2 [source: imported:unknown; "
                      f"added: {days_ago(10)}; id: m-coffee]\n"})
    drive = open_drive(path)
    recall(drive, "badge reader replaced", limit=1)
    assert dream(drive, Policy(), DreamConfig(), no_model=True).status == "no_changes"
    outcome = dream(drive, Policy(), DreamConfig(prune=True), no_model=True)
    assert outcome.status == "applied"
    assert [a["ids"] for a in outcome.report["applied"]] == [["m-plant"]]
    text = (path / "notes.md").read_text()
    assert "m-plant" not in text and "m-badge" in text and "m-coffee" in text


def test_due_runs_only_inside_the_window(drive: Drive) -> None:
    outside = dream(drive, Policy(), DreamConfig(), due=True, no_model=True, now=at(12))
    assert outside.status == "skipped" and "outside the dream window 02:00-06:00" in \
        outside.reason
    assert dream_runs.runs(state.connection(drive.git_dir)) == []
    inside = dream(drive, Policy(), DreamConfig(), due=True, no_model=True, now=at(3))
    assert inside.status == "applied"
    wrapped = DreamConfig(window=(22 * 60, 2 * 60))
    assert dream(drive, Policy(), wrapped, due=True, no_model=True, now=at(21)).status \
        == "skipped"


def test_due_runs_at_most_once_a_day(drive: Drive) -> None:
    config = DreamConfig(window=ALWAYS)
    assert dream(drive, Policy(), config, due=True, no_model=True).status == "applied"
    second = dream(drive, Policy(), config, due=True, no_model=True)
    assert second.status == "skipped" and "already dreamed" in second.reason
    assert len(dream_runs.runs(state.connection(drive.git_dir))) == 1


def test_a_live_lease_blocks_and_a_stale_or_orphaned_one_is_taken_over(drive: Drive) -> None:
    conn = state.connection(drive.git_dir)
    config = DreamConfig(window=ALWAYS)
    held = dream_runs.take_lease(conn, "2000-01-01", "manual", _dt.datetime.now(_dt.UTC), due=False)
    assert isinstance(held, dream_runs.Lease)  # held by this (live) process
    busy = dream(drive, Policy(), config, due=True, no_model=True)
    assert busy.status == "skipped" and "holds the lease" in busy.reason
    with state.immediate(conn):  # the holder's heartbeat is older than an hour
        conn.execute("UPDATE dream_runs SET heartbeat = '2000-01-01T00:00:00Z'")
    assert dream(drive, Policy(), config, due=True, no_model=True).status == "applied"
    first = dream_runs.runs(conn, day="2000-01-01")[0]
    assert first.status == "failed" and "lease expired" in first.error
    # a fresh lease whose process is gone (a pid that cannot exist) is taken over at once
    with state.immediate(conn):
        conn.execute("INSERT INTO dream_runs (day, trigger, status, token, pid, host, started, "
                     "heartbeat) SELECT '2000-01-02', 'due', 'running', 'x', 4194305, host, "
                     "started, ? FROM dream_runs LIMIT 1", (state.utc_now(),))
    assert dream(drive, Policy(), config, no_model=True).status == "no_changes"
    assert "process is gone" in dream_runs.runs(conn, day="2000-01-02")[0].error


def test_a_failing_model_fails_the_night_three_times_then_waits(drive: Drive, path: Path,
                                                               server: ChatServer) -> None:
    config = DreamConfig(model="openai", base_url=server.url, model_name="m", timeout=5,
                         window=ALWAYS)
    head = refs_of(path)
    for _ in range(3):
        server.script.append(Reply(503, error_body("The server is overloaded", "server_error",
                                                   None)))
        outcome = dream(drive, Policy(), config, due=True)
        assert outcome.status == "failed" and "HTTP 503" in outcome.reason
    fourth = dream(drive, Policy(), config, due=True)
    assert fourth.status == "skipped" and "3 failed runs" in fourth.reason
    assert len(server.requests) == 3
    assert refs_of(path) == head
    assert events.counts(drive.git_dir)["dream_failed"] == 3
    assert all(r.status == "failed" for r in dream_runs.runs(state.connection(drive.git_dir)))


def test_a_model_proposal_is_checked_then_applied(drive: Drive, path: Path,
                                                  server: ChatServer) -> None:
    turn = observe(drive, "From now on releases go out on Thursdays", session="s9").id
    assert turn is not None
    server.answer({
        "merges": [{"ids": ["tools-weekly-update", "dup-weekly"],
                    "text": "Joe sends his weekly update (Google Docs) every Friday"}],
        "contradictions": [{"ids": ["tools-slack", "tools-jira"], "keep": "tools-nope"}],
        "lessons": [{"text": "Releases go out on Thursdays", "turns": [turn]}],
        "prunes": [{"id": "old-plant", "reason": "stale"}]})
    config = DreamConfig(model="openai", base_url=server.url, model_name="qwen", timeout=5)
    outcome = dream(drive, Policy(), config)
    assert outcome.status == "applied", outcome.reason
    sent = json.loads(server.requests[0].body["messages"][1]["content"])
    assert [t["id"] for t in sent["turns"]] == [turn]
    assert {e["id"] for e in sent["entries"]} >= {"dup-weekly", "old-plant"}
    rejected = {(r["kind"], r["check"]) for r in outcome.report["rejected"]}
    assert rejected == {("contradiction", "keep-not-listed"), ("prune", "prune-off")}
    tools = (path / "tools.md").read_text()
    assert "- Joe sends his weekly update (Google Docs) every Friday [source: " \
           "claude-code:session/68; added: 2026-05-11; id: tools-weekly-update]" in tools
    lessons = (path / "lessons.md").read_text()
    assert f"- Releases go out on Thursdays [source: memgit:observation/{turn}; " in lessons
    assert "[[lessons]]" in (path / "MEMORY.md").read_text()
    assert "old-plant" in (path / "dream.md").read_text()
    assert outcome.report["proposer"] == "openai:qwen"


def test_an_unusable_answer_fails_the_run_and_changes_nothing(drive: Drive, path: Path,
                                                              server: ChatServer) -> None:
    server.answer({"summary": "All good."})
    head = refs_of(path)
    outcome = dream(drive, Policy(), DreamConfig(model="openai", base_url=server.url,
                                                 model_name="m", timeout=5))
    assert outcome.status == "failed" and "none of the keys" in outcome.reason
    assert refs_of(path) == head


@pytest.mark.slow
def test_the_command_line(path: Path, server: ChatServer) -> None:
    (path / ".git" / "memgit.yaml").write_text(
        "timezone: UTC\ndream:\n  window: '00:00-24:00'\n  observations_days: 7\n")
    proc = memgit("dream", "--due", "--json", "--no-model", cwd=path)
    assert proc.returncode == 0, proc.stderr.decode()
    outcome = json.loads(proc.stdout)
    assert outcome["status"] == "applied" and outcome["report"]["counts"]["merge"] >= 1
    again = memgit("dream", "--due", cwd=path)
    assert again.returncode == 0 and b"not run: already dreamed" in again.stdout
    server.script.append(Reply(500, error_body("boom", "server_error", None)))
    failed = memgit("dream", "--base-url", server.url, "--model-name", "m", cwd=path)
    assert failed.returncode == 2 and b"HTTP 500" in failed.stderr
    first, hint = failed.stderr.decode().splitlines()
    assert first.startswith("memgit: error MG030: dream ") and " failed: http://127.0.0.1:" in first
    assert hint.startswith("  hint: ") and "dream.base_url" in hint
    unreachable = "http://127.0.0.1:9/v1"  # port 9 (discard): nothing listens here
    as_json = memgit("dream", "--json", "--base-url", unreachable, "--model-name", "m", cwd=path)
    shown = json.loads(as_json.stdout)
    assert as_json.returncode == 2 and shown["status"] == "failed" and shown["code"] == "MG030"
    assert "cannot reach" in shown["reason"] and shown["hint"] and not as_json.stderr
    status = memgit_ok("dream", "status", "--json", cwd=path)
    runs = json.loads(status.stdout)
    assert [r["status"] for r in runs] == ["failed", "failed", "applied"]
    assert runs[0]["proposer"] == "openai:m"
    text = memgit_ok("dream", "status", cwd=path).stdout.decode()
    assert "applied" in text and "failed" in text
    metrics = memgit_ok("metrics", cwd=path).stdout.decode()
    assert 'event="dream_applied"} 1' in metrics and 'event="dream_failed"} 2' in metrics


def test_model_names_the_plugin_as_the_spec_writes_it(path: Path) -> None:
    """`memgit dream [--due] [--model PLUGIN]` (docs/spec.md section 3): --model picks the
    plugin over dream.model; an unknown one, or --model with --no-model, is refused."""
    unknown = memgit("dream", "--model", "nosuch", "--dry-run", cwd=path)
    assert unknown.returncode == 2 and b"MG012" in unknown.stderr
    assert b"installed model plugins: openai" in unknown.stderr
    both = memgit("dream", "--model", "openai", "--no-model", cwd=path)
    assert both.returncode == 2 and b"MG001" in both.stderr
    # the openai plugin was chosen (not the rules): it asks for its endpoint
    chosen = memgit("dream", "--model", "openai", "--dry-run", cwd=path)
    assert chosen.returncode == 2 and b"dream.base_url is not set" in chosen.stderr


def test_a_bad_dream_section_is_a_policy_error(path: Path) -> None:
    (path / ".git" / "memgit.yaml").write_text("dream:\n  window: '2-6'\n  promt: x\n")
    proc = memgit("dream", "--dry-run", cwd=path)
    assert proc.returncode == 2 and b"MG003" in proc.stderr and b"promt" in proc.stderr
    (path / ".git" / "memgit.yaml").write_text("dream:\n  window: 'always'\n")
    proc = memgit("lint", cwd=path)
    assert proc.returncode == 2 and b"dream.window must be HH:MM-HH:MM" in proc.stderr
    refused(proc, "MG003")


