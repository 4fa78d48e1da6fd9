"""A measurement, not a feature: memgit's purge as a fast-export / fast-import pipeline.

Run: python bench/purge_pipeline_probe.py [--runs N] [--shape small|spread|one-file]
                                          [--size 10000] [--keep DIR]
     python bench/purge_pipeline_probe.py --one REPO ID... [--streamed]   (one purge, JSON)

memgit must be importable from any folder (installed, or an absolute PYTHONPATH): the
filter-repo reference runs its callbacks from inside the copied repository.

docs/performance.md ("Why filter-repo's time on small has two modes") costed, without
building it, a purge made of ``git fast-export --all --no-data`` -> a Python filter ->
``git fast-import`` with the steady-heap tunables. This script builds it far enough to
time it end to end on the bench's drives, doing what a purge of such a drive must do to
be correct, with memgit's own pieces wherever the purge has one. Two variants:

``pb`` (scan, then filter):

* start: the purge command's imports (through the CLI's lazy group), the bare drive
  opened without pygit2, an interrupted purge resumed, the purge lock taken, the refs;
* scan, beside the export (two cores): ``cat-file --batch-all-objects --unordered
  --batch=%(objectname)`` into a memfd and ``--batch-check`` of the same objects (the
  same pack order) for the boundaries; each purged id searched in the whole buffer at
  once, each hit placed in its object by bisection; blobs holding an id rewritten with
  ``purge.text.remove_entry_lines``; the 16-byte heads of the removed texts searched in
  the whole buffer too, and kept blobs holding one checked as the purge checks them;
* export: ``git fast-export --all --no-data --reencode=no --signed-tags=strip`` into a
  memfd, branches and ``refs/memgit/*`` renamed under ``refs/memgit-purging/`` so that
  the real refs move in one compare-and-swap transaction; tags are not renamed (an
  annotated tag's name is inside the tag object), so fast-import writes them itself;
* filter (Python, into fast-import through a writer thread): every ``data`` block
  (commit and tag messages) scrubbed as the purge scrubs them, each distinct message
  once (purged texts, then the registry's); every ``M`` line of a regular file naming
  a rewritten blob given the new content inline; nothing else touched (no empty-commit
  pruning: the reference runs filter-repo with ``--prune-empty never``);
* import: ``git fast-import --quiet --force`` with ``history_support.STEADY_HEAP``;
* refs: the journal (``resume.begin``), one ``update-ref --stdin`` transaction (each
  ref to its import's commit, compare-and-swap on the value read at the start, the
  temporary refs deleted), the registry appended, ``refs/memgit/purged`` and the
  registry refs published (``rewrite._publish_records``), the journal ended;
* prune: ``expire_reflogs_and_prune`` (reflog expire, ``repack -a -d`` with its
  bitmap, ``prune --expire=now``) in a thread, the recall index updated meanwhile
  (old -> new commits from both sides' ``--export-marks``);
* verify: ``text.verify_purged``, every object accounted for: the old objects from the
  scan (clean unless they held an id), the new ones from fast-import's pack index
  (blobs checked from the bytes made; commits and trees made from the filtered stream).

``ps`` (``--streamed``: scan beside the import): the export piped, a thread asking a
``cat-file --batch`` for each file version in the order the export names them, another
reading its answers (search, rewrite, heads), the filter feeding fast-import at once,
each M line waiting only for its own blob's verdict. Messages are scrubbed with the
texts known when they pass; at the end every distinct message is checked against all
texts (a message quoting a text learned later would need a second pass: not built, an
assertion), and kept blobs read before the last head was learned are searched again.

The comparison runs, on fresh ``cp -a`` copies of the drive made as bench_purge.py
makes it, filter-repo with STEADY_HEAP (its fast mode, ``fr``), ``memgit purge``
(``mg``) and both variants, in a rotating order, and checks that all four end with the
same refs (memgit's own records aside, as bench_purge.py compares them).

Not handled (a real integration would have to): the journal and resume with refs moved
by fast-import itself (tags) and temporary refs left by a kill; signed commits (git
2.39's fast-export drops their signatures even where the commit does not change);
refs outside heads, tags, notes and refs/memgit; a checkout (non-bare) drive.
"""

