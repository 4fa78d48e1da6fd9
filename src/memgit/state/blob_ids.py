"""The entry ids each blob holds, by blob id: what pre-receive knows of the files a push
leaves as they were (memgit.githooks.receive).

A blob id is the hash of the blob's content, so what was computed for a blob holds for
every later push that keeps it. ``salt`` names the parser that computed the ids (a digest
of its source, memgit.githooks.receive.ids_salt): rows of another parser are not read, and
are dropped the first time a new one writes. The ids are those of a Markdown path (a blob
at a path that is not Markdown holds none and is never asked for).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from memgit.state import Connection, immediate

_CHUNK = 500  # bound variables per SELECT (SQLite's default limit is 32,766; stay small)


def read(conn: Connection, salt: str, oids: Sequence[str]) -> dict[str, str]:
    """The ids of each of ``oids`` known under ``salt``, one per line with a newline before
    and after each (so ``"\nID\n" in value`` asks for one id without splitting); a blob
    missing is not known."""
    out: dict[str, str] = {}
    for at in range(0, len(oids), _CHUNK):
        chunk = oids[at:at + _CHUNK]
        marks = ",".join("?" * len(chunk))
        rows = conn.execute(f"SELECT oid, ids FROM blob_ids WHERE salt = ? AND oid IN ({marks})",
                            (salt, *chunk))
        for oid, ids in rows:
            out[str(oid)] = f"\n{ids}\n" if ids else ""
    return out


def write(conn: Connection, salt: str, items: Iterable[tuple[str, Sequence[str]]]) -> int:
    """Remember the ids of blobs (``(oid, ids)``), in one transaction; rows of another
    salt are dropped. Returns how many rows were written."""
    rows = [(oid, salt, "\n".join(ids)) for oid, ids in items]
    if not rows:
        return 0
    with immediate(conn):
        conn.execute("DELETE FROM blob_ids WHERE salt <> ?", (salt,))
        conn.executemany("INSERT OR REPLACE INTO blob_ids (oid, salt, ids) VALUES (?, ?, ?)",
                         rows)
    return len(rows)
