"""Losing a race to another push, and trying again within a time budget.

Many agents syncing with one server drive push to the same branch. git's
receive-pack runs pre-receive before it locks the branch, so two pushes made on the
same server head are both judged, and the second to take the branch's lock finds
it moved ("cannot lock ref ... is at X but expected Y"): that push is lost and
nothing of it lands. The client then fetches, replays the same entry operations
(the same ids) on the new head and pushes again, never forcing. :class:`RaceClock`
decides how long to wait before the next attempt (jittered exponential backoff, so
agents that lost together do not come back together) and when to give up: once
the budget (``git config memgit.syncRetrySeconds``, else ``sync: {retry_seconds}``
in memgit.yaml, else :data:`DEFAULT_RETRY_SECONDS`) has passed since the first
lost race of a commit. The error then says what happened: the branch kept moving,
or it stayed locked; a lock is called stale only when its file, seen on a server
on this machine, is older than any push holds one (docs/sync.md).
"""

from __future__ import annotations

import os
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from memgit.errors import ConflictError, UsageError
from memgit.githooks.queue import NOT_JUDGED

DEFAULT_RETRY_SECONDS = 60.0
RETRY_CONFIG = "memgit.syncRetrySeconds"
FIRST_DELAY = 0.05  # seconds before the first retry (then doubled, jittered)
MAX_DELAY = 2.0  # the longest wait between two attempts
# git holds a branch's lock file only while it writes the ref (milliseconds), so a
# lock file this old was left behind by a killed process, not held by a push.
STALE_LOCK_SECONDS = 60.0

_LOCKED_RE = re.compile(r"Unable to create '(.+?)\.lock': File exists")
# memgit's push queue (memgit.githooks.queue) starts its refusal of a push it did not
# judge (older work goes first, or the branch moved while the push waited) with
# NOT_JUDGED: such a server orders the pushes itself, keeps the push's place and says
# when to come back, in its hint (parsed here).
_BACK_IN_RE = re.compile(r"push again in about (\d+(?:\.\d+)?) s")


class SyncRaceError(ConflictError):
    """The server kept moving while we pushed, or its branch stayed locked."""


def held_lock(message: str) -> str | None:
    """The lock file git names when it found a ref locked (``Unable to create
    'PATH.lock': File exists``, in the server's ``remote:`` lines), else None. git says
    "cannot lock ref" also when the lock was taken but the ref had moved (``is at X but
    expected Y``): that is a moved branch, not a held lock."""
    found = _LOCKED_RE.search(message)
    return os.path.normpath(found.group(1)) + ".lock" if found else None


def retry_seconds(config_value: str | None, setting: object) -> float:
    """The budget: git config (``config_value``) first, then memgit.yaml's
    ``sync: {retry_seconds: N}`` (``setting``, already checked), else the default."""
    if config_value is not None:
        try:
            seconds = float(config_value)
        except ValueError:
            seconds = -1.0
        if not seconds >= 0 or seconds == float("inf"):
            raise UsageError(f"git config {RETRY_CONFIG} is {config_value!r}, not a number "
                             "of seconds", f"git config {RETRY_CONFIG} 60 (0: do not retry)")
        return seconds
    if isinstance(setting, int | float):
        return float(setting)
    return DEFAULT_RETRY_SECONDS


def local_server_path(url: str | None) -> Path | None:
    """The folder of a server on this machine (a ``file://`` URL or a path), else None:
    only there can memgit look at the server's lock files."""
    if not url:
        return None
    if "://" in url:
        parts = urlsplit(url)
        return Path(unquote(parts.path)) if parts.scheme == "file" else None
    head = url.split("/", 1)[0]
    if ":" in head:  # git's scp-like syntax, host:path, is ssh
        return None
    return Path(url)


