"""The replay-and-sync client: an offline checkout catches up with its server (docs/sync.md).

``sync(drive)`` fetches the server's branch into ``refs/memgit/remotes/NAME`` and replays
the local commits since the last sync, oldest first, each keeping its message and author:
pushed as it is when it sits on the server's head, else as its entry operations
(memgit.sync.replay) applied to that head. Pushes are never forced. After each accepted
push ``refs/memgit/last-synced`` and ``refs/memgit/sync-source`` name the server and local
commits, so a killed sync resumes with the next commit and nothing is duplicated. A push
that lost a race (the server moved) is replayed again on the new head with
jittered exponential backoff until a time budget is spent (memgit.sync.retry). A push
refused by the server's policy stops the sync with the local branch untouched, unless a
later local commit changes what was refused: those changes are then held and land with
it (memgit.sync.refusal). A checkout purged of entries the server still holds is refused
(memgit.sync.local_purge). When the
server's branch no longer contains ``last-synced`` (a purge rewrote it), operations on
vanished or purged entries are dropped and the checkout's reflogs are expired and its
unreachable objects pruned, so a purged text survives in no object of the checkout.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from memgit.errors import (
    MemgitError,
    NotADriveError,
    RefusedError,
    RepoError,
    UsageError,
)
from memgit.format import entries as fmt
from memgit.git import DEFAULT_BRANCH
from memgit.git.plumbing import config_set
from memgit.git.recovery import catch_up_lagging, switch_branch_to
from memgit.git.remote import fetch_branch, push_commit, remote_url
from memgit.git.repository import (
    Drive,
    changed_files,
    commit_info,
    commit_tree_id,
    delete_ref,
    first_parent_chain,
    head_branch,
    is_ancestor,
    merge_base,
    missing_branch,
    open_drive,
    ref_target,
    replay_commit,
    set_ref,
    tree_from_texts,
    tree_texts,
)
from memgit.git.rewrite import expire_reflogs_and_prune
from memgit.git.worktree import worktree_changes
from memgit.githooks.queue import WORK_OPTION
from memgit.index.reindex import ensure_current, forget_entries
from memgit.policy.judge import ID_RE, quote
from memgit.policy.registry import PURGED_IDS_FILE, PURGED_REF
from memgit.policy.settings import Policy, drive_policy
from memgit.policy.working import WORKING_REF
from memgit.sync import status as sync_state
from memgit.sync.local_purge import LocallyPurgedError, forget_fetch, locally_purged
from memgit.sync.push import PushOutcome, network_error, parse_push
from memgit.sync.refusal import Hold, Refused, read_refusal, refusal_hint
from memgit.sync.replay import (
    CONFLICT_CHOICES,
    Conflict,
    ReplayOp,
    apply_replay_ops,
    compute_ops,
    entry_map,
)
from memgit.sync.retry import (
    RETRY_CONFIG,
    RaceClock,
    local_server_path,
    retry_seconds,
)
from memgit.sync.status import LAST_SYNC_CONFIG, LAST_SYNCED, SYNC_SOURCE, remote_head_ref
from memgit.write.writer import recover_and_drain, write_lock

BRANCH = DEFAULT_BRANCH  # what memgit clone checks out; a drive's policy may name another

PURGED_FROM = "refs/memgit/purged-from/"  # + remote name: its refs/memgit/purged
WORKING_FROM = "refs/memgit/working-from/"  # + remote name: its working memory (working/)
LEARNED = "refs/memgit/purged-learned/"  # + remote name: the purged ids applied last
MAX_BATCH = 100  # below the default policy's 200 commits per push


def _policy(drive: Drive) -> Policy:
    return drive_policy(drive)


def drive_branch(drive: Drive) -> str:
    """The branch a drive lands on: the policy's ``branch`` (main by default)."""
    return _policy(drive).branch


