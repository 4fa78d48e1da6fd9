"""The questions board: ask, answer, resolve; concurrent agents lose no line."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from memgit.errors import UsageError
from memgit.format import entries as fmt
from memgit.git.repository import open_drive
from memgit.policy.lint import lint_rev
from memgit.policy.settings import Policy
from memgit.recall.read_path import recall
from memgit.write.board import answer, ask, board, resolve
from memgit.write.writer import commit_facts
from tests.conftest import bare_drive, git, memgit, memgit_ok

CTX = multiprocessing.get_context("fork")


def test_ask_answer_resolve(tmp_path: Path) -> None:
    drive = bare_drive(tmp_path / "team.git", "Team")
    q1 = ask(drive, "When is the billing launch?", source="claude-code:session/9").added[0].id
    q2 = ask(drive, "Who owns search?").added[0].id
    a1 = answer(drive, q1, "On 2026-10-15").added[0].id
    a2 = answer(drive, q1, "Together with the website relaunch").added[0].id
    resolve(drive, q1)
    text = git("show", "main:questions.md", cwd=drive.git_dir).stdout.decode()
    lines = text.splitlines()
    assert lines[0] == "# Questions"
    entries = [(ln.content, e) for ln, e in fmt.parse_document("questions.md", text).entries()]
    assert [e.id for _c, e in entries] == [q1, a1, a2, q2]  # answers right under their question
    assert entries[0][1].meta["status"] == "resolved" and entries[0][1].meta["kind"] == "question"
    assert entries[1][0].startswith("  - On 2026-10-15 [")
    assert entries[1][1].meta["parent"] == q1 and entries[1][1].meta["kind"] == "answer"
    assert [(q.id, q.status, len(q.answers)) for q in board(drive)] == [
        (q1, "resolved", 2), (q2, "open", 0)]
    assert "questions" not in git("show", "main:MEMORY.md", cwd=drive.git_dir).stdout.decode()
    assert recall(drive, "billing launch relaunch search") == []  # the board is not memory
    fact = commit_facts(drive, ["The billing relaunch follows the search launch"]).added[0]
    hits = recall(drive, "billing launch relaunch search")  # the same words find memory
    assert [h.entry_id for h in hits] == [fact.id]
    assert lint_rev(drive, "main", Policy()) == []


def test_answer_or_resolve_an_unknown_question(tmp_path: Path) -> None:
    drive = bare_drive(tmp_path / "team.git", "Team")
    with pytest.raises(UsageError, match="no question"):
        answer(drive, "m-nope", "text")
    with pytest.raises(UsageError, match="no question"):
        resolve(drive, "m-nope")


def test_same_answer_to_two_questions_is_not_a_duplicate(tmp_path: Path) -> None:
    drive = bare_drive(tmp_path / "team.git", "Team")
    q1 = ask(drive, "Is staging up?").added[0].id
    q2 = ask(drive, "Is production up?").added[0].id
    assert answer(drive, q1, "Yes").status == "committed"
    assert answer(drive, q2, "Yes").status == "committed"
    assert ask(drive, "is STAGING up?").skipped[0].reason == "duplicate"


def _asker(path: str, worker: int, count: int) -> None:
    drive = open_drive(path)
    for i in range(count):
        assert ask(drive, f"Question {i} from asker {worker}?").status == "committed"


def _answerer(path: str, worker: int, count: int, questions: list[str]) -> None:
    drive = open_drive(path)
    for i in range(count):
        target = questions[(i + worker) % len(questions)]
        assert answer(drive, target, f"Answer {i} from answerer {worker}").status == "committed"


def test_concurrent_askers_and_answerers_lose_no_line(tmp_path: Path) -> None:
    drive = bare_drive(tmp_path / "team.git", "Team")
    seeds = [ask(drive, f"Seed question {i}?").added[0].id for i in range(3)]
    procs = [CTX.Process(target=_asker, args=(str(drive.git_dir), w, 12)) for w in range(2)]
    procs += [CTX.Process(target=_answerer, args=(str(drive.git_dir), w, 12, seeds))
              for w in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    assert [p.exitcode for p in procs] == [0] * 4
    questions = board(drive)
    texts = {q.text for q in questions}
    assert {f"Question {i} from asker {w}?" for w in range(2) for i in range(12)} <= texts
    answers = [(q.id, t) for q in questions for _a, t in q.answers]
    assert len(answers) == 24
    for w in range(2):
        for i in range(12):
            assert (seeds[(i + w) % 3], f"Answer {i} from answerer {w}") in answers


def test_cli_board(tmp_path: Path) -> None:
    drive = bare_drive(tmp_path / "team.git", "Team")
    proc = memgit("-C", str(drive.git_dir), "ask", "Who reviews vendors?")
    assert proc.returncode == 0, proc.stderr
    qid = proc.stdout.decode().split("+ ")[1].split()[0]
    assert memgit("-C", str(drive.git_dir), "answer", qid, "Ola does").returncode == 0
    assert memgit("-C", str(drive.git_dir), "resolve", qid).returncode == 0
    listed = memgit_ok("-C", str(drive.git_dir), "ask", "--list", "--all").stdout.decode()
    assert f"{qid} [resolved] Who reviews vendors?" in listed and "Ola does" in listed
    assert memgit_ok("-C", str(drive.git_dir), "ask", "--list").stdout == b""  # none open
