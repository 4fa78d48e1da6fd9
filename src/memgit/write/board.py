"""The questions board: ``questions.md`` of a (usually shared) drive.

A question is an entry ``[...; kind: question; status: open]``; an answer is an entry
``[...; kind: answer; parent: QID]`` written, indented, after its question and the answers
before it; resolving sets ``status: resolved``. Every change goes through the writer, which
re-reads the head and retries on conflict, so concurrent askers and answerers never lose
each other's lines. Board entries are never indexed for recall (docs/spec.md, section 3).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memgit.errors import UsageError
from memgit.format import entries as fmt
from memgit.git.repository import Drive, file_at, missing_branch, read_blob, ref_target
from memgit.policy.settings import Policy, drive_policy
from memgit.write.ops import NewFact, Skipped, WriteOp, WriteResult, prepare_add, today
from memgit.write.writer import apply_write_ops

BOARD = fmt.QUESTIONS_FILE
ANSWER_INDENT = "  "


@dataclass
class Question:
    id: str
    text: str
    status: str
    line: int
    answers: list[tuple[str, str]] = field(default_factory=list)  # (id, text)


def _policy(drive: Drive, policy: Policy | None) -> Policy:
    return policy or drive_policy(drive)


def board(drive: Drive, policy: Policy | None = None) -> list[Question]:
    """The questions at the branch head, in file order, with their answers."""
    policy = _policy(drive, policy)
    head = ref_target(drive, policy.branch_ref)
    if head is None:
        raise missing_branch(drive, policy.branch_ref)
    found = file_at(drive, str(drive.repo[head].tree_id), BOARD)  # type: ignore[attr-defined]
    if found is None:
        return []
    doc = fmt.parse_document(BOARD, read_blob(drive, found.oid).decode("utf-8", "replace"))
    questions: dict[str, Question] = {}
    for line, entry in doc.entries():
        meta = entry.meta
        if meta.get("kind") == "question":
            questions[entry.id] = Question(entry.id, entry.text, meta.get("status", "open"),
                                           line.number)
        elif meta.get("kind") == "answer" and meta.get("parent") in questions:
            questions[meta["parent"]].answers.append((entry.id, entry.text))
    return list(questions.values())


def _single(drive: Drive, op: WriteOp | Skipped, message: str, policy: Policy) -> WriteResult:
    if isinstance(op, Skipped):
        return WriteResult("unchanged", skipped=[op])
    return apply_write_ops(drive, [op], message, policy=policy)


def ask(drive: Drive, text: str, *, source: str | None = None,
        policy: Policy | None = None) -> WriteResult:
    """Post an open question; its id is ``result.added[0].id``."""
    policy = _policy(drive, policy)
    op = prepare_add(NewFact(text, source, BOARD), 0, policy, today(policy),
                     allow_reserved=True, extra=(("kind", "question"), ("status", "open")))
    return _single(drive, op, "Ask a question", policy)


def answer(drive: Drive, question_id: str, text: str, *, source: str | None = None,
           policy: Policy | None = None) -> WriteResult:
    """Answer question ``question_id`` (it must be on the board)."""
    policy = _policy(drive, policy)
    _require_question(drive, question_id, policy)
    op = prepare_add(NewFact(text, source, BOARD), 0, policy, today(policy),
                     allow_reserved=True, extra=(("kind", "answer"), ("parent", question_id)),
                     after=question_id, dedupe=False)
    if isinstance(op, WriteOp):
        op = WriteOp(op.kind, op.id, path=op.path, line=ANSWER_INDENT + op.line, after=op.after,
                dedupe=False, ref=op.ref)
    return _single(drive, op, "Answer a question", policy)


def resolve(drive: Drive, question_id: str, *, policy: Policy | None = None) -> WriteResult:
    """Mark question ``question_id`` resolved."""
    policy = _policy(drive, policy)
    _require_question(drive, question_id, policy)
    op = WriteOp("set", question_id, key="status", value="resolved", ref=0)
    return _single(drive, op, "Resolve a question", policy)


def _require_question(drive: Drive, question_id: str, policy: Policy) -> Question:
    for question in board(drive, policy):
        if question.id == question_id:
            return question
    raise UsageError(f"no question {question_id} on the board ({BOARD})",
                     "list the open questions with: memgit ask --list")
