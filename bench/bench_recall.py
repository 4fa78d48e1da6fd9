"""Recall on a drive at the limits, side by side with `git grep -i`, and recall quality.

Run: python bench/bench_recall.py [--queries N] [--cli N]

* latency of read_path.recall in process (p50/p99; counting retrievals, and not);
* latency of `memgit recall` from the command line (process start included);
* `git grep -i -e W1 -e W2 ... main` on the same bare drive for the same
  queries: how an agent without an index looks things up; the ratio is
  reported (grep time / recall time);
* `memgit recall` (and `memgit context --query`) from the shell side by side with
  `python3 -c 'import sqlite3'` (target: at most 1.3x, issue 28), the full path
  (MEMGIT_QUICK=0) and `git grep -i`, measured alternately, and where the shell
  recall's time goes (`python -X importtime`, summed by top-level package);
* with ``--forms N``: each recall form the quick path serves (``--``, ``--json``,
  ``--no-count``, ``--limit``, ``--mode``, ``--mounts``, as tests/cli/test_quick.py's
  recall_forms generates them), quick against full and against ``import sqlite3``,
  N runs each, alternated;
* recall@5 and MRR on the labelled set in tests/data/recall/.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_writer import COMMON, Zipf, make_bare_drive, pct, vocabulary  # noqa: E402

from memgit.git.repository import Drive
from memgit.recall.read_path import recall  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LABELLED = ROOT / "tests" / "data" / "recall"


def make_queries(n: int, seed: int = 5) -> list[str]:
    """Queries of 1-4 words drawn like the drive's texts, plus stop-word noise."""
    rng = random.Random(seed)
    zipf = Zipf(vocabulary(random.Random(11)), rng)
    out = []
    for _ in range(n):
        words = zipf.draw(rng.randint(1, 4))
        if rng.random() < 0.5:
            words = ["what", "does", "the"] + words
        out.append(" ".join(words))
    return out


def ms_stats(values: list[float]) -> str:
    return (f"p50 {statistics.median(values):7.2f} ms  p99 {pct(values, 0.99):7.2f} ms  "
            f"(n={len(values)})")


def bench_latency(drive: Drive, queries: list[str], cli_runs: int) -> None:
    from memgit.index.search import _STOPWORDS, words

    recall(drive, "warm up")  # builds the index once
    # The first pass sees each query word for the first time on this drive and
    # counts its matches once (cached per drive, docs/index.md); later passes
    # are the steady state of an agent's session.
    for label, count in (("first sight of words", False), ("counting retrievals", True),
                         ("--no-count", False)):
        times = []
        for q in queries:
            t0 = time.perf_counter()
            recall(drive, q, 5, count=count)
            times.append((time.perf_counter() - t0) * 1000)
        print(f"recall in process, {label:22} {ms_stats(times)}")
    in_process = times

    cli = []
    for q in queries[:cli_runs]:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "memgit", "-C", str(drive.git_dir), "recall",
                        "--no-count", q], capture_output=True, check=False)
        cli.append((time.perf_counter() - t0) * 1000)
    print(f"recall from the command line:             {ms_stats(cli)}")

    grep = []
    for q in queries[:max(cli_runs, 50)]:
        terms = [w for w in words(q.lower()) if w not in _STOPWORDS] or [q]
        args = ["git", "grep", "-i", "-I", "-n"]
        for w in terms:
            args += ["-e", w]
        t0 = time.perf_counter()
        subprocess.run([*args, "main"], cwd=drive.git_dir, capture_output=True, check=False)
        grep.append((time.perf_counter() - t0) * 1000)
    print(f"git grep -i on the same bare drive:       {ms_stats(grep)}")
    print(f"ratio git grep / recall in process (p50): "
          f"{statistics.median(grep) / statistics.median(in_process):.1f}x")
    print(f"ratio git grep / memgit recall CLI (p50): "
          f"{statistics.median(grep) / statistics.median(cli):.2f}x")


def compile_memgit() -> None:
    """An installed memgit has its bytecode compiled (pip does it); an editable checkout
    run with PYTHONDONTWRITEBYTECODE=1 would compile every module on every start."""
    import compileall

    import memgit

    compileall.compile_dir(str(Path(memgit.__file__).parent), quiet=1)