from __future__ import annotations

import time

_T0 = time.perf_counter()

import argparse  # noqa: E402
import bisect  # noqa: E402
import fcntl  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import mmap  # noqa: E402
import os  # noqa: E402
import queue  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TMP_NS = "refs/memgit-purging/"
# every ref but tags imported under TMP_NS, to be moved in one transaction; an annotated
# tag's name is inside the tag object (fast-export's refspec renames it, which changes
# the object), so tags are left to fast-import, which writes refs/tags/* itself
REFSPECS = ["--refspec", "refs/heads/*:" + TMP_NS + "heads/*",
            "--refspec", "refs/memgit/*:" + TMP_NS + "memgit/*",
            "--refspec", "refs/notes/*:" + TMP_NS + "notes/*"]
# a data block (a message) or an M line of a regular file (memgit rewrites nothing else)
_DATA = re.compile(rb"data (\d+)\n|M (?:100644|100755) ([0-9a-f]{40}) ")
_DATA_NL = re.compile(rb"\n(?:data (\d+)\n|M (?:100644|100755) ([0-9a-f]{40}) )")


def _memfd_run(argv: list[str], cwd: Path, name: str, env: dict | None = None
               ) -> tuple[subprocess.Popen, int]:
    fd = os.memfd_create(name)
    return subprocess.Popen(argv, cwd=cwd, stdout=fd, env=env), fd


def _mapped(fd: int) -> mmap.mmap | bytes:
    size = os.fstat(fd).st_size
    if size == 0:
        return b""
    return mmap.mmap(fd, size, prot=mmap.PROT_READ)


F_SETPIPE_SZ = 1031


class _Feeder:
    """Writes to a process's stdin from a thread of its own, so that the filter goes on
    while git reads (a write blocks until git has taken the bytes)."""

    def __init__(self, out, dump: str | None = None) -> None:
        self.out = out
        self.dump = open(dump, "wb") if dump else None  # noqa: SIM115
        self.queue: queue.SimpleQueue = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._run)
        self.thread.start()

    def _run(self) -> None:
        while True:
            data = self.queue.get()
            if data is None:
                break
            self.out.write(data)
            if self.dump:
                self.dump.write(data)
        self.out.close()
        if self.dump:
            self.dump.close()

    def write(self, data: bytes) -> None:
        self.queue.put(data)

    def close(self) -> None:
        self.queue.put(None)
        self.thread.join()


def _scrubbed(message: bytes, scrubbed_as: dict, sorted_texts: list, registry: object,
              new_messages: set) -> bytes:
    """A message scrubbed as the purge scrubs it (purged texts, then the registry's), each
    distinct message once; a message that changed is added to ``new_messages``."""
    from memgit.purge.text import scrub_message, scrub_registered

    new = scrubbed_as.get(message)
    if new is None:
        new = scrub_registered(scrub_message(message, sorted_texts), registry)
        scrubbed_as[message] = new
        if new != message:
            new_messages.add(new)
    return new


