"""The entry ids each blob holds, by blob id: what pre-receive knows of the files a push
leaves as they were (memgit.githooks.old_files).

A blob id is the hash of the blob's content, so what was computed for a blob holds for
every later push that keeps it. ``salt`` names the parser that computed the ids (a digest
of its source, memgit.githooks.old_files.ids_salt): rows of another parser are not read,
and are dropped the first time a new one writes. ``ids`` holds one id per line with a
newline before and after each, so SQLite's ``instr(ids, '\\nID\\n')`` asks for one whole id
and a push's question (which of these blobs hold one of these ids?) is answered without
sending the ids of every file to Python.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from memgit.state import Connection, immediate

_CHUNK = 500  # bound variables per statement (SQLite's default limit is 32,766)
_IDS_PER_QUERY = 50  # ids OR-ed in one statement


def _chunks(values: Sequence[str], size: int) -> Iterable[Sequence[str]]:
    return (values[at:at + size] for at in range(0, len(values), size))


def recorded(conn: Connection, salt: str, oids: Sequence[str]) -> set[str]:
    """Which of ``oids`` have their ids recorded under ``salt``."""
    out: set[str] = set()
    for chunk in _chunks(oids, _CHUNK):
        marks = ",".join("?" * len(chunk))
        out.update(str(oid) for (oid,) in conn.execute(
            f"SELECT oid FROM blob_ids WHERE salt = ? AND oid IN ({marks})", (salt, *chunk)))
    return out


def holding(conn: Connection, salt: str, oids: Sequence[str], ids: Iterable[str]) -> set[str]:
    """Which of ``oids`` (recorded under ``salt``) hold one of ``ids``."""
    wanted = sorted({f"\n{entry_id}\n" for entry_id in ids})
    out: set[str] = set()
    for blobs in _chunks(oids, _CHUNK):
        marks = ",".join("?" * len(blobs))
        for some in _chunks(wanted, _IDS_PER_QUERY):
            test = " OR ".join(["instr(ids, ?) > 0"] * len(some))
            out.update(str(oid) for (oid,) in conn.execute(
                f"SELECT oid FROM blob_ids WHERE salt = ? AND oid IN ({marks}) AND ({test})",
                (salt, *blobs, *some)))
    return out


def write(conn: Connection, salt: str, items: Iterable[tuple[str, Sequence[str]]]) -> int:
    """Remember the ids of blobs (``(oid, ids)``), in one transaction; rows of another
    salt are dropped. Returns how many rows were written."""
    rows = [(oid, salt, "\n" + "".join(f"{i}\n" for i in ids)) for oid, ids in items]
    if not rows:
        return 0
    with immediate(conn):
        conn.execute("DELETE FROM blob_ids WHERE salt <> ?", (salt,))
        conn.executemany("INSERT OR REPLACE INTO blob_ids (oid, salt, ids) VALUES (?, ?, ?)",
                         rows)
    return len(rows)
