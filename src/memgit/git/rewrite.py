"""History rewriting: one pack of new objects, refs moved in one transaction, pruning.

The history rewriter builds its new objects as raw bytes and they are written here as ONE
pack with its index (two files, however many objects); then all refs move in one ``git
update-ref --stdin`` transaction, reflogs are expired and unreachable objects pruned.
Hook-safe: no pygit2.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from memgit.errors import RepoError

OBJ_TYPES = {"commit": 1, "tree": 2, "blob": 3, "tag": 4}


def repository_oddities(git_dir: Path) -> list[str]:
    """What stops a history rewrite from removing data everywhere in this repository."""
    out: list[str] = []
    alternates = git_dir / "objects" / "info" / "alternates"
    if alternates.exists() and alternates.read_text().strip():
        out.append("it borrows objects from another repository (objects/info/alternates)")
    if (git_dir / "shallow").exists():
        out.append("it is a shallow clone")
    worktrees = git_dir / "worktrees"
    if worktrees.is_dir() and any(worktrees.iterdir()):
        out.append("it has linked worktrees (git worktree list)")
    busy = [name for name in ("MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "rebase-merge",
                              "rebase-apply", "BISECT_LOG") if (git_dir / name).exists()]
    if busy:
        out.append(f"a merge, rebase, cherry-pick or bisect is in progress ({busy[0]})")
    from memgit.git.plumbing import git_plumbing  # (the pack helper imports this module)

    fmt_proc = git_plumbing(git_dir, "rev-parse", "--show-object-format")
    if fmt_proc.returncode == 0 and fmt_proc.stdout.strip() not in (b"sha1", b""):
        out.append("it uses SHA-256 object ids")
    return out


def _varint(n: int) -> bytes:
    """``n`` in little-endian 7-bit groups, the high bit saying another follows."""
    if n < 0x80:
        return bytes((n,))
    if n < 0x4000:
        return bytes((n & 0x7F | 0x80, n >> 7))
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _copy_ops(offset: int, size: int) -> bytes:
    """Delta copy instructions for ``size`` bytes of the base from ``offset``: each an
    op byte (high bit set; bits 0-3 say which offset bytes follow, bits 4-6 which size
    bytes) then the non-zero bytes of offset and size, little-endian, at most 16 MiB a
    copy. Stripping the zero bytes of the 7 little-endian bytes keeps the rest in order."""
    out = b""
    while size > 0:
        step = min(size, 0xFFFFFF)
        o, s = offset.to_bytes(4, "little"), step.to_bytes(3, "little")
        op = 0x80 | (o[0] > 0) | (o[1] > 0) << 1 | (o[2] > 0) << 2 | (o[3] > 0) << 3 \
            | (s[0] > 0) << 4 | (s[1] > 0) << 5 | (s[2] > 0) << 6
        out += bytes((op,)) + (o + s).replace(b"\x00", b"")
        offset += step
        size -= step
    return out


def make_delta(base: bytes, target: bytes) -> bytes:
    """A git delta turning ``base`` into ``target``: copy the common head and tail,
    insert what differs between them (versions of one file or tree differ in one
    place, so this is nearly as small as git's own delta search and much cheaper).
    Called once per new tree of a history rewrite, so it is written out flat."""
    base_size, target_size = len(base), len(target)
    limit = min(base_size, target_size)
    # the common head and tail in C speed: the XOR of the two heads read as big-endian
    # integers has its highest set bit in the first differing byte; of the two tails,
    # its lowest set bit in the last differing byte
    x = int.from_bytes(base[:limit], "big") ^ int.from_bytes(target[:limit], "big")
    head = limit if x == 0 else limit - 1 - (x.bit_length() - 1) // 8
    rest = limit - head
    tail = 0
    if rest > 0:
        x = int.from_bytes(base[base_size - rest:], "big") ^ \
            int.from_bytes(target[target_size - rest:], "big")
        tail = rest if x == 0 else ((x & -x).bit_length() - 1) // 8
    middle = target[head:target_size - tail]
    if len(middle) <= 127:  # one insert instruction: its op byte is its length
        inserts = bytes((len(middle),)) + middle if middle else b""
    else:
        inserts = b"".join(bytes((len(middle[at:at + 127]),)) + middle[at:at + 127]
                           for at in range(0, len(middle), 127))
    out = bytes((base_size,)) if base_size < 0x80 else _varint(base_size)
    out += bytes((target_size,)) if target_size < 0x80 else _varint(target_size)
    if 0 < head < 0x100:  # a copy from offset 0: op 0x90 and one size byte
        out += bytes((0x90, head))
    elif head:
        out += _copy_ops(0, head)
    if 0 < tail < 0x100 and base_size < 0x100:  # a one-byte offset (or 0) and size
        start = base_size - tail
        return out + inserts + (bytes((0x91, start, tail)) if start else bytes((0x90, tail)))
    return out + inserts + _copy_ops(base_size - tail, tail)


class PackBuilder:
    """A pack built in memory, one object at a time, in the order written.

    An object given a ``base`` already added is stored as a delta of it (OFS_DELTA,
    chains at most ``max_depth`` long, git's default) when that is under half its
    size, so a later ``git gc`` reuses these deltas instead of keeping the objects
    whole. The contents of the last ``keep_bytes`` of objects added are kept to make
    deltas from (a base is the previous version at its path, written shortly before);
    an object whose base is older is stored whole. The object count goes in the
    pack's header, so the header and the checksum are made by :meth:`finish`; the
    bytes depend only on the objects added, so a pack built here or in a helper
    process (git.pack_process) is byte for byte the one ``write_pack`` writes.
    """

    def __init__(self, *, level: int = 1, max_depth: int = 50,
                 keep_bytes: int = 64 << 20) -> None:
        self.level = level
        self.max_depth = max_depth
        self.keep_bytes = keep_bytes
        self.body = bytearray()
        self.entries: list[tuple[bytes, int, int]] = []  # (raw id, crc32, offset)
        self.written: dict[bytes, tuple[int, int]] = {}  # raw id -> offset, chain depth
        self.recent: dict[bytes, bytes] = {}  # raw id -> content, oldest first
        self.recent_bytes = 0
        self._finished: tuple[int, tuple[bytes, bytes, bytes]] | None = None  # (count, finish())

    def add(self, kind: str, oid: bytes, raw: bytes, base: bytes | None = None) -> None:
        """Append the object ``oid`` (20 raw bytes) of ``kind`` with content ``raw``.

        Called once per new object of a history rewrite (tens of thousands), so the
        common cases of the helpers below are written out here: a delta base fewer than
        128 bytes back, a tiny stored stream (the header's short cases are
        :func:`_entry_header`'s)."""
        import zlib

        body = self.body
        offset = 12 + len(body)  # after the 12-byte header
        payload, depth, base_offset = raw, 0, 0
        if base is not None:
            base_raw = self.recent.get(base)
            if base_raw is not None:
                base_offset, base_depth = self.written[base]
                if base_depth < self.max_depth:
                    delta = make_delta(base_raw, raw)
                    if len(delta) < len(raw) // 2:
                        payload, depth = delta, base_depth + 1
        code = 6 if depth else OBJ_TYPES[kind]  # 6: OFS_DELTA
        record = _entry_header(code, len(payload))
        if depth:
            distance = offset - base_offset
            if distance < 0x4000:  # _ofs_distance's one or two bytes
                record += bytes((distance,)) if distance < 0x80 else \
                    bytes((0x80 | ((distance >> 7) - 1), distance & 0x7F))
            else:
                record += _ofs_distance(distance)
        record += _deflate(payload, self.level)
        body += record
        self.entries.append((oid, zlib.crc32(record), offset))
        self.written[oid] = (offset, depth)
        if code == 1 or code == 4:  # a commit or a tag: never a delta base (no path)
            return
        self.recent[oid] = raw
        self.recent_bytes += len(raw)
        if self.recent_bytes > self.keep_bytes:
            while self.recent_bytes > self.keep_bytes and len(self.recent) > 1:
                self.recent_bytes -= len(self.recent.pop(next(iter(self.recent))))

    def add_record(self, oid: bytes, record: bytes) -> None:
        """Append a commit or a tag whose entry :func:`whole_record` made elsewhere
        (the pack helper's parent): the same bytes :meth:`add` writes for it, since
        such an object is stored whole and is never a delta base."""
        import zlib

        offset = 12 + len(self.body)
        self.body += record
        self.entries.append((oid, zlib.crc32(record), offset))
        self.written[oid] = (offset, 0)

    def finish(self) -> tuple[bytes, bytes, bytes]:
        """(pack header, pack checksum, index) once every object is added; the pack
        is the header, :attr:`body` and the checksum. Made once for a given set of
        objects."""
        import hashlib
        import struct

        if self._finished is not None and self._finished[0] == len(self.entries):
            return self._finished[1]  # nothing was added since (the helper's seal)
        header = b"PACK" + struct.pack(">II", 2, len(self.entries))
        digest = hashlib.sha1(header)
        digest.update(self.body)
        pack_sum = digest.digest()
        done = header, pack_sum, _pack_index(self.entries, pack_sum)
        self._finished = (len(self.entries), done)
        return done


def whole_record(kind: str, raw: bytes, level: int = 1) -> bytes:
    """The pack entry of an object stored whole, as :meth:`PackBuilder.add` writes it
    for an object without a base: its type and size header, then ``raw`` deflated."""
    return _entry_header(OBJ_TYPES[kind], len(raw)) + _deflate(raw, level)


def _entry_header(code: int, size: int) -> bytes:
    """A pack entry's type and size header, the one- and two-byte cases written out (most
    objects of a rewrite are small; the general loop is :func:`_type_and_size`)."""
    if size < 16:
        return bytes((code << 4 | size,))
    if size < 2048:
        return bytes((code << 4 | size & 0x0F | 0x80, size >> 4))
    return _type_and_size(code, size)


def _ofs_distance(distance: int) -> bytes:
    """An OFS_DELTA's base distance: big-endian 7-bit groups, each but the last with
    the high bit set and one less than its value (git's offset encoding)."""
    ofs = bytearray([distance & 0x7F])
    distance >>= 7
    while distance:
        distance -= 1
        ofs.insert(0, 0x80 | (distance & 0x7F))
        distance >>= 7
    return bytes(ofs)


def _type_and_size(kind_code: int, size: int) -> bytes:
    """A pack entry's header: type in bits 4-6 of the first byte, the size in 4 then
    7-bit little-endian groups, the high bit saying another byte follows."""
    byte = (kind_code << 4) | (size & 0x0F)
    size >>= 4
    head = bytearray()
    while size:
        head.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    head.append(byte)
    return bytes(head)


def _deflate(payload: bytes, level: int) -> bytes:
    """``payload`` as a zlib stream (any valid stream is a valid pack entry)."""
    import zlib

    if len(payload) < 64:
        # a tree delta: nothing to gain. The stream zlib.compress(payload, 0) makes,
        # built by hand (header 78 01, one final stored block: 01, LEN, ~LEN little-
        # endian, the bytes, then the Adler-32 big-endian): zlib would first set up
        # 256 KiB of state to copy 40 bytes
        size = len(payload)
        return b"\x78\x01\x01" + size.to_bytes(2, "little") + \
            (size ^ 0xFFFF).to_bytes(2, "little") + payload + \
            zlib.adler32(payload).to_bytes(4, "big")
    if len(payload) < 4096:
        # zlib's default 32 KiB window costs more to set up than to use on a small object
        squeeze = zlib.compressobj(level, zlib.DEFLATED, 12, 2)
        return squeeze.compress(payload) + squeeze.flush()
    return zlib.compress(payload, level)


def _pack_index(entries: list[tuple[bytes, int, int]], pack_sum: bytes) -> bytes:
    """The version-2 .idx of a pack: fan-out table, sorted ids, CRC-32s, offsets (those
    past 2 GiB in a table of 64-bit ones), the pack's checksum, its own checksum."""
    import hashlib
    import struct
    from itertools import accumulate
    from operator import itemgetter

    entries = sorted(entries, key=itemgetter(0))  # ids are distinct: the order is theirs
    ids = b"".join([e[0] for e in entries])
    width = len(entries[0][0]) if entries else 20
    firsts = ids[::width]  # the first byte of each id, in order
    fanout = list(accumulate(firsts.count(byte) for byte in range(256)))
    small: list[int] = []
    large: list[int] = []
    for _oid, _crc, off in entries:
        if off < 0x80000000:
            small.append(off)
        else:
            small.append(0x80000000 | len(large))
            large.append(off)
    idx = bytearray(b"\xfftOc" + struct.pack(">I", 2))
    idx += struct.pack(">256I", *fanout)
    idx += ids
    idx += struct.pack(f">{len(entries)}I", *[e[1] & 0xFFFFFFFF for e in entries])
    idx += struct.pack(f">{len(small)}I", *small)
    idx += struct.pack(f">{len(large)}Q", *large)
    idx += pack_sum
    idx += hashlib.sha1(idx).digest()
    return bytes(idx)


def install_pack(git_dir: Path, built: PackBuilder) -> Path:
    """Write a built pack and its index into ``objects/pack``; the path of the .pack.

    The pack is written under a temporary name, synced and renamed first, and the
    index renamed into place last: git only uses a pack once its .idx exists.
    """
    import tempfile

    header, pack_sum, idx = built.finish()
    pack_dir = git_dir / "objects" / "pack"
    pack_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix="tmp_pack_memgit_", dir=pack_dir)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(header)
            fh.write(built.body)
            fh.write(pack_sum)
            fh.flush()
            os.fsync(fh.fileno())
        name = "pack-" + pack_sum.hex()
        final = pack_dir / (name + ".pack")
        os.replace(tmp, final)
        tmp_idx = pack_dir / ("tmp_idx_memgit_" + pack_sum.hex())
        with open(tmp_idx, "wb") as fh:
            fh.write(idx)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp_idx, pack_dir / (name + ".idx"))
        return final
    finally:
        tmp.unlink(missing_ok=True)


def write_pack(git_dir: Path, objects: list[tuple[str, str, bytes]],
               bases: Mapping[str, str] | None = None, *, level: int = 1,
               max_depth: int = 50) -> Path:
    """Write (kind, hex id, raw) objects as one pack plus its version-2 index, each
    object whose ``bases`` entry names one written before it as a delta of that one
    (see :class:`PackBuilder`). The pack is self-contained."""
    bases = bases or {}
    built = PackBuilder(level=level, max_depth=max_depth)
    for kind, oid, raw in objects:
        base = bases.get(oid)
        built.add(kind, bytes.fromhex(oid), raw, bytes.fromhex(base) if base else None)
    return install_pack(git_dir, built)


def remove_pack(pack: Path) -> None:
    """Delete a pack written by write_pack (index first, so git never sees half of it)."""
    pack.with_suffix(".idx").unlink(missing_ok=True)
    pack.unlink(missing_ok=True)


def update_refs_atomically(git_dir: Path, updates: list[tuple[str, str, str]],
                           message: str) -> str | None:
    """Move every (ref, new, old) in one transaction; None on success.

    ``git update-ref --stdin`` locks all refs, checks each old value under its
    lock, and only then commits: either every ref moves or none does. On a
    mismatch the error text is returned and nothing has changed.
    """
    lines = ["start"]
    for ref, new, old in updates:
        if ref == "HEAD":
            lines.append("option no-deref")  # a detached HEAD itself, not what it names
        lines.append(f"update {ref} {new} {old}")
    lines += ["prepare", "commit"]
    from memgit.git.plumbing import git_plumbing

    proc = git_plumbing(git_dir, "update-ref", "-m", message, "--stdin",
                        input=("\n".join(lines) + "\n").encode())
    if proc.returncode == 0:
        return None
    return proc.stderr.decode("utf-8", "replace").strip() or "git update-ref failed"


def expire_reflogs_and_prune(git_dir: Path) -> None:
    """Forget every reflog entry, repack what is reachable, delete everything else.

    ``repack -a -d`` writes one pack of the reachable objects only (``-a``, not
    ``-A``: unreachable packed objects are not carried over) and deletes the old
    packs; ``prune --expire=now`` removes unreachable loose objects. A
    commit-graph, which lists the old commits, is rewritten when there was one.
    """
    info = git_dir / "objects" / "info"
    had_graph = (info / "commit-graph").exists() or (info / "commit-graphs").exists()
    steps: list[tuple[str, ...]] = [
        ("reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all"),
        ("repack", "-a", "-d", "-q"),
        ("prune", "--expire=now"),
    ]
    if had_graph:
        steps.append(("commit-graph", "write", "--reachable"))
    from memgit.git.plumbing import git_plumbing

    for args in steps:
        proc = git_plumbing(git_dir, *args)
        if proc.returncode != 0:
            raise RepoError(f"git {args[0]} failed: "
                            + proc.stderr.decode("utf-8", "replace").strip(),
                            "run git fsck, then memgit purge again")


def drop_transient_heads(git_dir: Path) -> None:
    """Delete ORIG_HEAD and FETCH_HEAD: after a rewrite they name commits that are gone
    (git does not count them as reachable, so pruning would leave them dangling)."""
    for name in ("ORIG_HEAD", "FETCH_HEAD"):
        (git_dir / name).unlink(missing_ok=True)
