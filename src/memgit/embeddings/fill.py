"""Filling a drive's vectors in the background, off every user's critical path.

No read or write waits for vectors (a cache: memgit.embeddings.embed). :func:`schedule`
starts a filler when something is missing: a thread of a process that called
:func:`use_thread`, else a detached child at the lowest CPU priority that waits
START_DELAY, so the read that often follows a write runs first. Its locks in ``<git
dir>/memgit/`` are ``flock`` locks, released when their process dies and held by a child
they are passed to: ``vectors-fill.lock`` is the one filler at work (handed by
:func:`schedule` to its child; the holder looks again after releasing it, so an entry
written meanwhile is not left behind); ``vectors-wait.lock`` is held shared by every
filler asked for (:func:`wait_for_fill` takes it exclusively); a background filler gives
way to ``vectors-want.lock`` (:func:`foreground`) before each chunk. Each chunk is stored
in one ``BEGIN IMMEDIATE`` transaction taking only rows whose fact is still present,
searchable and of the digest embedded; no transaction is held while embedding. Failures
go to ``vectors-fill.log`` (never entry text) and the meta value ``vectors_fill_failed``.
"""

from __future__ import annotations

import errno
import fcntl
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from memgit import state
from memgit.policy.embedding_settings import EmbedConfig
from memgit.state import vectors as rows

FILL_LOCK = "vectors-fill.lock"
WAIT_LOCK = "vectors-wait.lock"
WANT_LOCK = "vectors-want.lock"
LOG_FILE = "vectors-fill.log"
FAILED_KEY = "vectors_fill_failed"  # meta: "<utc stamp> <code> <message>" of the last failure
CHUNK = 32  # entries per embedder call and transaction (about 2 s with the local model)
RETRY_AFTER = 60.0  # seconds after a failed fill before a read starts another
START_DELAY = 0.3  # seconds a detached filler waits before it starts (see start_process)
NICE = 19  # the filler's CPU priority: the lowest, below every command of the user

_worker: _Worker | None = None
_worker_lock = threading.Lock()


# --- is anything missing? ---------------------------------------------------------------------


def needs_fill(conn: state.Connection) -> bool:
    """Whether some searchable entry lacks a vector: the ``embedded`` mark first (three
    meta reads), the exact count only when the mark is stale."""
    from memgit.embeddings.embed import needs_fill as stale

    return stale(conn) and rows.missing_fast(conn) > 0


def last_failure(conn: state.Connection) -> str | None:
    """What the last background fill that failed said (None after a fill that worked)."""
    return state.get_meta(conn, FAILED_KEY)


def _failed_lately(conn: state.Connection) -> bool:
    said = last_failure(conn)
    if not said:
        return False
    try:
        when = state.parse_stamp(said.split(" ", 1)[0]).timestamp()
    except ValueError:
        return False
    return time.time() - when < RETRY_AFTER


# --- starting a filler ------------------------------------------------------------------------


def schedule(git_dir: str | os.PathLike[str], config: EmbedConfig | None,
             conn: state.Connection | None = None, *, after_read: bool = False) -> str | None:
    """Make sure the drive's missing vectors get embedded in the background; returns how
    ("thread", "process") or None (no embedder, nothing missing, a filler at work, or
    ``after_read`` within RETRY_AFTER of a failure). Never raises for the caller: a
    filler that cannot start leaves the vectors to the next call."""
    if config is None:
        return None
    try:
        conn = conn if conn is not None else state.connection(git_dir)
        if not needs_fill(conn) or (after_read and _failed_lately(conn)):
            return None
        worker = _worker
        if worker is not None:
            worker.wake(str(git_dir), config, _ticket(git_dir))
            return "thread"
        fill = _open_lock(git_dir, FILL_LOCK)
        try:
            if not _try(fill, fcntl.LOCK_EX):
                return None  # the filler at work looks again when it is done
            # Taken here and handed to the child: no second filler starts in between.
            start_process(git_dir, config, held=fill)
        finally:
            os.close(fill)
        return "process"
    except (OSError, state.Error) as exc:
        _log(git_dir, f"could not start a filler: {type(exc).__name__}: {exc}")
        return None


def _lock_path(git_dir: str | os.PathLike[str], name: str) -> str:
    folder = os.path.join(git_dir, state.STATE_DIR)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    return os.path.join(folder, name)


def _open_lock(git_dir: str | os.PathLike[str], name: str) -> int:
    return os.open(_lock_path(git_dir, name), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)


