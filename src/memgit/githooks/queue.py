"""The push queue: pre-receive judges the pushes of one drive one at a time, oldest
work first.

git's receive-pack runs pre-receive *before* it locks the ref a push updates, and
only then compares the ref with the value the pusher started from (the push's OLD).
So when several agents push on the same head at once, every hook judges its push
side by side, and all but the first to reach the ref lock are thrown away by git
("cannot lock ref ... is at X but expected OLD"): on a busy server the judging of
N pushes shares the CPU, and N-1 of them are wasted work that delays the one that
counts.

Here pre-receive first takes its turn: an exclusive ``flock`` on
``<git dir>/memgit/receive.lock`` (the kernel releases it when the hook process
ends, however it ends, so there is no stale lock). With the turn it checks each
update's OLD against the ref's current value: a push whose branch moved while it
waited cannot land (git would refuse it at the ref lock), so it is refused at once
with MG604 and nothing is judged; the client fetches, replays and pushes again
(memgit.sync.retry). A push that passes is judged while the others wait. A waiting
push watches the ref files and stops waiting as soon as its branch moves away
from its OLD.

Who goes first. A push's *work* is the commit it pushes, known by its author line
(a replayed commit keeps it, so work that lost a race is recognised when it comes
back), and its age is when the server first saw it (the server's clock: an agent's
clock or a back-dated commit cannot move it ahead). Only the oldest work pending
waits for the turn: a push with older work ahead of it (waiting here, or refused a
moment ago and on its way back) would be doomed by it, so it is refused at once,
unjudged, keeping its place, and told when to come back (the number of older pushes
times the recent pace of landings, ``memgit/receive-pace``). A refused push leaves a
*reservation* of its place (``memgit/receive-queue/``) until a little after that
time. So pushes land oldest first, each client comes back about when its turn comes
instead of all at once after every landing, and a push holds no server process while
it waits (a smart HTTP server has only so many).

The turn ends when the hook exits, but git moves the ref a little later (after
it has moved the quarantined objects into place). So an accepted hook leaves a
note (``memgit/receive-turn``: the pid of its parent, git receive-pack, and what
the ref files looked like); the next hook to get the turn waits until that
receive-pack has moved the ref or has ended (:data:`PREVIOUS_WAIT` at most)
before it compares. Without the note it would judge a push that git is about to
refuse.

None of this decides what lands: git's ref lock and its OLD check still do. If
the turn cannot be had within :data:`QUEUE_WAIT` seconds, or the queue's files
cannot be written, the hook goes on without a turn (as before the queue existed).
"""

from __future__ import annotations

import errno
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from memgit.errors import MemgitError
from memgit.git.plumbing import git_plumbing, refs_snapshot
from memgit.githooks.hook_io import RefUpdate, emit, parse_updates

LOCK_FILE = "memgit/receive.lock"
NOTE_FILE = "memgit/receive-turn"
PACE_FILE = "memgit/receive-pace"  # when the last push landed, and the mean interval
QUEUE_DIR = "memgit/receive-queue"  # tickets of waiting pushes and reservations
QUEUE_WAIT = 60.0  # seconds a push waits for its turn before it is judged without one
RESERVE = 5.0  # seconds a reservation outlives the time its push was told to come back
# The longest a refused push is told to wait: its reservation then lapses within
# MAX_BACK_IN + RESERVE, so the place of work whose client gave up (its sync ran out of
# time, or was killed) cannot hold younger pushes back for longer; a client still there
# renews its place when it comes back.
MAX_BACK_IN = 10.0
PACE = 1.0  # seconds between landings assumed before any were seen
EARLY = 0.8  # a refused push is told to come back after this share of its expected wait
PREVIOUS_WAIT = 10.0  # seconds at most to wait for the previous push's ref update
# git receive-pack's pid when the hook runs in a child of the warm judge (whose parent is
# the judge), sent by the hook script; None: this process's parent (memgit.githooks.warm)
PARENT_PID: int | None = None
POLL = 0.005  # seconds between two looks at the lock, the tickets and the ref files
WORK_OPTION = "memgit-work"  # the push option naming the work (memgit.sync.retry's too)
NO_AGE = 10**13 - 1  # the age of work whose author cannot be read: last


def in_turn(git_dir: Path, stdin: bytes, judge: Callable[[], int]) -> int:
    """pre-receive's exit status for a push judged by ``judge`` in its turn; a push whose
    turn it is not, or whose branch moved while it waited, is refused unjudged. The queue
    only saves work: input it cannot read, or any failure of its own, leaves the push
    to ``judge`` at once."""
    try:
        updates = parse_updates(stdin)
        turn = take_turn(git_dir, updates)
    except Exception:  # noqa: BLE001 - bad input is the judge's to refuse
        return judge()
    status = 1
    try:
        if turn.refused:
            emit(turn.refusal_lines())
            return 1
        status = judge()
        return status
    finally:
        turn.release(accepted=status == 0)


