"""A pack built on the other core while the history rewriter makes its objects.

The purge's rewrite makes tens of thousands of small objects, and compressing them
into a pack (deltas, zlib, the index) cost as much again when it came after the
rewrite. :class:`PackProcess` starts a helper Python that receives each new object
as it is made and builds the pack in its memory with the same
:class:`~memgit.git.rewrite.PackBuilder` (so the pack is byte for byte the one
``write_pack`` writes); the helper writes nothing until :meth:`PackProcess.install`
names the repository, so a dry run or a refused plan leaves no file behind.
Hook-safe: no pygit2.

Protocol on the helper's stdin, one frame per object: ``>BI20s20s`` (type code as
in a pack, content length, id, delta base id or 20 zero bytes), then the content.
A frame of type 8 carries a commit's or a tag's finished pack entry instead of its
content: the parent compresses one commit in three itself (commits are about a third
of a rewrite's objects, and never a delta base), so that the two share the work.
A frame of type 9 (no content) says every object was sent: the helper makes the
pack's index then, while the parent goes on. A frame of type 0 carries the git
directory to install the pack into; the helper answers with the pack's path on
stdout and exits. End of input without it: the helper exits having written nothing.
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from memgit.git.rewrite import OBJ_TYPES, PackBuilder, install_pack, whole_record

if TYPE_CHECKING:  # the helper itself starts no process: subprocess is the parent's
    import subprocess

_FRAME = struct.Struct(">BI20s20s")
_NO_BASE = bytes(20)
_INSTALL = 0
_SEAL = 9  # no more objects: the helper makes the index while the parent works on
_RECORD = 8  # a commit's or a tag's pack entry, made by the parent (not a pack type)
# the parent compresses one commit (or tag) in this many: on a history of small files
# (10,000 commits, 20,000 trees) that evens the two sides out (all of them: the helper
# waits for the parent; none: the parent waits on the full pipe to the helper)
_PARENT_SHARE = 3
_KINDS = {code: kind for kind, code in OBJ_TYPES.items()}

# -S: no site import (the helper needs the standard library and memgit's own
# package, whose folder is passed as an argument), so it starts in a few ms
_HELPER = ("import sys; sys.path.insert(0, sys.argv[1]); "
           "from memgit.git.pack_process import serve; serve()")


class PackProcess:
    """The parent's side: :meth:`add` objects in pack order, then :meth:`install` or
    :meth:`abort`. If the helper fails at any point, :meth:`install` answers None
    and the caller writes the pack itself: the helper only ever saves time.

    Past ``max_bytes`` of content the helper is stopped the same way: each byte
    crosses a pipe and is held twice, which on large files (a 60 KB file rewritten
    10,000 times) costs the helper more than the whole pack costs in the parent,
    while on many small objects the pipe is cheap and the helper saves the time of
    writing the pack (docs/performance.md, "Purge")."""

    def __init__(self, max_bytes: int = 32 << 20) -> None:
        import subprocess

        from memgit.git.raw import widen_pipe  # the parent's (the helper never needs it)

        package_root = Path(__file__).resolve().parents[2]
        self.count = 0
        self.commits = 0  # commits and tags sent
        self.sent = 0
        self.max_bytes = max_bytes
        self.failed = False
        self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
            [sys.executable, "-S", "-c", _HELPER, str(package_root)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            bufsize=1 << 16)
        widen_pipe(self._proc.stdin)  # 1 MiB: fewer wake-ups of either side

    def add(self, kind: str, oid: bytes, raw: bytes, base: bytes | None = None) -> None:
        """Send one object (20-byte ``oid``; ``base``: an object sent before it)."""
        if self.failed or self._proc is None:
            return
        self.sent += len(raw)
        if self.sent > self.max_bytes:
            self.failed = True
            self.abort()
            return
        assert self._proc.stdin is not None
        frame = b""
        if kind == "commit" or kind == "tag":
            self.commits += 1
            if self.commits % _PARENT_SHARE == 0:  # compressed here (see the module)
                record = whole_record(kind, raw)
                frame = _FRAME.pack(_RECORD, len(record), oid, _NO_BASE) + record
        if not frame:
            frame = _FRAME.pack(OBJ_TYPES[kind], len(raw), oid, base or _NO_BASE) + raw
        try:
            # one write per object (frame and content): half the calls into the buffer
            self._proc.stdin.write(frame)
        except OSError:  # the helper died (BrokenPipeError): install() will say so
            self.failed = True
            return
        self.count += 1

    def seal(self) -> None:
        """Say that every object was sent: the helper then makes the pack's checksum
        and index (a sort of all ids) while the parent goes on, not once
        :meth:`install` is called. Nothing is written; an object added later still
        goes in (the helper makes them again)."""
        if self.failed or self._proc is None:
            return
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(_FRAME.pack(_SEAL, 0, _NO_BASE, _NO_BASE))
            self._proc.stdin.flush()
        except OSError:
            self.failed = True

    def install(self, git_dir: Path, expected: int) -> Path | None:
        """Have the helper write its pack into ``git_dir`` (see
        :func:`~memgit.git.rewrite.install_pack`); the .pack's path, or None when
        the helper failed or did not receive exactly ``expected`` objects (then it
        wrote nothing)."""
        proc, self._proc = self._proc, None
        if proc is None or self.failed or self.count != expected:
            _stop(proc)
            return None
        assert proc.stdin is not None and proc.stdout is not None
        target = str(git_dir).encode("utf-8", "surrogateescape")
        try:
            proc.stdin.write(_FRAME.pack(_INSTALL, len(target), _NO_BASE, _NO_BASE) + target)
            proc.stdin.close()
        except OSError:
            _stop(proc)
            return None
        answer = proc.stdout.read()
        proc.stdout.close()
        if proc.wait() != 0 or not answer:
            return None
        return Path(answer.decode("utf-8", "surrogateescape"))

    def abort(self) -> None:
        """Stop the helper; it writes nothing."""
        proc, self._proc = self._proc, None
        _stop(proc)


def _stop(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is None:
        return
    proc.kill()  # before it reads an install frame it has written nothing
    for stream in (proc.stdin, proc.stdout):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass
    proc.wait()


def serve() -> None:
    """The helper: read frames from stdin until the install frame (see the module)."""
    source = sys.stdin.buffer
    built = PackBuilder()
    while True:
        head = source.read(_FRAME.size)
        if len(head) < _FRAME.size:
            return  # the parent went away or aborted: nothing is written
        code, size, oid, base = _FRAME.unpack(head)
        data = source.read(size)
        if len(data) != size:
            return
        if code == _INSTALL:
            path = install_pack(Path(data.decode("utf-8", "surrogateescape")), built)
            sys.stdout.buffer.write(str(path).encode("utf-8", "surrogateescape"))
            sys.stdout.buffer.flush()
            # the pack and its index are written, synced and closed: the helper ends
            # here, without freeing its objects one by one (the parent waits for it)
            os._exit(0)
        if code == _SEAL:
            built.finish()  # kept for install_pack
        elif code == _RECORD:
            built.add_record(oid, data)
        else:
            built.add(_KINDS[code], oid, data, None if base == _NO_BASE else base)
