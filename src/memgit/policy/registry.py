"""The purge registry and the purge lock: what was purged from a drive, and whether a purge
is rewriting it right now.

Both are files in the git directory, outside the tracked tree (``memgit-purged``'s format:
docs/purge.md). Every comparison of a text with the registry goes through
:func:`purge_key`, the one normalisation; each digest is compared under the normalisation
it was made with, so old lines keep working. The digests are not keyed (docs/security.md).
"""

from __future__ import annotations

import hashlib
import os
import re
import time
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from memgit.format import entries as fmt

REGISTRY_FILE = "memgit-purged"
PURGE_LOCK_FILE = "memgit-purge.lock"
# A purge publishes the purged ids (never the digests) as the one file of a commit at
# this ref; sync clients fetch it and delete those entries from their own recall index.
PURGED_REF = "refs/memgit/purged"
PURGED_IDS_FILE = "purged-ids"
NORMALISATION = 2  # what new registry lines record
DEFAULT_LEASE = 3600.0  # seconds a purge lock holds without a live process to vouch for it
LEASE_CONFIG = "memgit.purgeLease"

# what may wrap a quoted text at the edges of a stretch of a commit message
_OPEN = "\"'([{<\u00ab\u201c\u2018\u201e*_`"
_CLOSE = "\"')]}>\u00bb\u201d\u2019.,;:!?*_`"
_WORD_RE = re.compile(r"\S+")
_SENTENCE_END_RE = re.compile(r"(?<=[.!?:])\s+")


# --- the normalisation ------------------------------------------------------------------


def purge_key(text: str) -> str:
    """The form a text is compared in with the registry (normalisation 2): NFKC, no
    invisible characters (Unicode Cf and default-ignorables: zero-width, bidi, soft
    hyphen...), case-folded, NFKC again, whitespace collapsed. ``Ｊｏｅ``, ``JOE``,
    ``jo\\u200be`` and the NFD form of ``Jöe``/``jöe`` all give ``joe``/``jöe``."""
    value = fmt.INVISIBLE_RE.sub("", text)
    value = unicodedata.normalize("NFKC", value)
    value = unicodedata.normalize("NFKC", value.casefold())
    value = fmt.INVISIBLE_RE.sub("", value)
    return " ".join(value.split())


def legacy_key(text: str) -> str:
    """Normalisation 1: case-folded, whitespace collapsed (``policy.text_key``)."""
    return " ".join(text.casefold().split())


def _legacy_keys(text: str) -> dict[str, None]:
    """Normalisation 1 of ``text`` and of its NFC and NFKC forms without invisible
    characters: a version 1 digest (made from the text as written, usually NFC) also
    matches the text's other normal forms and zero-width variants."""
    bare = fmt.INVISIBLE_RE.sub("", text)
    return dict.fromkeys(legacy_key(t) for t in (text, unicodedata.normalize("NFC", bare),
                                                 unicodedata.normalize("NFKC", bare)))


def _hmac(key: bytes, digest: str) -> str:
    import hmac

    return hmac.new(key, digest.encode(), hashlib.sha256).hexdigest()


def _sha256(key: str) -> str:
    try:
        data = key.encode()
    except UnicodeEncodeError:  # undecodable bytes of an old file: digest them as they are
        data = key.encode("utf-8", "surrogateescape")
    return hashlib.sha256(data).hexdigest()


class RegistryKey(NamedTuple):
    """What a registry line records of one text (never the text)."""

    digest: str
    version: int
    words: int
    chars: int


def registry_key(text: str) -> RegistryKey:
    """The registry line fields of ``text`` under the current normalisation."""
    key = purge_key(text)
    return RegistryKey(_sha256(key), NORMALISATION, len(key.split()), len(key))


def purge_digest(text: str) -> str:
    return _sha256(purge_key(text))


# --- the registry -------------------------------------------------------------------------


