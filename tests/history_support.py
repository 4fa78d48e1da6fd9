"""Generated drive histories for the purge tests and bench/bench_purge.py.

``generate_history`` writes a bare drive history with ``git fast-import`` (a
bare repository near the 2 MiB drive limit: topic files in folders plus
MEMORY.md, one entry added, edited or deleted per commit, the entry to purge in
an early commit and edited until the last); with ``odd=True`` it adds merges, an
annotated and a lightweight tag, refs/memgit/, odd time zones, a Latin-1
message, a message quoting the purged text, an empty commit, a commit that only
edits the purged entry, an id-less entry and a fenced bullet carrying the id.
``run_filter_repo`` runs git-filter-repo doing the same purge, the reference the
tests and the benchmark compare memgit with.
"""

from __future__ import annotations

import os
import random
import resource
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

WORDS = ("payments launch owner deadline pricing website billing customer dashboard "
         "team product review metrics rollout incident runbook database staging cluster "
         "budget roadmap design feedback migration schema api token rotation policy "
         "meeting weekly quarter contract vendor support escalation release").split()
ZONES = ("+0000", "+0530", "-0800", "+1245", "-0330", "+0100", "-1100", "+1400")
CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"
TARGET_ID = "m-01j0000000000000000target"

# The reference line filter for git-filter-repo's blob callback: the plain
# definition (parse every line of the document with memgit's format module,
# drop the entries whose id is purged), independent of memgit.purge.rewrite's fast path.
# With ``needles`` (bytes every purged line must contain: explicit ids) blobs
# without any are skipped before parsing, which is what makes filter-repo as
# fast as it can be here; the tests pass None and parse every blob.
BLOB_CALLBACK = """
from memgit.format import entries as _fmt
_ids = set(%r)
_needles = %r
if _needles is not None and not any(n in blob.data for n in _needles):
    return
_text = blob.data.decode("utf-8", "surrogateescape")
_doc = _fmt.parse_document("", _text)
_keep = [l.content + l.eol for l in _doc.lines
         if l.entry is None or l.entry.id not in _ids]
blob.data = "".join(_keep).encode("utf-8", "surrogateescape")
"""

# The reference message scrub: each removed text, longest first, becomes [purged].
MESSAGE_CALLBACK = """
for _t in sorted(%r, key=lambda t: (-len(t), t)):
    message = message.replace(_t, b"[purged]")
return message
"""


@dataclass
class History:
    """What was generated: the repository and the facts tests and the benchmark need."""

    path: Path
    commits: int
    target_id: str = TARGET_ID
    target_texts: list[str] = field(default_factory=list)
    deterministic_id: str = ""
    deterministic_text: str = ""
    first_target_commit: int = 1  # 1-based number of the commit that adds the target


def _entry_id(rng: random.Random) -> str:
    return "m-" + rng.choice("01") + "".join(rng.choice(CROCKFORD) for _ in range(25))


def _text(rng: random.Random, n: int) -> str:
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 14)))
    return f"{words.capitalize()} number {n}"


def _line(text: str, entry_id: str | None, n: int) -> str:
    if entry_id is None:  # an id-less entry: memgit gives it a deterministic id
        return f"- {text} [source: https://example.com/s/{n}; added: 2024-03-{n % 28 + 1:02}]\n"
    return (f"- {text} [source: https://example.com/s/{n}; added: 2024-0{n % 9 + 1}-"
            f"{n % 28 + 1:02}; id: {entry_id}]\n")


def target_text(version: int) -> str:
    return f"Dana's home address is {version} Elm Street, flat {version * 3 + 1}"


def _data(payload: bytes) -> bytes:
    return b"data %d\n" % len(payload) + payload + b"\n"


class _Drive:
    """Files as lists of lines, and the MEMORY.md Index over them."""

    def __init__(self, rng: random.Random, files: int, file_bytes: int) -> None:
        self.rng = rng
        self.n = 0
        self.names = [f"area{i // 8}/topic{i:02}.md" for i in range(files)]
        self.lines: dict[str, list[str]] = {}
        for i, name in enumerate(self.names):
            body = [f"# Topic {i}\n", "\n"]
            size = sum(map(len, body))
            while size < file_bytes:
                line = self.new_line()
                body.append(line)
                size += len(line)
            self.lines[name] = body
        self.total = sum(len(s) for b in self.lines.values() for s in b)

    def new_line(self, with_id: bool = True) -> str:
        self.n += 1
        entry_id = _entry_id(self.rng) if with_id else None
        return _line(_text(self.rng, self.n), entry_id, self.n)

    def memory(self) -> str:
        from memgit.format import entries as fmt

        head = "# Memory: bench\n\n- The bench drive [source: imported:unknown; " \
               "added: 2024-01-01; id: m-01j00000000000000000memory]\n\n## Index\n"
        return fmt.regenerate_index_section(head, ["MEMORY.md", *self.names])

    def content(self, name: str) -> bytes:
        return "".join(self.lines[name]).encode()