def _try(fd: int, how: int) -> bool:
    try:
        fcntl.flock(fd, how | fcntl.LOCK_NB)
        return True
    except OSError as exc:
        if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            raise
        return False


def _held(git_dir: str | os.PathLike[str], name: str) -> bool:
    """Whether another open file holds ``name`` (a shared probe: it conflicts only
    with an exclusive holder)."""
    fd = _open_lock(git_dir, name)
    try:
        return not _try(fd, fcntl.LOCK_SH)
    finally:
        os.close(fd)


def _ticket(git_dir: str | os.PathLike[str]) -> int:
    """A descriptor holding the wait lock shared, for the filler to close when done."""
    fd = _open_lock(git_dir, WAIT_LOCK)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)  # waits only while wait_for_fill holds it
    except BaseException:
        os.close(fd)
        raise
    return fd


def start_process(git_dir: str | os.PathLike[str], config: EmbedConfig, *,
                  held: int | None = None) -> None:
    """Start :func:`child_main` detached, holding a wait ticket (and ``held``, a
    descriptor holding the fill lock, which it fills under); return at once."""
    import subprocess

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = (f"import sys; sys.path.append({root!r}); "
            "from memgit.embeddings.fill import child_main; child_main(sys.argv[1:])")
    # A shell waits START_DELAY, then becomes the interpreter at the lowest priority
    # (exec nice): a read that often follows a write runs before even Python starts,
    # and the interpreter's start-up already runs at nice NICE.
    wrapper = f'sleep {START_DELAY}; exec nice -n {NICE} "$0" "$@"'
    ticket = _ticket(git_dir)
    try:
        # The child keeps the ticket's descriptor (the same open file, so the same
        # shared lock) until it exits: pass_fds leaves it open across exec. So with
        # ``held``: an flock belongs to the open file, which the child's copy keeps.
        subprocess.Popen(
            ["/bin/sh", "-c", wrapper, sys.executable, "-c", code, os.fspath(git_dir),
             config.plugin, config.settings_json, "-" if held is None else str(held)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(ticket,) if held is None else (ticket, held), start_new_session=True,
            cwd="/")
    finally:
        os.close(ticket)


def child_main(argv: list[str]) -> None:
    """The detached filler (at nice NICE: start_process's wrapper): fill, log what
    failed, exit."""
    git_dir, plugin, settings_json, held = argv[0], argv[1], argv[2], argv[3]
    try:
        fill_in_background(git_dir, EmbedConfig(plugin, settings_json),
                           held=None if held == "-" else int(held))
    except BaseException as exc:  # noqa: BLE001 - nobody to tell but the log
        _log(git_dir, f"{type(exc).__name__}: {exc}")


# --- the filler -------------------------------------------------------------------------------


def fill_in_background(git_dir: str | os.PathLike[str], config: EmbedConfig,
                       embedder: Callable[[], Any] | None = None, *,
                       held: int | None = None) -> int:
    """Embed every missing vector, a chunk at a time, unless another filler holds the
    fill lock or ``memgit index --embeddings`` wants it; returns the vectors stored.

    ``embedder`` builds the embedder (default: :func:`background_embedder`), called only
    when something is missing; ``held``: a descriptor that holds the fill lock already
    (:func:`schedule` took it for this filler), used for the first round and closed."""
    from memgit.embeddings import embed as embedding
    from memgit.errors import EmbedderError, EmbeddingModelError, PluginError

    conn = state.connect(git_dir)  # its own connection: a thread's too
    stored = 0
    model = None
    idle = 0  # rounds that stored nothing: rows changing under the filler all along
    try:
        while needs_fill(conn) and idle < 3:
            fd, held = (held, None) if held is not None else \
                (_open_lock(git_dir, FILL_LOCK), None)
            try:
                if not _try(fd, fcntl.LOCK_EX):  # (a no-op on a held lock)
                    return stored  # the holder looks again after releasing it
                while needs_fill(conn) and not _held(git_dir, WANT_LOCK):
                    if model is None:
                        model = (embedder or (lambda: background_embedder(config)))()
                    done = embedding.fill(conn, model, limit=CHUNK)
                    stored += done.embedded
                    if done.embedded == 0 and done.missing:
                        idle += 1
                        break  # every row changed under it: the loop outside looks again
                if _held(git_dir, WANT_LOCK):
                    return stored  # memgit index --embeddings takes over
            finally:
                os.close(fd)  # releases the fill lock
        _clear_failure(conn)
    except (EmbedderError, EmbeddingModelError, PluginError) as err:
        _failed(git_dir, conn, f"{err.code} {err.message}")
    except state.Error as exc:
        _failed(git_dir, conn, f"{type(exc).__name__}: {exc}")
    finally:
        conn.close()
        if held is not None:
            os.close(held)
    return stored


def background_embedder(config: EmbedConfig) -> Any:
    """A new embedder for ``config``, apart from the one recalls use (memgit.embeddings.embed
    serialises calls per embedder): the local model with one engine thread unless the
    settings say otherwise, so a filler leaves the other cores to the user."""
    import json

    from memgit import plugins

    settings = config.settings
    if config.plugin == "local" and "threads" not in settings:
        settings["threads"] = 1
    found = _embedders.get((config.plugin, json.dumps(settings, sort_keys=True)))
    if found is None:
        found = plugins.load("embedder", config.plugin, settings)
        _embedders[(config.plugin, json.dumps(settings, sort_keys=True))] = found
    return found


_embedders: dict[tuple[str, str], Any] = {}


def _failed(git_dir: str | os.PathLike[str], conn: state.Connection, said: str) -> None:
    from memgit.safe_text import printable

    _log(git_dir, said)
    try:
        with state.immediate(conn):
            state.set_meta(conn, FAILED_KEY, f"{state.utc_now()} {printable(said, 300)}")
    except state.Error:
        pass


def _clear_failure(conn: state.Connection) -> None:
    if last_failure(conn) is not None:
        with state.immediate(conn):
            state.delete_meta(conn, FAILED_KEY)


def _log(git_dir: str | os.PathLike[str], message: str) -> None:
    """One line in ``vectors-fill.log``: a time and what failed (error messages, which
    name endpoints and codes; memgit puts no entry text in them)."""
    from memgit.safe_text import append_log_line

    append_log_line(_lock_path(git_dir, LOG_FILE), message)


# --- a long-lived process: one thread ---------------------------------------------------------


class _Worker:
    """The background thread of a long-lived process: fills each drive it is woken for,
    one at a time, then closes the wait tickets it was handed."""

    def __init__(self) -> None:
        self._todo: dict[str, tuple[EmbedConfig, list[int]]] = {}
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="memgit-vector-fill",
                                        daemon=True)
        self._thread.start()

    def wake(self, git_dir: str, config: EmbedConfig, ticket: int) -> None:
        with self._cond:
            _config, tickets = self._todo.get(git_dir, (config, []))
            self._todo[git_dir] = (config, [*tickets, ticket])
            self._cond.notify()

    def _run(self) -> None:
        try:  # Linux: a thread has a nice value of its own
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)
        except (OSError, AttributeError):
            pass
        while True:
            with self._cond:
                while not self._todo:
                    self._cond.wait()
                git_dir, (config, tickets) = next(iter(self._todo.items()))
                del self._todo[git_dir]
            try:
                fill_in_background(git_dir, config)
            except BaseException as exc:  # noqa: BLE001 - the thread must live on
                _log(git_dir, f"{type(exc).__name__}: {exc}")
            finally:
                for fd in tickets:
                    os.close(fd)