class SyncRefusedError(RefusedError):
    """The server's policy refused a pushed commit; carries its message (the server's
    lines, which name rule, file and line and never a secret) and what it refused."""

    def __init__(self, commit: str, server_message: str,
                 refused: Refused | None = None) -> None:
        super().__init__(f"the server refused commit {commit[:10]}:\n{server_message}",
                         hint=refusal_hint(commit, refused or Refused()))
        self.commit = commit
        self.server_message = server_message
        self.refused = refused or Refused()


_MISSING_REF_RE = re.compile(r"couldn't find remote ref", re.I)


# --- the report -----------------------------------------------------------------------


@dataclass
class SyncReport:
    remote: str
    pushed: list[tuple[str, str]] = field(default_factory=list)  # (local, server commit)
    skipped: list[str] = field(default_factory=list)  # local commits already on the server
    conflicts: list[Conflict] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # ops dropped on purged entries
    races: int = 0
    seconds: dict[str, float] = field(default_factory=lambda: {
        "fetch": 0.0, "replay": 0.0, "push": 0.0, "backoff": 0.0, "finish": 0.0})
    rewritten: bool = False
    pulled: bool = False  # the local branch moved to take the server's new commits
    forgotten: int = 0  # recall index rows of entries the server purged, deleted here
    head: str | None = None
    repaired: list[str] = field(default_factory=list)  # what a killed memgit left, finished
    # refused changes held back and landed with a later local commit that fixed them:
    # (the refused local commit, the one they landed with, the ids and paths)
    held: list[tuple[str, str, list[str]]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "repaired": self.repaired,
            "remote": self.remote,
            "pushed": [{"local": a, "server": b} for a, b in self.pushed],
            "skipped": self.skipped,
            "conflicts": [c.as_dict() for c in self.conflicts],
            "dropped": sorted(set(self.dropped)),
            "races": self.races,
            "seconds": {k: round(v, 4) for k, v in self.seconds.items()},
            "history_rewritten": self.rewritten,
            "forgotten": self.forgotten,
            "pulled": self.pulled,
            "head": self.head,
            "held": [{"refused": a, "landed_with": b, "held": names}
                     for a, b, names in self.held],
        }


# --- the client -----------------------------------------------------------------------


@dataclass
class SyncState:
    """One sync's working state: the pending local commits, what was replayed, the holds
    of refused changes (sync.refusal) and the report; forges.incoming drives the same
    replay from the gate's report."""

    drive: Drive
    remote: str
    on_conflict: str
    report: SyncReport
    drop: set[str] = field(default_factory=set)
    texts: dict[str | None, dict[str, str]] = field(default_factory=dict)
    blobs: dict[str, str] = field(default_factory=dict)
    server_base: str | None = None
    server_times: dict[str, dict[str, int]] = field(default_factory=dict)
    budget: float = 0.0  # seconds a push may keep losing races (memgit.sync.retry)
    pending: list[str] = field(default_factory=list)  # the local commits being replayed
    holds: list[Hold] = field(default_factory=list)  # refused changes waiting for their fix

    def index(self, commit: str) -> int:
        return self.pending.index(commit) if commit in self.pending else -1

    def holding(self, commit: str) -> bool:
        """Whether changes of ``commit`` or before it are held for a later commit: the
        checkout's ``sync-source`` must not pass it yet (a killed sync replays them)."""
        if not self.holds:
            return False
        k = self.index(commit)
        return any(h.first <= k < h.last for h in self.holds)

    def race_clock(self, what: str) -> RaceClock:
        url = remote_url(self.drive, self.remote) or ""
        return RaceClock(self.budget, what, server=local_server_path(url), url=url)

    def tree_of(self, commit: str | None) -> dict[str, str]:
        tree = commit_tree_id(self.drive, commit) if commit is not None else None
        if tree not in self.texts:
            if len(self.texts) > 64:
                self.texts.clear()
            if len(self.blobs) > 4096:
                self.blobs.clear()
            self.texts[tree] = tree_texts(self.drive, tree, self.blobs)
        return self.texts[tree]


def recover_checkout(drive: Drive) -> list[str]:
    """Finish what a memgit killed in this checkout left half done (git.recovery) and
    apply queued writes before syncing (writer.recover_and_drain); returns the repairs."""
    if drive.workdir is None:
        return []
    return recover_and_drain(drive)


