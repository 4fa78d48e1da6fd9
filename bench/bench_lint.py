"""Lint of a drive at the limits, in process, and the CLI's start-up cost.

Run: python bench/bench_lint.py [--repeat N] [--structured]
     python bench/bench_lint.py --compare OTHER_SRC [--rounds N]
Prints medians; start-up is reported as a ratio against `python -c pass` measured
side by side in the same run, since these machines are shared and noisy. --compare
lints the same two drives (plain and --structured) with this checkout's src and with
OTHER_SRC (another checkout's src folder) in child processes that alternate, and
reports the medians of the CPU time each lint took, and their ratio.
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


def structure(path: Path) -> None:
    """Front matter on top of every topic file and a fence inside a list item at the end
    (the same size limits hold: the files stay under 8,200 bytes), committed."""
    for file in sorted(path.rglob("*.md")):
        if ".git" in file.parts or file.name == "MEMORY.md":
            continue
        file.write_text("---\ndescription: bench\n---\n" + file.read_text()
                        + "1. Example:\n\n    ```\n    - not an entry\n    ```\n")
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com",
                    "commit", "-qam", "structured"], cwd=path, check=True)


CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from memgit.git.repository import open_drive
from memgit.policy.lint import lint_rev, lint_worktree
from memgit.policy.settings import Policy
drive = open_drive(sys.argv[2])
out = []
for _ in range(int(sys.argv[3])):
    for fn in (lambda: lint_worktree(drive.git_dir, drive.workdir, Policy()),
               lambda: lint_rev(drive, "HEAD", Policy())):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        out.append((time.process_time() - c0, time.perf_counter() - w0))
print(json.dumps(out))
"""


def compare(other: str, rounds: int) -> None:
    """This checkout's lint against another checkout's, on the same drives, alternating."""
    import json

    mine = str(Path(__file__).resolve().parent.parent / "src")
    with tempfile.TemporaryDirectory() as tmp:
        plain = make_full_drive(Path(tmp) / "plain")
        structured = make_full_drive(Path(tmp) / "structured")
        structure(structured)
        for label, drive in (("plain", plain), ("structured", structured)):
            times: dict[str, list[tuple[float, float]]] = {"other": [], "this": []}
            for _ in range(rounds):
                for side, src in (("other", other), ("this", mine)):
                    proc = subprocess.run([sys.executable, "-c", CHILD, src, str(drive), "3"],
                                          capture_output=True, text=True, check=True)
                    times[side].extend(json.loads(proc.stdout))
            cpu = {k: statistics.median(c for c, _w in v) * 1000 for k, v in times.items()}
            wall = {k: statistics.median(w for _c, w in v) * 1000 for k, v in times.items()}
            print(f"{label} drive at the limits ({len(times['this'])} lints a side, worktree "
                  f"and --rev): CPU median other {cpu['other']:.0f} ms, this "
                  f"{cpu['this']:.0f} ms (ratio {cpu['this'] / cpu['other']:.2f}); wall "
                  f"median other {wall['other']:.0f} ms, this {wall['this']:.0f} ms")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--compare", metavar="OTHER_SRC", default=None)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--structured", action="store_true",
                    help="give every topic file front matter and a nested fenced block, so "
                         "that format.py's block reader reads every file (its worst case)")
    args = ap.parse_args()
    if args.compare:
        compare(args.compare, args.rounds)
        return
    from memgit.git.repository import open_drive
    from memgit.git.worktree import worktree_files
    from memgit.policy.lint import lint_rev, lint_worktree
    from memgit.policy.settings import Policy

    with tempfile.TemporaryDirectory() as tmp:
        path = make_full_drive(Path(tmp) / "full")
        if args.structured:
            structure(path)
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
    for module in ("memgit.cli.main", "memgit.policy", "memgit.secrets", "pygit2"):
        print(f"import {module}: {import_time_ms(module):.0f} ms (-X importtime, cumulative)")


if __name__ == "__main__":
    main()
