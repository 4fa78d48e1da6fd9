"""Benchmark memgit.secrets against detect-secrets' default scan_line.

    python bench/bench_secrets.py            # full run (detect-secrets on all 15,000 lines)
    python bench/bench_secrets.py --sample 2000   # detect-secrets on a 2,000-line sample

Prints, side by side: recall and false-positive rate over the corpus in
tests/data/secrets/, mean time per line over the corpus and over a generated
15,000-line ordinary drive (about 2.3 MiB), and the import time.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "secrets"


def load_corpus():
    pos = [json.loads(x) for x in (DATA / "positives.jsonl").read_text().splitlines()]
    neg = [json.loads(x) for x in (DATA / "negatives.jsonl").read_text().splitlines()]
    spec = importlib.util.spec_from_file_location("make_corpus", DATA / "make_corpus.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return pos, neg, module


def import_ms(module: str, runs: int = 7) -> float:
    """Median cumulative import time of `module` in a fresh interpreter, in ms.
    Bytecode caching is allowed (as in an installed package)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    values = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", f"import {module}"],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        ).stderr
        for line in out.splitlines():
            m = re.match(r"import time:\s+\d+ \|\s+(\d+) \|\s*(\S+)$", line)
            if m and m.group(2) == module:
                values.append(int(m.group(1)) / 1000)
    return statistics.median(values)


def cold_drive_s(drive: list[str], runs: int = 5) -> float:
    """Fresh interpreter: import memgit.secrets, compile on first call, scan the
    whole drive (what a git hook pays).  Median over `runs`, in seconds."""
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False, encoding="utf-8") as fh:
        fh.write("\n".join(drive) + "\n")
        path = fh.name
    code = (
        "import time; t = time.perf_counter(); import memgit.secrets as s; "
        f"lines = open({path!r}, encoding='utf-8').read().splitlines(); "
        "found = s.scan_lines(lines); print(time.perf_counter() - t, len(found))"
    )
    try:
        values = [
            float(
                subprocess.run(
                    [sys.executable, "-c", code], capture_output=True, text=True, check=True
                ).stdout.split()[0]
            )
            for _ in range(runs)
        ]
    finally:
        os.unlink(path)
    return statistics.median(values)


