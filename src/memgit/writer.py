"""The writer: the one path by which memgit writes memory (SPEC section 3).

``commit_facts(drive, adds, retire, message)`` and the questions board build
*operations* (add, retire, edit, set-metadata) and hand them to
:func:`apply_ops`, which

1. takes the drive's write lock (``<git dir>/memgit/write.lock``, an
   ``flock``: memgit writers of one drive queue up instead of racing, and a
   killed writer releases it with its process);
2. re-reads the branch head, brings the index to it, and plans the change:
   skips duplicates of present entries, purged texts and unknown ids, then
   builds the new file texts and regenerates the ``## Index``;
3. judges the new tree with the policy (only touched files are re-read; an
   error on a line the writer wrote skips that operation, any other error
   refuses the write), so it never makes a commit pre-receive would refuse;
4. writes blobs, trees and the commit with pygit2 (no checkout needed) and
   moves the branch with compare-and-swap (repo.cas_ref); if the branch
   moved meanwhile (a push), it re-reads and retries, up to 6 attempts;
5. reindexes incrementally, counts the ``commit`` event, and on a checkout
   writes the touched files and stages them.

When the commit fails for any other reason (disk full, ref lock held, I/O
error, conflicts exhausted) the operations are stored in the pending queue
(state.py) and the call returns ``status="queued"``: the write is
acknowledged and is retried, in order, before the next write and on the next
read. Operations carry their final ids and dates, so a retry is idempotent: an
add whose id is already in the drive counts as done.
"""

from __future__ import annotations

import datetime as _dt
import errno
import fcntl
import json
import os
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

from . import events, state
from . import format as fmt
from . import index as idx
from .errors import (
    ConflictError,
    MemgitError,
    NotADriveError,
    RefusedError,
    RepoError,
    UsageError,
)
from .policy import (
    ERROR,
    MODE_EXEC,
    MODE_FILE,
    BlobFacts,
    Policy,
    PurgeRegistry,
    TreeItem,
    Violation,
    check_blob,
    check_commit,
    check_topic,
    find_policy,
    judge,
    quote,
    source_allowed,
    text_digest,
)
from .repo import (
    Drive,
    RefLockedError,
    break_ref_lock,
    build_tree,
    cas_ref,
    checkout_state,
    commit_tree_id,
    create_commit,
    enable_fsync,
    file_at,
    head_branch,
    path_blocked,
    read_blob,
    ref_lock_age,
    ref_target,
    signature,
    tree_files,
    update_checkout,
)

DEFAULT_TOPIC = "notes.md"
MAX_ATTEMPTS = 6
WRITE_LOCK_TIMEOUT = 30.0  # seconds to wait for another memgit writer of the drive
# A ref .lock older than this while we hold the drive's write lock is left by a
# killed process: git holds ref locks for milliseconds, even during a push.
STALE_REF_LOCK_SECONDS = 5.0
LOCK_FILE = "write.lock"


# --- what callers pass and get back ----------------------------------------------------


@dataclass(frozen=True)
class NewFact:
    """One entry to add: text, optional source (default memgit:observation/<id>) and
    topic file (default notes.md)."""

    text: str
    source: str | None = None
    topic: str | None = None