def check_checkout(drive: Drive, remote: str) -> str:
    """Refuse what sync cannot work on; returns the local branch head."""
    if drive.workdir is None:
        raise UsageError("memgit sync runs in a drive checkout, not a bare repository",
                         "clone the drive with memgit clone URL, then sync there")
    name = drive_branch(drive)
    if ref_target(drive, f"refs/heads/{name}") is None:
        raise missing_branch(drive, f"refs/heads/{name}")
    branch = head_branch(drive)
    if branch is None:
        raise UsageError("HEAD is detached", f"git switch {name}, then memgit sync")
    if branch != f"refs/heads/{name}":
        raise UsageError(f"the checked-out branch is {branch.removeprefix('refs/heads/')}, "
                         f"not {name}", f"git switch {name}, then memgit sync")
    head = ref_target(drive, branch)
    assert head is not None  # checked above: the branch exists
    if remote_url(drive, remote) is None:
        raise UsageError(f"no remote named {remote!r}",
                         f"git remote add {remote} URL (or pass --remote NAME)")
    changed = worktree_changes(drive)
    if changed:  # a checkout a killed memgit left behind the branch is not the user's edit
        catch_up_lagging(drive, head, changed)
        changed = worktree_changes(drive)
    if changed:
        shown = ", ".join(changed[:5]) + (" ..." if len(changed) > 5 else "")
        raise UsageError(f"the checkout has uncommitted edits ({quote(shown, _policy(drive))})",
                         "they are your own edits on top of the branch: commit them "
                         "(git commit) or stash them (git stash), then sync")
    return head


def fetch(drive: Drive, remote: str) -> str | None:
    """The server's branch head (fetched into ``remote_head_ref``); None for an empty server.

    A remote that is not a drive is refused and its tracking ref restored.
    """
    ref = remote_head_ref(remote)
    before = ref_target(drive, ref)
    # the server's purged ids come along (a pattern refspec: no error when there are none)
    proc = fetch_branch(drive, remote, drive_branch(drive), ref,
                        also=[f"+{PURGED_REF}*:{PURGED_FROM}{remote}*",
                              f"+{WORKING_REF}*:{WORKING_FROM}{remote}*"])
    err = proc.stderr.decode(errors="replace")
    if proc.returncode != 0:
        if _MISSING_REF_RE.search(err):
            delete_ref(drive, ref)
            return None
        raise network_error(remote, err, "fetch from")
    head = ref_target(drive, ref)
    if head is not None and fmt.MEMORY_FILE not in tree_texts(
            drive, commit_tree_id(drive, head)):
        if before is None:
            delete_ref(drive, ref)
        else:
            set_ref(drive, ref, before, "memgit sync: restore")
        raise NotADriveError.no_memory(f"the remote {remote}", drive_branch(drive),
                                       remote=True)
    return head


class DriveHistory:
    """A drive's refs and commit graph through pygit2 (sync_state.History)."""

    def __init__(self, drive: Drive) -> None:
        self.drive = drive

    def ref_target(self, ref: str) -> str | None:
        return ref_target(self.drive, ref)

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        return is_ancestor(self.drive, ancestor, descendant)

    def merge_base(self, a: str, b: str) -> str | None:
        return merge_base(self.drive, a, b)

    def first_parent_chain(self, head: str, stop: str | None) -> list[str]:
        return first_parent_chain(self.drive, head, stop)


def server_purged_ids(drive: Drive, remote: str) -> set[str]:
    """The ids the server's ``refs/memgit/purged`` lists, as last fetched."""
    head = ref_target(drive, PURGED_FROM + remote)
    if head is None:
        return set()
    text = tree_texts(drive, commit_tree_id(drive, head)).get(PURGED_IDS_FILE, "")
    return {line for line in text.split("\n") if ID_RE.match(line)}


