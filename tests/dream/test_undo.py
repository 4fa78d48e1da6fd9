"""memgit dream undo: the exact tree before the night, or a refusal naming what changed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memgit import state
from memgit.dream.observations import observe
from memgit.dream.run import dream
from memgit.dream.undo import undo
from memgit.errors import UndoRefusedError, UsageError
from memgit.git.repository import Drive, open_drive
from memgit.policy.dream_settings import DreamConfig
from memgit.policy.settings import Policy
from memgit.recall.read_path import recall
from memgit.state import dream as dream_runs
from memgit.write.writer import commit_facts
from tests.conftest import git, memgit, refused
from tests.dream_support import ChatServer, chat_server, make_dream_drive, tree_of


@pytest.fixture
def server() -> Iterator[ChatServer]:
    yield from chat_server()


@pytest.fixture
def path(new_drive: Any) -> Path:
    return make_dream_drive(new_drive)


def night(path: Path, server: ChatServer) -> tuple[Drive, str, str]:
    """A dream that edits, retires, prunes and adds a lesson in a new file."""
    drive = open_drive(path)
    turn = observe(drive, "Releases go out on Thursdays from now on", session="s1").id
    server.answer({
        "merges": [{"ids": ["tools-weekly-update", "dup-weekly"],
                    "text": "Joe sends his weekly update (Google Docs) every Friday"}],
        "contradictions": [{"ids": ["tools-slack", "tools-jira"], "keep": "tools-jira",
                            "text": "Tickets and chat both live in Jira (project LUM)"}],
        "lessons": [{"text": "Releases go out on Thursdays", "turns": [turn]}],
        "prunes": [{"id": "old-plant"}]})
    before = tree_of(path)
    outcome = dream(drive, Policy(), DreamConfig(model="openai", base_url=server.url,
                                                 model_name="m", prune=True, timeout=5))
    assert outcome.status == "applied", outcome.reason
    assert len(outcome.report["applied"]) == 4
    assert (path / "lessons.md").exists()
    return drive, outcome.day, before


def test_undo_restores_the_exact_tree_before_the_dream(path: Path,
                                                       server: ChatServer) -> None:
    drive, day, before = night(path, server)
    dream_commit = git("rev-parse", "HEAD", cwd=path).stdout.decode().strip()
    proc = memgit("dream", "undo", day, cwd=path)
    assert proc.returncode == 0, proc.stderr.decode()
    assert tree_of(path) == before
    assert git("rev-parse", "HEAD~1", cwd=path).stdout.decode().strip() == dream_commit
    subject = git("log", "-1", "--format=%s", cwd=path).stdout.decode().strip()
    assert subject == f"Undo dream {day} ({dream_commit[:12]})"
    assert git("status", "--porcelain", cwd=path).stdout == b""
    assert not (path / "lessons.md").exists()
    hits = recall(drive, "office plant watered Mondays", limit=1, count=False)
    assert [h.entry_id for h in hits] == ["old-plant"]  # the index follows the undo
    [run] = dream_runs.runs(state.connection(drive.git_dir))
    assert run.status == "undone"
    again = memgit("dream", "undo", day, cwd=path)
    assert again.returncode == 2 and b"no dream of" in again.stderr
    refused(again, "MG001")


def test_undo_keeps_what_was_written_since(path: Path, server: ChatServer) -> None:
    drive, day, before = night(path, server)
    later = commit_facts(drive, ["The staging cluster moved to Frankfurt"], message="later")
    assert later.status == "committed"
    done = undo(drive, Policy(), day)
    assert done.files == ["MEMORY.md", "dream.md", "lessons.md", "tools.md"]
    notes = (path / "notes.md").read_text()
    assert "The staging cluster moved to Frankfurt" in notes
    git("rm", "-q", "notes.md", cwd=path)
    memory = (path / "MEMORY.md").read_text().replace("- [[notes]]\n", "")
    (path / "MEMORY.md").write_text(memory)
    git("add", "MEMORY.md", cwd=path)
    git("commit", "-qm", "drop the later file", cwd=path)
    assert tree_of(path) == before  # everything else is as before the dream


@pytest.mark.parametrize(("change", "entry", "file"), [
    ("edit", "tools-weekly-update", "tools.md"),
    ("forget", "tools-jira", "tools.md"),
    ("lesson-edit", "lesson", "lessons.md"),
])
def test_undo_refuses_when_a_touched_line_changed_since(path: Path, server: ChatServer,
                                                        change: str, entry: str,
                                                        file: str) -> None:
    drive, day, _before = night(path, server)
    lesson = next(line for line in (path / "lessons.md").read_text().splitlines()
                  if line.startswith("- "))
    lesson_id = lesson.rsplit("id: ", 1)[1].rstrip("]")
    if change == "edit":
        commit_facts(drive, [], edits={entry: "Joe sends the weekly update on Thursdays"})
    elif change == "forget":
        commit_facts(drive, [], [entry])
    else:
        commit_facts(drive, [], edits={lesson_id: "Releases go out on Wednesdays"})
        entry = lesson_id
    head = git("rev-parse", "HEAD", cwd=path).stdout
    with pytest.raises(UndoRefusedError) as err:
        undo(drive, Policy(), day)
    assert entry in err.value.message and file in err.value.message
    assert git("rev-parse", "HEAD", cwd=path).stdout == head
    proc = memgit("dream", "undo", day, cwd=path)
    assert proc.returncode == 1 and b"MG031" in proc.stderr
    refused(proc, "MG031", status=1)


def test_undo_needs_a_date_and_a_night(path: Path) -> None:
    drive = open_drive(path)
    with pytest.raises(UsageError):
        undo(drive, Policy(), "yesterday")
    with pytest.raises(UsageError) as err:
        undo(drive, Policy(), "2020-01-01")
    assert "no dream of 2020-01-01" in err.value.message


def test_undo_refuses_to_remove_a_file_the_night_created_when_others_wrote_to_it(
        path: Path, server: ChatServer) -> None:
    drive, day, _before = night(path, server)
    from memgit.write.ops import NewFact

    later = commit_facts(drive, [NewFact("Hotfixes may ship on any day", topic="lessons")])
    assert later.status == "committed"
    with pytest.raises(UndoRefusedError) as err:
        undo(drive, Policy(), day)
    assert "file:lessons.md" in err.value.message and "file-removed" in err.value.message
    assert "Hotfixes may ship on any day" in (path / "lessons.md").read_text()
