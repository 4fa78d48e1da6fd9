"""The writer and the index on a drive at the limits (docs/performance.md, "Writer and index").

Run: python bench/bench_writer.py [--repeat N] [--keep DIR]

The drive: a bare repository with 256 files (255 topic files and MEMORY.md),
about 15,000 entries and just under 2 MiB, built in one commit. Texts come from
a Zipf-distributed vocabulary of common and made-up words, so term frequencies
look like prose and recall benchmarks are not flattered by a tiny vocabulary.

Measured, in process unless said otherwise:
* commit_facts with one entry (cold: the first write of a process; warm: later);
* the compare-and-swap itself: pygit2 Reference.set_target vs `git update-ref`;
* a full index rebuild (empty database, and over an existing one);
* an incremental reindex after one commit made with plain plumbing.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from memgit.git.repository import Drive

COMMON = ("the team owns launch review customer pricing deploy service database staging "
          "release budget roadmap design meeting weekly quarter contract vendor support "
          "incident metrics dashboard migration schema token policy billing payments search "
          "mobile app web api report export invoice backup cluster region alert on-call "
          "security audit hiring onboarding travel office laptop coffee lunch friday monday "
          "prefers likes needs wants asked decided moved blocked approved shipped planned "
          "should must never always before after every each new old first last next").split()
SYLLABLES = ("ka ro mi lu ten sa vor el an is ber gal tor qui nex pra del mon zu fi ra "
             "ple ost ing ux wa ry co nal ter").split()


def vocabulary(rng: random.Random, size: int = 4000) -> list[str]:
    words = list(COMMON)
    seen = set(words)
    while len(words) < size:
        word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


class Zipf:
    """Draw words with probability ~ 1/rank (the shape of word use in prose)."""

    def __init__(self, words: list[str], rng: random.Random) -> None:
        self.words = words
        self.rng = rng
        self.weights = [1.0 / (rank + 1) for rank in range(len(words))]

    def draw(self, k: int) -> list[str]:
        return self.rng.choices(self.words, weights=self.weights, k=k)


def entry_text(zipf: Zipf, rng: random.Random) -> str:
    return " ".join(zipf.draw(rng.randint(5, 8))).capitalize()


def topic_path(i: int) -> str:
    return f"area{i // 16:02}/topic{i:03}.md"


def drive_files(files: int = 255, entries: int = 15_000, seed: int = 11) -> dict[str, str]:
    """Topic files in folders of 16 (at most 64 KiB each), about 2 MiB in all."""
    from memgit.format import entries as fmt

    rng = random.Random(seed)
    zipf = Zipf(vocabulary(rng), rng)
    out: dict[str, list[str]] = {}
    for n in range(entries):
        i = n % files
        path = topic_path(i)
        lines = out.setdefault(path, [f"# Topic {i}\n", "\n"])
        entry_id = fmt.new_id(1_780_000_000_000 + n)
        lines.append(fmt.format_entry(entry_text(zipf, rng), f"claude-code:session/{n % 977}",
                                      f"2026-{n % 12 + 1:02}-{n % 28 + 1:02}", entry_id) + "\n")
    return {p: "".join(lines) for p, lines in out.items()}


def make_bare_drive(path: Path, files: int = 255, entries: int = 15_000) -> Drive:
    """A bare drive at the limits, written with pygit2 in one commit."""
    from memgit.format import entries as fmt
    from memgit.git.repository import (
        build_tree,
        cas_ref,
        create_commit,
        init_bare,
        open_drive,
        ref_target,
    )

    topics = drive_files(files, entries)
    memory = fmt.regenerate_index_section("# Memory: bench\n\n## Index\n",
                                          list(topics) + ["MEMORY.md"])
    init_bare(path, {"MEMORY.md": b"# Memory: bench\n\n## Index\n"}, "Create drive")
    drive = open_drive(path)
    head = ref_target(drive, "refs/heads/main")
    changes: dict[str, bytes | None] = {p: t.encode() for p, t in topics.items()}
    changes["MEMORY.md"] = memory.encode()
    tree = build_tree(drive, str(drive.repo[head].tree_id), changes)  # type: ignore[attr-defined]
    commit = create_commit(drive, tree, [head], "A drive at the limits")  # type: ignore[list-item]
    assert cas_ref(drive, "refs/heads/main", head, commit, "bench")
    return open_drive(path)


def drive_summary(drive: Drive) -> str:
    from memgit.git.repository import commit_tree_id, read_blob, ref_target, tree_files

    files = tree_files(drive, commit_tree_id(drive, ref_target(drive, "refs/heads/main")))
    size = sum(f.size for f in files)
    entries = sum(read_blob(drive, f.oid).count(b"\n- ") for f in files)
    return f"{len(files)} files, {size} bytes ({size / 2**20:.2f} MiB), {entries} entries"


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def describe(values: list[float]) -> str:
    return (f"p50 {statistics.median(values):7.2f} ms  p95 {pct(values, 0.95):7.2f} ms  "
            f"max {max(values):7.2f} ms  (n={len(values)})")


COLD_SCRIPT = """
import sys, time
t0 = time.perf_counter()
from memgit.git.repository import open_drive
from memgit.write.ops import NewFact
from memgit.write.writer import commit_facts
drive = open_drive(sys.argv[1])
t1 = time.perf_counter()
# an existing topic: a new file would be the 257th, which the policy refuses
result = commit_facts(drive, [NewFact("A cold write number " + sys.argv[2],
                                      topic="area00/topic000")])