def _refuse_local_purge(state: SyncState, local_head: str, server_head: str,
                        tracking: dict[str, str | None]) -> None:
    """The server's branch no longer descends from ``last-synced``: when that is because
    this checkout was purged of entries the server still holds (memgit.sync.local_purge),
    forget the fetch and refuse; a purge on the server goes on as before."""
    drive, remote = state.drive, state.remote
    ids = locally_purged(drive, server_purged_ids(drive, remote), local_head, server_head)
    if ids:
        forget_fetch(drive, tracking)
        raise LocallyPurgedError(remote, ids)


def learn_purged(drive: Drive, remote: str) -> int:
    """Delete from this checkout's recall index the entries the server purged (the ids
    its ``refs/memgit/purged`` lists, fetched with the branch), with the scrubbing the
    server's purge uses (recall_index.forget_entries). Runs when that list changed;
    returns the rows deleted."""
    head = ref_target(drive, PURGED_FROM + remote)
    if head is None or ref_target(drive, LEARNED + remote) == head:
        return 0
    text = tree_texts(drive, commit_tree_id(drive, head)).get(PURGED_IDS_FILE, "")
    ids = [line for line in text.split("\n") if ID_RE.match(line)]
    deleted = forget_entries(drive, ids, scrub=False)
    set_ref(drive, LEARNED + remote, head, "memgit sync: purged ids applied")
    return deleted


def waiting_commits(drive: Drive, remote: str = "origin") -> list[str]:
    """Local commits not yet on the server (as far as the last sync knows)."""
    branch = drive_branch(drive)
    ref = f"refs/heads/{branch}"
    if ref_target(drive, ref) is None:
        raise missing_branch(drive, ref)
    return sync_state.waiting_commits(DriveHistory(drive), branch, remote)


def sync(drive: Drive, remote: str = "origin", on_conflict: str = "local",
         progress: Callable[[str], None] | None = None, batch: int = 1,
         step: Callable[[str], None] | None = None) -> SyncReport:
    """Replay local commits onto the server's branch; see the module docstring.

    ``batch`` > 1 pushes up to that many replayed commits per push (one round
    trip; still one server commit per local commit). A batch the server
    refuses is retried one commit at a time, so the commits before the
    refused one land and the refusal names it.

    ``progress`` gets progress lines (``[2/5] COMMIT``) only when stderr is a terminal:
    long work shows progress there and prints nothing to a pipe, a log or an agent's
    tool call. ``step`` gets the same lines whatever stderr is (a hook for callers that
    act between pushes).
    """
    if on_conflict not in CONFLICT_CHOICES:
        raise UsageError(f"--on-conflict must be one of {', '.join(CONFLICT_CHOICES)}", "")
    if not 1 <= batch <= MAX_BATCH:
        raise UsageError(f"--batch must be between 1 and {MAX_BATCH}", "")
    say = _sayer(progress, step)
    repaired = recover_checkout(drive)
    local_head = check_checkout(drive, remote)
    report = SyncReport(remote, repaired=repaired)
    state = SyncState(drive, remote, on_conflict, report, budget=race_budget(drive))
    tracking = {ref: ref_target(drive, ref) for ref in (
        remote_head_ref(remote), f"refs/remotes/{remote}/{drive_branch(drive)}")}
    server_head = _timed(report, "fetch", lambda: fetch(drive, remote))
    report.forgotten = learn_purged(drive, remote)
    last = ref_target(drive, LAST_SYNCED)
    if last is not None and server_head is None:
        raise RepoError(f"{remote} has no {drive_branch(drive)} any more "
                        "(it had one at the last sync)",
                        "ask the drive's admin; nothing was pushed and nothing local changed")
    gone = purged_since(drive, last, server_head, state.tree_of)
    if gone is not None:
        assert server_head is not None  # purged_since says None without one
        _refuse_local_purge(state, local_head, server_head, tracking)
        report.rewritten = True
        say("the server's history was rewritten (a purge): replaying only unsynced work")
        state.drop = gone
    since = sync_state.since(DriveHistory(drive), local_head, server_head)
    if server_head is not None and is_ancestor(drive, server_head, local_head):
        since = server_head  # the server has nothing new: push the rest as it is
    commits = first_parent_chain(drive, local_head, since)
    if server_head is not None and is_ancestor(drive, local_head, server_head):
        commits = []  # everything local is on the server already: fast-forward
    if server_head is not None:
        report.pulled = not is_ancestor(drive, server_head, local_head)
        state.server_base = last if last is not None and not report.rewritten \
            else merge_base(drive, local_head, server_head)
    target = server_head
    state.pending = commits
    done = 0
    while done < len(commits):
        chunk = commits[done:done + (1 if state.holds else batch)]
        say(f"[{done + len(chunk)}/{len(commits)}] {chunk[-1][:10]}")
        pushed = _sync_batch(state, chunk, target) if len(chunk) > 1 else None
        if pushed is None:
            for commit in chunk:
                target = _sync_commit(state, commit, target)
        else:
            target = pushed[0]
        done += len(chunk)
    _timed(report, "finish", lambda: _finish(state, local_head, target))
    _vectors_later(drive)
    return report