@dataclass
class PurgeRegistry:
    """``memgit-purged``: purged ids, and digests of purged texts per normalisation."""

    ids: set[str] = field(default_factory=set)
    legacy: set[str] = field(default_factory=set)  # version 1 digests
    digests: set[str] = field(default_factory=set)  # version 2 digests
    shapes: dict[int, set[int]] = field(default_factory=dict)  # words -> chars (version 2)
    # rows read from refs/memgit/registry (memgit.policy.registry_refs): the same digests
    # under HMAC with the drive's registry key
    key: bytes = b""
    keyed: set[str] = field(default_factory=set)  # version 2
    keyed_legacy: set[str] = field(default_factory=set)  # version 1

    def __bool__(self) -> bool:
        return bool(self.ids or self.legacy or self.digests or self.keyed or self.keyed_legacy)

    @property
    def size(self) -> int:
        return len(self.ids) + len(self.legacy) + len(self.digests) + len(self.keyed) \
            + len(self.keyed_legacy)

    def _known(self, digest: str) -> bool:
        """A version 2 digest the registry holds, in the file or (keyed) in the refs."""
        return digest in self.digests or bool(self.keyed) and _hmac(self.key, digest) \
            in self.keyed

    def _known_legacy(self, digest: str) -> bool:
        return digest in self.legacy or bool(self.keyed_legacy) and \
            _hmac(self.key, digest) in self.keyed_legacy

    def add(self, entry_id: str, key: RegistryKey) -> None:
        """Take a row in memory (what :meth:`append` writes)."""
        self.ids.add(entry_id)
        self.digests.add(key.digest)
        self.shapes.setdefault(key.words, set()).add(key.chars)

    def holds_text(self, text: str) -> bool:
        """Whether ``text`` is a purged text under any normalisation the registry used."""
        if (self.digests or self.keyed) and self._known(_sha256(purge_key(text))):
            return True
        return bool(self.legacy or self.keyed_legacy) and any(
            self._known_legacy(_sha256(k)) for k in _legacy_keys(text))

    def quoted(self, message: str) -> list[tuple[int, int]]:
        """(start, end) of each stretch of ``message`` that is a purged text, quotes and
        final punctuation around it allowed; the stretches do not overlap.

        Version 2 digests are looked for in every run of words with the recorded number
        of words and characters; version 1 digests (which record neither) in every line,
        sentence and clause (after ``:``) of the message.
        """
        found: list[tuple[int, int]] = []
        if self.digests or self.keyed:
            found += self._quoted_v2(message)
        if self.legacy or self.keyed_legacy:
            found += self._quoted_v1(message)
        found.sort(key=lambda span: (span[0], -span[1]))
        out: list[tuple[int, int]] = []
        for start, end in found:
            if out and start < out[-1][1]:
                out[-1] = (out[-1][0], max(out[-1][1], end))
            else:
                out.append((start, end))
        return out

    def _quoted_v2(self, message: str) -> list[tuple[int, int]]:
        # First over the normalised message as a whole (cheap); only a hit is located.
        if next(self._hits([(w, 0, 0) for w in purge_key(message).split()]), None) is None:
            return []
        # (normalised word, start, end of the message word it came from)
        tokens = [(piece, m.start(), m.end()) for m in _WORD_RE.finditer(message)
                  for piece in purge_key(m.group()).split()]
        return [_trim(message, tokens[i][1], tokens[j - 1][2], left, right)
                for i, j, left, right in self._hits(tokens)]

    def _hits(self, tokens: list[tuple[str, int, int]]) -> Iterator[tuple[int, int, bool, bool]]:
        """(first, end, quote cut on the left, on the right) of each run of tokens whose
        text, with or without the quotes and punctuation at its edges, is purged."""
        lengths = [0]
        for piece, _s, _e in tokens:
            lengths.append(lengths[-1] + len(piece))
        lead = [len(p) - len(p.lstrip(_OPEN)) for p, _s, _e in tokens]
        tail = [len(p) - len(p.rstrip(_CLOSE)) for p, _s, _e in tokens]
        for words, chars in self.shapes.items():
            if words == 0:
                continue  # a text of invisible characters only: no stretch to look for
            for i in range(len(tokens) - words + 1):
                j = i + words
                full = lengths[j] - lengths[i] + words - 1
                for cut_l, cut_r in ((0, 0), (lead[i], 0), (0, tail[j - 1]),
                                     (lead[i], tail[j - 1])):
                    size = full - cut_l - cut_r
                    if size not in chars or size <= 0:
                        continue
                    joined = " ".join(p for p, _s, _e in tokens[i:j])
                    if self._known(_sha256(joined[cut_l:len(joined) - cut_r])):
                        yield i, j, cut_l > 0, cut_r > 0
                        break

    def _quoted_v1(self, message: str) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        for start, end in _segments(message):
            for key in _legacy_keys(message[start:end]):
                for cut_l, cut_r in ((False, False), (True, False), (False, True),
                                     (True, True)):
                    variant = key.lstrip(_OPEN) if cut_l else key
                    variant = variant.rstrip(_CLOSE) if cut_r else variant
                    if variant and self._known_legacy(_sha256(variant)):
                        out.append(_trim(message, start, end, cut_l, cut_r))
                        break
                else:
                    continue
                break
        return out

    @classmethod
    def load(cls, git_dir: Path) -> PurgeRegistry:
        from memgit.errors import RegistryError
        from memgit.policy.registry_refs import has_registry_refs, keyed_rows


        path = git_dir / REGISTRY_FILE
        reg = cls()
        found = keyed_rows(git_dir) if has_registry_refs(git_dir) else None
        if found is not None:  # the copy that replicates with refs and objects
            reg.key, rows = found
            for entry_id, digest, _date, version, words, chars in rows:
                reg.ids.add(entry_id)
                if version == 2:
                    reg.keyed.add(digest)
                    reg.shapes.setdefault(words, set()).add(chars)
                else:
                    reg.keyed_legacy.add(digest)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return reg
        except (OSError, UnicodeDecodeError) as exc:
            raise RegistryError(f"cannot read the purge registry {path}: {exc}",
                                "restore memgit-purged from backup") from exc
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.split(" ")
            if len(parts) < 2 or not fmt.ID_RE.match(parts[0]) \
                    or not re.fullmatch(r"[0-9a-f]{64}", parts[1]) \
                    or not _version_fields_ok(parts[2:]):
                raise RegistryError(f"{path}:{number}: malformed purge registry line",
                                    "each line is: ID SHA256 [DATE [2 WORDS CHARS]]")
            reg.ids.add(parts[0])
            if parts[3:4] == ["2"]:
                reg.digests.add(parts[1])
                reg.shapes.setdefault(int(parts[4]), set()).add(int(parts[5]))
            else:
                reg.legacy.add(parts[1])
        return reg

    @staticmethod
    def append(git_dir: Path, rows: Iterable[tuple[str, RegistryKey | str]], date: str) -> None:
        """Append (id, key) rows durably; a plain digest string is a version 1 row."""
        data = "".join(_line(i, key, date) for i, key in rows)
        fd = os.open(git_dir / REGISTRY_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, data.encode())
            os.fsync(fd)
        finally:
            os.close(fd)