def generate_history(path: Path, commits: int, *, files: int = 48, file_bytes: int = 38000,
                     target_edits: int = 20, seed: int = 1, odd: bool = False,
                     window: int = 2000) -> History:
    """A bare drive repository with ``commits`` commits on main, made with git fast-import.

    Blobs are emitted in windows grouped by path so fast-import stores each
    version as a delta of the previous one, as a gc'd server repository would.
    ``odd`` adds what the equivalence test needs: merges from a side branch,
    an annotated and a lightweight tag, a ref under refs/memgit/, an empty
    commit, a commit that becomes empty, a Latin-1 message, a message quoting
    the target's text, an id-less entry, and a fenced bullet carrying the id.
    """
    rng = random.Random(seed)
    drive = _Drive(rng, files, file_bytes)
    history = History(path, commits)
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(path)], check=True)
    proc = subprocess.Popen(["git", "fast-import", "--quiet", "--date-format=raw",
                             "--depth=50"], cwd=path, stdin=subprocess.PIPE)
    assert proc.stdin is not None
    out = proc.stdin
    target_file = drive.names[0]
    mark = 0
    blob_marks: dict[bytes, int] = {}
    edit_every = max(1, commits // max(1, target_edits))
    version = 1
    history.target_texts.append(target_text(version))
    body = drive.lines[target_file]
    body.insert(len(body) // 2, _line(target_text(version), TARGET_ID, 0))
    if odd:
        fence_file = drive.names[1 % files]
        drive.lines[fence_file] += ["\n", "```\n", f"- fenced example [id: {TARGET_ID}]\n",
                                    "```\n", "- The answer is on file [kind: answer; "
                                    f"parent: {TARGET_ID}; id: m-01j0000000000000000answer]\n"]
    branch_marks = {"main": 0, "side": 0}
    side_until = 0
    side_open = False
    pending: list[tuple[dict, dict[str, bytes]]] = []  # (commit fields, changed files)

    def flush() -> None:
        nonlocal mark
        # Blobs first, grouped by path, each version after the previous one.
        by_path: dict[str, list[bytes]] = {}
        for _fields, changed in pending:
            for name, data in changed.items():
                by_path.setdefault(name, []).append(data)
        for name in sorted(by_path):
            for data in by_path[name]:
                if data in blob_marks:
                    continue
                mark += 1
                blob_marks[data] = mark
                out.write(b"blob\nmark :%d\n" % mark + _data(data))
        for fields, changed in pending:
            mark += 1
            fields["mark"] = mark
            head = [b"commit refs/heads/%s" % fields["branch"].encode(), b"mark :%d" % mark]
            who = b"Agent <agent@example.com> %d %s" % (fields["when"], fields["zone"].encode())
            head += [b"author " + who, b"committer " + who]
            if fields.get("encoding"):
                head.append(b"encoding " + fields["encoding"])
            out.write(b"\n".join(head) + b"\n" + _data(fields["message"]))
            for key in ("from", "merge"):
                parent = fields.get(key)
                if parent:
                    ref = parent["mark"] if isinstance(parent, dict) else parent
                    out.write(b"%s :%d\n" % (key.encode(), ref))
            for name in sorted(changed):
                out.write(b"M 100644 :%d %s\n" % (blob_marks[changed[name]], name.encode()))
            out.write(b"\n")
        pending.clear()

    last: dict[str, dict | None] = {"main": None, "side": None}
    side_files: dict[str, bytes] = {}
    first: dict = {}
    for number in range(1, commits + 1):
        when = 1_700_000_000 + number * 97
        zone = ZONES[number % len(ZONES)] if odd else "+0000"
        branch = "main"
        changed: dict[str, bytes] = {}
        message = b""
        encoding = b""
        merge = None
        if number == 1:
            changed = {name: drive.content(name) for name in drive.names}
            changed["MEMORY.md"] = drive.memory().encode()
            message = b"Create drive"
        elif odd and number == commits // 3:
            message = b"Reindex (no changes)"  # an empty commit
        elif odd and number == commits // 3 + 1:
            version += 1
            text = target_text(version)
            history.target_texts.append(text)
            body = drive.lines[target_file]
            at = next(i for i, s in enumerate(body) if TARGET_ID in s)
            body[at] = _line(text, TARGET_ID, 0)
            changed = {target_file: drive.content(target_file)}
            message = b"Edit " + TARGET_ID.encode()  # becomes empty after the purge
        elif odd and number == commits // 2:
            message = ("Caf\u00e9 cr\u00e8me notes for " + TARGET_ID).encode("latin-1")
            encoding = b"iso-8859-1"
            changed = _random_op(drive, rng)
        elif odd and number == commits // 2 + 1:
            message = b"Quoted by mistake: " + history.target_texts[-1].encode()
            changed = _random_op(drive, rng)
        elif odd and number == commits // 4:
            line = _line("Bob prefers green tea in the morning", None, 4242)
            drive.lines[drive.names[2 % files]].append(line)
            from memgit.format import entries as fmt

            entry = fmt.parse_entry(line.rstrip("\n"))
            assert entry is not None
            history.deterministic_id = entry.id
            history.deterministic_text = entry.text
            changed = {drive.names[2 % files]: drive.content(drive.names[2 % files])}
            message = b"Remember 1 entry without id"
        elif odd and number % 17 == 0 and number + 4 < commits and not side_open:
            side_until = number + 3  # fork a side branch for three commits, then merge
            side_open = True
            last["side"] = last["main"]
            side_files = {}
            branch = "side"
            changed = _random_op(drive, rng, side_files)
            message = b"Side work"
        elif odd and side_open and number < side_until:
            branch = "side"
            changed = _random_op(drive, rng, side_files)
            message = b"Side work"
        elif odd and side_open:
            side_open = False
            merge = last["side"]
            changed = dict(side_files)
            message = b"Merge side"
        elif number % edit_every == 0 and version < target_edits:
            version += 1
            text = target_text(version)
            history.target_texts.append(text)
            body = drive.lines[target_file]
            at = next(i for i, s in enumerate(body) if TARGET_ID in s)
            body[at] = _line(text, TARGET_ID, 0)
            changed = {target_file: drive.content(target_file)}
            message = b"Edit " + TARGET_ID.encode()
        else:
            changed = _random_op(drive, rng)
            message = b"Update memory"
        fields: dict = {"branch": branch, "when": when, "zone": zone, "message": message,
                        "encoding": encoding}
        parent = last[branch]
        if parent is not None:
            fields["from"] = parent
        if merge is not None:
            fields["merge"] = merge
        last[branch] = fields
        if number == 1:
            first = fields
        branch_marks[branch] = number
        pending.append((fields, changed))
        if len(pending) >= window:
            flush()
    flush()
    if odd:
        out.write(b"reset refs/memgit/last-synced\nfrom :%d\n\n" % last["main"]["mark"])  # type: ignore[index]
        out.write(b"tag v1\nfrom :%d\ntagger Admin <admin@example.com> 1700000500 -0700\n"
                  % last["main"]["mark"] + _data(b"First release\n"))  # type: ignore[index]
        out.write(b"reset refs/tags/early\nfrom :%d\n\n" % first["mark"])
    out.close()
    if proc.wait() != 0:
        raise RuntimeError("git fast-import failed")
    if odd:
        subprocess.run(["git", "update-ref", "-d", "refs/heads/side"], cwd=path, check=False)
    return history


def _random_op(drive: _Drive, rng: random.Random,
               record: dict[str, bytes] | None = None) -> dict[str, bytes]:
    """Add, edit or delete one entry of a random topic file (never the target line)."""
    name = rng.choice(drive.names)
    body = drive.lines[name]
    candidates = [i for i, s in enumerate(body) if s.startswith("- ") and TARGET_ID not in s]
    roll = rng.random()
    if roll < 0.15 or not candidates:
        if drive.total < 2_000_000:
            line = drive.new_line()
            body.insert(rng.randint(2, len(body)), line)
            drive.total += len(line)
        else:
            at = rng.choice(candidates)
            drive.total -= len(body.pop(at))
    elif roll < 0.3 and len(candidates) > 10:
        at = rng.choice(candidates)
        drive.total -= len(body.pop(at))
    else:
        at = rng.choice(candidates)
        old = body[at]
        drive.n += 1
        head, _, meta = old.rpartition(" [")
        body[at] = f"- {_text(rng, drive.n)} [{meta}"
        drive.total += len(body[at]) - len(old)
    data = drive.content(name)
    if record is not None:
        record[name] = data
    return {name: data}


# --- git-filter-repo, the reference ---------------------------------------------------


def timed_run(argv: list[str], cwd: Path | None = None,
              env: dict[str, str] | None = None) -> tuple[float, float, bytes]:
    """Run a command; (wall seconds, CPU seconds of it and its children, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, check=False, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[:3]} failed: {proc.stderr.decode()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout


# glibc's allocator returns the heap's top to the kernel whenever it is freed past 128 KiB
# and asks again at the next allocation; git fast-import can fall into doing that 100,000
# times a run (docs/performance.md, "Why filter-repo's time on small has two modes"):
# these tunables keep the heap, which makes filter-repo's fast runs reproducible.
STEADY_HEAP = {"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=268435456:"
                                 "glibc.malloc.top_pad=67108864"}


def run_filter_repo(path: Path, ids: list[str], texts: list[str],
                    needles: list[bytes] | None = None,
                    steady_heap: bool = False) -> tuple[float, float]:
    """filter-repo doing the same purge, with its reflog expiry and gc: (wall, CPU) s;
    ``steady_heap`` runs it with :data:`STEADY_HEAP` in its environment."""
    wall, cpu, _out = timed_run(["git", "filter-repo", "--force", "--quiet",
                              "--blob-callback", BLOB_CALLBACK % (ids, needles),
                              "--message-callback",
                              MESSAGE_CALLBACK % ([t.encode() for t in texts],),
                              "--prune-empty", "never", "--prune-degenerate", "never",
                              "--preserve-commit-hashes", "--preserve-commit-encoding"],
                             cwd=path,
                             env=dict(os.environ, **STEADY_HEAP) if steady_heap else None)
    return wall, cpu