def _sayer(progress: Callable[[str], None] | None,
           step: Callable[[str], None] | None) -> Callable[[str], None]:
    """One callable for what sync says as it goes: ``progress`` on a terminal only."""
    show = progress if progress is not None and _on_terminal() else None

    def say(message: str) -> None:
        if step is not None:
            step(message)
        if show is not None:
            show(message)

    return say


def _on_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # no stderr, or a closed one
        return False


def _vectors_later(drive: Drive) -> None:
    """For a drive with an ``embeddings:`` section: the recall index brought to the new
    head now and the vectors of the entries the sync brought left to the background
    filler (memgit.embeddings.fill). The sync is done: a failure here is the next read's."""
    from memgit import state as state_db
    from memgit.embeddings import fill as vector_fill

    try:
        policy = _policy(drive)
        config = policy.embeddings()
        if config is not None:
            # Opened again: after a purge's prune, this process's repository object may
            # still list packs that are gone (pygit2 caches the object database).
            fresh = open_drive(drive.root)
            ensure_current(fresh, policy=policy)
            vector_fill.schedule(drive.git_dir, config)
    except (MemgitError, state_db.Error, OSError):
        pass


T = TypeVar("T")


def _timed(report: SyncReport, phase: str, work: Callable[[], T]) -> T:
    started = time.perf_counter()
    try:
        return work()
    finally:
        report.seconds[phase] += time.perf_counter() - started


def _push(state: SyncState, oid: str, local: str) -> PushOutcome:
    """Push ``oid``, naming the local commit it replays (``memgit-work``, a push option):
    memgit's push queue knows the work by it when it comes back after a lost race."""
    proc = _timed(state.report, "push", lambda: push_commit(
        state.drive, state.remote, oid, drive_branch(state.drive),
        options=[f"{WORK_OPTION}={local}"]))
    return parse_push(proc.returncode, proc.stdout.decode(errors="replace"),
                      proc.stderr.decode(errors="replace"))


def _sync_batch(state: SyncState, chunk: list[str], target: str | None) -> tuple[str | None] | None:
    """Replay ``chunk`` as a chain on ``target`` and push its tip at once.

    Returns ``(new server head,)``, or None when the server refused the batch
    (the caller then goes one commit at a time).
    """
    drive, report = state.drive, state.report
    clock = state.race_clock("a batch")
    while True:
        tip, pairs, skipped = target, [], []
        for commit in chunk:
            info = commit_info(drive, commit)
            parent = info.parents[0] if info.parents else None
            new = commit if parent == tip and not state.drop and not state.holds else \
                _timed(report, "replay", partial(replay_pending, state, commit, parent, tip))
            if new is None:
                skipped.append(commit)
                continue
            pairs.append((commit, new))
            tip = new
        if not pairs:
            report.skipped.extend(skipped)
            _mark(state, target, chunk[-1])
            return (target,)
        assert tip is not None
        outcome = _push(state, tip, chunk[0])
        if outcome.status == "ok":
            report.pushed.extend(pairs)
            report.skipped.extend(skipped)
            _mark(state, tip, chunk[-1])
            return (tip,)
        if outcome.status == "race":
            target = _lost_race(state, clock, outcome)
            continue
        if outcome.status == "refused":
            return None
        raise network_error(state.remote, outcome.message, "push to")


