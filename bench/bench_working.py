"""Paging working memory: `memgit keys --limit 100` at 10 and at 10,000 keys, side by side.

Run: python bench/bench_working.py [--runs N] [--calls N]

Two checkouts made with `memgit init`, one scope holding 10 keys and the other 10,000
(`item/00000`...; set in one commit through working.store.write_values, judged like any
set). In one run, alternated so both see the same machine load:

* `memgit keys --limit 100 --json` as a process (the whole command, start-up included),
  first page and a page from the middle (`--after`);
* `working.store.list_keys(limit=100)` in process: the listing's own cost without the
  interpreter's start, first page and middle page;
* the same with a page of 10 at both sizes (the small scope's whole content), so the
  ratio compares equal pages;
* for scale, reading every key of the scope in process (what a listing that ignored the
  page size would pay).

Figures: docs/working-memory.md ("Paging cost").
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from memgit.drives.create import create_drive  # noqa: E402
from memgit.git.repository import open_drive  # noqa: E402
from memgit.policy.settings import drive_policy  # noqa: E402
from memgit.policy.working import Scope  # noqa: E402
from memgit.working.store import list_keys, write_values  # noqa: E402

SIZES = (10, 10_000)


def make(folder: Path, n: int) -> Path:
    path = folder / f"keys{n}"
    create_drive(path, bare=False)
    drive = open_drive(path)
    write_values(drive, Scope("default"), {f"item/{i:05d}": {"n": i, "note": "x" * 40}
                                           for i in range(n)}, drive_policy(drive))
    return path


def cli_ms(path: Path, after: str | None) -> float:
    argv = [sys.executable, "-m", "memgit", "-C", str(path), "keys", "--limit", "100", "--json"]
    if after:
        argv += ["--after", after]
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, env=dict(os.environ,
                                                                PYTHONPATH=str(ROOT / "src")))
    took = (time.perf_counter() - started) * 1000
    assert proc.returncode == 0, proc.stderr
    return took


def in_process_us(path: Path, after: str | None, limit: int, calls: int) -> float:
    drive = open_drive(path)
    scope = Scope("default")
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        list_keys(drive, scope, after=after, limit=limit)
        times.append((time.perf_counter() - started) * 1e6)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15, help="processes per drive and page")
    parser.add_argument("--calls", type=int, default=200, help="in-process calls per figure")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        drives = {n: make(Path(tmp), n) for n in SIZES}
        middle = {n: f"item/{n // 2:05d}" if n > 100 else None for n in SIZES}
        cli: dict[tuple[int, str], list[float]] = {}
        for _ in range(args.runs):  # alternated: both sizes under the same load
            for n in SIZES:
                for page in ("first", "middle"):
                    cli.setdefault((n, page), []).append(
                        cli_ms(drives[n], middle[n] if page == "middle" else None))
        print(f"memgit keys --limit 100 --json, {args.runs} processes each (median, min):")
        for page in ("first", "middle"):
            small, large = (cli[(n, page)] for n in SIZES)
            ratio = statistics.median(large) / statistics.median(small)
            print(f"  {page:6}  10 keys {statistics.median(small):7.1f} ms "
                  f"(min {min(small):6.1f})   10,000 keys {statistics.median(large):7.1f} ms "
                  f"(min {min(large):6.1f})   ratio {ratio:.2f}")
        print(f"list_keys in process, {args.calls} calls each (median):")
        for page in ("first", "middle"):
            small = in_process_us(drives[10], None, 100, args.calls)
            large = in_process_us(drives[10_000], middle[10_000] if page == "middle" else None,
                                  100, args.calls)
            print(f"  {page:6}  limit 100: 10 keys {small:8.1f} us   10,000 keys {large:8.1f} us"
                  f"   ratio {large / small:.2f}")
        small = in_process_us(drives[10], None, 10, args.calls)
        large = in_process_us(drives[10_000], middle[10_000], 10, args.calls)
        print(f"  middle  limit 10:  10 keys {small:8.1f} us   10,000 keys {large:8.1f} us"
              f"   ratio {large / small:.2f}  (the same page size)")
        every = in_process_us(drives[10_000], None, 10_000, max(5, args.calls // 20))
        page = in_process_us(drives[10_000], None, 100, args.calls)
        print(f"  reading all 10,000 keys: {every:9.1f} us  ({every / page:.0f}x a page of 100)")


if __name__ == "__main__":
    main()