@dataclass(frozen=True)
class Work:
    """What a push brings, as the queue orders it: when the server first saw it (ms) and
    who it is (a hash of its tip's author line)."""

    first_seen: int = NO_AGE
    who: str = "unknown"

    @property
    def key(self) -> str:
        return f"{self.first_seen:013d}.{self.who}"


@dataclass
class Turn:
    """This push's turn (``fd`` None: judged without one), or why it is refused: older
    work ahead of it (``ahead``) or its branch moved (``moved``)."""

    git_dir: Path
    updates: Sequence[RefUpdate]
    work: Work = Work()
    fd: int | None = None
    waited: float = 0.0
    ahead: int = 0  # pushes of older work pending
    moved: dict[str, str] = field(default_factory=dict)  # ref -> its value now
    back_in: float = 0.0  # seconds after which a refused push should come back
    ticket: Path | None = None  # ``w.`` entry while it waits or is judged here

    @property
    def refused(self) -> bool:
        return bool(self.ahead or self.moved)

    def refusal_lines(self) -> list[str]:
        """What pre-receive prints for a push refused unjudged (memgit.sync.retry reads
        the first line and the ``come back`` time)."""
        # it may wait here once one older push is left: come back a little before that
        self.back_in = min(MAX_BACK_IN,
                           max(0, self.ahead - 1) * _pace(self.git_dir) * EARLY)
        hint = ("    hint: fetch, apply your change on the new head and push again in about "
                f"{self.back_in:.1f} s; this push keeps its place in the queue meanwhile "
                "(memgit sync does all this by itself)")
        lines = [f"{NOT_JUDGED}: the branch moved while it waited for its turn", ""]
        for ref, now in sorted(self.moved.items()):
            lines += [ref, f"  (drive): MG604 non-fast-forward: {ref} moved to {now[:10]} "
                           f"while this push waited {self.waited:.1f} s (another push "
                           "landed first)", hint]
        if not self.moved:
            ref = next((u.ref for u in self.updates if not u.is_delete), "")
            many = self.ahead != 1
            lines = [f"{NOT_JUDGED}: older pushes go first ({self.ahead} queued)", "", ref,
                     f"  (drive): MG604 non-fast-forward: {ref} is about to move: "
                     f"{self.ahead} push{'es' if many else ''} of older work "
                     f"{'go' if many else 'goes'} first", hint]
        return [*lines, "", "memgit: nothing was accepted"]

    def release(self, accepted: bool) -> None:
        """End the turn: a refused push reserves its place until a little after it was
        told to come back; an accepted one ends its reservations, records the pace and
        leaves the note the next turn waits on."""
        queue = self.git_dir / QUEUE_DIR
        if self.ticket is not None:
            self.ticket.unlink(missing_ok=True)
        update = next((u for u in self.updates if not u.is_delete), None)
        if self.refused and self.work.who.startswith("pid") and update is not None:
            known = _work(self.git_dir, queue, update.new)
            self.work = Work(min(self.work.first_seen, known.first_seen), known.who)
        if self.refused and self.work.first_seen != NO_AGE:
            for name in _names(queue):
                if name.startswith(f"r.{self.work.key}."):
                    (queue / name).unlink(missing_ok=True)
            expiry = int((time.time() + self.back_in + RESERVE) * 1000)
            _write(queue / f"r.{self.work.key}.{expiry}", "")
        if accepted:
            for name in _names(queue):
                if name.startswith(f"r.{self.work.key}."):
                    (queue / name).unlink(missing_ok=True)
            _record_pace(self.git_dir)
        if self.fd is None:
            return
        try:
            if accepted:
                _write_note(self.git_dir, self.updates)
        finally:
            os.close(self.fd)  # closing the only descriptor releases the flock
            self.fd = None


NOT_JUDGED = "memgit: push not judged"


