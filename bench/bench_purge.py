"""memgit purge against git-filter-repo, side by side, on generated drive histories.

Run: python bench/bench_purge.py [--sizes 1000,10000] [--shape spread|one-file|small] [--keep DIR]
     [--steady-heap]

For each size a drive history is generated once with ``git fast-import`` (a bare
repository near the 2 MiB drive limit: 48 topic files in 6 folders plus
MEMORY.md, one entry added, edited or deleted per commit, the entry to purge in
the first commit and edited about 20 times until the last). Two identical
copies are made (``cp -a``); filter-repo runs on one (blob callback removing the
same lines, ``--prune-empty never --prune-degenerate never
--preserve-commit-hashes --preserve-commit-encoding --force``, its own reflog
expiry and ``gc --prune=now``), memgit purge on the other; both end with the
same commits (checked), the wall times and repository sizes are printed.

``--shape``: ``spread`` (the default) is 48 topic files of about 38 KB, a drive near its
limit whose purged file one commit in 48 touches; ``one-file`` is one topic file of about
60 KB, so every commit touches the purged entry's file and every version of it, every
tree and every commit is rewritten (the worst case for the rewrite); ``small`` is 8
files of about 4 KB, a young drive whose history is long and light (fixed costs weigh
most).

The generator lives in tests/history_support.py (the purge tests use it with
merges, tags, odd time zones and a Latin-1 message switched on); so does the
filter-repo reference run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from history_support import (  # noqa: E402
    TARGET_ID,
    generate_history,
    run_filter_repo,
    target_text,
    timed_run,
)

# generate_history's arguments per shape
SHAPES: dict[str, dict[str, int]] = {
    "spread": {},  # 48 topic files of about 38 KB: the drive near its 2 MiB limit
    "one-file": {"files": 1, "file_bytes": 60000},  # every commit touches the purged file
    "small": {"files": 8, "file_bytes": 4000},  # a young drive: 32 KB, 8 files
}

# --- the comparison ------------------------------------------------------------------


def repo_bytes(path: Path) -> int:
    total = 0
    for root, _dirs, names in os.walk(path / "objects"):
        for name in names:
            total += os.path.getsize(os.path.join(root, name))
    return total


def run_memgit(path: Path, ids: list[str]) -> tuple[float, float, dict]:
    wall, cpu, out = timed_run([sys.executable, "-m", "memgit", "purge", *ids, "--repo",
                             str(path), "--yes", "--json"])
    return wall, cpu, json.loads(out)


def heads(path: Path) -> list[str]:
    proc = subprocess.run(["git", "for-each-ref", "--format=%(objectname) %(refname)",
                           "refs/heads", "refs/tags", "refs/memgit"], cwd=path,
                          capture_output=True, check=True, text=True)
    # refs/memgit/purged (the purged ids for sync clients) and refs/memgit/registry/* (the
    # purge registry a replica reads) are memgit's own records, which filter-repo has not
    # (docs/purge.md); every other ref must be the same commit
    return sorted(line for line in proc.stdout.splitlines()
                  if not line.endswith(" refs/memgit/purged")
                  and " refs/memgit/registry/" not in line)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000",
                    help="commit counts, comma separated (50000 takes minutes)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per size (medians shown)")
    ap.add_argument("--shape", choices=tuple(SHAPES), default="spread",
                    help="spread: 48 topic files; one-file: every commit touches the "
                         "purged entry's file")
    ap.add_argument("--keep", default=None, metavar="DIR",
                    help="cache generated histories in DIR (reused across runs)")
    ap.add_argument("--steady-heap", action="store_true",
                    help="run filter-repo with glibc's heap trimming off (its fast mode, "
                         "reproducibly: docs/performance.md)")
    args = ap.parse_args()
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-purge-"))
    base.mkdir(parents=True, exist_ok=True)
    print(f"{'commits':>8} {'filter-repo wall/cpu s':>22} {'memgit wall/cpu s':>18} "
          f"{'ratio wall/cpu':>14} {'fr MiB':>7} {'mg MiB':>7} same")
    for size in (int(s) for s in args.sizes.split(",")):
        shape = SHAPES[args.shape]
        source = base / f"history-{args.shape}-{size}.git"
        if not source.exists():
            t0 = time.perf_counter()
            generate_history(source, size, **shape)
            print(f"(generated {size} commits in {time.perf_counter() - t0:.1f} s)",
                  file=sys.stderr)
        texts = [target_text(v) for v in range(1, 21)]
        fr_runs: list[tuple[float, float]] = []
        mg_runs: list[tuple[float, float]] = []
        phases: list[dict] = []
        same = True
        sizes = (0, 0)
        for run in range(args.repeat):
            fr_copy, mg_copy = base / f"fr-{size}.git", base / f"mg-{size}.git"
            for copy in (fr_copy, mg_copy):
                shutil.rmtree(copy, ignore_errors=True)
                subprocess.run(["cp", "-a", str(source), str(copy)], check=True)
            # alternate who goes first: the machine may be shared and its load drifts
            if run % 2 == 0:
                fr_runs.append(run_filter_repo(fr_copy, [TARGET_ID], texts,
                                               [TARGET_ID.encode()], args.steady_heap))
            wall, cpu, summary = run_memgit(mg_copy, [TARGET_ID])
            mg_runs.append((wall, cpu))
            if run % 2 == 1:
                fr_runs.append(run_filter_repo(fr_copy, [TARGET_ID], texts,
                                               [TARGET_ID.encode()], args.steady_heap))
            phases.append(summary.get("phases", {}))
            same = same and heads(fr_copy) == heads(mg_copy)
            sizes = (repo_bytes(fr_copy), repo_bytes(mg_copy))
            if not args.keep:
                shutil.rmtree(fr_copy)
                shutil.rmtree(mg_copy)
        fr_wall = statistics.median(w for w, _c in fr_runs)
        fr_cpu = statistics.median(c for _w, c in fr_runs)
        mg_wall = statistics.median(w for w, _c in mg_runs)
        mg_cpu = statistics.median(c for _w, c in mg_runs)
        print(f"{size:>8} {fr_wall:>11.2f}/{fr_cpu:<10.2f} {mg_wall:>8.2f}/{mg_cpu:<9.2f} "
              f"{mg_wall / fr_wall:>6.2f}/{mg_cpu / fr_cpu:<7.2f} {sizes[0] / 2**20:>7.1f} "
              f"{sizes[1] / 2**20:>7.1f} {'yes' if same else 'NO'}")
        keys = phases[0].keys() if phases else []
        print("   memgit phases (median s): " + ", ".join(
            f"{k} {statistics.median(p.get(k, 0) for p in phases):.2f}" for k in keys))
    if not args.keep:
        shutil.rmtree(base)


if __name__ == "__main__":
    main()
