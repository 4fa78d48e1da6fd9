"""Raw git objects without pygit2: the one ``cat-file --batch`` reader (:class:`ObjectReader`),
the one tree parser (:func:`tree_entries`), the one tree cache (:class:`TreeCache`).

pre-receive imports no pygit2, and the history rewriter reads through ``cat-file
--batch``, which keeps up on long delta chains where libgit2 does not (docs/performance.md,
"Purge"). Trees are read level by level, one batch of requests per level.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO

from memgit.errors import RepoError
from memgit.git.plumbing import ObjectMissingError, plumbing_argv

TreeEntry = tuple[bytes, bytes, bytes]
"""One entry of a raw tree: (mode as octal digits, name, raw object id)."""

TREE_MODES = (b"40000", b"040000")  # git writes 40000; a few old tools wrote 040000

_TREE_PATTERNS: dict[int, tuple[re.Pattern[bytes], re.Pattern[bytes]]] = {}


def tree_entries(raw: bytes, oid_bytes: int = 20, *, proven: bool = False) -> list[TreeEntry]:
    """(mode, name, id) of every entry of a raw tree object: ``MODE SP NAME NUL ID``
    repeated, ids of ``oid_bytes`` bytes (20 for SHA-1, 32 for SHA-256). ``proven``:
    this very tree was parsed here before without error, so the check is skipped."""
    patterns = _TREE_PATTERNS.get(oid_bytes)
    if patterns is None:
        patterns = _TREE_PATTERNS[oid_bytes] = (
            re.compile(rb"([0-7]+) ([^\x00]*)\x00(.{%d})" % oid_bytes, re.S),
            re.compile(rb"(?:[0-7]+ [^\x00]*\x00.{%d})*" % oid_bytes, re.S))
    entry, whole = patterns
    if not proven and whole.fullmatch(raw) is None:  # one C pass: findall sees every entry
        raise RepoError("a tree object is malformed", "run git fsck")
    return entry.findall(raw)


def swap_tree_ids(raw: bytes, entries: list[TreeEntry], swaps: list[tuple[int, bytes]]) -> bytes:
    """Tree ``raw`` (whose parsed ``entries`` are given) with the ids of some entries
    replaced, ``swaps`` being (entry index, new id): same modes, names and order, so
    the tree stays sorted. An id found once in the raw tree can only be that entry's
    id field, and its bytes are replaced in place (by an id of the same length, so the
    other offsets hold); otherwise (two entries with one id, or an id's bytes inside a
    name) the tree is rebuilt from its entries."""
    out = raw
    for i, new in swaps:
        old = entries[i][2]
        at = raw.find(old)
        if at < 0 or raw.find(old, at + 1) >= 0 or len(new) != len(old):
            rebuilt = list(entries)
            for j, new_id in swaps:
                rebuilt[j] = (entries[j][0], entries[j][1], new_id)
            return b"".join(m + b" " + n + b"\x00" + c for m, n, c in rebuilt)
        out = out[:at] + new + out[at + len(old):]
    return out


def is_tree(mode: bytes) -> bool:
    return mode in TREE_MODES


def is_regular(mode: bytes) -> bool:
    """A regular file, executable or not (100644, 100755)."""
    return mode.startswith(b"100")


# --- object ids and headers ---------------------------------------------------------------


def object_key(kind: str, raw: bytes) -> bytes:
    """The SHA-1 object id git gives ``raw`` as an object of ``kind``, as 20 raw bytes."""
    digest = hashlib.sha1(b"%s %d\x00" % (kind.encode(), len(raw)))
    digest.update(raw)
    return digest.digest()


def object_id(kind: str, raw: bytes) -> str:
    """The same id in hex."""
    return object_key(kind, raw).hex()


def split_object(raw: bytes) -> tuple[list[bytes], bytes]:
    """A commit or tag as (header lines, continuation lines kept with their header; message)."""
    head, sep, message = raw.partition(b"\n\n")
    if not sep:  # no message at all: git writes the blank line anyway, tolerate its absence
        head, message = raw.rstrip(b"\n"), b""
    headers: list[bytes] = []
    for line in head.split(b"\n"):
        if line.startswith(b" ") and headers:
            headers[-1] += b"\n" + line  # a continuation (gpgsig, mergetag) of the header above
        else:
            headers.append(line)
    return headers, message


_IDENT_RE = re.compile(rb"(author|committer) (.*?) ?<([^<>]*)>(?: \d+ [+-]\d{4})?\Z", re.S)


def commit_text(raw: bytes) -> tuple[str, list[tuple[str, str]]]:
    """A raw commit's message and its people: [("author name", ...), ("author email",
    ...), ("committer name", ...), ...], decoded as UTF-8 (bad bytes replaced)."""
    headers, message = split_object(raw)
    people: list[tuple[str, str]] = []
    for header in headers:
        if not header.startswith((b"author ", b"committer ")):
            continue
        m = _IDENT_RE.match(header)
        role = header.split(b" ", 1)[0].decode()
        if m is None:  # not git's shape: judge the whole value
            people.append((role, header[len(role) + 1:].decode("utf-8", "replace")))
            continue
        people.append((f"{role} name", m.group(2).decode("utf-8", "replace")))
        people.append((f"{role} email", m.group(3).decode("utf-8", "replace")))
    return message.decode("utf-8", "replace"), people


_PERSON_HEADERS = (b"tree ", b"parent ", b"author ", b"committer ")
_KNOWN_HEADERS = frozenset({"gpgsig", "gpgsig-sha256", "mergetag", "encoding"})
_ARMOR_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]*(?:SIGNATURE|SIGNED MESSAGE)-----\Z")
_ARMOR_END = re.compile(r"-----END [A-Z0-9 ]*-----\Z")
_BASE64_LINE = re.compile(r"[A-Za-z0-9+/]+={0,2}\Z")
_PRINTABLE_RUN = re.compile(rb"[\x20-\x7e]{16,}")


def _is_signature(data: bytes) -> bool:
    """Does decoded armor start like a signature: SSH's SSHSIG, an OpenPGP signature
    packet (tag 2, old or new format) or a CMS/X.509 DER sequence?"""
    if data.startswith(b"SSHSIG") or data[:1] == b"\x30":
        return True
    if not data or not data[0] & 0x80:
        return False
    tag = data[0] & 0x3F if data[0] & 0x40 else (data[0] >> 2) & 0x0F
    return tag == 2


def _unarmor(lines: list[str]) -> list[str]:
    """The lines of a header value to scan for credentials: a signature's armor body is
    replaced by the printable runs of what it decodes to. A real signature's base64
    looks like a generated token to the scanner (about one armor line in eight), so it
    cannot be scanned as text; a block whose body is not base64 of a signature is
    scanned line by line like any other."""
    import base64
    import binascii

    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not _ARMOR_BEGIN.match(line.strip()):
            out.append(line)
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if _ARMOR_END.match(lines[j].strip())),
                   None)
        if end is None:
            out.extend(lines[i:])
            break
        block = [b.strip() for b in lines[i + 1:end]]
        heads = [b for b in block if ":" in b]  # PGP armor headers (Version:, Comment:)
        # the body, without OpenPGP's checksum line ("=XXXX", the CRC-24 of the body)
        body = [b for b in block if b and ":" not in b
                and not (b.startswith("=") and len(b) == 5 and b is block[-1])]
        data = b""
        if body and all(_BASE64_LINE.match(b) for b in body):
            text = "".join(body)
            try:
                data = base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
            except (binascii.Error, ValueError):
                data = b""
        if data and _is_signature(data):
            out.extend(heads)
            out.extend(m.group().decode("ascii") for m in _PRINTABLE_RUN.finditer(data))
        else:
            out.extend(lines[i + 1:end])
        i = end + 1
    return out


def commit_headers(raw: bytes) -> list[tuple[str, str]]:
    """The lines of a raw commit's other headers (gpgsig, mergetag, encoding and any
    header git does not know), as (label, line) to scan for credentials, decoded as UTF-8
    (bad bytes replaced). git keeps unknown headers and carries them to every clone, so
    they are bytes that enter the drive like the message (hostile sweep: a token in an
    ``x-token`` header and an AWS key pair in a ``gpgsig`` body landed). An unknown
    header's name is attacker-chosen and is scanned with its value, never shown: its
    label is "unknown header"."""
    headers, _message = split_object(raw)
    out: list[tuple[str, str]] = []
    for header in headers:
        if header.startswith(_PERSON_HEADERS) or not header:
            continue
        text = header.decode("utf-8", "replace")
        name, _sep, value = text.partition(" ")
        known = name in _KNOWN_HEADERS
        lines = value.split("\n") if known else text.split("\n")
        lines = [lines[0]] + [line[1:] if line.startswith(" ") else line for line in lines[1:]]
        label = f"{name} header" if known else "unknown header"
        out.extend((label, line) for line in _unarmor(lines) if line.strip())
    return out


def join_object(headers: list[bytes], message: bytes) -> bytes:
    return b"\n".join(headers) + b"\n\n" + message


# --- the reader -----------------------------------------------------------------------------


def _cat_file(git_dir: Path, *args: str, stdin: int | None = None,
              stdout: int | IO[bytes] = subprocess.PIPE, bufsize: int = -1
              ) -> subprocess.Popen[bytes]:
    return subprocess.Popen(plumbing_argv(git_dir, "cat-file", *args),
                            stdin=stdin if stdin is not None else subprocess.DEVNULL,
                            stdout=stdout, stderr=subprocess.DEVNULL, bufsize=bufsize)


def _header(line: bytes) -> tuple[str, int] | None:
    """(type, size) from a ``cat-file`` answer line; None for ``<oid> missing``."""
    parts = line.split()
    if len(parts) == 2 and parts[1] == b"missing":
        return None
    if len(parts) != 3:
        raise RepoError(f"git cat-file answered {line[:80]!r}", "")
    return parts[1].decode(), int(parts[2])


class ObjectReader:
    """``git cat-file --batch`` and ``--batch-check`` for one repository, each started
    on first use and kept until :meth:`close`. Requests go in chunks that fit an
    empty pipe, and all answers of a chunk are read before the next is written, so
    neither side can block the other."""

    _CHUNK_BYTES = 32768  # well below the 64 KiB pipe buffer

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self._procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(self) -> None:
        """Start both processes now, so that they start while the caller works on."""
        self._proc("--batch")
        self._proc("--batch-check")

    def _proc(self, flag: str) -> subprocess.Popen[bytes]:
        proc = self._procs.get(flag)
        if proc is None:
            proc = _cat_file(self.git_dir, flag, stdin=subprocess.PIPE)
            self._procs[flag] = proc
        return proc

    def _ask(self, flag: str, oids: Iterable[str]
             ) -> Iterator[tuple[str, tuple[str, int] | None, bytes]]:
        """(id, (type, size) or None when missing, content or b"") for each distinct id."""
        unique = list(dict.fromkeys(oids))
        if not unique:
            return
        proc = self._proc(flag)
        assert proc.stdin is not None and proc.stdout is not None
        with_data = flag == "--batch"
        per_chunk = max(1, self._CHUNK_BYTES // (len(unique[0]) + 1))
        for start in range(0, len(unique), per_chunk):
            chunk = unique[start:start + per_chunk]
            try:
                proc.stdin.write("".join(o + "\n" for o in chunk).encode())
                proc.stdin.flush()
            except BrokenPipeError as exc:
                raise RepoError("git cat-file stopped unexpectedly", "") from exc
            for oid in chunk:
                found = _header(proc.stdout.readline())
                data = b""
                if found is not None and with_data:
                    data = proc.stdout.read(found[1] + 1)[:-1]
                    if len(data) != found[1]:
                        raise RepoError("git cat-file output ended early", "")
                yield oid, found, data

    def iter_many(self, oids: Iterable[str]) -> Iterator[tuple[str, tuple[str, bytes] | None]]:
        """(id, (type, content)) of each distinct id, None for an object that is not
        there, a chunk of requests at a time."""
        for oid, found, data in self._ask("--batch", oids):
            yield oid, (found[0], data) if found is not None else None

    def read_many(self, oids: Iterable[str]) -> dict[str, tuple[str, bytes] | None]:
        """oid -> (type, content), None for an object that is not there."""
        return dict(self.iter_many(oids))

    def read(self, oid: str) -> tuple[str, bytes] | None:
        return self.read_many([oid])[oid]

    def info_many(self, oids: Iterable[str]) -> dict[str, tuple[str, int] | None]:
        """oid -> (type, size) without reading content, None for a missing object."""
        return {oid: found for oid, found, _data in self._ask("--batch-check", oids)}

    def read_later(self, oids: Iterable[str]) -> LaterRead:
        """Start reading ``oids`` in another ``git cat-file --batch`` whose output goes to
        an anonymous in-memory file: git inflates while the caller works on (no thread,
        and no pipe that could fill up)."""
        return LaterRead(self.git_dir, list(dict.fromkeys(oids)))

    def stream(self, oids: list[str]) -> Iterator[tuple[bytes, bytes]]:
        """(type, content) of each object of ``oids`` in that order, streamed from a
        ``cat-file`` of its own: a thread writes the requests while the caller reads
        the answers, so git inflates the next object while Python looks at the last
        one, and nothing is held beyond the object being yielded. For reading very
        many objects (a whole history); a missing object raises RepoError."""
        for found in self._stream(oids, missing_ok=False):
            assert found is not None
            yield found

    def stream_found(self, oids: list[str]) -> Iterator[tuple[bytes, bytes] | None]:
        """As :meth:`stream`, None for an object that is not there."""
        return self._stream(oids, missing_ok=True)

    def _stream(self, oids: list[str], *, missing_ok: bool
                ) -> Iterator[tuple[bytes, bytes] | None]:
        import threading

        # a 1 MiB pipe and read buffer: a file of a few KB is then one copy out of the
        # buffer, not one or two read calls of its own (git writes whole objects)
        proc = _cat_file(self.git_dir, "--batch", stdin=subprocess.PIPE, bufsize=1 << 20)
        assert proc.stdin is not None and proc.stdout is not None
        widen_pipe(proc.stdout)
        requests = proc.stdin

        def feed() -> None:
            try:
                for start in range(0, len(oids), 4096):
                    requests.write("".join(o + "\n" for o in oids[start:start + 4096]).encode())
                requests.close()
            except (BrokenPipeError, ValueError):
                pass  # the reader stopped early and closed the pipe

        feeder = threading.Thread(target=feed, daemon=True)
        feeder.start()
        read, readline = proc.stdout.read, proc.stdout.readline
        try:
            for oid in oids:
                # "<id> <type> <size>" then the content and a newline; "<id> missing"
                header = readline().split()
                if len(header) != 3:
                    if missing_ok and header[1:] == [b"missing"]:
                        yield None
                        continue
                    raise RepoError(f"object {oid} is missing from the repository",
                                    "run git fsck; a history rewrite needs every object")
                data = read(int(header[2]))
                read(1)
                yield header[1], data
        finally:
            proc.stdout.close()
            proc.kill()
            proc.wait()
            feeder.join()

    def close(self) -> None:
        for proc in self._procs.values():
            try:
                if proc.stdin is not None:
                    proc.stdin.close()
            except BrokenPipeError:
                pass
            if proc.stdout is not None:
                proc.stdout.close()
            proc.wait()
        self._procs.clear()

    def __enter__(self) -> ObjectReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LaterRead:
    """See :meth:`ObjectReader.read_later`."""

    def __init__(self, git_dir: Path, oids: list[str]) -> None:
        self.oids = oids
        self._out = _scratch_file()
        self._proc: subprocess.Popen[bytes] | None = None
        if not oids:
            return
        self._proc = _cat_file(git_dir, "--batch", stdin=subprocess.PIPE, stdout=self._out)
        assert self._proc.stdin is not None
        # the requests may exceed a pipe's buffer: git reads them as it goes, and its
        # output goes to a file, so writing them all cannot block for good
        self._proc.stdin.write("".join(o + "\n" for o in oids).encode())
        self._proc.stdin.close()

    def close(self) -> None:
        """Stop reading (when the result is not needed after all)."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        self._out.close()

    def result(self) -> dict[str, tuple[str, bytes] | None]:
        try:
            if self._proc is None:
                return {}
            if self._proc.wait() != 0:
                raise RepoError("git cat-file failed", "")
            self._out.seek(0)
            data = self._out.read()
        finally:
            self._out.close()
        out: dict[str, tuple[str, bytes] | None] = {}
        pos = 0
        for oid in self.oids:
            eol = data.index(b"\n", pos)
            found = _header(data[pos:eol])
            pos = eol + 1
            if found is None:
                out[oid] = None
                continue
            out[oid] = (found[0], data[pos:pos + found[1]])
            pos += found[1] + 1
        return out


