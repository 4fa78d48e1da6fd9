"""Drive-scoped access tokens for memgit serve: made, listed, revoked and checked here.

A token reads ``mgt_<id>_<secret>``: ``id`` (12 hex digits) is public, names the row and
is what lists, logs and revocations show; ``secret`` (32 random bytes, URL-safe base64) is
shown once when the token is made and never stored: the row keeps a 16-byte salt and
SHA-256(salt + secret). A fast hash is enough here because the secret is random (256 bits),
not a password a person chose: nothing is gained by a slow key-derivation function, and
every git request pays for checking. Digests are compared in constant time.

Access: ``read`` (clone, fetch, the dashboard of its drive), ``write`` (also push), and
``metrics`` (``/metrics`` only, for a scraper; no drive). A token grants its one drive and
nothing else: :func:`check` answers what the token may do on the drive asked for, and the
app turns a token of another drive into the same 403 as a drive that does not exist.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import hmac
import secrets
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from memgit.errors import UsageError
from memgit.serve.paths import DriveName
from memgit.state import Connection, stamp, utc_now
from memgit.state import tokens as rows

PREFIX = "mgt_"
ACCESS = ("read", "write", "metrics")
TOUCH_EVERY = 60.0  # seconds between two writes of a token's last_used


@dataclass(frozen=True)
class NewToken:
    """A token just made: the secret text is here and nowhere else."""

    id: str
    drive: str
    access: str
    name: str
    expires: str | None
    text: str


@dataclass(frozen=True)
class Grant:
    """What a checked token allows: its id (for the log), drive and access."""

    id: str
    drive: str
    access: str

    def may_read(self, drive: DriveName) -> bool:
        return self.access in ("read", "write") and self.drive == drive

    def may_write(self, drive: DriveName) -> bool:
        return self.access == "write" and self.drive == drive


def _digest(salt: bytes, secret: str) -> bytes:
    return hashlib.sha256(salt + secret.encode("utf-8")).digest()


def add(root: Path, drive: DriveName | None, access: str, *, name: str = "",
        expires_days: int | None = None) -> NewToken:
    """Make a token for ``drive`` (None for a metrics token) and store its salted digest."""
    if access not in ACCESS:
        raise UsageError(f"unknown access {access!r}", f"use one of {', '.join(ACCESS)}")
    if (access == "metrics") != (drive is None):
        raise UsageError("a metrics token names no drive; a read or write token names one",
                         "memgit token add OWNER/DRIVE --read|--write, or "
                         "memgit token add --metrics")
    if expires_days is not None and expires_days < 1:
        raise UsageError("--expires takes a number of days, 1 or more", "e.g. --expires 90")
    if any(ord(c) < 32 or ord(c) == 127 for c in name) or len(name) > 100:
        raise UsageError("a token's name is one line of at most 100 characters",
                         "e.g. --name ci-runner")
    token_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    salt = secrets.token_bytes(16)
    now = _dt.datetime.now(_dt.UTC)
    expires = stamp(now + _dt.timedelta(days=expires_days)) if expires_days else None
    row = rows.TokenRow(token_id, drive or "", access, name, salt, _digest(salt, secret),
                        stamp(now), expires, None, None)
    conn = rows.connect(root)
    assert conn is not None
    with closing(conn):
        rows.insert(conn, row)
    return NewToken(token_id, drive or "", access, name, expires,
                    f"{PREFIX}{token_id}_{secret}")


def listing(root: Path) -> list[dict[str, str | None]]:
    """Every token of the root without its digest: id, drive, access, name, created,
    expires, last_used, revoked and its state (active, expired or revoked)."""
    conn = rows.connect(root, create=False)
    if conn is None:
        return []
    now = utc_now()
    with closing(conn):
        found = rows.listing(conn)
    return [{"id": r.id, "drive": r.drive or None, "access": r.access, "name": r.name,
             "created": r.created, "expires": r.expires, "last_used": r.last_used,
             "revoked": r.revoked, "state": _state(r, now)} for r in found]


def _state(row: rows.TokenRow, now: str) -> str:
    if row.revoked:
        return "revoked"
    if row.expires is not None and row.expires <= now:
        return "expired"
    return "active"


def revoke(root: Path, token_id: str) -> None:
    """Revoke token ``token_id`` (its row stays, marked, for the listing)."""
    conn = rows.connect(root, create=False)
    if conn is None:
        raise UsageError(f"no token {token_id!r}: {root} has no tokens",
                         "memgit token list shows the tokens of a root")
    with closing(conn):
        found = rows.get(conn, token_id)
        if found is None:
            raise UsageError(f"no token {token_id!r}", "memgit token list shows the ids")
        if not rows.revoke(conn, token_id, utc_now()):
            raise UsageError(f"token {token_id} was revoked already", "nothing to do")


def any_usable(root: Path) -> bool:
    """Whether the root has a token that is neither revoked nor expired."""
    conn = rows.connect(root, create=False)
    if conn is None:
        return False
    with closing(conn):
        return rows.usable_count(conn, utc_now()) > 0


def split(text: str) -> tuple[str, str] | None:
    """(id, secret) of a token's text, or None when it is not one."""
    if not text.startswith(PREFIX):
        return None
    parts = text.split("_", 2)
    if len(parts) != 3 or len(parts[1]) != 12 or not parts[2]:
        return None
    return parts[1], parts[2]


class Checker:
    """Checks tokens against one root's database, for a long-running server: one
    connection (opened when the first token arrives), last_used written at most once a
    minute per token."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._conn: Connection | None = None
        self._touched: dict[str, float] = {}

    def check(self, text: str, now: float) -> Grant | None:
        """The grant of a token's text; None when it is not a token of this root, or is
        revoked, expired or wrong."""
        parts = split(text)
        if parts is None:
            return None
        if self._conn is None:
            self._conn = rows.connect(self.root, create=False)
            if self._conn is None:
                return None
        row = rows.get(self._conn, parts[0])
        if row is None or row.revoked:
            return None
        if not hmac.compare_digest(row.digest, _digest(row.salt, parts[1])):
            return None
        stamp_now = utc_now()
        if row.expires is not None and row.expires <= stamp_now:
            return None
        if now - self._touched.get(row.id, -TOUCH_EVERY) >= TOUCH_EVERY:
            self._touched[row.id] = now
            rows.touch(self._conn, row.id, stamp_now)
        return Grant(row.id, row.drive, row.access)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