def _sync_commit(state: SyncState, commit: str, target: str | None) -> str | None:
    """Push one local commit (replayed if needed); returns the new server head."""
    drive, report = state.drive, state.report
    info = commit_info(drive, commit)
    parent = info.parents[0] if info.parents else None
    clock = state.race_clock(commit[:10])
    while True:
        if parent == target and not state.drop and not state.holds:
            new: str | None = commit
        else:
            new = _timed(report, "replay", partial(replay_pending, state, commit, parent, target))
        if new is None:  # already on the server, or all its changes held (report.held)
            if not state.holds or not any(h.covers(state.index(commit)) for h in state.holds):
                report.skipped.append(commit)
            _mark(state, target, commit)
            _landed(state, commit)
            return target
        outcome = _push(state, new, commit)
        if outcome.status == "ok":
            report.pushed.append((commit, new))
            _mark(state, new, commit)
            _landed(state, commit)
            return new
        if outcome.status == "race":
            target = _lost_race(state, clock, outcome)
            continue
        if outcome.status == "refused":
            purged = _purged_ids(state, new, outcome.message) if state.report.rewritten \
                or "MG606" in outcome.message or "MG607" in outcome.message else set()
            if purged - state.drop:
                state.drop |= purged
                continue
            _hold(state, commit, parent, new, outcome.message)  # raises when nothing fixes it
            continue
        raise network_error(state.remote, outcome.message, "push to")


def _hold(state: SyncState, commit: str, parent: str | None, pushed: str, message: str) -> None:
    """The server refused ``pushed`` (``commit`` replayed): when a later pending commit
    changes or deletes what it refused (the fix the hint asks for), hold those changes
    back until that commit (memgit.sync.refusal.Hold); else raise the refusal."""
    refused = read_refusal(message, state.tree_of(pushed))
    k = state.index(commit)
    if not refused.fixable or k < 0:
        raise SyncRefusedError(commit, message, refused)
    ended = next((h for h in state.holds if h.last == k), None)  # its net effect refused
    if ended is not None:
        refused = refused.merged(ended.refused)
    last = last_touching(state, k, refused)
    hold = Hold(refused, ended.first if ended else k, last or k,
                ended.base if ended else parent)
    if last is None or hold in state.holds:
        raise SyncRefusedError(commit, message, refused)
    if hold.base is not None and ended is None and not state.holding(commit):
        # a sync killed from here on starts again with the refused commit (inside another
        # hold, sync-source already stands before that one's first held change)
        set_ref(state.drive, SYNC_SOURCE, hold.base, "memgit sync: holding refused changes")
    if ended is not None:
        state.holds.remove(ended)
    state.holds.append(hold)


def last_touching(state: SyncState, k: int, refused: Refused) -> int | None:
    """The index of the last pending commit after ``k`` that changes what was refused."""
    last = None
    for index in range(k + 1, len(state.pending)):
        commit = state.pending[index]
        info = commit_info(state.drive, commit)
        parent = info.parents[0] if info.parents else None
        if any(refused.touches(op) for op in _commit_ops(state, parent, commit)):
            last = index
    return last


def _landed(state: SyncState, commit: str) -> None:
    """Record the holds whose net effect just landed with ``commit``."""
    if not state.holds:
        return
    k = state.index(commit)
    for hold in state.holds:
        if hold.last == k:
            state.report.held.append((state.pending[hold.first], commit, hold.refused.names()))


def race_budget(drive: Drive) -> float:
    """Seconds a push may keep losing races: git config, then memgit.yaml (retry.py)."""
    return retry_seconds(drive.config_value(RETRY_CONFIG),
                         dict(_policy(drive).setting("sync", ())).get("retry_seconds"))