def topo_commit_contents(git_dir: Path, tips: list[str]
                         ) -> Iterator[tuple[str, list[str], bytes]]:
    """(hex id, parent ids, raw commit) of every commit reachable from ``tips``, parents
    before children (``rev-list --topo-order --reverse``), for reading a whole history
    at once.

    ``rev-list``'s output is the stdin of a ``cat-file --batch`` of its own, so Python
    reads one stream and git looks each commit up as soon as it is listed (and
    ``cat-file`` starts while ``rev-list`` walks). ``cat-file`` splits an input line
    at its first space when the format holds ``%(rest)`` and repeats the rest, here the
    parents. rev-list writes nothing until its walk is done (the order needs the whole
    walk), and a failed walk writes nothing at all; its exit status is checked once
    the stream has ended, so a consumer that reads to the end never takes a partial
    list for the history. Invariant: the raw commits are the bytes git stores."""
    if not tips:
        return
    argv = plumbing_argv(git_dir, "rev-list", "--topo-order", "--reverse", "--parents",
                         "--stdin")
    errors = _scratch_file()  # rev-list's stderr, read on failure (never a full pipe)
    lister = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=errors)
    assert lister.stdin is not None and lister.stdout is not None
    reader = _cat_file(git_dir, "--batch=%(objectname) %(objecttype) %(objectsize) %(rest)",
                       stdin=lister.stdout.fileno(), bufsize=1 << 20)
    lister.stdout.close()  # cat-file holds it now; rev-list gets SIGPIPE if it stops
    assert reader.stdout is not None
    widen_pipe(reader.stdout)
    try:
        # rev-list reads all of stdin before it walks and writes: this cannot block
        # for good, however many tips there are
        lister.stdin.write("".join(t + "\n" for t in tips).encode())
        lister.stdin.close()
    except BrokenPipeError:
        pass  # rev-list stopped early: its exit status says why, below
    read, readline = reader.stdout.read, reader.stdout.readline
    try:
        while True:
            # "<id> commit <size> <parent>..." then the content and a newline
            header = readline().split()
            if not header:
                break
            if len(header) < 3 or header[1] != b"commit":
                raise RepoError(f"git cat-file answered {b' '.join(header)[:80]!r} for a "
                                "commit of the history", "run git fsck")
            data = read(int(header[2]))
            if len(data) != int(header[2]) or read(1) != b"\n":
                raise RepoError("git cat-file output ended early", "run git fsck")
            yield header[0].decode(), [p.decode() for p in header[3:]], data
        if lister.wait() != 0:
            errors.seek(0)
            raise RepoError("git rev-list failed: "
                            + errors.read().decode("utf-8", "replace").strip(), "run git fsck")
    finally:
        reader.stdout.close()
        for proc in (reader, lister):
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        errors.close()


