"""memgit audit at the drive limits (docs/performance.md, "Audit").

Run: python bench/bench_audit.py [--repeat N] [--commits N]

Makes a checkout at the limits (bench/drivegen.py: 256 files, about 2 MiB, ~19,000
entries of words from a 40-word vocabulary, the worst case for the pair filter), then
``--commits`` more commits that each rewrite one file (history for the secret scan), and
times side by side on the same drive, ``--repeat`` rounds each:

* ``audit(history=False)``: every check of the head;
* ``audit()``: the same plus the scan of every blob in history;
* as the baseline, ``lint_rev`` of the head (memgit lint --rev HEAD): the policy's judgement
  of the same files.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))


def _history(path: Path, commits: int) -> None:
    env = ["-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    files = sorted(p for p in path.rglob("topic*.md"))
    for n in range(commits):
        target = files[(n * 7) % len(files)]
        text = target.read_text().splitlines(keepends=True)
        target.write_text("".join(text[:-1]))  # drop the file's last entry
        subprocess.run(["git", *env, "commit", "-qam", f"edit {n}", "--no-verify"], cwd=path,
                       check=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--commits", type=int, default=50)
    args = parser.parse_args()
    from drivegen import make_full_drive

    from memgit.git.repository import open_drive
    from memgit.policy.lint import lint_rev
    from memgit.policy.settings import drive_policy
    from memgit.recall.read_path import catch_up
    from memgit.review.audit import audit

    with tempfile.TemporaryDirectory() as tmp:
        path = make_full_drive(Path(tmp) / "drive")
        _history(path, args.commits)
        drive = open_drive(path)
        policy = drive_policy(drive)
        catch_up(drive, policy=policy)  # the recall index is made once, as it is nightly
        size = sum(p.stat().st_size for p in path.rglob("*.md"))
        files = len(list(path.rglob("*.md")))
        times: dict[str, list[float]] = {"lint (baseline)": [], "audit, head only": [],
                                         "audit, with history": []}
        report = None
        for _ in range(args.repeat):
            start = time.perf_counter()
            lint_rev(drive, "HEAD", policy)
            times["lint (baseline)"].append(time.perf_counter() - start)
            start = time.perf_counter()
            audit(drive, policy, history=False)
            times["audit, head only"].append(time.perf_counter() - start)
            start = time.perf_counter()
            report = audit(drive, policy)
            times["audit, with history"].append(time.perf_counter() - start)
        assert report is not None
        print(f"drive: {files} files, {size} bytes, {report.entries} entries, "
              f"{args.commits + 1} commits")
        base = statistics.median(times["lint (baseline)"])
        for name, values in times.items():
            med = statistics.median(values)
            print(f"{name:22} median {med:6.2f} s  runs {' '.join(f'{v:.2f}' for v in values)}"
                  f"  x{med / base:.1f} of lint")
        print("findings:", report.as_dict()["counts"])


if __name__ == "__main__":
    main()
