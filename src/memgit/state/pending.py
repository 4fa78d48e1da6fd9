"""The pending-write queue: writes the writer acknowledged but could not commit yet.

Each row is one write's intent (its operations and message, as JSON), kept in order and
drained in order. Callers wrap writes in ``state.immediate``.
"""

from __future__ import annotations

from collections import namedtuple

from memgit.state import Connection, utc_now

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads it so)
if TYPE_CHECKING:
    from typing import NamedTuple

    class _PendingFields(NamedTuple):
        seq: int
        created: str
        attempts: int
        last_error: str
else:  # the shell's quick read path counts the queue: no typing (its import costs 7 ms)
    _PendingFields = namedtuple("_PendingFields", "seq created attempts last_error")


class PendingWrite(_PendingFields):
    """One queued write as ``memgit info`` shows it (never its entry texts)."""

    __slots__ = ()


def add(conn: Connection, intent: str, error: str) -> int:
    """Queue a write's intent; returns its sequence number."""
    cur = conn.execute("INSERT INTO pending (created, intent, last_error) VALUES (?, ?, ?)",
                       (utc_now(), intent, error))
    return int(cur.lastrowid or 0)


def intents(conn: Connection) -> list[tuple[int, str]]:
    """(sequence number, intent) of every queued write, oldest first."""
    return [(int(seq), str(intent))
            for seq, intent in conn.execute("SELECT seq, intent FROM pending ORDER BY seq")]


def remove(conn: Connection, seq: int) -> None:
    conn.execute("DELETE FROM pending WHERE seq = ?", (seq,))


def failed(conn: Connection, seq: int, error: str) -> None:
    """A retry of write ``seq`` failed again with ``error``."""
    conn.execute("UPDATE pending SET attempts = attempts + 1, last_error = ? WHERE seq = ?",
                 (error, seq))


def count(conn: Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM pending").fetchone()[0])


def listing(conn: Connection) -> list[PendingWrite]:
    return [PendingWrite(int(s), str(c), int(a), str(e)) for s, c, a, e in conn.execute(
        "SELECT seq, created, attempts, last_error FROM pending ORDER BY seq")]
