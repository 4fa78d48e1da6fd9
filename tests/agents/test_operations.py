"""AgentDrive: the operations behind memgit mcp, on real drives, in process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memgit.agents.operations import AgentDrive
from memgit.errors import NotADriveError, UsageError
from tests.conftest import git, memgit

# A synthetic AWS access key id of the real shape (not the documentation's example key).
FAKE_KEY = "AKIAZ3MBQX7TQW4RWNB2"


@pytest.fixture
def agent(new_drive) -> AgentDrive:
    return AgentDrive(str(new_drive({"people.md": "# People\n"})))


def test_remember_says_what_was_committed_and_skipped(agent: AgentDrive) -> None:
    done = agent.remember("Joe leads the product team", "people", "https://example.com/s/1")
    assert done["status"] == "committed" and len(done["commit"]) == 40
    assert done["added"][0]["topic"] == "people.md"
    again = agent.remember("Joe leads the product team", "people")
    assert again["status"] == "unchanged"
    assert again["skipped"][0]["reason"] == "duplicate"
    assert done["added"][0]["id"] in again["skipped"][0]["detail"]
    secret = agent.remember(f"deploy with key {FAKE_KEY} today")
    assert secret["skipped"][0]["reason"] == "credential"
    assert "AWS" in secret["skipped"][0]["detail"]
    assert FAKE_KEY not in json.dumps(secret)
    source = agent.remember("A fact", source="javascript:alert(1)")
    assert source["skipped"][0]["reason"] == "source"


def test_edit_forget_and_recall(agent: AgentDrive) -> None:
    entry = agent.remember("The payments launch is on 2026-03-01", "projects/payments")
    entry_id = entry["added"][0]["id"]
    found = agent.recall("payments launch")
    assert found["count"] == 1 and found["hits"][0]["id"] == entry_id
    assert found["hits"][0]["topic"] == "projects/payments.md"
    assert agent.edit(entry_id, "The payments launch moved to 2026-04-01")["edited"] == [entry_id]
    assert agent.recall("moved")["hits"][0]["text"].endswith("2026-04-01")
    assert agent.forget(entry_id)["retired"] == [entry_id]
    assert agent.recall("payments")["count"] == 0
    unknown = agent.forget("m-01jd3xk8q7c9v2n4r6t8w0y1z9")
    assert unknown["status"] == "unchanged" and unknown["skipped"]


def test_every_call_sees_other_writers(agent: AgentDrive) -> None:
    agent.recall("warm")  # opens the drive and the index
    proc = memgit("-C", str(agent.path), "remember", "Ana owns the billing runbook")
    assert proc.returncode == 0, proc.stderr.decode()
    assert agent.recall("billing runbook")["count"] == 1
    assert agent.status()["head"] == git("rev-parse", "HEAD", cwd=agent.path).stdout.decode(
        ).strip()


def test_the_questions_board(agent: AgentDrive) -> None:
    asked = agent.ask("Who owns billing?")
    qid = asked["question_id"]
    assert asked["status"] == "committed" and qid
    assert agent.answer(qid, "Ana does")["status"] == "committed"
    board = agent.questions()
    assert board["count"] == 1 and board["questions"][0]["answers"][0]["text"] == "Ana does"
    assert agent.resolve(qid)["updated"] == [qid]
    assert agent.questions()["count"] == 0
    assert agent.questions(include_resolved=True)["questions"][0]["status"] == "resolved"
    with pytest.raises(UsageError) as err:
        agent.answer("m-01jd3xk8q7c9v2n4r6t8w0y1z9", "x")
    assert err.value.hint


def test_status_and_context(agent: AgentDrive) -> None:
    status = agent.status()
    assert status["bare"] is False and status["branch"] == "main"
    assert status["pending_writes"] == 0 and status["last_sync"] is None
    agent.remember("Joe leads the product team", "people")
    packet = agent.context(500)
    assert packet["tokens"] <= 500 and packet["entries"][0]["text"].startswith("Joe")
    assert agent.memory_md().startswith("# Memory")


def test_bad_input_and_folders_that_are_not_drives(agent: AgentDrive, tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        agent.remember("   ")
    with pytest.raises(UsageError):
        agent.recall("x", limit=0)
    with pytest.raises(NotADriveError) as err:
        AgentDrive(str(tmp_path)).status()
    assert "memgit init" in err.value.hint or "-C PATH" in err.value.hint
    code = tmp_path / "code"
    code.mkdir()
    git("init", "-q", cwd=code)
    (code / "main.py").write_text("print('hi')\n")
    git("add", "-A", cwd=code)
    git("commit", "-qm", "code", cwd=code)
    with pytest.raises(NotADriveError) as err:
        AgentDrive(str(code)).remember("a fact")
    assert "MEMORY.md" in err.value.message
    assert git("rev-list", "--count", "HEAD", cwd=code).stdout.strip() == b"1"
