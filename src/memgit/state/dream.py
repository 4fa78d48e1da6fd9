"""memgit dream's runs (migration 2): the lease, the outcome and the report of each run.

A run row is the lease while its status is ``running``: it is taken in one ``BEGIN
IMMEDIATE`` transaction, so two ``memgit dream --due`` never both run, and taken over when
its heartbeat is older than STALE_LEASE_SECONDS or its process (on this host) is gone.
Finishing a run counts its event in the same transaction.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import secrets
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memgit.state import Connection, counters, immediate, parse_stamp, stamp, utc_now

STALE_LEASE_SECONDS = 3600
MAX_ATTEMPTS = 3
DONE = ("applied", "no_changes", "queued", "undone")
_EVENTS = {"applied": "dream_applied", "queued": "dream_applied",
           "no_changes": "dream_no_changes", "failed": "dream_failed"}


@dataclass(frozen=True)
class Run:
    id: int
    day: str
    trigger: str
    status: str
    pid: int
    host: str
    started: str
    heartbeat: str
    finished: str | None
    proposer: str
    commit: str
    error: str
    report: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "day": self.day, "trigger": self.trigger, "status": self.status,
                "started": self.started, "finished": self.finished, "proposer": self.proposer,
                "commit": self.commit, "error": self.error, "report": self.report}


_RUN_SQL = ("SELECT id, day, trigger, status, pid, host, started, heartbeat, finished, "
            "proposer, commit_id, error, report FROM dream_runs")


def _run(row: tuple) -> Run:
    report = json.loads(row[12]) if row[12] else {}
    return Run(int(row[0]), row[1], row[2], row[3], int(row[4]), row[5], row[6], row[7], row[8],
               row[9], row[10], row[11], report)


def runs(conn: Connection, *, day: str | None = None, limit: int = 20) -> list[Run]:
    """The newest runs first (of one day when given)."""
    if day is None:
        rows = conn.execute(f"{_RUN_SQL} ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
    else:
        rows = conn.execute(f"{_RUN_SQL} WHERE day = ? ORDER BY id DESC LIMIT ?",
                            (day, limit)).fetchall()
    return [_run(r) for r in rows]


@dataclass(frozen=True)
class Lease:
    run_id: int
    token: str


@dataclass(frozen=True)
class Busy:
    """No lease: why not (another run holds it, or --due has nothing to do today)."""

    reason: str


def _holder_alive(pid: int, host: str) -> bool:
    if host != socket.gethostname():
        return True  # cannot tell: trust the heartbeat
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def take_lease(conn: Connection, day: str, trigger: str, now: _dt.datetime, *,
               due: bool) -> Lease | Busy:
    """Start a run of ``day`` unless another one holds the lease; with ``due``, also
    unless the day already has a finished run or ``MAX_ATTEMPTS`` failed ones."""
    token = secrets.token_hex(8)
    with immediate(conn):
        for r in conn.execute(f"{_RUN_SQL} WHERE status = 'running'").fetchall():
            run = _run(r)
            age = (now - parse_stamp(run.heartbeat)).total_seconds()
            if age < STALE_LEASE_SECONDS and _holder_alive(run.pid, run.host):
                return Busy(f"another dream (run {run.id}, pid {run.pid} on {run.host}) holds "
                            f"the lease since {run.started}")
            why = "its lease expired" if age >= STALE_LEASE_SECONDS else "its process is gone"
            conn.execute("UPDATE dream_runs SET status = 'failed', finished = ?, error = ? "
                         "WHERE id = ?", (stamp(now), f"interrupted ({why}); taken over",
                                          run.id))
        if due:
            statuses = [r[0] for r in conn.execute(
                "SELECT status FROM dream_runs WHERE day = ?", (day,))]
            if any(s in DONE for s in statuses):
                return Busy(f"already dreamed on {day}")
            failed = statuses.count("failed")
            if failed >= MAX_ATTEMPTS:
                return Busy(f"{failed} failed runs on {day}; the next try is tomorrow")
        cur = conn.execute(
            "INSERT INTO dream_runs (day, trigger, status, token, pid, host, started, heartbeat) "
            "VALUES (?, ?, 'running', ?, ?, ?, ?, ?)",
            (day, trigger, token, os.getpid(), socket.gethostname(), stamp(now), stamp(now)))
    return Lease(int(cur.lastrowid or 0), token)


def finish(conn: Connection, lease: Lease, status: str, *, proposer: str = "",
           commit: str = "", error: str = "", report: Mapping[str, Any] | None = None) -> bool:
    """Record the end of a run and count its event (False when the lease was taken
    over meanwhile)."""
    with immediate(conn):
        cur = conn.execute(
            "UPDATE dream_runs SET status = ?, finished = ?, proposer = ?, commit_id = ?, "
            "error = ?, report = ? WHERE id = ? AND token = ?",
            (status, utc_now(), proposer, commit, error,
             json.dumps(report or {}, ensure_ascii=False), lease.run_id, lease.token))
        event = _EVENTS.get(status)
        if event:
            counters.add(conn, event)
    return bool(cur.rowcount)


def recorded_commits(conn: Connection, day: str) -> set[str]:
    return {str(r[0]) for r in conn.execute(
        "SELECT commit_id FROM dream_runs WHERE day = ? AND commit_id != ''", (day,))}


def mark_undone(conn: Connection, commit: str) -> None:
    with immediate(conn):
        conn.execute("UPDATE dream_runs SET status = 'undone' WHERE commit_id = ?", (commit,))


def delete_finished_before(conn: Connection, cutoff: _dt.datetime) -> int:
    """Delete the runs that finished before ``cutoff`` (their reports with them; a running
    run is never deleted). ``memgit dream undo`` reads the night's commit from git, not
    from here. Returns how many."""
    with immediate(conn):
        cur = conn.execute("DELETE FROM dream_runs WHERE status != 'running' AND finished "
                           "IS NOT NULL AND finished < ?", (stamp(cutoff),))
    return int(cur.rowcount or 0)