def per_line_us(scan: Callable[[str], object], lines: list[str], repeat: int = 1) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for line in lines:
            scan(line)
        best = min(best, time.perf_counter() - start)
    return best / len(lines) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sample", type=int, default=0, help="detect-secrets drive sample size")
    args = parser.parse_args()

    imp_memgit = import_ms("memgit.secrets")
    imp_ds = import_ms("detect_secrets")

    pos, neg, corpus = load_corpus()
    drive = corpus.ordinary_drive(15_000)
    drive_bytes = sum(len(x.encode()) + 1 for x in drive)

    from memgit.secrets import scan_lines, scan_text

    t0 = time.perf_counter()
    scan_text("first call compiles the rules")
    first_call_ms = (time.perf_counter() - t0) * 1e3

    def memgit_hit(rec: dict) -> bool:
        start, end = rec["start"], rec["start"] + len(rec["secret"])
        return any(
            f.kind == rec["kind"] and f.start < end and f.end > start
            for f in scan_text(rec["line"])
        )

    m_recall = sum(memgit_hit(r) for r in pos) / len(pos)
    m_line_recall = sum(bool(scan_text(r["line"])) for r in pos) / len(pos)
    m_fp = sum(bool(scan_text(r["line"])) for r in neg) / len(neg)
    m_drive_fp = sum(1 for _ in scan_lines(drive))
    corpus_lines = [r["line"] for r in pos] + [r["line"] for r in neg]
    m_corpus_us = per_line_us(scan_text, corpus_lines, repeat=5)
    m_drive_us = per_line_us(scan_text, drive, repeat=5)
    m_drive_s = cold_drive_s(drive)

    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings, transient_settings

    def ds_scan(line: str) -> list:
        return list(scan_line(line))

    ds_drive = drive if not args.sample else drive[: args.sample]

    def ds_figures() -> tuple[float, float, float, float, int]:
        ds_scan("warm up")
        return (
            sum(bool(ds_scan(r["line"])) for r in pos) / len(pos),
            sum(bool(ds_scan(r["line"])) for r in neg) / len(neg),
            per_line_us(ds_scan, corpus_lines),
            per_line_us(ds_scan, ds_drive),
            sum(bool(ds_scan(x)) for x in ds_drive),
        )

    with default_settings() as ds_settings:
        d_line_recall, d_fp, d_corpus_us, d_drive_us, d_drive_fp = ds_figures()
        # detect-secrets configured for prose: without the entropy plugins, which
        # in ad-hoc scans flag every word ("Joe", "tabs")
        prose = [{"name": name} for name in ds_settings.plugins if "HighEntropyString" not in name]
    with transient_settings({"plugins_used": prose}):
        p_line_recall, p_fp, p_corpus_us, p_drive_us, p_drive_fp = ds_figures()

    kinds = len({r["kind"] for r in pos})
    print(f"python {sys.version.split()[0]} on {sys.platform}")
    print(
        f"corpus: {len(pos)} positives ({kinds} kinds), {len(neg)} negatives; "
        f"drive: {len(drive)} ordinary lines, {drive_bytes / 2**20:.2f} MiB"
    )
    if args.sample:
        print(f"(detect-secrets drive figures on the first {len(ds_drive)} lines)")
    print()
    rows = [
        ("recall, expected kind and span", f"{m_recall:.3f}", "-", "-"),
        (
            "recall, line flagged at all",
            f"{m_line_recall:.3f}",
            f"{d_line_recall:.3f}",
            f"{p_line_recall:.3f}",
        ),
        ("false-positive rate, negatives", f"{m_fp:.3f}", f"{d_fp:.3f}", f"{p_fp:.3f}"),
        (
            "lines flagged in the ordinary drive",
            f"{m_drive_fp}/{len(drive)}",
            f"{d_drive_fp}/{len(ds_drive)}",
            f"{p_drive_fp}/{len(ds_drive)}",
        ),
        ("mean us/line, corpus", f"{m_corpus_us:.1f}", f"{d_corpus_us:.1f}", f"{p_corpus_us:.1f}"),
        (
            "mean us/line, ordinary drive",
            f"{m_drive_us:.1f}",
            f"{d_drive_us:.1f}",
            f"{p_drive_us:.1f}",
        ),
        (
            "ratio to memgit, drive",
            "1",
            f"{d_drive_us / m_drive_us:.0f}x",
            f"{p_drive_us / m_drive_us:.0f}x",
        ),
        (
            "whole drive, s",
            f"{m_drive_s:.3f} (cold)",
            f"{d_drive_us * len(drive) / 1e6:.1f} (scan only)",
            f"{p_drive_us * len(drive) / 1e6:.1f} (scan only)",
        ),
        ("import time, ms (median of 7)", f"{imp_memgit:.1f}", f"{imp_ds:.1f}", f"{imp_ds:.1f}"),
        ("first scan_text call (compiles rules), ms", f"{first_call_ms:.1f}", "-", "-"),
    ]
    width = max(len(r[0]) for r in rows)
    head = ("memgit.secrets", "detect-secrets default", "detect-secrets prose")
    print(f"{'':{width}}  {head[0]:>16}  {head[1]:>24}  {head[2]:>22}")
    for name, a, b, c in rows:
        print(f"{name:{width}}  {a:>16}  {b:>24}  {c:>22}")
    print()
    print("cold = fresh interpreter: import memgit.secrets, compile the rules, scan 15,000 lines")
    print("detect-secrets prose = its default plugins minus the two HighEntropyString plugins")


if __name__ == "__main__":
    main()
