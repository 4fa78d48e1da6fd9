"""Is a CommonMark parser fast enough for the hook path? (docs/compat.md)

Run: python bench/bench_markdown.py [--repeat N]

Parses the same texts side by side, in one run, with:
  * format.parse_document         memgit's line parser today (the baseline, 1.0x)
  * format.read_blocks  memgit's CommonMark block reader (memgit.format.blocks)
  * markdown-it-py, block rules   MarkdownIt("commonmark") + table + front matter, core
                                  "inline" rule disabled: block structure only
  * markdown-it-py, full parse    the same with inline parsing (what md.parse does)
  * cmark-gfm (C, optional)       cmarkgfm's GFM render with source positions, if installed
on two corpora: every real sample file (tests/data/realworld) and a drive at the policy's
limits (bench/drivegen.py: 256 files, about 2 MiB, about 13,000 entries). Prints per-file
means (ms), corpus totals (ms), ratios against the baseline, and the cold import cost of
each parser (`python -X importtime`, cumulative ms) since hooks start a new process.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from drivegen import topic_files  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
REALWORLD = ROOT / "tests" / "data" / "realworld"


def samples() -> list[str]:
    return [p.read_text(encoding="utf-8") for p in sorted(REALWORLD.rglob("*.md"))
            if p.name not in ("ORIGIN.md", "README.md")]


def total_ms(parse: Callable[[str], object], texts: list[str], repeat: int) -> float:
    """Median over ``repeat`` runs of the time to parse every text once."""
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for text in texts:
            parse(text)
        runs.append((time.perf_counter() - t0) * 1000)
    return statistics.median(runs)


def import_ms(module: str) -> float:
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"],
                          capture_output=True, text=True, check=True)
    for line in reversed(proc.stderr.splitlines()):
        m = re.match(r"import time:\s+\d+ \|\s+(\d+) \| (\S.*)$", line)
        if m and m.group(2).strip() == module:
            return int(m.group(1)) / 1000
    return float("nan")


def parsers() -> dict[str, Callable[[str], object]]:
    from markdown_it import MarkdownIt
    from mdit_py_plugins.front_matter import front_matter_plugin

    from memgit.format import entries as fmt
    from memgit.format.entries import read_blocks

    full = MarkdownIt("commonmark").enable("table").use(front_matter_plugin)
    block = MarkdownIt("commonmark").enable("table").use(front_matter_plugin)
    block.core.ruler.disable(["inline"])
    out: dict[str, Callable[[str], object]] = {
        "format.parse_document (baseline)": lambda t: fmt.parse_document("x.md", t),
        "format.read_blocks": read_blocks,
        "markdown-it-py, block rules only": block.parse,
        "markdown-it-py, full parse": full.parse,
    }
    try:
        import cmarkgfm
        from cmarkgfm.cmark import Options

        out["cmark-gfm (C), render with sourcepos"] = lambda t: \
            cmarkgfm.github_flavored_markdown_to_html(t, options=Options.CMARK_OPT_SOURCEPOS)
    except ImportError:
        pass
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    corpora = {"real samples": samples(), "drive at the limits": list(topic_files().values())}
    table = parsers()
    for name, texts in corpora.items():
        size = sum(len(t.encode()) for t in texts)
        print(f"\n{name}: {len(texts)} files, {size} bytes")
        base = None
        for label, parse in table.items():
            ms = total_ms(parse, texts, args.repeat)
            base = base or ms
            print(f"  {label:40s} total {ms:8.1f} ms  per file {ms / len(texts):6.3f} ms  "
                  f"{ms / base:5.1f}x")
    print()
    for module in ("memgit.format.entries", "memgit.format.blocks", "markdown_it",
                   "mdit_py_plugins.front_matter", "cmarkgfm"):
        try:
            print(f"import {module}: {import_ms(module):.1f} ms (-X importtime, cumulative)")
        except subprocess.CalledProcessError:
            print(f"import {module}: not installed")


if __name__ == "__main__":
    main()
