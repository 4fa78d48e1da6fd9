"""Lint of a drive at the limits, in process, and the CLI's start-up cost.

Run: python bench/bench_lint.py [--repeat N]
Prints medians; start-up is reported as a ratio against `python -c pass` measured
side by side in the same run, since these machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from drivegen import make_full_drive  # noqa: E402


def median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def import_time_ms(module: str) -> float:
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"],
                          capture_output=True, text=True, check=True)
    total = 0
    for line in proc.stderr.splitlines():
        m = re.match(r"import time:\s+\d+ \|\s+(\d+) \| (\S.*)$", line)
        if m and not m.group(2).startswith(" "):
            total += int(m.group(1))
    return total / 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    from memgit.git.repository import open_drive
    from memgit.git.worktree import worktree_files
    from memgit.lint import lint_rev, lint_worktree
    from memgit.policy import Policy

    with tempfile.TemporaryDirectory() as tmp:
        path = make_full_drive(Path(tmp) / "full")
        drive = open_drive(path)
        files = worktree_files(drive.workdir)
        size = sum(f.size for f in files)
        entries = sum((path / f.path).read_text().count("\n- ") for f in files)
        policy = Policy()
        found = lint_worktree(drive.git_dir, drive.workdir, policy)
        print(f"drive: {len(files)} files, {size} bytes, ~{entries} entries, "
              f"{len(found)} findings ({sorted({v.code for v in found})})")
        wt = median_ms(lambda: lint_worktree(drive.git_dir, drive.workdir, policy),
                       args.repeat)
        rev = median_ms(lambda: lint_rev(drive, "HEAD", policy), args.repeat)
        print(f"lint working tree, in process: {wt:.0f} ms (median of {args.repeat})")
        print(f"lint --rev HEAD, in process:   {rev:.0f} ms (median of {args.repeat})")
        base = median_ms(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True),
                         args.repeat)
        cli = median_ms(lambda: subprocess.run([sys.executable, "-m", "memgit", "--version"],
                                               check=True, capture_output=True), args.repeat)
        full = median_ms(lambda: subprocess.run([sys.executable, "-m", "memgit", "lint"],
                                                cwd=path, capture_output=True), args.repeat)
        print(f"python -c pass: {base:.0f} ms; memgit --version: {cli:.0f} ms "
              f"(ratio {cli / base:.1f}x, +{cli - base:.0f} ms); memgit lint of the full "
              f"drive from the shell: {full:.0f} ms")
    for module in ("memgit.cli", "memgit.policy", "memgit.secrets", "pygit2"):
        print(f"import {module}: {import_time_ms(module):.0f} ms (-X importtime, cumulative)")


if __name__ == "__main__":
    main()