def _lost_race(state: SyncState, clock: RaceClock, outcome: PushOutcome) -> str | None:
    """Another push landed first (or held the branch): wait the clock's backoff (it raises
    once the budget is spent), then fetch the server's new head to replay on."""
    state.report.races += 1
    delay = clock.lost(f"{outcome.summary}\n{outcome.message}")
    _timed(state.report, "backoff", partial(time.sleep, delay))
    return _timed(state.report, "fetch", lambda: fetch(state.drive, state.remote))


def replay_pending(state: SyncState, commit: str, parent: str | None,
                   target: str | None) -> str | None:
    """The commit's operations applied on ``target``; None when nothing changes."""
    drive = state.drive
    ops: list[ReplayOp] = _held(state, commit, _commit_ops(state, parent, commit))
    kept = [op for op in ops if op.id not in state.drop]
    state.report.dropped.extend(op.id for op in ops if op.id in state.drop)
    base = state.tree_of(target)
    info = commit_info(drive, commit)
    applied = apply_replay_ops(base, kept, on_conflict=state.on_conflict, when=info.author_time,
                        theirs_when=_theirs_when(state, target))
    # A conflict with an identical resolution is reported once, at the first attempt.
    for conflict in applied.conflicts:
        if conflict not in state.report.conflicts:
            state.report.conflicts.append(conflict)
    if applied.tree == base and target is not None:
        return None
    base_tree = commit_tree_id(drive, target) if target is not None else None
    tree = tree_from_texts(drive, base_tree, base, applied.tree)
    return replay_commit(drive, commit, tree, [target] if target is not None else [])


def _held(state: SyncState, commit: str, ops: list[ReplayOp]) -> list[ReplayOp]:
    """``ops`` without the changes held back (memgit.sync.refusal.Hold); the commit a hold
    ends with gets their net effect since the hold's base."""
    if not state.holds:
        return ops
    k = state.index(commit)
    for hold in state.holds:
        if not hold.covers(k):
            continue
        ops = [op for op in ops if not hold.refused.touches(op)]
        if k == hold.last:
            net = compute_ops(state.tree_of(hold.base), state.tree_of(commit))
            ops += [op for op in net if hold.refused.touches(op)]
    return ops


def replay_chain(drive: Drive, commits: list[str], onto: str | None,
                 on_conflict: str = "local", drop: frozenset[str] = frozenset()
                 ) -> list[tuple[str, str | None]]:
    """Replay ``commits`` (oldest first, each as the operations it made against its first
    parent) onto ``onto`` exactly as sync does, pushing nothing: (commit, the commit it
    became, or None when its operations are already there). A commit whose parent is
    the current tip is kept as it is, unless operations on the ids in ``drop`` (purged
    entries) must be left out. memgit gate and gate-mode sync use it."""
    state = SyncState(drive, "", on_conflict, SyncReport(""), drop=set(drop))
    tip: str | None = onto
    out: list[tuple[str, str | None]] = []
    for commit in commits:
        info = commit_info(drive, commit)
        parent = info.parents[0] if info.parents else None
        new = commit if parent == tip and not drop else replay_pending(state, commit, parent, tip)
        out.append((commit, new))
        tip = new or tip
    return out


def _commit_ops(state: SyncState, parent: str | None, commit: str) -> list[ReplayOp]:
    """The entry operations ``commit`` made against ``parent``."""
    changed = None
    if parent is not None:
        changed = [path for path, _blob in changed_files(
            state.drive, commit_tree_id(state.drive, parent), commit_tree_id(state.drive, commit))]
    return compute_ops(state.tree_of(parent), state.tree_of(commit), changed)


def _theirs_when(state: SyncState, target: str | None) -> Callable[[str], int | None]:
    """When the server last changed an entry id (or ``file:PATH``) since the last sync."""

    def lookup(key: str) -> int | None:
        if target is None:
            return None
        if target not in state.server_times:
            times: dict[str, int] = {}
            chain = first_parent_chain(state.drive, target, state.server_base)
            for oid in chain[-200:]:
                info = commit_info(state.drive, oid)
                parent = info.parents[0] if info.parents else None
                for op in _commit_ops(state, parent, oid):
                    times[op.id] = max(times.get(op.id, 0), info.author_time)
            state.server_times[target] = times
        return state.server_times[target].get(key)

    return lookup


