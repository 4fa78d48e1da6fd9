"""memgit backup and restore on a drive at the limits, side by side with git's own copies.

Run: python bench/bench_backup.py [--commits 200] [--rounds 7] [--keep DIR]

The drive (bench/drivegen.py): a checkout with 255 topic files of about 8 KB (2 MiB, 256
files: the default policy's limits), then ``--commits`` more commits each rewriting one
entry of one file, and its recall index built (``memgit index``). Each round times, in
turn, with the same drive and the same page cache:

* ``memgit backup`` (the CLI: a bundle of every ref, the state database's online copy,
  manifest and checksums, one tar file renamed into place);
* ``git bundle create --all`` of the same repository (the bundle alone);
* ``cp -r`` of the git directory (a plain copy: no consistency, no checks);
* ``memgit restore`` of the backup into a new folder (checks, fetch, fsck, hooks, the
  state database, the first read);
* ``git clone`` of the bundle into a new folder (git's restore of a bundle, no fsck);
* ``cp -r`` of the copy back;
* ``memgit --version`` (the interpreter and the CLI starting: part of both memgit times).

It prints the median wall time of each and the ratios against the baselines.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
from drivegen import make_full_drive  # noqa: E402

ENV_ARGS = ["-c", "user.name=bench", "-c", "user.email=bench@example.com"]


def build(path: Path, commits: int) -> Path:
    make_full_drive(path)
    rng = random.Random(11)
    files = sorted(p for p in path.rglob("topic*.md"))
    for n in range(commits):
        file = rng.choice(files)
        lines = file.read_text().splitlines(keepends=True)
        at = rng.randrange(2, len(lines))
        lines[at] = lines[at].replace(" number ", f" revised {n} number ", 1)
        file.write_text("".join(lines))
        subprocess.run(["git", *ENV_ARGS, "commit", "-qam", f"revise {n}"], cwd=path,
                       check=True)
    subprocess.run([sys.executable, "-m", "memgit", "index"], cwd=path, check=True,
                   capture_output=True)
    return path


def timed(argv: list[str], cwd: Path | None = None) -> float:
    started = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {proc.stderr.decode()}")
    return elapsed


def round_(drive: Path, work: Path, n: int) -> dict[str, float]:
    memgit = [sys.executable, "-m", "memgit"]
    tar, bundle, copy = work / f"b{n}.tar", work / f"b{n}.bundle", work / f"copy{n}"
    out = {
        "memgit backup": timed([*memgit, "-C", str(drive), "backup", str(tar)]),
        "git bundle create --all": timed(["git", "-C", str(drive), "bundle", "create",
                                          "--quiet", str(bundle), "--all"]),
        "cp -r git dir": timed(["cp", "-r", str(drive / ".git"), str(copy)]),
        "memgit restore": timed([*memgit, "restore", str(tar), str(work / f"r{n}")]),
        "git clone bundle": timed(["git", "clone", "--quiet", str(bundle),
                                   str(work / f"c{n}")]),
        "cp -r back": timed(["cp", "-r", str(copy), str(work / f"back{n}")]),
        "memgit start-up": timed([*memgit, "--version"]),
    }
    out["backup bytes"] = tar.stat().st_size
    out["bundle bytes"] = bundle.stat().st_size
    for path in (work / f"r{n}", work / f"c{n}", work / f"back{n}", copy):
        shutil.rmtree(path)
    tar.unlink()
    bundle.unlink()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--keep", type=Path, default=None)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="memgit-bench-backup-", dir=args.keep))
    drive = build(base / "drive", args.commits)
    size = sum(p.stat().st_size for p in (drive / ".git").rglob("*") if p.is_file())
    print(f"drive: 256 files, {args.commits + 1} commits, git dir {size} bytes")
    rounds = [round_(drive, base, n) for n in range(args.rounds)]
    medians = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    for key, value in medians.items():
        unit = "bytes" if key.endswith("bytes") else "s"
        print(f"  {key:<26} {value:.3f} {unit}" if unit == "s" else
              f"  {key:<26} {int(value)} {unit}")
    for mine, theirs in (("memgit backup", "git bundle create --all"),
                         ("memgit backup", "cp -r git dir"),
                         ("memgit restore", "git clone bundle"),
                         ("memgit restore", "cp -r back"),
                         ("memgit backup", "memgit start-up"),
                         ("memgit restore", "memgit start-up")):
        print(f"  {mine} / {theirs}: {medians[mine] / medians[theirs]:.2f}x")
    if args.keep is None:
        shutil.rmtree(base)


if __name__ == "__main__":
    main()