def use_thread() -> None:
    """Fill in a thread of this process from now on (a long-lived server calls it)."""
    global _worker
    with _worker_lock:
        if _worker is None:
            _worker = _Worker()


def use_processes() -> None:
    """Back to detached processes (tests; the thread, idle, stays)."""
    global _worker
    with _worker_lock:
        _worker = None


# --- waiting and the foreground ---------------------------------------------------------------


def wait_for_fill(git_dir: str | os.PathLike[str], timeout: float = 300.0) -> bool:
    """Wait until every fill started (or thread woken) for ``git_dir`` so far is done;
    False after ``timeout`` seconds. Tests, benchmarks and scripts use it."""
    path = os.path.join(git_dir, state.STATE_DIR, WAIT_LOCK)
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW)
    except FileNotFoundError:
        return True  # no filler was ever started here
    try:
        deadline = time.monotonic() + timeout
        while not _try(fd, fcntl.LOCK_EX):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.005)
        return True
    finally:
        os.close(fd)  # closing the descriptor releases the lock


@contextmanager
def foreground(git_dir: str | os.PathLike[str]) -> Iterator[None]:
    """Held by ``memgit index --embeddings`` while it embeds: a background filler gives
    way at its next chunk (a few seconds at most) and none starts meanwhile."""
    want = _open_lock(git_dir, WANT_LOCK)
    try:
        fcntl.flock(want, fcntl.LOCK_EX)  # two foreground runs take turns
        fill = _open_lock(git_dir, FILL_LOCK)
        try:
            fcntl.flock(fill, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fill)
    finally:
        os.close(want)