_PURGED_ID_RE = re.compile(r"MG606 [a-z-]+: entry (\S+) was purged")
_PURGED_LINE_RE = re.compile(r"^\s*(\S+?):(\d+): MG607 ", re.M)


def _purged_ids(state: SyncState, commit: str, message: str) -> set[str]:
    """Entry ids the server refused as purged (MG606 by id, MG607 by file and line)."""
    found = set(_PURGED_ID_RE.findall(message))
    tree = state.tree_of(commit)
    for path, line in _PURGED_LINE_RE.findall(message):
        text = tree.get(path)
        if text is None:
            continue
        for ln, entry in fmt.parse_document(path, text).entries():
            if ln.number == int(line):
                found.add(entry.id)
    return found


def _mark(state: SyncState, server: str | None, local: str) -> None:
    """Record progress: the server commit reached and the local commit it stands for
    (not while changes of ``local`` or before it are held for a later commit)."""
    if server is not None:
        set_ref(state.drive, LAST_SYNCED, server, "memgit sync: pushed")
    if not state.holding(local):
        set_ref(state.drive, SYNC_SOURCE, local, "memgit sync: replayed")


def _finish(state: SyncState, local_head: str, target: str | None) -> None:
    drive, report = state.drive, state.report
    branch = f"refs/heads/{drive_branch(drive)}"
    if target is not None and target != local_head:
        # The work tree was clean, so it equals local_head's tree: moving to the
        # server's head is a plain two-tree switch.
        with write_lock(drive):  # a write in this checkout waits; a killed one is finished
            switch_branch_to(drive, branch, local_head, target,
                             "memgit sync: take the server's head")
    if target is not None:
        set_ref(drive, LAST_SYNCED, target, "memgit sync: done")
        set_ref(drive, f"refs/remotes/{state.remote}/{drive_branch(drive)}", target,
                "memgit sync")
    delete_ref(drive, SYNC_SOURCE)
    config_set(drive.git_dir, LAST_SYNC_CONFIG, str(int(time.time())))
    report.head = target
    if report.rewritten or report.dropped:
        # Purged text may sit in the old history or in a local commit that put
        # a purged entry back: neither is reachable any more, so prune it.
        delete_ref(drive, "ORIG_HEAD")
        expire_reflogs_and_prune(drive.git_dir)


def purged_since(drive: Drive, last: str | None, server_head: str | None,
                 tree_of: Callable[[str | None], dict[str, str]] | None = None
                 ) -> set[str] | None:
    """After a fetch: None when the server's new head still descends from ``last`` (what
    we had of it); else its history was rewritten (a purge), and these are the entry
    ids ``last`` held that the new head lacks (sync drops operations on them; a mount
    deletes them from its recall index)."""
    if last is None or server_head is None or is_ancestor(drive, last, server_head):
        return None
    texts = tree_of or (lambda c: tree_texts(drive, commit_tree_id(drive, c or "")))
    return set(entry_map(texts(last))) - set(entry_map(texts(server_head)))


# --- status ------------------------------------------------------------------------------


def sync_status(drive: Drive, remote: str = "origin") -> dict[str, Any]:
    """What ``memgit status`` shows (no network: as of the last fetch)."""
    if drive.workdir is None:
        raise UsageError("memgit status describes a checkout, not a bare repository",
                         "use memgit info on a server drive")
    policy = drive_policy(drive)
    if ref_target(drive, f"refs/heads/{policy.branch}") is None:
        raise missing_branch(drive, f"refs/heads/{policy.branch}")
    return sync_state.status(DriveHistory(drive), policy.branch, remote,
                             remote_url(drive, remote), drive.config_value(LAST_SYNC_CONFIG),
                             kind=policy.kind)
