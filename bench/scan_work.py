"""The default scanner's work a line, alone: what bench_secrets.py times, without the other
engines (a quick before/after of a change to the scanner; pair it with compare_findings.py).

    python bench/scan_work.py                         # CPU us a line, lowest of --repeat passes
    PYTHONPATH=/tmp/main/src python bench/scan_work.py   # another tree's scanner, in turn
    PYTHONHASHSEED=0 valgrind --tool=callgrind --collect-atstart=no \\
        --toggle-collect='deque_extend*' python bench/scan_work.py --passes 3
        # instructions of three passes only (divide by 3 x 4,438 lines): load-independent

As in bench_secrets.py: a warm-up on the tuning half, then passes over the evaluation half
with the value caches cleared before each (no value judged twice in a pass); "us/note" is
the evaluation half's agent-notes lines alone.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_secrets import DATA, clear_caches, load  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5, help="timed passes (lowest kept)")
    ap.add_argument("--passes", type=int, default=0,
                    help="untimed passes inside deque_extend (for callgrind), then exit")
    args = ap.parse_args()
    import memgit.secrets
    from memgit.secrets import scan_text

    dev = load(DATA / "dev" / "lines.jsonl")
    lines = [r["line"] for r in dev if r["split"] == "eval"]
    notes = [r["line"] for r in dev if r["split"] == "eval" and r["family"] == "agent notes"]
    for r in dev:  # warm-up: compiles what the lines need, fills the name caches
        scan_text(r["line"])
    if args.passes:
        for _ in range(args.passes):
            clear_caches()
            collections.deque(map(scan_text, lines), maxlen=0)
        return
    best = {"line": float("inf"), "note": float("inf")}
    for _ in range(args.repeat):
        for key, sample in (("line", lines), ("note", notes)):
            clear_caches()
            start = time.process_time()
            for line in sample:
                scan_text(line)
            best[key] = min(best[key], (time.process_time() - start) / len(sample) * 1e6)
    where = Path(memgit.secrets.__file__).parents[2]
    print(f"{where}: {best['line']:.2f} us/line, {best['note']:.2f} us/note "
          f"(lowest of {args.repeat} passes, {len(lines)} lines)")


if __name__ == "__main__":
    main()