def _version_fields_ok(rest: list[str]) -> bool:
    if len(rest) <= 1:
        return True  # version 1: [DATE]
    return len(rest) == 4 and rest[1] == "2" and rest[2].isdigit() and rest[3].isdigit() \
        and int(rest[2]) <= int(rest[3])


def _line(entry_id: str, key: RegistryKey | str, date: str) -> str:
    if isinstance(key, str):
        return f"{entry_id} {key} {date}\n"
    return f"{entry_id} {key.digest} {date} {key.version} {key.words} {key.chars}\n"


def _segments(message: str) -> Iterator[tuple[int, int]]:
    """Lines, sentences and clauses of a message, as (start, end)."""
    pos = 0
    for content, eol in fmt.split_lines(message):
        yield pos, pos + len(content)
        starts = [pos] + [pos + m.end() for m in _SENTENCE_END_RE.finditer(content)]
        for a, b in zip(starts, starts[1:] + [pos + len(content)], strict=True):
            if (a, b) != (pos, pos + len(content)):
                yield a, b
        pos += len(content) + len(eol)


def _trim(message: str, start: int, end: int, left: bool, right: bool) -> tuple[int, int]:
    """Leave blanks, and the quotes and punctuation the match did without, outside the
    stretch."""
    for cut in (False, True, False):
        while start < end and (message[start].isspace() or cut and left
                               and message[start] in _OPEN):
            start += 1
        while end > start and (message[end - 1].isspace() or cut and right
                               and message[end - 1] in _CLOSE):
            end -= 1
    return start, end


# --- the purge lock -------------------------------------------------------------------------