@dataclass
class RaceClock:
    """The lost races of one push (one commit or one batch) and when to give up.

    ``lost(message)`` after each lost race returns how long to wait before the next
    attempt, or raises :class:`SyncRaceError` once the budget is spent (or at once for
    a lock file that is stale on a server on this machine).
    """

    budget: float
    what: str  # what is being pushed (a commit's short id, "a batch")
    server: Path | None = None  # the server's folder when it is on this machine
    url: str = ""
    clock: Callable[[], float] = time.monotonic
    rng: random.Random = field(default_factory=random.Random)
    started: float | None = None
    moved: int = 0
    locked: int = 0
    lock_path: str | None = None

    def lost(self, message: str) -> float:
        now = self.clock()
        if self.started is None:
            self.started = now
        lock = held_lock(message)
        if lock is None:
            self.moved += 1
        else:
            self.locked += 1
            self.lock_path = lock
            age = self._lock_age(lock)
            if age is not None and age > STALE_LOCK_SECONDS:
                raise self._locked_error(now, age)
        left = self.started + self.budget - now
        if left <= 0:
            raise self._locked_error(now, self._lock_age(lock)) if lock is not None \
                else self._moved_error(now)
        back_in = _BACK_IN_RE.search(message) if NOT_JUDGED in message else None
        if back_in is not None:
            seconds = float(back_in.group(1))
            return min(left, self.rng.uniform(0.9 * seconds, 1.1 * seconds + FIRST_DELAY))
        ceiling = min(MAX_DELAY, FIRST_DELAY * 2 ** (self.moved + self.locked - 1))
        return min(left, self.rng.uniform(ceiling / 2, ceiling))

    # --- the errors -------------------------------------------------------------------

    def _lock_age(self, lock: str) -> float | None:
        """Seconds since the lock file was written, when the server is on this machine
        and the file is still there; None otherwise."""
        if self.server is None:
            return None
        try:
            return max(0.0, time.time() - os.stat(lock).st_mtime)
        except OSError:
            return None

    def _tally(self, now: float) -> str:
        spent = now - (self.started or now)
        tries = self.moved + self.locked
        return f"{tries} attempt{'s' if tries != 1 else ''} in {spent:.0f} s"

    def _moved_error(self, now: float) -> SyncRaceError:
        return SyncRaceError(
            f"the server's branch kept moving while pushing {self.what}: other pushes "
            f"landed first {self.moved} time{'s' if self.moved != 1 else ''} "
            f"({self._tally(now)})",
            "other agents are pushing to this drive all the time; your commits are kept: "
            f"run memgit sync again, or give it longer (git config {RETRY_CONFIG} SECONDS, "
            f"now {self.budget:g})")

    def _locked_error(self, now: float, age: float | None) -> SyncRaceError:
        lock = self.lock_path or "the branch's lock file"
        message = (f"the server's branch stayed locked while pushing {self.what} "
                   f"({self._tally(now)}; {lock} existed at every attempt)")
        if age is not None and age > STALE_LOCK_SECONDS:
            return SyncRaceError(
                f"the server's branch is locked by a stale lock file while pushing "
                f"{self.what}: {lock} is {age:.0f} s old",
                "git holds a branch's lock only while it writes the ref (milliseconds), so "
                "a killed process left it; when no git process runs in that repository, "
                "remove the file, then run memgit sync again (your commits are kept)")
        if age is not None:
            return SyncRaceError(
                message,
                f"the lock file is {age:.0f} s old: the server is busy updating the branch; "
                "run memgit sync again (your commits are kept)")
        if self.server is not None:
            return SyncRaceError(
                message,
                "the lock is gone now: run memgit sync again (your commits are kept)")
        return SyncRaceError(
            message,
            f"over {_scheme(self.url)} memgit cannot see the server's lock file, so it cannot "
            "tell a busy server from a lock left by a killed process: run memgit sync again "
            "(your commits are kept); if it keeps failing, the server's admin checks whether "
            f"{lock} is older than a push (then it is stale and is removed)")


def _scheme(url: str) -> str:
    if "://" in url:
        return urlsplit(url).scheme or "this transport"
    return "ssh" if ":" in url.split("/", 1)[0] else "this transport"
