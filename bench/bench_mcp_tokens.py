"""Tokens per MCP tool result: what an agent pays to read ``recall`` and ``context``.

Run: python bench/bench_mcp_tokens.py [--queries 20]

The SDK's client starts ``memgit mcp -C DRIVE`` (the memgit of this tree) on the
labelled drive of tests/data/recall_semantic (107 entries people wrote about an
office, a product and a team) and calls ``recall`` (limit 5) for the first N report-half
questions, and ``context`` with budgets of 200 and 2,000 tokens, without and with a
query. Each result is counted with memgit's documented estimate
(memgit.recall.context.estimate_tokens, docs/agents.md): its text blocks, and its
``structuredContent`` as compact JSON, which a client may hand to the model as well.
Run the same script from another tree (``python OTHER/bench/bench_mcp_tokens.py``) for
the figures before a change; docs/agents.md has both.
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
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from memgit.recall.context import estimate_tokens  # noqa: E402

DATA = ROOT / "tests" / "data" / "recall_semantic"


def make_drive(folder: Path) -> Path:
    drive = folder / "drive"
    shutil.copytree(DATA / "drive", drive)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"],
                 ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid",
                  "commit", "-qm", "labelled drive"]):
        subprocess.run(["git", *args], cwd=drive, check=True)
    return drive


def counted(result: Any) -> tuple[int, int]:
    """(tokens of the text blocks, tokens of structuredContent as compact JSON)."""
    assert not result.is_error, result.content
    text = sum(estimate_tokens(block.text) for block in result.content
               if getattr(block, "type", "") == "text")
    structured = 0
    if result.structured_content is not None:
        structured = estimate_tokens(json.dumps(result.structured_content, ensure_ascii=False,
                                                separators=(",", ":")))
    return text, structured


def measure(drive: Path, questions: list[str]) -> dict[str, list[tuple[int, int]]]:
    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memgit", "mcp", "-C", str(drive)],
        env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    calls: list[tuple[str, str, dict[str, Any]]] = [
        ("recall, 5 hits", "recall", {"query": q, "limit": 5}) for q in questions]
    for budget in (200, 2000):
        calls.append((f"context {budget}", "context", {"budget_tokens": budget}))
        calls += [(f"context {budget} + query", "context",
                   {"budget_tokens": budget, "query": q}) for q in questions[:5]]

    async def go() -> dict[str, list[tuple[int, int]]]:
        out: dict[str, list[tuple[int, int]]] = {}
        async with Client(params, read_timeout_seconds=120) as client:
            for label, tool, args in calls:
                out.setdefault(label, []).append(counted(await client.call_tool(tool, args)))
        return out

    found: dict[str, list[tuple[int, int]]] = anyio.run(go)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=20)
    args = parser.parse_args()
    questions = [q["query"] for q in json.loads((DATA / "queries.json").read_text())
                 if q["half"] == "report"][:args.queries]
    with tempfile.TemporaryDirectory(prefix="bench-mcp-tokens-") as tmp:
        drive = make_drive(Path(tmp))
        results = measure(drive, questions)
    print(f"{'tool call':24} {'calls':>5} {'text':>7} {'structured':>10} {'both':>7}  "
          "(median tokens per result)")
    for label, rows in results.items():
        text = statistics.median(r[0] for r in rows)
        structured = statistics.median(r[1] for r in rows)
        both = statistics.median(r[0] + r[1] for r in rows)
        print(f"{label:24} {len(rows):5} {text:7.0f} {structured:10.0f} {both:7.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