def pip_wrapper(src: str) -> list[str]:
    """``memgit`` as pip's generated entry-point wrapper runs it (``import re`` first), with
    the memgit of the folder ``src`` (another checkout's ``src``): the baseline of
    ``--compare``."""
    import compileall

    compileall.compile_dir(os.path.join(src, "memgit"), quiet=1)
    code = (f"import re\nimport sys\nsys.path.insert(0, {src!r})\n"
            "from memgit.cli.quick import main\n"
            "sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
            "sys.exit(main())\n")
    return [sys.executable, "-c", code]


def shell_figures(git_dir: Path, queries: list[str], runs: int,
                  compare: str | None = None) -> dict[str, list[float]]:
    """Wall times (ms) of the shell commands, measured alternately so that the machine's
    load weighs on all of them alike: the quick path, the full path (MEMGIT_QUICK=0),
    the interpreter's floor and git grep; with ``compare``, the quick recall of that
    checkout's memgit through pip's wrapper too."""
    compile_memgit()
    memgit = memgit_command()
    full_env = dict(os.environ, MEMGIT_QUICK="0")
    out: dict[str, list[float]] = {k: [] for k in ("recall", "counting", "context",
                                                  "full recall", "sqlite", "grep")}
    other = pip_wrapper(compare) if compare else None
    if other:
        out["compare"] = []
    for q in queries[:runs]:
        extra = [("compare", [*other, "-C", str(git_dir), "recall", "--no-count", q], None,
                  None)] if other else []
        for name, argv, cwd, env in (
                *extra,
                ("recall", [*memgit, "-C", str(git_dir), "recall", "--no-count", q], None,
                 None),
                # as the issue types it: the default counts the hits' retrievals (a write)
                ("counting", [*memgit, "-C", str(git_dir), "recall", q], None, None),
                ("context", [*memgit, "-C", str(git_dir), "context", "--query", q], None,
                 None),
                ("full recall", [*memgit, "-C", str(git_dir), "recall", "--no-count", q],
                 None, full_env),
                ("sqlite", [sys.executable, "-c", "import sqlite3"], None, None),
                ("grep", ["git", "grep", "-i", "-I", "-e", q.split()[-1], "main"], git_dir,
                 None)):
            t0 = time.perf_counter()
            subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
            out[name].append((time.perf_counter() - t0) * 1000)
    return out


def bench_shell(drive: Drive, queries: list[str], runs: int,
                compare: str | None = None) -> None:
    """The shell recall against the interpreter's floor, measured alternately."""
    figures = shell_figures(drive.git_dir, queries, runs, compare)
    base = statistics.median(figures["sqlite"])
    print(f"interpreter: {sys.executable}")
    for name, label in (("recall", "memgit recall from the shell"),
                        ("counting", "memgit recall (counting, the default)"),
                        ("context", "memgit context --query from the shell"),
                        ("full recall", "memgit recall, full path (MEMGIT_QUICK=0)"),
                        ("sqlite", "python3 -c 'import sqlite3'"),
                        ("grep", "git grep -i (one word)"),
                        *([("compare", f"recall of {compare} (pip's wrapper)")]
                          if compare else [])):
        ratio = statistics.median(figures[name]) / base
        print(f"{label[-42:]:42} {ms_stats(figures[name])}  {ratio:5.2f}x import sqlite3")
    print("fast-path target: memgit recall at most 1.3x python3 -c 'import sqlite3'")


def memgit_command() -> list[str]:
    """The installed ``memgit`` script next to this interpreter (what a shell runs)."""
    script = Path(sys.executable).parent / "memgit"
    return [str(script)] if script.exists() else [sys.executable, "-m", "memgit"]