def take_turn(git_dir: Path, updates: Sequence[RefUpdate],
              wait: float = QUEUE_WAIT) -> Turn:
    """This push's turn. It waits here only while no older work is away and at most one
    older push is here (the next to land: its landing dooms this push, which then comes
    back at once); otherwise it is refused at once with when to come back. Waiting, it
    takes the flock only when no older push is here, and watches the ref files."""
    update = next((u for u in updates if not u.is_delete), None)
    queue = git_dir / QUEUE_DIR
    turn = Turn(git_dir, updates)
    if update is not None:
        # an empty queue (no contention): who the work is can wait until it is refused
        turn.work = _work(git_dir, queue, update.new) \
            if _entries(queue) or pushed_work() is not None else \
            Work(int(time.time() * 1000), f"pid{os.getpid()}")
    here, away = _older(queue, turn.work)
    if away or len(here) > 1:
        turn.ahead = len(here | away)
        return turn
    started = time.monotonic()
    seen = {u.ref: _signature(git_dir / u.ref) for u in updates}
    fd = _open_lock(git_dir / LOCK_FILE)
    turn.ticket = queue / f"w.{turn.work.key}.{os.getpid()}"
    if fd is not None and not _write(turn.ticket, ""):
        os.close(fd)
        fd = None
    while fd is not None and (here or not _try_lock(fd)):
        now = {ref: _signature(git_dir / ref) for ref in seen}
        if now != seen:
            seen = now
            turn.moved = _moved(git_dir, updates)
            if turn.moved:
                break
        here, away = _older(queue, turn.work)
        if away or len(here) > 1:
            turn.ahead = len(here | away)
            break
        if time.monotonic() - started > wait:
            break
        time.sleep(POLL)
    else:
        turn.fd = fd
    if turn.fd is None and fd is not None:
        os.close(fd)
    turn.waited = time.monotonic() - started
    if turn.ahead:
        return turn
    if turn.fd is not None:
        _wait_for_previous(git_dir)
    if not turn.moved:
        turn.moved = _moved(git_dir, updates)
    if turn.moved:
        turn.ahead = len(set().union(*_older(queue, turn.work)))
    return turn


def _moved(git_dir: Path, updates: Sequence[RefUpdate]) -> dict[str, str]:
    """The updates whose ref no longer holds the push's OLD: ref -> its value now."""
    loose = {u.ref: _loose_value(git_dir, u.ref) for u in updates}
    current = {ref: value for ref, value in loose.items() if value is not None}
    try:
        if len(current) < len(loose):
            current.update(ref_values(git_dir, [u.ref for u in updates]))
    except MemgitError:  # not ours to decide: the push is judged, git's lock decides
        return {}
    moved = {}
    for u in updates:
        now = current.get(u.ref, "0" * len(u.old))
        if now != u.old:
            moved[u.ref] = now
    return moved


def _loose_value(git_dir: Path, ref: str) -> str | None:
    """The value of ``ref`` read from git's files without starting git: its loose ref file
    (the id and a newline), else its line in ``packed-refs`` (``OID NAME``; git's files
    backend reads a loose ref before the packed one, so a packed line counts only when
    there is no loose file). None when neither answers (a symbolic ref, a reftable
    repository, a new ref): then git is asked."""
    try:
        text = (git_dir / ref).read_bytes().decode("ascii").strip()
    except FileNotFoundError:
        return _packed_value(git_dir, ref)
    except (OSError, UnicodeDecodeError):
        return None
    return text if _is_oid(text) else None


def _packed_value(git_dir: Path, ref: str) -> str | None:
    try:
        data = (git_dir / "packed-refs").read_bytes()
    except OSError:
        return None
    name = b" " + ref.encode()
    for line in data.splitlines():
        if line.endswith(name) and not line.startswith((b"#", b"^")):
            text = line[: -len(name)].decode("ascii", "replace")
            return text if _is_oid(text) else None
    return None


