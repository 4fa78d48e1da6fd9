"""The purge registry kept in refs, so that a replica judges like its primary.

A Gitaly Cluster replica, a ``git clone --mirror`` failover or any replication that
carries refs and objects does not carry other files of the git directory: not
``memgit-purged`` (the registry file), not ``git config``, not the hooks. So every
purge also publishes the registry as two refs, rebuilt into the registry by
:func:`load_into` wherever memgit's hooks run:

* ``refs/memgit/registry/digests``: a commit whose file ``purged`` holds one line per
  registry row, ``ID KEYED DATE kN [WORDS CHARS]``: ``KEYED`` is HMAC-SHA256, under
  the drive's registry key, of the row's digest (the sha256 of the text's
  normalisation N, as in the file), so a row made before the key existed is keyed
  too and matching needs no second normalisation;
* ``refs/memgit/registry/key``: a commit whose file ``key`` holds the key (64 hex
  digits, random, made by the first publish), unless ``MEMGIT_REGISTRY_KEY`` is set:
  then that is the key and no key ref is written (a forge's CI keeps it as a secret).

Readers of the drive must not learn the digests: whoever holds a digest can test
guesses of a purged text offline. Both refs are hidden from fetching clients
(``uploadpack.hideRefs = refs/memgit/registry``, set by ``install-hooks --server``
on every copy, since git config does not replicate), and the digests are keyed, so
the digests ref alone (a forge that cannot hide refs, a mirror made without the
hide, a protocol v2 fetch by object id, which git serves whatever hideRefs says)
confirms nothing without the key. docs/forges.md gives the reasons.
"""

from __future__ import annotations

import hmac
import os
import re
from hashlib import sha256
from pathlib import Path
from typing import NamedTuple

from memgit.errors import RegistryError, RepoError

PREFIX = "refs/memgit/registry"
DIGESTS_REF = PREFIX + "/digests"
KEY_REF = PREFIX + "/key"
DIGESTS_FILE = "purged"
KEY_FILE = "key"
KEY_ENV = "MEMGIT_REGISTRY_KEY"
HIDE_CONFIG = ("uploadpack.hideRefs", PREFIX)
_KEY_RE = re.compile(r"[0-9a-f]{64}")
_ROW_RE = re.compile(r"(\S+) ([0-9a-f]{64}) (\S+) k([12])(?: (\d+) (\d+))?")


def keyed(key: bytes, digest: str) -> str:
    """The row's digest as the refs store it."""
    return hmac.new(key, digest.encode(), sha256).hexdigest()


def has_registry_refs(git_dir: Path) -> bool:
    """Cheap: whether a digests ref may exist (a loose ref, a packed-refs line, or a
    reftable repository, where only git can tell). pre-receive pays this per push."""
    if (git_dir / DIGESTS_REF).exists() or (git_dir / "reftable").exists():
        return True
    try:
        packed = (git_dir / "packed-refs").read_bytes()
    except FileNotFoundError:
        return False
    return f" {DIGESTS_REF}\n".encode() in packed


def _git(git_dir: Path, *args: str, data: bytes | None = None) -> bytes | None:
    from memgit.git.plumbing import git_plumbing

    proc = git_plumbing(git_dir, *args, input=data)
    return proc.stdout if proc.returncode == 0 else None


class _Read(NamedTuple):
    """Both registry refs as read at one moment: (the id the ref names or "", its file's
    text or None)."""

    key: tuple[str, str | None]
    digests: tuple[str, str | None]


def _read(git_dir: Path) -> _Read:
    """Both refs and their files from one ``git cat-file --batch``: it answers each line
    with ``<id> <type> <size>`` and the content, or ``<name> missing`` (an absent ref or
    file), in the order asked."""
    asked = [KEY_REF, f"{KEY_REF}:{KEY_FILE}", DIGESTS_REF, f"{DIGESTS_REF}:{DIGESTS_FILE}"]
    out = _git(git_dir, "cat-file", "--batch",
               data="".join(a + "\n" for a in asked).encode()) or b""
    answers: list[tuple[str, str, bytes] | None] = []
    pos = 0
    for _name in asked:
        eol = out.find(b"\n", pos)
        header = out[pos:eol].split(b" ") if eol >= 0 else []
        if len(header) != 3:
            answers.append(None)
            pos = eol + 1 if eol >= 0 else len(out)
            continue
        size = int(header[2])
        answers.append((header[0].decode(), header[1].decode(), out[eol + 1:eol + 1 + size]))
        pos = eol + 2 + size

    def pair(ref: tuple[str, str, bytes] | None, blob: tuple[str, str, bytes] | None
             ) -> tuple[str, str | None]:
        commit = ref[0] if ref is not None else ""  # what the ref names, as rev-parse
        text = blob[2].decode("utf-8", "replace") if blob is not None and blob[1] == "blob" \
            else None
        return commit, text

    return _Read(pair(answers[0], answers[1]), pair(answers[2], answers[3]))


