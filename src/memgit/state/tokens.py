"""memgit serve's access tokens: their own SQLite file under the served root.

The tokens of a root are not a drive's state (a drive's state database lives in its git
directory and is rebuilt from git; tokens cannot be), so they live in
``ROOT/.memgit-serve/tokens.sqlite`` (folder 0700, file 0600): one file for every drive
of the root, beside the drives and never inside one (owner names never start with a dot,
memgit.serve.paths). A row holds a token's public id, its drive (``owner/drive``; empty
for a metrics token), its access (read, write or metrics), a salt and the SHA-256 of salt
and secret: the secret itself is never stored. memgit.serve.tokens makes and checks
tokens; this module only stores and reads the rows.
"""

from __future__ import annotations

import os
import sqlite3
from typing import NamedTuple

from . import BUSY_TIMEOUT_MS, _set_wal, _setup_lock, _statements, immediate

FOLDER = ".memgit-serve"
FILE = "tokens.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tokens (
    id TEXT PRIMARY KEY,
    drive TEXT NOT NULL,
    access TEXT NOT NULL,
    name TEXT NOT NULL DEFAULT '',
    salt BLOB NOT NULL,
    digest BLOB NOT NULL,
    created TEXT NOT NULL,
    expires TEXT,
    revoked TEXT,
    last_used TEXT
);
"""


class TokenRow(NamedTuple):
    """One token as stored (no secret: only its salted digest)."""

    id: str
    drive: str
    access: str
    name: str
    salt: bytes
    digest: bytes
    created: str
    expires: str | None
    revoked: str | None
    last_used: str | None


_COLUMNS = "id, drive, access, name, salt, digest, created, expires, revoked, last_used"


def path_of(root: str | os.PathLike[str]) -> str:
    return os.path.join(root, FOLDER, FILE)


def connect(root: str | os.PathLike[str], *, create: bool = True) -> sqlite3.Connection | None:
    """The root's token database (created 0600 in a 0700 folder when ``create``); None
    when it does not exist and ``create`` is false. Never follows a symlink at either
    place."""
    path = path_of(root)
    folder = os.path.dirname(path)
    for place in (folder, path):
        if os.path.islink(place):
            raise sqlite3.OperationalError(f"{place} is a symbolic link; memgit will not "
                                           "follow it")
    if not os.path.exists(path):
        if not create:
            return None
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass
        os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600))
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                           check_same_thread=False)
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        with _setup_lock(path):
            _set_wal(conn)
            for statement in _statements(_SCHEMA):
                conn.execute(statement)
        conn.execute("PRAGMA synchronous = FULL")
    except BaseException:
        conn.close()
        raise
    return conn


def insert(conn: sqlite3.Connection, row: TokenRow) -> None:
    with immediate(conn):
        conn.execute(f"INSERT INTO tokens ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     row)


def get(conn: sqlite3.Connection, token_id: str) -> TokenRow | None:
    found = conn.execute(f"SELECT {_COLUMNS} FROM tokens WHERE id = ?", (token_id,)).fetchone()
    return TokenRow(*found) if found else None


def listing(conn: sqlite3.Connection) -> list[TokenRow]:
    """Every token, oldest first."""
    return [TokenRow(*r) for r in
            conn.execute(f"SELECT {_COLUMNS} FROM tokens ORDER BY created, id")]


def revoke(conn: sqlite3.Connection, token_id: str, when: str) -> bool:
    """Mark a token revoked (kept for the listing); False when there is no such token
    or it was revoked already."""
    with immediate(conn):
        cur = conn.execute("UPDATE tokens SET revoked = ? WHERE id = ? AND revoked IS NULL",
                           (when, token_id))
    return bool(cur.rowcount)


def touch(conn: sqlite3.Connection, token_id: str, when: str) -> None:
    conn.execute("UPDATE tokens SET last_used = ? WHERE id = ?", (when, token_id))


def usable_count(conn: sqlite3.Connection, now: str) -> int:
    """Tokens neither revoked nor expired at ``now`` (a stamp: stamps sort as times)."""
    return int(conn.execute("SELECT count(*) FROM tokens WHERE revoked IS NULL AND "
                            "(expires IS NULL OR expires > ?)", (now,)).fetchone()[0])