def filter_stream(stream, blob_new: dict[bytes, bytes], sorted_texts: list[bytes], registry,
                  out, new_messages: set[bytes], scrub_message, scrub_registered) -> None:
    """The export stream with purged texts scrubbed from every message (each distinct
    message once) and each M line naming a rewritten blob given its new content inline;
    written to ``out`` in pieces of about 256 KiB."""
    scrubbed_as: dict[bytes, bytes] = {}
    pieces: list[bytes] = []
    pos = 0
    copied = 0  # stream[copied:pos] not yet written
    end = len(stream)
    after_data = True
    mark = 256 << 10
    while pos < end:
        m = _DATA.match(stream, pos) if after_data else None
        if m is None:
            m = _DATA_NL.search(stream, pos)
            if m is None:
                break
        if m.group(1) is not None:  # data <n>: a message
            size = int(m.group(1))
            body_at = m.end()
            message = stream[body_at:body_at + size]
            new = _scrubbed(message, scrubbed_as, sorted_texts, registry, new_messages)
            if new != message:
                pieces.append(stream[copied:m.start(1) - 5])
                pieces.append(b"data %d\n" % len(new) + new)
                copied = body_at + size
            pos = body_at + size
            after_data = True
        else:  # M <mode> <id> <path>
            pos = m.end()
            after_data = False
            new_blob = blob_new.get(m.group(2))
            if new_blob is None:
                pos = stream.find(b"\n", pos)
            else:
                eol = stream.find(b"\n", pos)
                pieces.append(stream[copied:m.start(2)])
                pieces.append(b"inline " + stream[pos:eol + 1]
                              + b"data %d\n" % len(new_blob) + new_blob + b"\n")
                copied = pos = eol + 1
        if pos > mark:
            pieces.append(stream[copied:pos])
            copied = pos
            out.write(b"".join(pieces))
            pieces = []
            mark = pos + (256 << 10)
    pieces.append(stream[copied:end])
    out.write(b"".join(pieces))


_FILE_M = re.compile(rb"M (?:100644|100755) ([0-9a-f]{40}) ")