def widen_pipe(stream: object, size: int = 1 << 20) -> None:
    """Let a pipe hold ``size`` bytes (Linux's default ceiling for a user is 1 MiB)
    instead of 64 KiB: fewer wake-ups of either side. Elsewhere, or when refused, it
    stays as it is."""
    try:
        import fcntl

        fcntl.fcntl(stream.fileno(), fcntl.F_SETPIPE_SZ, size)  # type: ignore[attr-defined]
    except (ImportError, AttributeError, OSError):
        pass


def _scratch_file():  # type: ignore[no-untyped-def]
    """An unnamed read-write file: memfd on Linux (no file system needed), else a
    temporary file."""
    if hasattr(os, "memfd_create"):
        try:
            return os.fdopen(os.memfd_create("memgit-objects"), "w+b")
        except OSError:
            pass
    import tempfile

    return tempfile.TemporaryFile()


# --- the tree cache ----------------------------------------------------------------------


Progress = Callable[[int, int], None]
"""Called with (objects read, objects in this level) while a level is read."""


class TreeCache:
    """Raw tree objects by raw id, read level by level through an :class:`ObjectReader`.

    :meth:`prefetch` reads every tree below some roots: the roots in one batch, then
    all their subtrees not read yet in the next, and so on, so a push or a whole
    history costs one batch of requests per folder depth. :meth:`entries` parses a
    tree (reading it on a miss). Trees are immutable, so the cache never goes stale.
    """

    def __init__(self, reader: ObjectReader, oid_bytes: int = 20, *,
                 missing_from: str = "the repository") -> None:
        self.reader = reader
        self.oid_bytes = oid_bytes
        self.missing_from = missing_from  # where a missing tree should have been, for messages
        self.raw: dict[bytes, bytes] = {}

    def prefetch(self, roots: Iterable[bytes], *,
                 visit: Callable[[bytes, list[TreeEntry]], None] | None = None,
                 progress: Progress | None = None, streamed: bool = False) -> None:
        """Read the trees below ``roots``; ``visit(tree id, entries)`` sees each tree
        read, parents before children. A tree that is not there (or is not a tree) is
        skipped: :meth:`entries` reports it when it is needed. ``streamed``: each level
        through a ``cat-file`` of its own (:meth:`ObjectReader.stream_found`), git
        inflating while Python parses, for very many trees (a whole history)."""
        level = [t for t in dict.fromkeys(roots) if t not in self.raw]
        while level:
            following: list[bytes] = []
            done = 0
            hexes = [t.hex() for t in level]
            answers: Iterable[tuple[str, tuple[str | bytes, bytes] | None]] = \
                zip(hexes, self.reader.stream_found(hexes), strict=True) if streamed \
                else self.reader.iter_many(hexes)
            for hex_id, got in answers:
                done += 1
                if progress is not None and done % 2000 == 0:
                    progress(done, len(level))
                if got is None or got[0] not in ("tree", b"tree"):
                    continue
                oid = bytes.fromhex(hex_id)
                entries = tree_entries(got[1], self.oid_bytes)  # checked before it is cached
                self.raw[oid] = got[1]
                if visit is not None:
                    visit(oid, entries)
                following.extend(child for mode, _name, child in entries
                                 if mode in TREE_MODES and child not in self.raw)
            if progress is not None:
                progress(len(level), len(level))
            level = [t for t in dict.fromkeys(following) if t not in self.raw]

    def entries(self, oid: bytes) -> list[TreeEntry]:
        """The entries of tree ``oid``; ObjectMissingError when it is not in the repository."""
        raw = self.raw.get(oid)
        if raw is not None:  # a tree enters the cache only once parsed (and so checked)
            return tree_entries(raw, self.oid_bytes, proven=True)
        got = self.reader.read(oid.hex())
        if got is None:
            raise ObjectMissingError(f"tree {oid.hex()[:10]} is not in {self.missing_from}",
                                     "run git fsck")
        if got[0] != "tree":
            raise ObjectMissingError(f"{oid.hex()[:10]} is a {got[0]}, not a tree", "")
        entries = tree_entries(got[1], self.oid_bytes)
        self.raw[oid] = got[1]
        return entries