def bench_forms(git_dir: Path, query: str, runs: int) -> None:
    """Each recall form of the quick path (tests/cli/test_quick.py's recall_forms), quick
    against full (MEMGIT_QUICK=0) and against ``python3 -c 'import sqlite3'``, alternated.
    Forms that count retrievals change the counts they print, so only the times are
    compared here; the test compares both paths' bytes."""
    sys.path.insert(0, str(ROOT))
    from tests.cli.test_quick import recall_forms

    compile_memgit()
    memgit = [*memgit_command(), "-C", str(git_dir)]
    full_env = dict(os.environ, MEMGIT_QUICK="0")
    print(f"each recall form, {runs} runs each, alternated (p50 ms; ratio to import sqlite3):")
    for argv in recall_forms(query):
        times: dict[str, list[float]] = {"quick": [], "full": [], "sqlite": []}
        codes = set()
        for _ in range(runs):
            for name, cmd, env in (("quick", [*memgit, *argv], None),
                                   ("full", [*memgit, *argv], full_env),
                                   ("sqlite", [sys.executable, "-c", "import sqlite3"], None)):
                t0 = time.perf_counter()
                proc = subprocess.run(cmd, env=env, capture_output=True, check=False)
                times[name].append((time.perf_counter() - t0) * 1000)
                if name != "sqlite":
                    codes.add(proc.returncode)
        base = statistics.median(times["sqlite"])
        quick, full = statistics.median(times["quick"]), statistics.median(times["full"])
        print(f"  {' '.join(argv[1:]):58.58} quick {quick:6.1f} ({quick / base:4.2f}x)  "
              f"full {full:6.1f} ({full / base:4.2f}x)  sqlite {base:5.1f}  exit {sorted(codes)}")


def import_profile(drive: Drive, query: str, top: int = 12) -> None:
    """Where a shell recall's start-up goes: -X importtime, by top-level package."""
    script = memgit_command()
    start = [script[0]] if len(script) == 1 else ["-m", "memgit"]  # the script as a shell runs it
    proc = subprocess.run([sys.executable, "-X", "importtime", *start, "-C",
                           str(drive.git_dir), "recall", "--no-count", query],
                          capture_output=True, text=True, check=False)
    by_package: dict[str, int] = {}
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if len(parts) != 3 or not parts[0].startswith("import time:"):
            continue
        try:
            self_us = int(parts[0].split(":")[1])
        except ValueError:
            continue
        name = parts[2].strip().split(".")[0]
        by_package[name] = by_package.get(name, 0) + self_us
    total = sum(by_package.values())
    print(f"imports of one shell recall: {total / 1000:.1f} ms in all (self times summed)")
    for name, us in sorted(by_package.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {name:28} {us / 1000:7.1f} ms")


def bench_quality() -> None:
    from memgit.git.repository import open_drive

    queries = json.loads((LABELLED / "queries.json").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "drive"
        shutil.copytree(LABELLED / "drive", path)
        env = ["-c", "user.name=bench", "-c", "user.email=bench@example.com"]
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=path, check=True)
        subprocess.run(["git", "add", "-A"], cwd=path, check=True)
        subprocess.run(["git", *env, "commit", "-qm", "labelled"], cwd=path, check=True)
        drive = open_drive(path)
        recall5 = rr = 0.0
        misses = []
        for item in queries:
            ranked = [h.entry_id for h in recall(drive, item["query"], 10, count=False)]
            relevant = set(item["relevant"])
            recall5 += len(relevant & set(ranked[:5])) / len(relevant)
            rank = next((i for i, e in enumerate(ranked, 1) if e in relevant), None)
            rr += 1 / rank if rank else 0.0
            if rank is None or rank > 5:
                misses.append(item["query"])
        n = len(queries)
        print(f"labelled set: {n} queries; recall@5 {recall5 / n:.3f}; MRR {rr / n:.3f}")
        print(f"  not in the top 5: {misses}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--cli", type=int, default=20)
    ap.add_argument("--forms", type=int, default=0,
                    help="runs of each recall form, quick and full (0: skip)")
    ap.add_argument("--compare", metavar="SRC", default=None,
                    help="also time the quick recall of the memgit in SRC (another "
                         "checkout's src), started as pip's entry-point wrapper starts it")
    ap.add_argument("--shell-only", action="store_true",
                    help="only the shell figures (and the forms): no in-process latency, "
                         "no quality set")
    args = ap.parse_args()
    assert COMMON  # the drive and the queries share the vocabulary of bench_writer
    with tempfile.TemporaryDirectory() as tmp:
        drive = make_bare_drive(Path(tmp) / "limits.git")
        queries = make_queries(args.queries)
        if not args.shell_only:
            recall(drive, "warm up")
            bench_latency(drive, queries, args.cli)
        else:
            recall(drive, "warm up")  # builds the index once
        bench_shell(drive, queries, args.cli, args.compare)
        import_profile(drive, queries[0])
        if args.forms:
            bench_forms(drive.git_dir, "team deploy", args.forms)
    if not args.shell_only:
        bench_quality()


if __name__ == "__main__":
    main()