def registry_key(git_dir: Path, *, create: bool = False, read: _Read | None = None
                 ) -> bytes | None:
    """The drive's registry key: ``MEMGIT_REGISTRY_KEY``, else the key ref; ``create``
    makes and stores one when there is neither (``read``: the refs as read already)."""
    given = os.environ.get(KEY_ENV, "").strip().lower()
    if given:
        if not _KEY_RE.fullmatch(given):
            raise RegistryError(f"{KEY_ENV} is not 64 hex digits",
                                "copy the drive's key exactly (docs/forges.md)")
        return bytes.fromhex(given)
    old, text = (read or _read(git_dir)).key
    if text is not None:
        value = text.strip()
        if not _KEY_RE.fullmatch(value):
            raise RegistryError(f"{KEY_REF} holds no valid key",
                                "restore the key ref from a backup of the drive")
        return bytes.fromhex(value)
    if not create:
        return None
    import secrets  # here: its random and base64 imports are not a push's to pay

    value = secrets.token_hex(32)
    _write_file_ref(git_dir, KEY_REF, KEY_FILE, value + "\n", "memgit: registry key", old)
    return bytes.fromhex(value)


def _write_file_ref(git_dir: Path, ref: str, name: str, text: str, message: str,
                    old: str) -> None:
    """Point ``ref`` at a new parentless commit holding one file (compare-and-swap on
    ``old``, the value read with the file, so two publishers never lose each other's
    rows silently; "" for a ref that was not there)."""
    from memgit.git.plumbing import one_file_commit

    try:
        commit = one_file_commit(git_dir, name, text.encode(), message,
                                 ("memgit", "memgit@localhost"))
    except RepoError as err:
        raise RegistryError(f"cannot write {ref}", "check the repository's permissions") \
            from err
    if _git(git_dir, "update-ref", "-m", message, ref, commit, old or "0" * 40) is None:
        raise RegistryError(f"{ref} moved while it was written", "run the command again")


def ref_rows(git_dir: Path, read: _Read | None = None
             ) -> list[tuple[str, str, str, int, int, int]]:  # see Row
    """(id, keyed digest, date, normalisation, words, chars) of the digests ref."""
    text = (read or _read(git_dir)).digests[1]
    if text is None:
        return []
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        m = _ROW_RE.fullmatch(line)
        if m is None:
            raise RegistryError(f"{DIGESTS_REF}:{DIGESTS_FILE}:{number}: malformed row",
                                "restore the registry refs from the primary or a backup")
        rows.append((m[1], m[2], m[3], int(m[4]), int(m[5] or 0), int(m[6] or 0)))
    return rows


def publish(git_dir: Path, registry_file: Path) -> int:
    """Write the digests ref from the registry file (``memgit-purged``) and the rows the
    ref already has; returns the rows it holds. Nothing is written when the file has no
    rows and no ref exists."""
    try:
        text = registry_file.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    lines = [line.split(" ") for line in text.split("\n")
             if line.strip() and not line.startswith("#")]
    if not lines and not has_registry_refs(git_dir):
        return 0
    read = _read(git_dir)  # both refs at once, compared-and-swapped on when written
    key = registry_key(git_dir, create=True, read=read)
    assert key is not None
    rows = {(r[0], r[1]): r for r in ref_rows(git_dir, read)} \
        if has_registry_refs(git_dir) else {}
    for parts in lines:
        version = 2 if parts[3:4] == ["2"] else 1
        words, chars = (int(parts[4]), int(parts[5])) if version == 2 else (0, 0)
        date = parts[2] if len(parts) > 2 else "-"
        digest = keyed(key, parts[1])
        rows.setdefault((parts[0], digest), (parts[0], digest, date, version, words, chars))
    out = "".join(f"{i} {d} {date} k{v}" + (f" {w} {c}" if v == 2 else "") + "\n"
                  for i, d, date, v, w, c in sorted(rows.values()))
    if read.digests[1] != out:
        _write_file_ref(git_dir, DIGESTS_REF, DIGESTS_FILE, out, "memgit: purge registry",
                        read.digests[0])
    return len(rows)


def hide(git_dir: Path) -> None:
    """Hide the registry refs from fetching clients of this repository."""
    if not is_hidden(git_dir) and _git(git_dir, "config", "--add", *HIDE_CONFIG) is None:
        raise RegistryError(f"cannot set {HIDE_CONFIG[0]} in {git_dir}",
                            "check the repository's permissions")


def is_hidden(git_dir: Path) -> bool:
    found = _git(git_dir, "config", "--get-all", HIDE_CONFIG[0]) or b""
    return HIDE_CONFIG[1] in found.decode().split("\n")


Row = tuple[str, str, str, int, int, int]


def keyed_rows(git_dir: Path) -> tuple[bytes, list[Row]] | None:
    """The key and the rows of the digests ref, for ``PurgeRegistry.load``; None when
    there are no rows. Rows without a key to read them are an error: the hook then
    refuses every push (MG609) rather than accept a purged text."""
    read = _read(git_dir)
    rows = ref_rows(git_dir, read)
    if not rows:
        return None
    key = registry_key(git_dir, read=read)
    if key is None:
        raise RegistryError(f"the purge registry's digests are here ({DIGESTS_REF}) but its "
                            f"key is not ({KEY_REF}, or {KEY_ENV})",
                            "replicate refs/memgit/registry/key with the drive, or set "
                            f"{KEY_ENV} (a CI secret on a forge)")
    return key, rows
