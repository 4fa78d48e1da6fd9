"""The event counters' rows: one per event name, incremented in a transaction.

memgit.state.events names the events and renders them; this module only stores and reads
the numbers.
"""

from __future__ import annotations

from memgit.state import Connection, immediate, utc_now

_ADD = ("INSERT INTO events (name, count, updated) VALUES (?, ?, ?) "
        "ON CONFLICT (name) DO UPDATE SET count = count + excluded.count, "
        "updated = excluded.updated")


def add(conn: Connection, name: str, n: int = 1) -> None:
    """Add ``n`` to counter ``name`` (inside the caller's transaction, or in one of its own)."""
    if conn.in_transaction:
        conn.execute(_ADD, (name, n, utc_now()))
        return
    with immediate(conn):
        conn.execute(_ADD, (name, n, utc_now()))


def read(conn: Connection) -> dict[str, int]:
    """Every stored counter, by name."""
    return {str(name): int(count)
            for name, count in conn.execute("SELECT name, count FROM events ORDER BY name")}


def updated(conn: Connection, name: str) -> str | None:
    """When counter ``name`` last grew (a ``utc_now`` stamp), None if it never did."""
    row = conn.execute("SELECT updated FROM events WHERE name = ?", (name,)).fetchone()
    return None if row is None else str(row[0])