t2 = time.perf_counter()
assert result.status == "committed", result
print(f"{(t1 - t0) * 1000:.2f} {(t2 - t1) * 1000:.2f}")
"""


def bench_commit(drive: Drive, repeat: int) -> None:
    from memgit.write.ops import NewFact
    from memgit.write.writer import commit_facts

    counter = iter(range(10**6))

    def one() -> None:
        n = next(counter)
        result = commit_facts(drive, [NewFact(f"Benchmark fact number {n} about rollout",
                                              topic=topic_path(n % 255))])
        assert result.status == "committed", result

    cold = [float(x) for x in subprocess.run(
        [sys.executable, "-c", COLD_SCRIPT, str(drive.git_dir), "0"], capture_output=True,
        text=True, check=True).stdout.split()]
    first = timed(one, 1)
    warm = timed(one, repeat)
    print(f"commit_facts, 1 entry, first write in a fresh process: {cold[1]:.1f} ms "
          f"(+{cold[0]:.0f} ms imports and open)")
    print(f"commit_facts, 1 entry, first write of this process:    {first[0]:.1f} ms")
    print(f"commit_facts, 1 entry, warm:                           {describe(warm)}")


def bench_cas(drive: Drive, repeat: int) -> None:
    from memgit.git.repository import cas_ref, commit_tree_id, create_commit, ref_target

    ref = "refs/heads/bench-cas"
    head = ref_target(drive, "refs/heads/main")
    tree = commit_tree_id(drive, head)
    commits = [create_commit(drive, tree, [head], f"cas {i}") for i in range(2 * repeat + 1)]
    drive.repo.references.create(ref, commits[0])
    state = {"i": 0}

    def pygit2_cas() -> None:
        i = state["i"]
        assert cas_ref(drive, ref, commits[i], commits[i + 1], "bench")
        state["i"] = i + 1

    def git_cas() -> None:
        i = state["i"]
        subprocess.run(["git", "update-ref", ref, commits[i + 1], commits[i]],
                       cwd=drive.git_dir, check=True)
        state["i"] = i + 1

    a = timed(pygit2_cas, repeat)
    b = timed(git_cas, repeat)
    drive.repo.references.delete(ref)
    print(f"CAS ref move, pygit2 Reference.set_target:             {describe(a)}")
    print(f"CAS ref move, git update-ref NEW OLD (subprocess):     {describe(b)}")


def bench_reindex(drive: Drive, repeat: int) -> None:
    from memgit import state
    from memgit.git.repository import (
        build_tree,
        cas_ref,
        create_commit,
        file_at,
        read_blob,
        ref_target,
    )
    from memgit.index import reindex as recall_index

    state.close_connections()
    for suffix in ("", "-wal", "-shm"):
        Path(str(state.state_path(drive.git_dir)) + suffix).unlink(missing_ok=True)
    t0 = time.perf_counter()
    result = recall_index.reindex(drive, full=True)
    empty = (time.perf_counter() - t0) * 1000
    print(f"full rebuild into an empty database:                   {empty:.0f} ms "
          f"({result.inserted} rows, {result.files} files)")
    over = timed(lambda: recall_index.reindex(drive, full=True), max(3, repeat // 10))
    print(f"full rebuild over an existing index:                   {describe(over)}")

    counter = iter(range(10**6))

    def plain_commit() -> None:
        n = next(counter)
        head = ref_target(drive, "refs/heads/main")
        path = topic_path(n % 255)
        tree_id = str(drive.repo[head].tree_id)  # type: ignore[index]
        entry = file_at(drive, tree_id, path)
        assert entry is not None
        data = read_blob(drive, entry.oid) + (
            f"- Plain commit fact {n} [source: imported:unknown; added: 2026-01-01]\n").encode()
        tree = build_tree(drive, tree_id, {path: data})
        commit = create_commit(drive, tree, [head], "plain")  # type: ignore[list-item]
        assert cas_ref(drive, "refs/heads/main", head, commit, "plain")

    times = []
    for _ in range(repeat):
        plain_commit()
        t0 = time.perf_counter()
        result = recall_index.reindex(drive)
        times.append((time.perf_counter() - t0) * 1000)
        assert result.mode == "incremental" and result.inserted == 1, result
    print(f"incremental reindex after one commit:                  {describe(times)}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--keep", type=Path, default=None, help="build the drive here and keep it")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = (args.keep or Path(tmp)) / "limits.git"
        t0 = time.perf_counter()
        drive = make_bare_drive(path)
        print(f"drive: {drive_summary(drive)}; built in {time.perf_counter() - t0:.1f} s")
        bench_reindex(drive, args.repeat)
        bench_commit(drive, args.repeat)
        bench_cas(drive, args.repeat)
        print(f"drive after the writes: {drive_summary(drive)}")


if __name__ == "__main__":
    main()
