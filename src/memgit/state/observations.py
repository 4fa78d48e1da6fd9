"""The turns ``memgit observe`` keeps for the next dream (migration 2).

One row per turn, in the state database in the git directory, never in the tracked tree.
memgit.dream.observations decides what is kept; this module stores, lists and deletes.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

from memgit.state import Connection, OperationalError, immediate, stamp


@dataclass(frozen=True)
class Turn:
    """One observed turn: ``id`` is ``t-<ulid>``, ``created`` a state stamp (UTC)."""

    id: str
    created: str
    session: str
    role: str
    text: str

    def as_dict(self) -> dict[str, str]:
        return {"id": self.id, "time": self.created, "session": self.session,
                "role": self.role, "text": self.text}


def add(conn: Connection, turn: Turn) -> None:
    with immediate(conn):
        conn.execute("INSERT INTO observations (turn_id, created, session, role, text) "
                     "VALUES (?, ?, ?, ?, ?)",
                     (turn.id, turn.created, turn.session, turn.role, turn.text))


def recent(conn: Connection, since: _dt.datetime, limit: int) -> list[Turn]:
    """The newest ``limit`` turns created at or after ``since``, oldest first."""
    rows = conn.execute("SELECT turn_id, created, session, role, text FROM observations "
                        "WHERE created >= ? ORDER BY seq DESC LIMIT ?",
                        (stamp(since), limit)).fetchall()
    return [Turn(*r) for r in reversed(rows)]


def count(conn: Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM observations").fetchone()[0])


def delete_before(conn: Connection, cutoff: _dt.datetime) -> int:
    """Delete turns older than ``cutoff``; their bytes too (secure_delete zeroes the
    freed pages, a checkpoint moves them out of the write-ahead log)."""
    conn.execute("PRAGMA secure_delete = ON")
    try:
        with immediate(conn):
            cur = conn.execute("DELETE FROM observations WHERE created < ?", (stamp(cutoff),))
        deleted = int(cur.rowcount or 0)
    finally:
        conn.execute("PRAGMA secure_delete = OFF")
    if deleted:
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except OperationalError:
            pass  # a reader holds the log: the next checkpoint copies the zeroed pages
    return deleted