def _streamed(git_dir: Path, ids: list[str], work: Path, stamp, steady: dict) -> tuple:
    """Export, scan and import at once: every file version the export names is read by a
    ``cat-file --batch`` in the export's order while the filter feeds fast-import, each
    M line waiting only for its own blob's verdict."""
    from memgit.policy.registry import PurgeRegistry, registry_key
    from memgit.purge.text import (
        Checker,
        longest_first,
        no_progress,
        remove_entry_lines,
        scrub_message,
    )

    wanted = frozenset(ids)
    needles = [i.encode() for i in ids]
    export = subprocess.Popen(
        ["git", "fast-export", "--all", "--no-data", "--reencode=no", "--signed-tags=strip",
         "--export-marks=" + str(work / "old"), *REFSPECS],
        cwd=git_dir, stdout=subprocess.PIPE)
    cat = subprocess.Popen(["git", "cat-file", "--batch"], cwd=git_dir,
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    importer = subprocess.Popen(
        ["git", "fast-import", "--quiet", "--force", "--export-marks=" + str(work / "new")],
        cwd=git_dir, stdin=subprocess.PIPE, env=dict(os.environ, **steady))
    for pipe in (export.stdout, cat.stdin, cat.stdout, importer.stdin):
        fcntl.fcntl(pipe.fileno(), F_SETPIPE_SZ, 1 << 20)
    registry = PurgeRegistry.load(git_dir)
    chunks: queue.SimpleQueue = queue.SimpleQueue()
    status: dict[bytes, bytes | None] = {}  # blob id -> new content, None when unchanged
    cond = threading.Condition()
    requested: set[bytes] = set()
    request_lock = threading.Lock()
    removed_texts: dict[str, object] = {}
    rows: dict[tuple[str, object], None] = {}
    heads: list[bytes] = []
    order: list[bytes] = []
    learned_at = [0]
    holders: list[bytes] = []
    errors: list[BaseException] = []

    def request(shas: list[bytes]) -> None:
        with request_lock:
            fresh = [x for x in shas if x not in requested]
            requested.update(fresh)
            if fresh:
                cat.stdin.write(b"".join(x + b"\n" for x in fresh))
                cat.stdin.flush()

    def read_export() -> None:
        try:
            fd = export.stdout.fileno()
            tail = b""
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                chunks.put(chunk)
                text = tail + chunk
                cut = text.rfind(b"\n") + 1
                tail = text[cut:]
                request(_FILE_M.findall(text, 0, cut))
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
        finally:
            chunks.put(None)

    def read_cat() -> None:
        try:
            reader = open(cat.stdout.fileno(), "rb", buffering=1 << 20, closefd=False)  # noqa: SIM115
            while True:
                header = reader.readline()
                if not header:
                    break
                parts = header.split()
                result = None
                if parts[1] != b"missing":
                    data = reader.read(int(parts[2]))
                    reader.read(1)
                    if parts[1] == b"blob":
                        order.append(parts[0])
                        if any(n in data for n in needles):
                            changed = remove_entry_lines(data, wanted, ids)
                            if changed is not None:
                                result = changed[0]
                                for r in changed[1]:
                                    if r.text not in removed_texts:
                                        removed_texts[r.text] = registry_key(r.text)
                                        head = r.text.encode("utf-8", "surrogateescape")[:16]
                                        if head not in heads:
                                            heads.append(head)
                                            learned_at[0] = len(order)
                                    rows.setdefault((r.entry_id, removed_texts[r.text]))
                        if result is None:
                            for head in heads:
                                if head in data:
                                    holders.append(parts[0])
                                    break
                with cond:
                    status[parts[0]] = result
                    cond.notify_all()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
            with cond:
                cond.notify_all()

    threads = [threading.Thread(target=read_export), threading.Thread(target=read_cat)]
    for t in threads:
        t.start()
    feed = _Feeder(importer.stdin, os.environ.get("PP_DUMP"))
    sorted_texts: list[bytes] = []
    known_texts = 0
    scrubbed_as: dict[bytes, bytes] = {}
    new_messages: set[bytes] = set()
    waited = [0, 0.0]
    buf = b""
    pos = copied = 0
    eof = False
    limit = 0
    after_data = True
    flushed_at = 256 << 10

    def more() -> None:
        nonlocal buf, pos, copied, eof, limit, flushed_at
        chunk = chunks.get()
        if chunk is None:
            eof = True
        else:
            keep = min(copied, pos)  # pos may sit on the newline before copied
            flushed_at -= keep
            buf = buf[keep:] + chunk
            pos -= keep
            copied -= keep
        limit = len(buf) if eof else buf.rfind(b"\n") + 1

    while True:
        m = _DATA.match(buf, pos, limit) if after_data else None
        if m is None:
            m = _DATA_NL.search(buf, pos, limit)
        if m is None:
            if eof:
                break
            if not after_data or 0 <= buf.find(b"\n", pos, limit):
                pos = max(pos, limit - 1)
                after_data = False
            more()
            continue
        if m.group(1) is not None:  # data <n>: a message
            size = int(m.group(1))
            body_at = m.end()
            if body_at + size > len(buf) and not eof:
                more()
                continue
            if len(removed_texts) != known_texts:  # texts learned since: scrub with all
                known_texts = len(removed_texts)
                sorted_texts = longest_first(list(removed_texts))
                scrubbed_as.clear()
            message = buf[body_at:body_at + size]
            new = _scrubbed(message, scrubbed_as, sorted_texts, registry, new_messages)
            if new != message:
                feed.write(buf[copied:m.start(1) - 5] + b"data %d\n" % len(new) + new)
                copied = body_at + size
            pos = body_at + size
            after_data = True
        else:  # M <regular file mode> <id> <path>
            sha = m.group(2)
            pos = m.end()
            after_data = False
            verdict = status.get(sha, b"?")
            if verdict == b"?":
                request([sha])
                began = time.perf_counter()
                with cond:
                    while sha not in status and not errors:
                        cond.wait(1.0)
                waited[0] += 1
                waited[1] += time.perf_counter() - began
                if errors:
                    raise errors[0]
                verdict = status[sha]
            eol = buf.find(b"\n", pos)
            if verdict is not None:
                feed.write(buf[copied:m.start(2)] + b"inline " + buf[pos:eol + 1]
                           + b"data %d\n" % len(verdict) + verdict + b"\n")
                copied = eol + 1
            pos = eol
        if pos > flushed_at and pos > copied:
            feed.write(buf[copied:pos])
            copied = pos
            flushed_at = pos + (256 << 10)
    feed.write(buf[copied:])
    stamp("stream: export + scan + filter")
    feed.close()
    cat.stdin.close()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    if export.wait() != 0 or cat.wait() != 0:
        raise RuntimeError("fast-export or cat-file failed")
    stamp("stream: feed drained")
    if importer.wait() != 0:
        raise RuntimeError("fast-import failed")
    stamp("fast-import tail")
    texts = list(removed_texts)
    # a message scrubbed before the last text was learned must still be clean
    final = longest_first(texts)
    late = [m for m in scrubbed_as if scrub_message(m, final) != scrubbed_as[m]]
    assert not late, "a message quoted a text learned after it passed: redo (not built)"
    found = {i for i, _k in rows}
    assert found == set(ids), f"ids in no commit: {set(ids) - found}"
    for entry_id, key in rows:
        registry.add(entry_id, key)
    checker = Checker(ids, ids, texts, registry)
    blob_new = {k: v for k, v in status.items() if v is not None}
    recheck = [x.decode() for x in order[:learned_at[0]] if x not in blob_new]
    recheck += [x.decode() for x in holders]
    problems = checker.kept_blobs(git_dir, list(dict.fromkeys(recheck)), no_progress)
    known_old = {k.decode(): v is None for k, v in status.items()}
    if not new_messages:  # else a surviving old commit is read again by the verification
        for line in (work / "old").read_text().splitlines():
            known_old[line.split()[1]] = True
    stamp("stream: checks after")
    print(f"(streamed: {len(order)} blobs read, {waited[0]} waits for a verdict, "
          f"{waited[1]:.3f} s waited, {len(recheck)} rechecked)", file=sys.stderr)
    return blob_new, rows, texts, registry, checker, problems, new_messages, known_old


def one(repo: Path, ids: list[str], streamed: bool = False) -> dict:
    """One purge of ``ids`` from the bare drive ``repo`` by the pipeline; its phases."""
    # the purge command's imports, loaded as `memgit purge` loads them (the CLI's lazy group)
    import click

    from memgit.cli.main import cli
    cli.get_command(click.Context(cli), "purge")
    from memgit.git.plumbing import git_plumbing, refs_snapshot
    from memgit.git.repository import open_bare_drive
    from memgit.git.rewrite import drop_transient_heads, expire_reflogs_and_prune
    from memgit.policy.registry import (
        LEASE_CONFIG,
        PurgeRegistry,
        hold_lock,
        lease_seconds,
        registry_key,
        registry_lines,
    )
    from memgit.policy.settings import drive_policy, today_in
    from memgit.purge import resume
    from memgit.purge.rewrite import _publish_records, _update_index, gc_paused
    from memgit.purge.text import (
        Checker,
        longest_first,
        remove_entry_lines,
        scrub_message,
        scrub_registered,
        verify_purged,
    )
    sys.path.append(str(ROOT / "tests"))
    from history_support import STEADY_HEAP

    phases: dict[str, float] = {}
    clock = time.perf_counter()
    phases["start"] = clock - _T0  # imports (the interpreter's own start is not in it)

    def stamp(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        phases[name] = phases.get(name, 0.0) + now - clock
        clock = now

    drive = open_bare_drive(repo)
    git_dir = drive.git_dir
    resumed = resume.resume(drive)
    assert not resumed
    lease = lease_seconds(drive.config_value(LEASE_CONFIG))
    lock, _note = hold_lock(git_dir, lease)
    work = Path(os.environ.get("TMPDIR", "/tmp")) / f"pp-marks-{os.getpid()}"
    work.mkdir()
    try:
        with gc_paused():
            refs = refs_snapshot(git_dir)  # (name, id, type)
            stamp("open+refs")
            if streamed:
                got = _streamed(git_dir, ids, work, stamp, STEADY_HEAP)
                blob_new, rows, texts, registry, checker, problems, new_messages, \
                    known_old = got
            else:
                # --- export and scan, side by side -----------------------------------
                export, export_fd = _memfd_run(
                    ["git", "fast-export", "--all", "--no-data", "--reencode=no",
                     "--signed-tags=strip", "--export-marks=" + str(work / "old"),
                     *REFSPECS], git_dir, "export")
                scan, scan_fd = _memfd_run(
                    ["git", "cat-file", "--batch-all-objects", "--unordered",
                     "--batch=%(objectname)"], git_dir, "scan")
                check = subprocess.run(
                    ["git", "cat-file", "--batch-all-objects", "--unordered",
                     "--batch-check=%(objectname) %(objecttype) %(objectsize)"],
                    cwd=git_dir, capture_output=True, check=True).stdout.split()
                names, kinds, sizes = check[0::3], check[1::3], check[2::3]
                # content i starts after "<40 hex>\n" and is followed by "\n"
                starts: list[int] = []
                at = 41
                for size in sizes:
                    starts.append(at)
                    at += int(size) + 42
                if scan.wait() != 0:
                    raise RuntimeError("cat-file failed")
                buf = _mapped(scan_fd)
                stamp("scan: git (cat-file, batch-check)")
                wanted = frozenset(ids)
                needles = [i.encode() for i in ids]
                hit_objects: set[int] = set()
                for needle in needles:
                    pos = buf.find(needle)
                    while pos >= 0:
                        hit_objects.add(bisect.bisect_right(starts, pos) - 1)
                        pos = buf.find(needle, pos + 1)
                blob_new: dict[bytes, bytes] = {}  # old hex id -> new content
                removed_texts: dict[str, None] = {}
                rows: dict[tuple[str, object], None] = {}
                for index in sorted(hit_objects):
                    if kinds[index] != b"blob":
                        continue  # a commit's message naming the id: not an entry line
                    start = starts[index]
                    assert buf[start - 41:start - 1] == names[index]  # same order, both runs
                    data = bytes(buf[start:start + int(sizes[index])])
                    changed = remove_entry_lines(data, wanted, ids)
                    if changed is None:
                        continue
                    blob_new[names[index]] = changed[0]
                    for r in changed[1]:
                        if r.text not in removed_texts:
                            removed_texts[r.text] = registry_key(r.text)
                        rows.setdefault((r.entry_id, removed_texts[r.text]))
                found = {i for i, _k in rows}
                assert found == set(ids), f"ids in no commit: {set(ids) - found}"
                texts = list(removed_texts)
                registry = PurgeRegistry.load(git_dir)
                for entry_id, key in rows:
                    registry.add(entry_id, key)
                checker = Checker(ids, ids, texts, registry)
                problems: list[str] = []
                holders: set[int] = set()
                for head in checker.heads:
                    pos = buf.find(head)
                    while pos >= 0:
                        holders.add(bisect.bisect_right(starts, pos) - 1)
                        pos = buf.find(head, pos + 1)
                for index in sorted(holders):
                    if kinds[index] == b"blob" and names[index] not in blob_new:
                        start = starts[index]
                        problems += checker.problems(names[index].decode(), "blob",
                                                     bytes(buf[start:start + int(sizes[index])]),
                                                     ids=False)
                stamp("scan: search + new blobs")
                if export.wait() != 0:
                    raise RuntimeError("fast-export failed")
                stream = _mapped(export_fd)
                stamp("export wait")
                # --- filter into fast-import ------------------------------------------
                importer = subprocess.Popen(
                    ["git", "fast-import", "--quiet", "--force",
                     "--export-marks=" + str(work / "new")], cwd=git_dir, stdin=subprocess.PIPE,
                    env=dict(os.environ, **STEADY_HEAP))
                assert importer.stdin is not None
                fcntl.fcntl(importer.stdin.fileno(), F_SETPIPE_SZ, 1 << 20)
                feed = _Feeder(importer.stdin, os.environ.get("PP_DUMP"))
                filter_stream(stream, blob_new, longest_first(texts), registry, feed,
                              new_messages := set(), scrub_message, scrub_registered)
                feed.close()
                stamp("filter (fast-import fed)")
                if importer.wait() != 0:
                    raise RuntimeError("fast-import failed")
                stamp("fast-import tail")
                known_old = {}
                for name, kind in zip(names, kinds, strict=True):
                    if new_messages and kind in (b"commit", b"tag"):
                        continue  # some message changed: a surviving one is read again
                    known_old[name.decode()] = name not in blob_new
            # --- refs: one transaction, the journal around it ----------------------
            tmp_refs = dict(
                line.split(" ", 1)[::-1] for line in subprocess.run(
                    ["git", "for-each-ref", "--format=%(objectname) %(refname)", TMP_NS],
                    cwd=git_dir, capture_output=True, check=True, text=True
                ).stdout.splitlines())
            updates = []
            tags_now = dict(
                line.split(" ", 1)[::-1] for line in subprocess.run(
                    ["git", "for-each-ref", "--format=%(objectname) %(refname)",
                     "refs/tags/"], cwd=git_dir, capture_output=True, check=True, text=True
                ).stdout.splitlines())
            moved_by_import = []
            for name, oid, _kind in refs:
                new_id = tmp_refs.get(TMP_NS + name[len("refs/"):])
                if name.startswith("refs/tags/"):
                    if tags_now.get(name, oid) != oid:
                        moved_by_import.append((name, tags_now[name], oid))
                elif new_id is not None and new_id != oid:
                    updates.append((name, new_id, oid))
            date = today_in(drive_policy(drive))
            lines = registry_lines(list(rows), date)
            resume.begin(git_dir, list(ids), lines, updates + moved_by_import)
            tx = ["start"] + [f"update {r} {n} {o}" for r, n, o in updates] + \
                [f"delete {r}" for r in tmp_refs] + ["prepare", "commit"]
            proc = git_plumbing(git_dir, "update-ref", "-m", "memgit purge", "--stdin",
                                input=("\n".join(tx) + "\n").encode())
            if proc.returncode != 0:
                raise RuntimeError(proc.stderr.decode())
            drop_transient_heads(git_dir)
            PurgeRegistry.append_lines(git_dir, lines)
            _publish_records(drive)
            resume.end(git_dir)
            stamp("refs+records")
            # --- prune, with the index update and the known map meanwhile ----------
            packs_before = set((git_dir / "objects" / "pack").glob("*.idx"))
            pruned: list[BaseException] = []

            def prune() -> None:
                try:
                    began = time.perf_counter()
                    expire_reflogs_and_prune(git_dir)
                    phases["(repack's own thread)"] = time.perf_counter() - began
                except BaseException as exc:  # noqa: BLE001
                    pruned.append(exc)

            # fast-import's pack: the newest .idx (it is read before the repack starts)
            new_idx = max(packs_before, key=lambda p: p.stat().st_mtime)
            idx = new_idx.read_bytes()
            count = int.from_bytes(idx[8 + 255 * 4:8 + 256 * 4], "big")
            new_ids = [idx[1032 + 20 * i:1052 + 20 * i].hex() for i in range(count)]
            worker = threading.Thread(target=prune)
            worker.start()
            try:
                known: dict[str, bool] = dict(known_old)
                new_blob_ids = {}
                for content in blob_new.values():
                    oid = hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()
                    new_blob_ids[oid] = content
                for oid in new_ids:
                    content = new_blob_ids.get(oid)
                    if content is not None:
                        found_here = checker.problems(oid, "blob", content)
                        problems += found_here
                        known[oid] = not found_here
                    else:
                        known[oid] = True  # a tree, or a commit whose message was scrubbed
                for message in new_messages:
                    problems += checker.problems("new", "commit", b"\n\n" + message)
                marks_old = dict(line.split()[::-1] for line in
                                 (work / "old").read_text().splitlines())
                marks_new = dict(line.split() for line in
                                 (work / "new").read_text().splitlines())
                commit_map = {old: marks_new[mark] for old, mark in marks_old.items()
                              if mark in marks_new}

                class _Plan:
                    pass

                plan = _Plan()
                plan.ids = list(ids)
                plan.commit_map = commit_map
                plan.all_commits = list(commit_map)
                _update_index(drive, plan)
            finally:
                worker.join()
            if pruned:
                raise pruned[0]
            stamp("prune (repack) + index")
            verified = verify_purged(git_dir, checker, known, problems)
            stamp("verify")
            phases["objects"] = verified
            phases["blobs rewritten"] = len(blob_new)
    finally:
        lock.unlink(missing_ok=True)
        shutil.rmtree(work, ignore_errors=True)
    phases["total in process"] = time.perf_counter() - _T0
    return phases


# --- the comparison --------------------------------------------------------------------


def compare(args: argparse.Namespace) -> None:
    sys.path.append(str(ROOT / "tests"))
    sys.path.append(str(ROOT / "bench"))
    from bench_purge import SHAPES, heads, repo_bytes, run_memgit

    from history_support import (
        TARGET_ID,
        generate_history,
        run_filter_repo,
        target_text,
        timed_run,
    )

    base = Path(args.keep)
    base.mkdir(parents=True, exist_ok=True)
    source = base / f"history-{args.shape}-{args.size}.git"
    if not source.exists():
        generate_history(source, args.size, **SHAPES[args.shape])
    texts = [target_text(v) for v in range(1, 21)]
    # fr: filter-repo with STEADY_HEAP; mg: memgit purge; pb: the pipeline, scan then
    # export -> filter -> import; ps: the pipeline streamed (scan beside the import)
    order = ["fr", "mg", "pb", "ps"]
    rows = []
    print(f"{'run':>3} {'load':>5} {'order':>12} {'fr wall/cpu':>11} {'mg wall/cpu':>11} "
          f"{'pb wall/cpu':>11} {'ps wall/cpu':>11} {'mg/fr':>5} {'pb/fr':>5} {'ps/fr':>5} "
          "same", flush=True)
    for run in range(args.runs):
        load = os.getloadavg()[0]
        copies = {k: base / f"{k}-{args.size}.git" for k in order}
        for copy in copies.values():
            shutil.rmtree(copy, ignore_errors=True)
            subprocess.run(["cp", "-a", str(source), str(copy)], check=True)
        turn = order[run % 4:] + order[:run % 4]
        got: dict[str, tuple[float, float]] = {}
        phases: dict[str, dict] = {}
        for who in turn:
            if who == "fr":
                got["fr"] = run_filter_repo(copies["fr"], [TARGET_ID], texts,
                                            [TARGET_ID.encode()], True)
            elif who == "mg":
                wall, cpu, _summary = run_memgit(copies["mg"], [TARGET_ID])
                got["mg"] = (wall, cpu)
            else:
                extra = ["--streamed"] if who == "ps" else []
                wall, cpu, out = timed_run([sys.executable, __file__, "--one",
                                            str(copies[who]), TARGET_ID, *extra])
                got[who] = (wall, cpu)
                phases[who] = json.loads(out)
        same = len({tuple(heads(c)) for c in copies.values()}) == 1
        fw = got["fr"][0]
        rows.append({k: v[0] for k, v in got.items()})
        print(f"{run + 1:>3} {load:>5.2f} {','.join(turn):>12} " + " ".join(
            f"{got[k][0]:>5.2f}/{got[k][1]:<5.2f}" for k in order) + " " + " ".join(
            f"{got[k][0] / fw:>5.2f}" for k in order[1:]) + f" {'yes' if same else 'NO'}"
            + "  MiB " + "/".join(f"{repo_bytes(copies[k]) / 2**20:.1f}" for k in order),
            flush=True)
        for who in ("pb", "ps"):
            print(f"    {who}: " + ", ".join(
                f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                for k, v in phases[who].items()), flush=True)
    if rows:
        med = {k: statistics.median(r[k] for r in rows) for k in order}
        ratio = {k: statistics.median(r[k] / r["fr"] for r in rows) for k in order[1:]}
        print("medians (s): " + ", ".join(f"{k} {v:.2f}" for k, v in med.items())
              + "; ratios to fr: " + ", ".join(f"{k} {v:.2f}" for k, v in ratio.items()))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--one", metavar="REPO", help="one pipeline purge of REPO (JSON phases)")
    ap.add_argument("ids", nargs="*")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--streamed", action="store_true",
                    help="with --one: the scan in the export's order, beside fast-import")
    ap.add_argument("--size", type=int, default=10000)
    ap.add_argument("--shape", default="small", choices=("small", "spread", "one-file"))
    ap.add_argument("--keep", default="/tmp/purge-pipeline-probe")
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(Path(args.one), args.ids, args.streamed)))
        return
    compare(args)


if __name__ == "__main__":
    main()