def _is_oid(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def ref_values(git_dir: Path, refs: Sequence[str]) -> dict[str, str]:
    """The current value of each of ``refs`` that exists."""
    wanted = set(refs)
    return {name: oid for name, oid, _kind in refs_snapshot(git_dir) if name in wanted}


# --- who goes first ---------------------------------------------------------------------


def _older(queue: Path, work: Work) -> tuple[set[str], set[str]]:
    """The older work pending, (here, away): pushes waiting or judged here
    (``w.FIRST_SEEN.WHO.PID``, while the process lives) and reservations of pushes on
    their way back (``r.FIRST_SEEN.WHO.EXPIRY_MS``, until they expire)."""
    entries = [(parts[0], f"{parts[1]}.{parts[2]}") for _name, parts in _entries(queue)
               if f"{parts[1]}.{parts[2]}" < work.key and parts[2] != work.who]
    here = {key for kind, key in entries if kind == "w"}
    return here, {key for kind, key in entries if kind == "r"} - here


def _entries(queue: Path) -> list[tuple[str, list[str]]]:
    """The live entries of the queue folder, split at the dots; stale ones are removed."""
    now = time.time()
    out = []
    for name in _names(queue):
        parts = name.split(".")
        if name.startswith(".") or len(parts) != 4 or parts[0] not in ("w", "r") \
                or not parts[3].isdigit():
            continue
        if parts[0] == "w":
            live = _alive(int(parts[3])) and _recent(queue / name)
        else:
            live = now < int(parts[3]) / 1000 <= now + QUEUE_WAIT * 10
        if live:
            out.append((name, parts))
        else:
            (queue / name).unlink(missing_ok=True)
    return out


def _recent(path: Path) -> bool:
    """A ticket older than twice the longest wait belongs to a process that is gone (its
    pid taken by another process since)."""
    try:
        return time.time() - os.stat(path).st_mtime < 2 * QUEUE_WAIT
    except OSError:
        return False


def _work(git_dir: Path, queue: Path, commit: str) -> Work:
    """The work of a push: who it is, by the ``memgit-work`` push option memgit sync sends
    (the local commit it replays), else by the author line of ``commit``; first seen
    now unless the queue knows it already (a push of it refused earlier)."""
    import hashlib

    named = pushed_work()
    if named is not None:
        who = hashlib.sha1(named.encode()).hexdigest()[:16]
    else:
        proc = git_plumbing(git_dir, "cat-file", "commit", commit)
        author = next((line for line in proc.stdout.split(b"\n\n", 1)[0].split(b"\n")
                       if line.startswith(b"author ")), None)
        if author is None:
            return Work()
        who = hashlib.sha1(author).hexdigest()[:16]
    seen = [int(parts[1]) for _name, parts in _entries(queue)
            if parts[2] == who and parts[1].isdigit()]
    return Work(min(seen, default=int(time.time() * 1000)), who)


def pushed_work() -> str | None:
    """The value of the push option ``memgit-work=...`` (git gives a hook the options as
    GIT_PUSH_OPTION_COUNT and GIT_PUSH_OPTION_0...), else None."""
    try:
        count = int(os.environ.get("GIT_PUSH_OPTION_COUNT", "0"))
    except ValueError:
        return None
    for n in range(min(count, 100)):
        name, sep, value = os.environ.get(f"GIT_PUSH_OPTION_{n}", "").partition("=")
        if sep and name == WORK_OPTION and value:
            return value
    return None


def _pace(git_dir: Path) -> float:
    """The mean interval between recent landings (seconds), else PACE."""
    try:
        _last, pace = (float(x) for x in (git_dir / PACE_FILE).read_text().split())
    except (OSError, ValueError):
        return PACE
    return pace if 0 < pace < QUEUE_WAIT else PACE


def _record_pace(git_dir: Path) -> None:
    """A push landed: fold the interval since the last one into the mean (only while
    pushes come less than QUEUE_WAIT apart: the queue's pace, not a quiet drive's)."""
    now = time.time()
    pace = _pace(git_dir)
    try:
        last = float((git_dir / PACE_FILE).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        last = 0.0
    if 0 < now - last < QUEUE_WAIT:
        pace = 0.7 * pace + 0.3 * (now - last)
    _write(git_dir / PACE_FILE, f"{now:.3f} {pace:.3f}\n")


def _names(folder: Path) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


def _write(path: Path, text: str) -> bool:
    """Write a small file atomically (a temporary file renamed); False on failure."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        path.parent.mkdir(exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)
        return False
    return True


# --- the lock -------------------------------------------------------------------------


def _open_lock(path: Path) -> int | None:
    try:
        path.parent.mkdir(exist_ok=True)
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    except OSError:
        return None


def _try_lock(fd: int) -> bool:
    """``flock(LOCK_EX | LOCK_NB)``: True when this process now holds the turn."""
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EACCES):
            return False
        raise
    return True


# --- the note an accepted push leaves -----------------------------------------------------


def _signature(path: Path) -> list[int] | None:
    """What a loose ref file looks like now: git replaces it (a rename of its lock
    file) when it moves the ref, so inode or mtime change; None when absent (a packed
    ref, or none)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_ino, st.st_mtime_ns, st.st_size]


def _write_note(git_dir: Path, updates: Sequence[RefUpdate]) -> None:
    _write(git_dir / NOTE_FILE, json.dumps({
        "pid": PARENT_PID or os.getppid(),  # git receive-pack: the hook script execs python
        "refs": {u.ref: _signature(git_dir / u.ref) for u in updates}}))


def _wait_for_previous(git_dir: Path) -> None:
    """If the last accepted push's receive-pack may still be about to move its ref,
    wait until it has (a ref file changed) or has ended; then drop its note."""
    path = git_dir / NOTE_FILE
    try:
        note = json.loads(path.read_text(encoding="utf-8"))
        pid = int(note["pid"])
        refs = {str(k): v for k, v in dict(note["refs"]).items()}
    except (OSError, ValueError, KeyError, TypeError):
        return
    deadline = time.monotonic() + PREVIOUS_WAIT
    while time.monotonic() < deadline and _alive(pid) and \
            all(_signature(git_dir / ref) == sig for ref, sig in refs.items()):
        time.sleep(POLL)
    path.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
