"""The writer: the one path by which memgit writes memory (docs/spec.md, section 3).

:func:`apply_write_ops` makes one commit of write operations under the drive's write lock
(an ``flock`` on ``<git dir>/memgit/write.lock``: writers queue up, and a killed writer's
lock goes with its process). It re-reads the branch head, brings the recall index to it
and has memgit.write.plan judge the change, so it never makes a commit pre-receive would
refuse; it writes the objects with pygit2 (no checkout needed) and moves the branch by
compare-and-swap (git.repository.cas_ref), retrying up to MAX_ATTEMPTS while a push moves
it. A commit that fails otherwise (disk full, ref lock held, I/O error, conflicts
exhausted) leaves its operations in the pending queue (``status="queued"``): acknowledged,
and retried in order before the next write and on the next read. Operations carry their
final ids and dates, so a retry is idempotent.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

from memgit import state
from memgit.embeddings import fill as vector_fill
from memgit.errors import (
    ConflictError,
    MemgitError,
    NotADriveError,
    RefusedError,
    RepoError,
    UsageError,
)
from memgit.git import recovery
from memgit.git.repository import (
    Drive,
    RefLockedError,
    cas_ref,
    commit_tree_id,
    create_commit,
    enable_fsync,
    file_at,
    head_branch,
    ref_target,
    require_drive,
    signature,
    waiting_on_ref_lock,
)
from memgit.git.worktree import checkout_state, update_checkout
from memgit.index import reindex as recall_index
from memgit.policy.autonomy import has_rules
from memgit.policy.judge import ERROR, check_commit, quote
from memgit.policy.registry import PurgeRegistry
from memgit.policy.settings import Policy, drive_policy
from memgit.state import counters, pending
from memgit.write.ops import Added, NewFact, WriteOp, WriteResult, clean_text, prepare_facts
from memgit.write.plan import Finish, Plan, encoded, plan_and_judge
from memgit.write.propose import Actor, route

MAX_ATTEMPTS = 6
WRITE_LOCK_TIMEOUT = 30.0  # seconds to wait for another memgit writer of the drive
LOCK_FILE = "write.lock"
MOUNT_CONFIG = "memgit.mount"  # set in a mount's git config (memgit.sync.mounts): read-only


def commit_facts(drive: Drive, adds: Sequence[NewFact | str], retire: Sequence[str] = (),
                 message: str = "", *, edits: Mapping[str, str] | None = None,
                 policy: Policy | None = None, actor: Actor | None = None) -> WriteResult:
    """Add entries, retire entries by id (and edit texts by id) as one commit.

    Returns what was done and what was skipped and why. Raises RefusedError
    when the policy refuses the write as a whole (e.g. the drive is full) and
    UsageError when a checkout's touched files have uncommitted edits.
    """
    policy = policy or _policy(drive)
    ops, skipped = prepare_facts(adds, retire, edits=edits, policy=policy)
    result = apply_write_ops(drive, ops, message, policy=policy, actor=actor)
    result.skipped = sorted(skipped + result.skipped, key=lambda s: s.ref)
    return result


def restore_files(drive: Drive, base: str, texts: Mapping[str, str | None], message: str, *,
                  policy: Policy | None = None) -> WriteResult:
    """Give whole files new texts (None removes the file) as one commit, judged by the
    policy like any write. ``texts`` were computed from commit ``base``: when any of
    those files differs at the head from ``base``, every file operation is skipped
    (reason ``changed``) and nothing is written."""
    policy = policy or _policy(drive)
    base_tree = commit_tree_id(drive, base)
    ops = []
    for number, (path, text) in enumerate(sorted(texts.items())):
        entry = file_at(drive, base_tree, path)
        ops.append(WriteOp("file", "file:" + path, path=path, text=text or "",
                           key="" if text is not None else "remove",
                           value=entry.oid if entry is not None else "", ref=number))
    return apply_write_ops(drive, ops, message, policy=policy)


# --- applying operations -------------------------------------------------------------------


def _policy(drive: Drive) -> Policy:
    return drive_policy(drive)


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

    return (RefLockedError, ConflictError, RepoError, OSError, state.OperationalError,
            pygit2.GitError)


def apply_write_ops(drive: Drive, ops: Sequence[WriteOp], message: str = "", *,
                    policy: Policy | None = None, finish: Finish | None = None,
                    actor: Actor | None = None) -> WriteResult:
    """Apply operations as one commit (see the module docstring); queue on failure.

    The drive's autonomy rules route the operations first (write.propose: some become
    proposals, some are refused; ``actor`` says who writes). ``finish``
    (write_plan.Finish) adds operations that depend on what the write really does,
    planned in the same commit; a queued write stores them as planned from the
    operations alone (every add counted as added)."""
    policy = policy or _policy(drive)
    if ops and has_rules(policy) and ref_target(drive, policy.branch_ref) is not None:
        routed = route(drive, ops, policy, actor)
        if routed.skipped or routed.proposed:
            result = apply_write_ops(drive, routed.ops, message, policy=policy, finish=finish,
                                     actor=Actor(review=True))
            result.skipped = sorted(routed.skipped + result.skipped, key=lambda s: s.ref)
            result.proposed = [i for i in routed.proposed
                               if i in {a.id for a in result.added} | set(result.updated)
                               or result.status == "queued"]
            return result
    if not ops:
        return WriteResult("unchanged")
    if drive.config_value(MOUNT_CONFIG) is not None:
        raise UsageError(f"{drive.git_dir} is a mount of a shared drive: read-only",
                         "write through a checkout of the shared drive (memgit clone URL)")
    if ref_target(drive, policy.branch_ref) is not None:
        require_drive(drive, policy.branch_ref)  # before any state is made
    enable_fsync()
    conn = state.connection(drive.git_dir)
    try:
        with write_lock(drive):
            repaired = recovery.recover(drive)
            if not _drain_locked(drive, conn, policy):
                # An older write is still stuck: queue behind it to keep the order.
                result = _queue(drive, conn, ops, message,
                                ConflictError("older writes are still pending", ""), finish)
            else:
                result = _apply_locked(drive, conn, list(ops), message, policy, finish)
            result.warnings[:0] = repaired
            return result
    except (UsageError, RefusedError, NotADriveError):
        raise
    except _transient() as exc:
        return _queue(drive, conn, ops, message, exc, finish)


def _queue(drive: Drive, conn: state.Connection, ops: Sequence[WriteOp], message: str,
           exc: BaseException, finish: Finish | None = None) -> WriteResult:
    """Store the intent durably; the write is acknowledged as queued."""
    if finish is not None:
        expected = WriteResult("queued", added=[Added(op.id, op.path, "", "", "")
                                                for op in ops if op.kind == "add"])
        ops = [*ops, *finish(expected, lambda _path: "")]
    intent = json.dumps({"ops": [op.as_dict() for op in ops], "message": message},
                        ensure_ascii=False)
    reason = _describe(exc)
    with state.immediate(conn):
        seq = pending.add(conn, intent, reason)
        counters.add(conn, "commit_failed")
    result = WriteResult("queued", pending=seq, error=reason)
    result.added = [Added(op.id, op.path, "", "", "") for op in ops if op.kind == "add"]
    return result


def _describe(exc: BaseException) -> str:
    if isinstance(exc, MemgitError):
        return exc.message
    return f"{type(exc).__name__}: {exc}"


def retry_pending(drive: Drive, *, policy: Policy | None = None,
                  timeout: float | None = None) -> int:
    """Apply queued writes in order; returns how many are still pending.

    Waits at most ``timeout`` seconds for the write lock (default: up to 5 s);
    the read path passes 0: a writer holding the lock drains the queue itself.
    """
    policy = policy or _policy(drive)
    conn = state.connection(drive.git_dir)
    enable_fsync()
    if timeout is None:
        timeout = min(5.0, lock_timeout(drive))
    try:
        with write_lock(drive, timeout=timeout):
            recovery.recover(drive)
            _drain_locked(drive, conn, policy)
    except RefLockedError:
        pass  # someone else is writing; they drain the queue first
    return pending.count(conn)


def recover_and_drain(drive: Drive, *, policy: Policy | None = None) -> list[str]:
    """What a command that moves the branch runs first (memgit sync): finish what a killed
    memgit left (git.recovery) and apply the queued writes, so that acknowledged writes
    go out with it; returns the repairs made. The state database is opened here, so a
    damaged one is repaired (and said so) now too."""
    policy = policy or _policy(drive)
    conn = state.connection(drive.git_dir)
    enable_fsync()
    with write_lock(drive):
        notes = recovery.recover(drive)
        _drain_locked(drive, conn, policy)
    return notes


def _drain_locked(drive: Drive, conn: state.Connection, policy: Policy) -> bool:
    """Apply queued writes in order; False when one failed for a transient reason."""
    for seq, raw in pending.intents(conn):
        data = json.loads(raw)
        ops = [WriteOp.from_dict(op) for op in data.get("ops", [])]
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
            pending.remove(conn, seq)
    return True


def _retry_failed(conn: state.Connection, seq: int, exc: BaseException) -> None:
    with state.immediate(conn):
        pending.failed(conn, seq, _describe(exc))
        counters.add(conn, "pending_retry_failed")


def _apply_locked(drive: Drive, conn: state.Connection, ops: list[WriteOp], message: str,
                  policy: Policy, finish: Finish | None = None) -> WriteResult:
    ref = policy.branch_ref
    registry = PurgeRegistry.load(drive.git_dir)
    subject, refused = _checked_subject(drive, message, policy, registry)
    for attempt in range(1, MAX_ATTEMPTS + 1):
        head = require_drive(drive, ref)
        recall_index.ensure_current(drive, policy=policy, conn=conn)
        plan = plan_and_judge(drive, conn, head, ops, policy, registry, finish)
        plan.result.attempts = attempt
        plan.result.warnings[:0] = refused
        if not plan.changes:
            plan.result.status = "unchanged"
            return plan.result
        checkout = _checkout_target(drive, ref)
        if checkout:
            _refuse_dirty(drive, plan, head)
        commit = create_commit(drive, plan.tree, [head], _message(subject, plan.result))
        if checkout:
            # the checkout follows the branch; a kill before it caught up leaves this
            # journal, and the next write finishes the update (git.recovery)
            recovery.begin(drive, ref, head, commit)
        if _move(drive, ref, head, commit):
            plan.result.status = "committed"
            plan.result.commit = commit
            _after_commit(drive, conn, plan, policy, checkout)
            return plan.result
        if checkout:
            recovery.end(drive)
    raise ConflictError(f"{ref} kept moving during {MAX_ATTEMPTS} attempts",
                        "the write was queued; it is retried on the next write or read")


def _checked_subject(drive: Drive, message: str, policy: Policy,
                     registry: PurgeRegistry) -> tuple[str, list[str]]:
    """The caller's message, or "" (the default subject) with a warning when the policy
    would refuse it (a possible credential, a purged text). A commit author or committer
    the policy refuses stops the write: no commit memgit makes may be refused later."""
    sig = signature(drive)
    people = [("author name", sig.name), ("author email", sig.email)]
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


def _move(drive: Drive, ref: str, old: str, new: str) -> bool:
    """Compare-and-swap with waiting on a held ref lock (and breaking a stale one: we
    hold the drive's write lock, so no memgit of this checkout is writing the ref)."""
    return waiting_on_ref_lock(drive, ref, lambda: cas_ref(drive, ref, old, new, "memgit: write"))


def _after_commit(drive: Drive, conn: state.Connection, plan: Plan, policy: Policy,
                  checkout: bool) -> None:
    """After the branch moved: nothing here may turn the write into a failure."""
    if checkout:
        try:
            update_checkout(drive, encoded(plan.changes))
            recovery.end(drive)
        except Exception as exc:  # noqa: BLE001 - the commit stands; say how to catch up
            paths = " ".join(sorted(plan.changes))
            plan.result.warnings.append(
                f"the commit landed but the work tree was not updated ({_describe(exc)}); "
                f"run: git restore --source=HEAD --staged --worktree -- {paths}")

    def count(c: state.Connection) -> None:
        counters.add(c, "commit")
        if plan.near_limit:
            counters.add(c, "near_limit")

    try:
        # the events and the reindex in one transaction: one fsync
        recall_index.reindex(drive, policy=policy, conn=conn, also=count)
    except Exception:  # noqa: BLE001 - the commit stands; the next read repairs the index
        try:
            with state.immediate(conn):
                count(conn)
        except state.Error:
            pass  # counting is best effort (events.record)
        return
    # The new entries' vectors are made in the background, never in the write.
    vector_fill.schedule(drive.git_dir, policy.embeddings(), conn)


def _checkout_target(drive: Drive, ref: str) -> bool:
    """True when the drive is a checkout whose HEAD is the branch we write."""
    return drive.workdir is not None and head_branch(drive) == ref


def _refuse_dirty(drive: Drive, plan: Plan, head: str) -> None:
    """Refuse a write over a user's uncommitted edits of the files it changes. A path
    whose index and work tree still hold an older version of the branch (left by a
    killed memgit that journaled no checkout update, as older versions did) is brought to
    the branch first: committing it would undo entries the branch holds."""
    plan.result.warnings.extend(recovery.catch_up_lagging(drive, head, sorted(plan.changes)))
    dirty = []
    for path in plan.changes:
        base = plan.base_oids.get(path)
        staged, work = checkout_state(drive, path)
        if staged != base or work != base:
            dirty.append(path)
    if dirty:
        shown = quote(", ".join(sorted(dirty)))
        raise UsageError(f"uncommitted edits in {shown}",
                         f"they are your own edits on top of the branch: keep them with "
                         f"git commit -- {' '.join(sorted(dirty))} (or git stash, and git "
                         "stash pop after the write), then write again")


def _message(message: str, result: WriteResult) -> str:
    """Subject from the caller, then counts and ids (never entry text)."""
    counts = (f"+{len(result.added)} -{len(result.retired)} "
              f"~{len(result.edited) + len(result.updated)}")
    if result.rewritten:
        counts += f" files {len(result.rewritten)}"
    subject = clean_text(message) or "memgit: write"
    lines = [f"{subject}", "", f"memgit: {counts}"]
    for label, ids in (("Added", [a.id for a in result.added]), ("Retired", result.retired),
                       ("Edited", result.edited), ("Updated", result.updated),
                       ("File", result.rewritten)):
        lines.extend(f"{label}: {i}" for i in ids)
    return "\n".join(lines) + "\n"
