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
from memgit.git.plumbing import git_plumbing

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
    fmt_proc = git_plumbing(git_dir, "rev-parse", "--show-object-format")
    if fmt_proc.returncode == 0 and fmt_proc.stdout.strip() not in (b"sha1", b""):
        out.append("it uses SHA-256 object ids")
    return out


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _common_prefix(a: bytes, b: bytes, limit: int) -> int:
    """Length of the common head of ``a`` and ``b`` (at most ``limit``), in C speed:
    the XOR of the two heads read as big-endian integers has its highest set bit in
    the first differing byte."""
    x = int.from_bytes(a[:limit], "big") ^ int.from_bytes(b[:limit], "big")
    return limit if x == 0 else limit - 1 - (x.bit_length() - 1) // 8


def _common_suffix(a: bytes, b: bytes, limit: int) -> int:
    """Length of the common tail (at most ``limit``): the lowest set bit of the XOR."""
    if limit <= 0:
        return 0
    x = int.from_bytes(a[len(a) - limit:], "big") ^ int.from_bytes(b[len(b) - limit:], "big")
    return limit if x == 0 else ((x & -x).bit_length() - 1) // 8


def make_delta(base: bytes, target: bytes) -> bytes:
    """A git delta turning ``base`` into ``target``: copy the common head and tail,
    insert what differs between them (versions of one file or tree differ in one
    place, so this is nearly as small as git's own delta search and much cheaper)."""
    limit = min(len(base), len(target))
    head = _common_prefix(base, target, limit)
    tail = _common_suffix(base, target, limit - head)
    out = bytearray(_varint(len(base)) + _varint(len(target)))

    def copy(offset: int, size: int) -> None:
        while size > 0:
            step = min(size, 0xFFFFFF)
            op, args = 0x80, bytearray()
            for i in range(4):
                if (offset >> (8 * i)) & 0xFF:
                    op |= 1 << i
                    args.append((offset >> (8 * i)) & 0xFF)
            for i in range(3):
                if (step >> (8 * i)) & 0xFF:
                    op |= 1 << (4 + i)
                    args.append((step >> (8 * i)) & 0xFF)
            out.append(op)
            out.extend(args)
            offset += step
            size -= step

    copy(0, head)
    middle = target[head:len(target) - tail]
    for at in range(0, len(middle), 127):
        piece = middle[at:at + 127]
        out.append(len(piece))
        out.extend(piece)
    copy(len(base) - tail, tail)
    return bytes(out)


def write_pack(git_dir: Path, objects: list[tuple[str, str, bytes]],
               bases: Mapping[str, str] | None = None, *, level: int = 1,
               max_depth: int = 50) -> Path:
    """Write (kind, hex id, raw) objects as one pack plus its version-2 index.

    An object whose ``bases`` entry names an object written earlier in the same
    pack is stored as a delta of it (OFS_DELTA, chains at most ``max_depth``
    long, git's default), so a later ``git gc`` reuses these deltas instead of
    keeping the objects whole. The pack is self-contained, and its index is
    renamed into place last: git only uses a pack once its .idx exists.
    """
    import hashlib
    import struct
    import tempfile
    import zlib

    bases = bases or {}
    pack_dir = git_dir / "objects" / "pack"
    pack_dir.mkdir(parents=True, exist_ok=True)
    entries: list[tuple[bytes, int, int]] = []  # (id, crc32, offset)
    written: dict[str, tuple[int, int, bytes]] = {}  # hex id -> (offset, depth, raw)
    digest = hashlib.sha1()
    fd, tmp_name = tempfile.mkstemp(prefix="tmp_pack_memgit_", dir=pack_dir)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as fh:
            header = b"PACK" + struct.pack(">II", 2, len(objects))
            fh.write(header)
            digest.update(header)
            offset = len(header)
            for kind, oid, raw in objects:
                kind_code, payload, depth, prefix = OBJ_TYPES[kind], raw, 0, b""
                base = written.get(bases.get(oid, ""))
                if base is not None and base[1] < max_depth:
                    delta = make_delta(base[2], raw)
                    if len(delta) < len(raw) // 2:
                        kind_code, payload, depth = 6, delta, base[1] + 1  # 6: OFS_DELTA
                        distance = offset - base[0]
                        ofs = bytearray([distance & 0x7F])
                        distance >>= 7
                        while distance:
                            distance -= 1
                            ofs.insert(0, 0x80 | (distance & 0x7F))
                            distance >>= 7
                        prefix = bytes(ofs)
                size = len(payload)
                byte = (kind_code << 4) | (size & 0x0F)
                size >>= 4
                head = bytearray()
                while size:
                    head.append(byte | 0x80)
                    byte = size & 0x7F
                    size >>= 7
                head.append(byte)
                if len(payload) < 64:
                    packed = zlib.compress(payload, 0)  # a tree delta: nothing to gain
                elif len(payload) < 4096:
                    # zlib's default 32 KiB window costs more to set up than to use on
                    # a small object; any valid zlib stream is a valid pack entry
                    squeeze = zlib.compressobj(level, zlib.DEFLATED, 12, 2)
                    packed = squeeze.compress(payload) + squeeze.flush()
                else:
                    packed = zlib.compress(payload, level)
                record = bytes(head) + prefix + packed
                fh.write(record)
                digest.update(record)
                entries.append((bytes.fromhex(oid), zlib.crc32(record), offset))
                written[oid] = (offset, depth, raw)
                offset += len(record)
            pack_sum = digest.digest()
            fh.write(pack_sum)
            fh.flush()
            os.fsync(fh.fileno())
        entries.sort()
        fanout = [0] * 256
        for oid_raw, _crc, _off in entries:
            fanout[oid_raw[0]] += 1
        running = 0
        for i in range(256):
            running += fanout[i]
            fanout[i] = running
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
        idx += b"".join(e[0] for e in entries)
        idx += struct.pack(f">{len(entries)}I", *(e[1] & 0xFFFFFFFF for e in entries))
        idx += struct.pack(f">{len(small)}I", *small)
        idx += struct.pack(f">{len(large)}Q", *large)
        idx += pack_sum
        idx += hashlib.sha1(idx).digest()
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
