"""The figures docs/performance.md keeps from module docstrings, measured side by side.

* ``fsync``: a pygit2 commit (one blob, two trees, the commit, the ref move) with and
  without ``git.repository.enable_fsync``, each mode in fresh processes, alternated;
* ``tree``: ``git.repository.tree_files`` of bench/drivegen.py's full drive, the first
  walk of a process against the memoised second;
* ``seqs``: ``SELECT seq FROM vectors`` (what ``state.vectors.seqs`` reads: the fact id
  index) against the same with ``ORDER BY seq`` (the table and its BLOBs), 15,000 rows of
  the state database's schema, a fresh connection per read.

    python bench/bench_docstring_figures.py [--runs 3] [--sections fsync,tree,seqs]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from drivegen import make_full_drive  # noqa: E402

FSYNC_CHILD = r"""
import sys, tempfile, time, statistics, pygit2
from memgit.git.repository import enable_fsync
if sys.argv[1] == "fsync":
    enable_fsync()
repo = pygit2.init_repository(tempfile.mkdtemp(dir=sys.argv[2]), bare=True)
sig = pygit2.Signature("bench", "bench@example.com", 0, 0)
parents, times = [], []
for i in range(int(sys.argv[3])):
    t = time.perf_counter()
    blob = repo.create_blob(f"- entry {i}\n".encode() * 50)
    inner = repo.TreeBuilder()
    inner.insert("a.md", blob, pygit2.enums.FileMode.BLOB)
    outer = repo.TreeBuilder()
    outer.insert("dir", inner.write(), pygit2.enums.FileMode.TREE)
    commit = repo.create_commit(None, sig, sig, "m", outer.write(), parents)
    ref = repo.references.get("refs/heads/main")
    if ref is None:
        repo.references.create("refs/heads/main", commit)
    else:
        ref.set_target(commit)
    parents = [commit]
    times.append((time.perf_counter() - t) * 1000)
print(statistics.median(times[5:]))
"""

TREE_CHILD = r"""
import sys, time
from memgit.git.repository import commit_tree_id, open_drive, ref_target, tree_files
drive = open_drive(sys.argv[1])
tree = commit_tree_id(drive, ref_target(drive, "refs/heads/main"))
t = time.perf_counter(); tree_files(drive, tree); first = (time.perf_counter() - t) * 1000
t = time.perf_counter(); tree_files(drive, tree); again = (time.perf_counter() - t) * 1000
print(first, again)
"""


def child(code: str, *args: str) -> list[float]:
    out = subprocess.run([sys.executable, "-c", code, *args], check=True,
                         capture_output=True, text=True).stdout
    return [float(x) for x in out.split()]


def bench_fsync(runs: int, work: Path, commits: int = 60) -> None:
    for run in range(1, runs + 1):
        plain = child(FSYNC_CHILD, "plain", str(work), str(commits))[0]
        synced = child(FSYNC_CHILD, "fsync", str(work), str(commits))[0]
        print(f"fsync run {run}: median per commit {synced:.1f} ms with fsync, "
              f"{plain:.1f} ms without ({synced / plain:.1f}x)")


def bench_tree(runs: int, work: Path) -> None:
    drive = make_full_drive(work / "drive")
    for run in range(1, runs + 1):
        first, again = child(TREE_CHILD, str(drive))
        print(f"tree run {run}: first walk {first:.1f} ms, memoised {again:.2f} ms")


def bench_seqs(runs: int, work: Path, rows: int = 15_000, reads: int = 15) -> None:
    path = work / "vectors.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE vectors (seq INTEGER PRIMARY KEY AUTOINCREMENT, "
                 "fact_id TEXT NOT NULL UNIQUE, digest TEXT NOT NULL, vector BLOB NOT NULL)")
    conn.executemany("INSERT INTO vectors (fact_id, digest, vector) VALUES (?, ?, ?)",
                     ((f"drive_{i:064x}", f"{i:064x}", os.urandom(1536)) for i in range(rows)))
    conn.commit()
    conn.close()
    queries = ("SELECT seq FROM vectors", "SELECT seq FROM vectors ORDER BY seq")
    for run in range(1, runs + 1):
        times: dict[str, list[float]] = {q: [] for q in queries}
        for _ in range(reads):
            for query in queries:  # alternated
                conn = sqlite3.connect(path)
                start = time.perf_counter()
                conn.execute(query).fetchall()
                times[query].append((time.perf_counter() - start) * 1000)
                conn.close()
        index, table = (statistics.median(times[q]) for q in queries)
        print(f"seqs run {run}: {index:.1f} ms from the index, {table:.1f} ms in seq order "
              f"({table / index:.1f}x), medians of {reads}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sections", default="fsync,tree,seqs")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sections = args.sections.split(",")
        if "fsync" in sections:
            bench_fsync(args.runs, work)
        if "tree" in sections:
            bench_tree(args.runs, work)
        if "seqs" in sections:
            bench_seqs(args.runs, work)
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