@dataclass(frozen=True)
class Op:
    """One entry operation; serialisable for the pending queue.

    ``kind`` is add (``line`` into ``path``, after entry ``after`` and its
    answers when set), retire, edit (new ``text``, metadata kept) or set
    (metadata ``key`` = ``value``). ``ref`` is the caller's position, for reports.
    """

    kind: str
    id: str
    path: str = ""
    line: str = ""
    text: str = ""
    key: str = ""
    value: str = ""
    after: str = ""
    dedupe: bool = True
    ref: int = -1

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v not in ("", -1) or k == "kind"}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Op:
        return cls(**{k: data[k] for k in data if k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class Added:
    id: str
    path: str
    text: str
    source: str
    added: str


@dataclass(frozen=True)
class Skipped:
    """An operation not applied: ``reason`` is a short code, ``detail`` a sentence
    (never the entry text, never a secret)."""

    ref: int
    id: str
    reason: str
    detail: str


@dataclass
class WriteResult:
    status: str  # "committed", "queued" or "unchanged"
    commit: str | None = None
    added: list[Added] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    attempts: int = 0
    pending: int | None = None  # queue sequence number when queued
    error: str = ""  # why it was queued

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# --- preparing operations ----------------------------------------------------------------


def today(policy: Policy) -> str:
    """Today's date in the drive's time zone."""
    import zoneinfo

    return _dt.datetime.now(zoneinfo.ZoneInfo(policy.timezone)).date().isoformat()


def clean_text(text: str) -> str:
    """An entry is one line: every run of whitespace (newlines too) becomes one space."""
    return " ".join(text.split())


def normalize_topic(topic: str | None) -> str:
    """``projects/payments`` -> ``projects/payments.md``; default notes.md."""
    path = (topic or "").strip().strip("/")
    while path.startswith("./"):
        path = path[2:]
    if not path:
        return DEFAULT_TOPIC
    return path if path.endswith(".md") else path + ".md"


def credential_kind(line: str, policy: Policy | None = None) -> str | None:
    """The kind of the first possible credential in ``line`` (the policy's scanner)."""
    from .policy import secret_kinds

    kinds = secret_kinds(line, policy or Policy())
    return kinds[0] if kinds else None


def prepare_add(fact: NewFact | str, ref: int, policy: Policy, added: str, *,
                allow_reserved: bool = False, extra: Sequence[tuple[str, str]] = (),
                after: str = "", dedupe: bool = True) -> Op | Skipped:
    """Turn one new fact into an add operation, or say why it is skipped."""
    if isinstance(fact, str):
        fact = NewFact(fact)
    text = clean_text(fact.text)
    entry_id = fmt.new_id()
    if not text:
        return Skipped(ref, "", "empty", "the text is empty")
    path = normalize_topic(fact.topic)
    problems = check_topic(path, policy, reserved_ok=allow_reserved)
    if problems:
        reason = "topic-reserved" if problems[0].code == "MG213" else "topic-invalid"
        return Skipped(ref, "", reason, f"{problems[0].code} {quote(problems[0].message)}")
    source = (fact.source or "").strip() or f"memgit:observation/{entry_id}"
    if not source_allowed(source):
        return Skipped(ref, "", "source", "the source is not an allowed link or label "
                       "(https://..., TOOL:session/ID, TOOL:observation/ID, imported:unknown)")
    line = fmt.format_entry(text, source, added, entry_id)
    entry = fmt.parse_entry(line)
    for key, value in extra:
        assert entry is not None
        entry = entry.with_meta(key, value)
        line = entry.serialise()
    if entry is None or entry.id != entry_id or entry.text != text:
        return Skipped(ref, "", "invalid", "the text cannot be written as one entry line "
                       "(it ends with something that reads as metadata)")
    kind = credential_kind(line, policy)
    if kind is not None:
        return Skipped(ref, "", "credential", f"possible credential: {kind}")
    return Op("add", entry_id, path=path, line=line, after=after, dedupe=dedupe, ref=ref)


def prepare_edit(entry_id: str, text: str, ref: int) -> Op | Skipped:
    text = clean_text(text)
    if not text:
        return Skipped(ref, entry_id, "empty", "the new text is empty")
    kind = credential_kind(text)
    if kind is not None:
        return Skipped(ref, entry_id, "credential", f"possible credential: {kind}")
    return Op("edit", entry_id, text=text, ref=ref)


def commit_facts(drive: Drive, adds: Sequence[NewFact | str], retire: Sequence[str] = (),
                 message: str = "", *, edits: Mapping[str, str] | None = None,
                 policy: Policy | None = None) -> WriteResult:
    """Add entries, retire entries by id (and edit texts by id) as one commit.

    Returns what was done and what was skipped and why. Raises RefusedError
    when the policy refuses the write as a whole (e.g. the drive is full) and
    UsageError when a checkout's touched files have uncommitted edits.
    """
    policy = policy or _policy(drive)
    date = today(policy)
    ops: list[Op] = []
    skipped: list[Skipped] = []
    for number, fact in enumerate(adds):
        prepared = prepare_add(fact, number, policy, date)
        (ops if isinstance(prepared, Op) else skipped).append(prepared)  # type: ignore[arg-type]
    for number, entry_id in enumerate(retire, start=len(adds)):
        ops.append(Op("retire", entry_id.strip(), ref=number))
    for number, (entry_id, text) in enumerate((edits or {}).items(),
                                              start=len(adds) + len(retire)):
        prepared_edit = prepare_edit(entry_id.strip(), text, number)
        if isinstance(prepared_edit, Op):
            ops.append(prepared_edit)
        else:
            skipped.append(prepared_edit)
    result = apply_ops(drive, ops, message, policy=policy)
    result.skipped = sorted(skipped + result.skipped, key=lambda s: s.ref)
    return result


# --- applying operations -------------------------------------------------------------------


def _policy(drive: Drive) -> Policy:
    return find_policy(None, drive.git_dir, drive.config_value("memgit.policy"))


def lock_timeout(drive: Drive) -> float:
    """Seconds to wait for the drive's write lock: git config memgit.writeLockTimeout."""
    value = drive.config_value("memgit.writeLockTimeout")
    try:
        return float(value) if value is not None else WRITE_LOCK_TIMEOUT
    except ValueError:
        return WRITE_LOCK_TIMEOUT


@contextmanager
def write_lock(drive: Drive, timeout: float | None = None) -> Iterator[None]:
    """The drive's write lock: one memgit writer at a time (flock, released on exit
    or when the process dies). Raises RefLockedError after ``timeout`` seconds
    (default: :func:`lock_timeout`)."""
    if timeout is None:
        timeout = lock_timeout(drive)
    folder = state.state_dir(drive.git_dir)
    folder.mkdir(mode=0o700, exist_ok=True)
    fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        deadline = time.monotonic() + timeout
        delay = 0.002
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise
                if time.monotonic() > deadline:
                    raise RefLockedError("another memgit writer holds the drive's write lock",
                                         "the write was queued; it is retried later") from exc
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the flock


def _transient() -> tuple[type[BaseException], ...]:
    """Failures that queue a write: the drive or the disk, not the request."""
    import pygit2

    return (RefLockedError, ConflictError, RepoError, OSError, sqlite3.OperationalError,
            pygit2.GitError)


def apply_ops(drive: Drive, ops: Sequence[Op], message: str = "", *,
              policy: Policy | None = None) -> WriteResult:
    """Apply operations as one commit (see the module docstring); queue on failure."""
    policy = policy or _policy(drive)
    if not ops:
        return WriteResult("unchanged")
    head = ref_target(drive, policy.branch_ref)
    if head is not None:
        _require_drive(drive, head, policy.branch_ref)  # before any state is made
    enable_fsync()
    conn = idx.connection(drive)
    try:
        with write_lock(drive):
            if not _drain_locked(drive, conn, policy):
                # An older write is still stuck: queue behind it to keep the order.
                return _queue(drive, conn, ops, message,
                              ConflictError("older writes are still pending", ""))
            return _apply_locked(drive, conn, list(ops), message, policy)
    except (UsageError, RefusedError, NotADriveError):
        raise
    except _transient() as exc:
        return _queue(drive, conn, ops, message, exc)


def _queue(drive: Drive, conn: sqlite3.Connection, ops: Sequence[Op], message: str,
           exc: BaseException) -> WriteResult:
    """Store the intent durably; the write is acknowledged as queued."""
    intent = json.dumps({"ops": [op.as_dict() for op in ops], "message": message},
                        ensure_ascii=False)
    reason = _describe(exc)
    with state.immediate(conn):
        cur = conn.execute("INSERT INTO pending (created, intent, last_error) VALUES (?, ?, ?)",
                           (_now(), intent, reason))
        events.record_with(conn, "commit_failed")
    result = WriteResult("queued", pending=int(cur.lastrowid or 0), error=reason)
    result.added = [Added(op.id, op.path, "", "", "") for op in ops if op.kind == "add"]
    return result


def _describe(exc: BaseException) -> str:
    if isinstance(exc, MemgitError):
        return exc.message
    return f"{type(exc).__name__}: {exc}"


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def retry_pending(drive: Drive, *, policy: Policy | None = None,
                  timeout: float | None = None) -> int:
    """Apply queued writes in order; returns how many are still pending.

    Waits at most ``timeout`` seconds for the write lock (default: up to 5 s);
    the read path passes 0: a writer holding the lock drains the queue itself.
    """
    policy = policy or _policy(drive)
    conn = idx.connection(drive)
    enable_fsync()
    if timeout is None:
        timeout = min(5.0, lock_timeout(drive))
    try:
        with write_lock(drive, timeout=timeout):
            _drain_locked(drive, conn, policy)
    except RefLockedError:
        pass  # someone else is writing; they drain the queue first
    return state.pending_count(conn)


def _drain_locked(drive: Drive, conn: sqlite3.Connection, policy: Policy) -> bool:
    """Apply queued writes in order; False when one failed for a transient reason."""
    rows = conn.execute("SELECT seq, intent FROM pending ORDER BY seq").fetchall()
    for seq, raw in rows:
        data = json.loads(raw)
        ops = [Op.from_dict(op) for op in data.get("ops", [])]
        try:
            _apply_locked(drive, conn, ops, str(data.get("message", "")), policy)
        except (RefusedError, UsageError, NotADriveError) as exc:
            # The policy (or a dirty checkout) refuses it now: keep it, visible in
            # `memgit info`, without blocking the writes queued after it.
            _retry_failed(conn, seq, exc)
            continue
        except _transient() as exc:
            _retry_failed(conn, seq, exc)
            return False  # keep the order: later writes wait for this one
        with state.immediate(conn):
            conn.execute("DELETE FROM pending WHERE seq = ?", (seq,))
    return True


def _retry_failed(conn: sqlite3.Connection, seq: int, exc: BaseException) -> None:
    with state.immediate(conn):
        conn.execute("UPDATE pending SET attempts = attempts + 1, last_error = ? WHERE seq = ?",
                     (_describe(exc), seq))
        events.record_with(conn, "pending_retry_failed")


def _apply_locked(drive: Drive, conn: sqlite3.Connection, ops: list[Op], message: str,
                  policy: Policy) -> WriteResult:
    ref = policy.branch_ref
    registry = PurgeRegistry.load(drive.git_dir)
    subject, refused = _checked_subject(drive, message, policy, registry)
    for attempt in range(1, MAX_ATTEMPTS + 1):
        head = ref_target(drive, ref)
        if head is None:
            raise UsageError(f"the drive has no branch {ref}", "create it with memgit init")
        _require_drive(drive, head, ref)
        idx.ensure_current(drive, policy=policy, conn=conn, drain_pending=False)
        plan = _plan_and_judge(drive, conn, head, ops, policy, registry)
        plan.result.attempts = attempt
        plan.result.warnings[:0] = refused
        if not plan.changes:
            plan.result.status = "unchanged"
            return plan.result
        checkout = _checkout_target(drive, ref)
        if checkout:
            _refuse_dirty(drive, plan)
        commit = create_commit(drive, plan.tree, [head], _message(subject, plan.result))
        if _move(drive, ref, head, commit):
            plan.result.status = "committed"
            plan.result.commit = commit
            _after_commit(drive, conn, plan, policy, checkout)
            return plan.result
    raise ConflictError(f"{ref} kept moving during {MAX_ATTEMPTS} attempts",
                        "the write was queued; it is retried on the next write or read")


def _require_drive(drive: Drive, head: str, ref: str) -> None:
    """The writer writes drives only: a branch without MEMORY.md is some other repository."""
    if file_at(drive, commit_tree_id(drive, head), fmt.MEMORY_FILE) is None:
        raise NotADriveError(f"{drive.root} is not a drive: {ref.removeprefix('refs/heads/')} "
                             f"has no {fmt.MEMORY_FILE}", "make it one first: memgit init "
                             "(a new drive), or memgit init --adopt (a repository that "
                             "already holds memory files)")


def _checked_subject(drive: Drive, message: str, policy: Policy,
                     registry: PurgeRegistry) -> tuple[str, list[str]]:
    """The caller's message, or "" (the default subject) with a warning when the policy
    would refuse it (a possible credential, a purged text). A commit author or committer
    the policy refuses stops the write: no commit memgit makes may be refused later."""
    people = _identity(drive)
    who = [v for v in check_commit("", people, policy) if v.severity == ERROR]
    if who:
        raise RefusedError(f"the commit identity is refused: {who[0].message}", who,
                           "set user.name and user.email (git config) to plain values")
    said = [v for v in check_commit(clean_text(message), [], policy, registry)
            if v.severity == ERROR]
    if not said:
        return message, []
    return "", [f"the commit message was not used ({said[0].code} {said[0].name}: "
                f"{said[0].message}); the commit has the default subject"]


def _identity(drive: Drive) -> list[tuple[str, str]]:
    sig = signature(drive)
    return [("author name", sig.name), ("author email", sig.email)]


def _move(drive: Drive, ref: str, old: str, new: str) -> bool:
    """Compare-and-swap with waiting on a held ref lock (and breaking a stale one)."""
    delay = 0.005
    started = time.monotonic()
    while True:
        try:
            return cas_ref(drive, ref, old, new, "memgit: write")
        except RefLockedError:
            age = ref_lock_age(drive, ref)
            if age is not None and age > STALE_REF_LOCK_SECONDS:
                # We hold the drive's write lock, and no git keeps a ref lock
                # this long: it was left by a killed process.
                break_ref_lock(drive, ref)
                continue
            if time.monotonic() - started > STALE_REF_LOCK_SECONDS + 1:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.25)


def _after_commit(drive: Drive, conn: sqlite3.Connection, plan: _Plan, policy: Policy,
                  checkout: bool) -> None:
    """After the branch moved: nothing here may turn the write into a failure."""
    if checkout:
        try:
            update_checkout(drive, {p: t.encode("utf-8") for p, t in plan.changes.items()})
        except Exception as exc:  # noqa: BLE001 - the commit stands; say how to catch up
            paths = " ".join(sorted(plan.changes))
            plan.result.warnings.append(
                f"the commit landed but the work tree was not updated ({_describe(exc)}); "
                f"run: git restore --source=HEAD --staged --worktree -- {paths}")

    def count(c: sqlite3.Connection) -> None:
        events.record_with(c, "commit")
        if plan.near_limit:
            events.record_with(c, "near_limit")

    try:
        # the events and the reindex in one transaction: one fsync
        idx.reindex(drive, policy=policy, conn=conn, also=count)
    except Exception:  # noqa: BLE001 - the commit stands; the next read repairs the index
        try:
            with state.immediate(conn):
                count(conn)
        except sqlite3.Error:
            pass  # counting is best effort (events.record)


def _checkout_target(drive: Drive, ref: str) -> bool:
    """True when the drive is a checkout whose HEAD is the branch we write."""
    return drive.workdir is not None and head_branch(drive) == ref


def _refuse_dirty(drive: Drive, plan: _Plan) -> None:
    dirty = []
    for path in plan.changes:
        base = plan.base_oids.get(path)
        staged, work = checkout_state(drive, path)
        if staged != base or work != base:
            dirty.append(path)
    if dirty:
        raise UsageError(f"uncommitted edits in {quote(', '.join(sorted(dirty)))}",
                         "commit or stash them, then write again")


def _message(message: str, result: WriteResult) -> str:
    """Subject from the caller, then counts and ids (never entry text)."""
    counts = (f"+{len(result.added)} -{len(result.retired)} "
              f"~{len(result.edited) + len(result.updated)}")
    subject = clean_text(message) or "memgit: write"
    lines = [f"{subject}", "", f"memgit: {counts}"]
    for label, ids in (("Added", [a.id for a in result.added]), ("Retired", result.retired),
                       ("Edited", result.edited), ("Updated", result.updated)):
        lines.extend(f"{label}: {i}" for i in ids)
    return "\n".join(lines) + "\n"


# --- planning: new file texts from operations ------------------------------------------------


class _L:
    """A mutable line of a file being edited."""

    __slots__ = ("content", "eol", "entry", "op")

    def __init__(self, content: str, eol: str, entry: fmt.Entry | None,
                 op: int | None = None) -> None:
        self.content = content
        self.eol = eol
        self.entry = entry
        self.op = op  # index of the operation that wrote this line


class _File:
    def __init__(self, path: str, text: str | None) -> None:
        self.path = path
        self.existed = text is not None
        self.original = text if text is not None else _new_file_text(path)
        doc = fmt.parse_document(path, self.original)
        self.lines = [_L(ln.content, ln.eol, ln.entry) for ln in doc.lines]
        self.in_index = [ln.in_index for ln in doc.lines]
        first_eol = doc.lines[0].eol if doc.lines else "\n"
        self.eol = first_eol or "\n"

    def find(self, entry_id: str) -> int | None:
        for number, line in enumerate(self.lines):
            if line.entry is not None and line.entry.id == entry_id:
                return number
        return None

    def text(self) -> str:
        return "".join(line.content + line.eol for line in self.lines)

    def _blank(self, number: int) -> bool:
        return not self.lines[number].content.strip()

    def insert(self, content: str, op: int, after: str = "") -> None:
        entry = fmt.parse_entry(content)
        if after:
            at = self.find(after)
            if at is not None:
                pos = at + 1
                while pos < len(self.lines) and self.lines[pos].entry is not None \
                        and self.lines[pos].entry.get("parent") == after:  # type: ignore[union-attr]
                    pos += 1
                self._ensure_eol(pos)
                self.lines.insert(pos, _L(content, self.eol, entry, op))
                return
        pos = len(self.lines)
        if self.path == fmt.MEMORY_FILE:
            for number, line in enumerate(self.lines):
                if line.content.rstrip() == fmt.INDEX_HEADING:
                    pos = number
                    break
        end = pos
        while pos > 0 and self._blank(pos - 1):
            pos -= 1
        self._ensure_eol(pos)
        new = [_L(content, self.eol, entry, op)]
        if pos > 0 and self.lines[pos - 1].entry is None:
            new.insert(0, _L("", self.eol, None))  # a blank line after a heading or prose
        if pos == end and end < len(self.lines):
            new.append(_L("", self.eol, None))  # keep a blank line before ## Index
        self.lines[pos:pos] = new

    def _ensure_eol(self, pos: int) -> None:
        if pos > 0 and not self.lines[pos - 1].eol:
            self.lines[pos - 1].eol = self.eol

    def op_lines(self) -> dict[int, int]:
        """line number -> operation index of the lines operations wrote."""
        return {n: line.op for n, line in enumerate(self.lines, start=1) if line.op is not None}


def _new_file_text(path: str) -> str:
    if path == fmt.MEMORY_FILE:
        return fmt.initial_memory()
    if path == fmt.QUESTIONS_FILE:
        return "# Questions\n"
    stem = path.rsplit("/", 1)[-1][:-3] if path.endswith(".md") else path.rsplit("/", 1)[-1]
    title = stem.replace("_", " ").replace("-", " ").strip() or "Notes"
    return f"# {title[:1].upper()}{title[1:]}\n"


@dataclass
class _Plan:
    result: WriteResult
    changes: dict[str, str]  # path -> new text
    base_oids: dict[str, str | None]  # path -> blob id at the head
    files: dict[str, _File]  # every file loaded, changed or not
    tree: str = ""
    near_limit: bool = False


def _plan_and_judge(drive: Drive, conn: sqlite3.Connection, head: str, ops: list[Op],
                    policy: Policy, registry: PurgeRegistry) -> _Plan:
    """Plan; judge; skip the operations whose own lines the policy refuses; repeat.

    Errors the head already has (a drive pushed past the rules by hand) are not
    the writer's: only errors the new tree adds count, compared per (rule, path).
    """
    base_tree = commit_tree_id(drive, head)
    blocked: dict[int, Violation] = {}
    while True:
        plan = _plan(drive, conn, base_tree, ops, blocked, registry)
        if not plan.changes:
            return plan
        files = plan.files
        plan.tree = build_tree(drive, base_tree,
                               {p: t.encode("utf-8") for p, t in plan.changes.items()})
        violations = _judge(drive, plan.tree, files, policy, registry)
        plan.near_limit = any(v.code == "MG290" for v in violations)
        plan.result.warnings = [v.format() for v in violations if v.severity != ERROR
                                and (v.path in plan.changes or not v.path)]
        errors = [v for v in violations if v.severity == ERROR]
        if not errors:
            return plan
        owned: dict[int, Violation] = {}
        rest: list[Violation] = []
        for v in errors:
            file = files.get(v.path)
            if file is not None and v.line == 0 and not file.existed and file.op_lines():
                # a path rule on a file this write creates: the adds into it own it
                for creator in file.op_lines().values():
                    owned.setdefault(creator, v)
                continue
            op = file.op_lines().get(v.line) if file is not None else None
            if op is None:
                rest.append(v)
            else:
                owned.setdefault(op, v)
        foreign = _new_errors(rest, _judge(drive, base_tree, {}, policy, registry))
        if foreign:
            raise RefusedError(f"the policy refuses this write: {foreign[0].format()}",
                               foreign, foreign[0].hint)
        if not owned:
            return plan
        blocked.update(owned)


def _new_errors(errors: list[Violation], before: list[Violation]) -> list[Violation]:
    """The errors of ``errors`` beyond those the base tree had, per (rule, path):
    line numbers shift when lines are inserted, so they cannot identify an error."""
    budget = Counter((v.code, v.path) for v in before if v.severity == ERROR)
    out = []
    for v in errors:
        key = (v.code, v.path)
        if budget[key] > 0:
            budget[key] -= 1
        else:
            out.append(v)
    return out


def _plan(drive: Drive, conn: sqlite3.Connection, base_tree: str, ops: list[Op],
          blocked: Mapping[int, Violation], registry: PurgeRegistry) -> _Plan:
    result = WriteResult("unchanged")
    files: dict[str, _File] = {}
    base_oids: dict[str, str | None] = {}

    def load(path: str) -> _File | None:
        if path not in files:
            entry = file_at(drive, base_tree, path)
            if entry is not None and entry.mode not in (MODE_FILE, MODE_EXEC):
                return None
            if entry is None and path_blocked(drive, base_tree, path):
                return None  # a folder there, or a parent folder that is a file
            base_oids[path] = entry.oid if entry is not None else None
            text = None
            if entry is not None:
                try:
                    text = read_blob(drive, entry.oid).decode("utf-8")
                except UnicodeDecodeError:
                    return None
            files[path] = _File(path, text)
        return files[path]

    wanted = [op.id for op in ops if op.kind != "add" or op.id]
    located = idx.locate(conn, wanted)
    retiring = {op.id for op in ops if op.kind == "retire"}
    retiring_digests = set()
    for entry_id in retiring:
        found = _find(drive, base_tree, entry_id, located, load)
        if found is not None and found[0].lines[found[1]].entry is not None:
            retiring_digests.add(text_digest(found[0].lines[found[1]].entry.text))  # type: ignore[union-attr]
    add_digests = [text_digest(fmt.parse_entry(op.line).text)  # type: ignore[union-attr]
                   for op in ops if op.kind == "add"]
    present = idx.present_digests(conn, add_digests)
    batch: set[str] = set()
    skipped = result.skipped
    for number, op in enumerate(ops):
        if number in blocked:
            v = blocked[number]
            skipped.append(Skipped(op.ref, op.id, "policy",
                                   f"{v.code} {v.name}: {quote(v.message)}"))
            continue
        if op.kind == "add":
            entry = fmt.parse_entry(op.line)
            assert entry is not None
            if op.id in located:
                # already in the drive: a retried write that had landed
                result.added.append(_added(op, entry))
                continue
            digest = text_digest(entry.text)
            if op.id in registry.ids or registry.holds_text(entry.text):
                skipped.append(Skipped(op.ref, op.id, "purged", "this text was purged from the "
                                       "drive and may not return"))
                continue
            if op.dedupe and ((digest in present and digest not in retiring_digests)
                              or digest in batch):
                twin = present.get(digest, "")
                skipped.append(Skipped(op.ref, op.id, "duplicate",
                                       f"same text as {twin or 'another entry of this write'}"))
                continue
            batch.add(digest)
            file = load(op.path)
            if file is None:
                skipped.append(Skipped(op.ref, op.id, "topic-invalid",
                                       f"{quote(op.path)} cannot be written as a text file"))
                continue
            if op.after and file.find(op.after) is None:
                skipped.append(Skipped(op.ref, op.id, "not-found",
                                       f"no entry {quote(op.after)} in {quote(op.path)}"))
                continue
            file.insert(op.line, number, op.after)
            result.added.append(_added(op, entry))
            continue
        found = _find(drive, base_tree, op.id, located, load)
        if found is None:
            skipped.append(Skipped(op.ref, op.id, "not-found",
                                   f"no entry {quote(op.id)} in the drive"))
            continue
        file, pos = found
        line = file.lines[pos]
        assert line.entry is not None
        if op.kind == "retire":
            del file.lines[pos]
            result.retired.append(op.id)
        elif op.kind == "edit":
            new_entry = line.entry.with_text(op.text)
            if not line.entry.has_explicit_id:
                new_entry = new_entry.with_meta("id", op.id)  # keep the id across the edit
            if new_entry.serialise() != line.content:
                line.content, line.entry, line.op = new_entry.serialise(), new_entry, number
                result.edited.append(op.id)
        elif op.kind == "set":
            new_entry = line.entry.with_meta(op.key, op.value)
            if not line.entry.has_explicit_id:
                new_entry = new_entry.with_meta("id", op.id)
            if new_entry.serialise() != line.content:
                line.content, line.entry, line.op = new_entry.serialise(), new_entry, number
                result.updated.append(op.id)
        else:
            raise UsageError(f"unknown operation {op.kind!r}", "")
    if any(f.text() != f.original for f in files.values()):
        # The Index lists exactly the drive's topic files: regenerate it in the same commit.
        paths = {e.path for e in tree_files(drive, base_tree)}
        paths |= {p for p, f in files.items() if not f.existed and f.text() != f.original}
        memory = load(fmt.MEMORY_FILE)
        if memory is not None:
            regenerated = fmt.regenerate_index(memory.text(), paths)
            if regenerated != memory.text():
                files[fmt.MEMORY_FILE] = _reparse(memory, regenerated)
    changes = {path: f.text() for path, f in files.items() if f.text() != f.original}
    return _Plan(result, changes, base_oids, files)


def _reparse(old: _File, text: str) -> _File:
    """MEMORY.md after Index regeneration, keeping which lines operations wrote."""
    new = _File(old.path, text)
    new.existed, new.original = old.existed, old.original
    written = {line.content: line.op for line in old.lines if line.op is not None}
    for line in new.lines:
        if line.content in written:
            line.op = written[line.content]
    return new


def _added(op: Op, entry: fmt.Entry) -> Added:
    meta = entry.meta
    return Added(op.id, op.path, entry.text, meta.get("source", ""), meta.get("added", ""))


def _find(drive: Drive, base_tree: str, entry_id: str, located: Mapping[str, str],
          load: Callable[[str], _File | None], *, scan: bool = True) -> tuple[_File, int] | None:
    """Where entry ``entry_id`` is: the index's answer, checked; else a scan of every file."""
    path = located.get(entry_id)
    if path is not None:
        file = load(path)
        if file is not None:
            pos = file.find(entry_id)
            if pos is not None:
                return file, pos
    if not scan:
        return None
    needle = entry_id.encode()
    for entry in tree_files(drive, base_tree):
        if not entry.path.endswith(".md") or entry.mode not in (MODE_FILE, MODE_EXEC):
            continue
        if not entry_id.startswith("entry-") and needle not in read_blob(drive, entry.oid):
            continue  # an explicit id is written in the line itself
        file = load(entry.path)
        if file is not None:
            pos = file.find(entry_id)
            if pos is not None:
                return file, pos
    return None


# --- judging the new tree -------------------------------------------------------------------

# (policy) -> (blob id, path) -> facts; blobs the writer did not touch are judged
# without a secret scan (they were accepted before), touched ones scan only the
# lines the writer wrote.
_FACTS: dict[Policy, dict[tuple[str, str], BlobFacts]] = {}
_FACTS_LIMIT = 4096


_VERDICTS: dict[tuple[Policy, str, int], list[Violation]] = {}


def _judge(drive: Drive, tree: str, files: Mapping[str, _File], policy: Policy,
           registry: PurgeRegistry) -> list[Violation]:
    """policy.judge on a whole tree; remembered per tree id, since the tree a write
    makes is the base tree the next write compares with."""
    key = (policy, tree, registry.size)
    known = _VERDICTS.get(key)
    if known is not None:
        return known
    cache = _FACTS.setdefault(policy, {})
    if len(cache) > _FACTS_LIMIT:
        cache.clear()
    entries = tree_files(drive, tree)
    oids = {e.path: e.oid for e in entries}
    for e in entries:
        if e.mode not in (MODE_FILE, MODE_EXEC) or (e.oid, e.path) in cache:
            continue
        data = read_blob(drive, e.oid)
        file = files.get(e.path)
        if file is not None:
            written = {line.content for line in file.lines if line.op is not None}
            facts = check_blob(e.path, data, policy,
                               scan=lambda _n, content, w=written: content in w)  # type: ignore[misc]
        else:
            facts = check_blob(e.path, data, policy, scan=lambda _n, _c: False)
        cache[(e.oid, e.path)] = facts
    items = [TreeItem(e.path, e.mode, e.size) for e in entries]

    def read(path: str) -> bytes:
        return read_blob(drive, oids[path])

    verdict = judge(items, read, policy, registry=registry, cache=cache, oids=oids)
    if len(_VERDICTS) > 64:
        _VERDICTS.clear()
    _VERDICTS[key] = verdict
    return verdict


# --- small helpers for commands -------------------------------------------------------------


def describe_skipped(skipped: Sequence[Skipped]) -> list[str]:
    return [f"skipped #{s.ref + 1}{' ' + quote(s.id) if s.id else ''}: {s.reason} "
            f"({quote(s.detail)})" for s in skipped]


def result_lines(result: WriteResult) -> list[str]:
    """What the write commands print (never a secret; texts only of added entries)."""
    out: list[str] = []
    if result.status == "committed":
        parts = [f"{label} {len(items)}" for label, items in (
            ("added", result.added), ("retired", result.retired),
            ("edited", result.edited), ("updated", result.updated)) if items]
        out.append(f"Committed {(result.commit or '')[:12]}: {', '.join(parts)}")
    elif result.status == "queued":
        out.append(f"Queued as pending write #{result.pending} ({result.error}); "
                   "it is retried on the next write or read")
    else:
        out.append("Nothing written")
    out.extend(f"  + {a.id} {a.path}" for a in result.added if a.path)
    out.extend(f"  - {i}" for i in result.retired)
    out.extend(f"  ~ {i}" for i in result.edited + result.updated)
    out.extend("  " + line for line in describe_skipped(result.skipped))
    out.extend(f"  warning: {w}" for w in result.warnings)
    return out


def exit_status(result: WriteResult) -> int:
    """0 when something was written or queued (or nothing was asked), 1 when
    everything asked was skipped."""
    if result.status == "unchanged" and result.skipped:
        return 1
    return 0