@dataclass(frozen=True)
class PurgeLock:
    """``memgit-purge.lock``: ``PID HOST STARTED`` (ISO 8601) of the purge holding it.

    A lock written by an older memgit (``PID STARTED``) or one that cannot be read
    counts from the file's modification time, with no process to ask.
    """

    raw: bytes
    pid: int | None
    host: str
    started: float  # seconds since the epoch

    @classmethod
    def read(cls, git_dir: Path) -> PurgeLock | None:
        path = git_dir / PURGE_LOCK_FILE
        try:
            raw = path.read_bytes()
            mtime = path.stat().st_mtime
        except FileNotFoundError:
            return None
        parts = raw.decode("utf-8", "replace").split()
        pid = int(parts[0]) if parts and parts[0].isdigit() else None
        host = parts[1] if len(parts) == 3 else ""
        started = _parse_time(parts[-1]) if len(parts) in (2, 3) else None
        return cls(raw, pid, host, started if started is not None else mtime)

    def stale(self, lease: float, now: float | None = None) -> str:
        """Why the lock no longer holds (its process is gone, or it outlived the lease),
        or "" while it holds."""
        import socket  # here, not at the top: pre-receive imports this module for every push

        age = (time.time() if now is None else now) - self.started
        if self.pid is not None and self.host == socket.gethostname() \
                and not _alive(self.pid):
            return f"its process {self.pid} on {self.host} is gone"
        if age > lease:
            return f"it is {int(age)} s old, beyond the lease of {int(lease)} s"
        return ""

    def describe(self) -> str:
        import datetime as _dt

        when = _dt.datetime.fromtimestamp(self.started, _dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        who = f"pid {self.pid}" if self.pid is not None else "an unknown process"
        return f"{who}{' on ' + self.host if self.host else ''}, started {when}"


def lock_line() -> str:
    import datetime as _dt
    import socket

    now = _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat()
    return f"{os.getpid()} {socket.gethostname()} {now}\n"


LOCK_HINT = ("wait for it; a lock whose purge died is taken over once its process is gone "
             f"or after the lease (git config {LEASE_CONFIG}, seconds)")


def refuse_live_lock(git_dir: Path, lease: float) -> None:
    """A purge may not start while another holds the lock (a stale lock does not count)."""
    from memgit.errors import ConflictError

    lock = PurgeLock.read(git_dir)
    if lock is not None and not lock.stale(lease):
        raise ConflictError(f"another purge is running on this drive ({lock.describe()})",
                            LOCK_HINT)


def hold_lock(git_dir: Path, lease: float) -> tuple[Path, str]:
    """Take ``memgit-purge.lock`` for a purge that writes and prunes; returns its path and
    a note when a stale lock was taken over.

    ``prune --expire=now`` may delete the objects of a push that git has moved out
    of its quarantine but not yet referenced; pre-receive refuses pushes while
    the lock holds (docs/purge.md), and a second purge refuses to start. The lock
    records pid, host and start time: a lock whose process is gone (same host) or
    that is older than ``lease`` seconds was left by a killed purge.
    """
    from memgit.errors import ConflictError

    path = git_dir / PURGE_LOCK_FILE
    note = ""
    held = PurgeLock.read(git_dir)
    if held is not None:
        stale = held.stale(lease)
        if not stale or not take_over(git_dir, held):
            raise ConflictError(f"another purge is running on this drive ({held.describe()})",
                                LOCK_HINT)
        note = f"warning: took over a stale purge lock ({held.describe()}): {stale}"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError as exc:
        raise ConflictError(f"another purge is running on this drive ({path} exists)",
                            LOCK_HINT) from exc
    with os.fdopen(fd, "w") as fh:
        fh.write(lock_line())
    return path, note


def take_over(git_dir: Path, lock: PurgeLock) -> bool:
    """Remove a stale lock, unless another purge replaced it meanwhile (then False).

    rename() is atomic: of two purges taking over the same stale lock, one moves it
    aside; the other then finds a different lock (or none) and checks again.
    """
    path = git_dir / PURGE_LOCK_FILE
    aside = git_dir / f"{PURGE_LOCK_FILE}.stale-{os.getpid()}"
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return True
    try:
        if aside.read_bytes() != lock.raw:  # a fresh lock: put it back
            try:
                os.link(aside, path)
            except FileExistsError:
                pass
            return False
        return True
    finally:
        aside.unlink(missing_ok=True)


def lease_seconds(value: str | None) -> float:
    """The lease from ``git config memgit.purgeLease`` (seconds), else the default."""
    try:
        lease = float(value) if value is not None else DEFAULT_LEASE
    except ValueError:
        return DEFAULT_LEASE
    return lease if lease > 0 else DEFAULT_LEASE


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def _parse_time(value: str) -> float | None:
    import datetime as _dt

    try:
        stamp = _dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=_dt.UTC)
    return stamp.timestamp()
