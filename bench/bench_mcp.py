"""Recall through `memgit mcp` on a drive at the limits, side by side with its baselines.

Run: python bench/bench_mcp.py [--calls N] [--shell N]

On two drives at the limits, for the same queries, in one run: ``zipf``, the
bare drive of bench_recall.py (15,000 entries whose words follow a Zipf law,
queried like bench_recall.py), and ``drivegen``, the checkout of
bench/drivegen.py (256 files, about 2 MiB, texts from 37 words, so every query
word matches thousands of entries: recall's worst case):

* an MCP recall round trip: the SDK's client calls the ``recall`` tool of a
  ``memgit mcp`` server over stdio and waits for the result (p50/p99);
* recall in process (read_path.recall), what the server does per call;
* ``git grep -i`` for the query's words: how an agent without memgit looks;
* ``memgit recall`` from the shell and ``python3 -c 'import sqlite3'``, measured
  alternately (bench_recall.shell_figures; target: at most 2.5x);
* the server's and the client's CPU per call, and the server's start (process start to
  the first tool result);
* with ``--transports N``: memgit's stdio transport against the SDK's, N sessions of
  each, alternated (MEMGIT_MCP_STDIO=sdk selects the SDK's);
* with ``--semantic N`` (needs the embed extra): recall by meaning through the MCP server,
  on the labelled set's drive (tests/data/recall_semantic) asked its report half's
  questions, each new to the server: the drive without embeddings (lexical), with
  ``embeddings: {plugin: local}`` (``query: auto``: the server takes the fast query
  encoder) and with ``query: full`` (e5 embeds each question); N sessions of each,
  alternated.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_recall import compile_memgit, make_queries, shell_figures  # noqa: E402
from bench_writer import make_bare_drive, pct  # noqa: E402
from drivegen import WORDS, make_full_drive  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def ms_stats(values: list[float]) -> str:
    return (f"p50 {statistics.median(values):7.2f} ms  p99 {pct(values, 0.99):7.2f} ms  "
            f"(n={len(values)})")


def queries(n: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3))) for _ in range(n)]


def memgit_argv() -> list[str]:
    """The installed console script when there is one (what a user runs), else -m."""
    script = Path(sys.executable).parent / "memgit"
    return [str(script)] if script.exists() else [sys.executable, "-m", "memgit"]


def _cpu_ms(pid: int) -> float:
    """CPU time (user + system) of process ``pid`` so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def _server_pid() -> int | None:
    """The memgit mcp child of this process (the SDK's client started it)."""
    me = str(os.getpid())
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and \
                    (entry / "stat").read_text().rsplit(")", 1)[1].split()[1] == me:
                return int(entry.name)
        except OSError:
            continue
    return None


def bench_mcp(drive: Path, qs: list[str], transport: str = "memgit"
              ) -> tuple[list[float], float, tuple[float, float]]:
    """Round trips of one session (after 20 warm-up calls), the start to the first
    result, and the server's and the client's CPU per call (ms)."""
    import anyio
    from mcp import Client, StdioServerParameters

    env = dict(os.environ, MEMGIT_MCP_STDIO=transport)
    params = StdioServerParameters(command=memgit_argv()[0], args=[
        *memgit_argv()[1:], "-C", str(drive), "mcp"], env=env)

    async def go() -> tuple[list[float], float, tuple[float, float]]:
        t0 = time.perf_counter()
        async with Client(params, read_timeout_seconds=120) as client:
            await client.call_tool("recall", {"query": "warm up"})
            start = (time.perf_counter() - t0) * 1000
            for q in qs[:20]:
                await client.call_tool("recall", {"query": q})
            pid = _server_pid()
            server0, client0 = _cpu_ms(pid) if pid else 0.0, time.process_time()
            times = []
            for q in qs:
                t1 = time.perf_counter()
                result = await client.call_tool("recall", {"query": q, "limit": 5})
                times.append((time.perf_counter() - t1) * 1000)
                assert not result.is_error, result.content
            cpu = ((_cpu_ms(pid) - server0) / len(qs) if pid else float("nan"),
                   (time.process_time() - client0) * 1000 / len(qs))
        return times, start, cpu

    result: tuple[list[float], float, tuple[float, float]] = anyio.run(go)
    return result


def compare_transports(drive: Path, qs: list[str], sessions: int) -> None:
    """memgit's event-loop stdio against the SDK's threaded one, sessions alternated."""
    times: dict[str, list[float]] = {"sdk": [], "memgit": []}
    for _ in range(sessions):
        for transport in times:
            times[transport] += bench_mcp(drive, qs, transport)[0]
    for transport, label in (("sdk", "SDK's stdio (worker threads)"),
                             ("memgit", "memgit's stdio (event loop)")):
        print(f"MCP round trip, {label:29} {ms_stats(times[transport])}")


def compare_semantic(tmp: Path, sessions: int) -> None:
    """MCP recall round trips on the labelled drive: lexical, auto (fast), full."""
    import json
    import shutil

    data = ROOT / "tests" / "data" / "recall_semantic"
    qs = [q["query"] for q in json.loads((data / "queries.json").read_text())
          if q["half"] == "report"]
    settings = {"lexical": None, "auto (fast in the server)": "{plugin: local}",
                "full (e5 per question)": "{plugin: local, query: full}"}
    drives: dict[str, Path] = {}
    for n, (label, embeddings) in enumerate(settings.items()):
        drive = tmp / f"semantic-{n}"
        shutil.copytree(data / "drive", drive)
        for args in (["init", "-q", "-b", "main"], ["add", "-A"],
                     ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid",
                      "commit", "-qm", "labelled drive"]):
            subprocess.run(["git", *args], cwd=drive, check=True)
        if embeddings:
            (drive / ".git" / "memgit.yaml").write_text(f"embeddings: {embeddings}\n")
            subprocess.run([*memgit_argv(), "-C", str(drive), "index", "--embeddings"],
                           capture_output=True, check=True)
        drives[label] = drive
    times: dict[str, list[float]] = {label: [] for label in drives}
    for _ in range(sessions):
        for label, drive in drives.items():
            times[label] += bench_mcp(drive, qs)[0]
    print(f"== MCP recall on the labelled drive ({len(qs)} report-half questions, "
          f"{sessions} sessions each, alternated)")
    lexical = statistics.median(times["lexical"])
    for label, values in times.items():
        print(f"{label:28} {ms_stats(values)}  p50 {statistics.median(values) / lexical:.1f}x "
              "lexical")


def bench_in_process(drive: Path, qs: list[str]) -> list[float]:
    from memgit.git.repository import open_drive
    from memgit.recall.read_path import recall

    d = open_drive(drive)
    recall(d, "warm up")
    times = []
    for q in qs:
        t0 = time.perf_counter()
        recall(d, q, 5)
        times.append((time.perf_counter() - t0) * 1000)
    return times


def bench_grep(drive: Path, qs: list[str]) -> list[float]:
    times = []
    for q in qs:
        args = ["git", "grep", "-i", "-I", "-n"]
        for word in q.split():
            args += ["-e", word]
        t0 = time.perf_counter()
        subprocess.run([*args, "main"], cwd=drive, capture_output=True, check=False)
        times.append((time.perf_counter() - t0) * 1000)
    return times


def run_drive(kind: str, drive: Path, qs: list[str], shell_runs: int) -> None:
    subprocess.run([*memgit_argv(), "-C", str(drive), "index"], capture_output=True,
                   check=True)
    compile_memgit()
    mcp, start, (server_cpu, client_cpu) = bench_mcp(drive, qs)
    local = bench_in_process(drive, qs)
    grep = bench_grep(drive, qs[:max(shell_runs, 50)])
    figures = shell_figures(drive, qs, shell_runs)
    shell, sqlite = figures["recall"], figures["sqlite"]
    p50 = statistics.median
    print(f"== drive {kind}")
    print(f"MCP recall round trip (client call to result): {ms_stats(mcp)}")
    print(f"recall in process (read_path.recall):              {ms_stats(local)}")
    print(f"git grep -i on the same drive:                 {ms_stats(grep)}")
    print(f"memgit recall from the shell:                  {ms_stats(shell)}")
    print(f"python3 -c 'import sqlite3':                   {ms_stats(sqlite)}")
    print(f"CPU per MCP call: server {server_cpu:.2f} ms, client {client_cpu:.2f} ms")
    print(f"memgit mcp start to first result:              {start:7.1f} ms")
    print(f"ratio MCP round trip / in process (p50):       {p50(mcp) / p50(local):.1f}x")
    print(f"ratio git grep / MCP round trip (p50):         {p50(grep) / p50(mcp):.1f}x")
    print(f"ratio shell recall / import sqlite3 (p50):     {p50(shell) / p50(sqlite):.1f}x "
          "(fast-path target: at most 2.5x)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=300, help="MCP and in-process recalls")
    ap.add_argument("--shell", type=int, default=30, help="runs of each shell command")
    ap.add_argument("--drive", choices=["zipf", "drivegen", "both"], default="both")
    ap.add_argument("--transports", type=int, default=0, metavar="SESSIONS",
                    help="also compare the two stdio transports on zipf, alternating "
                         "SESSIONS sessions of each")
    ap.add_argument("--semantic", type=int, default=0, metavar="SESSIONS",
                    help="only: recall by meaning through the MCP server (lexical, auto, "
                         "full) on the labelled drive, SESSIONS sessions of each")
    args = ap.parse_args()
    if args.semantic:
        with tempfile.TemporaryDirectory() as tmp:
            compare_semantic(Path(tmp), args.semantic)
        return
    with tempfile.TemporaryDirectory() as tmp:
        if args.drive in ("zipf", "both"):
            zipf = make_bare_drive(Path(tmp) / "zipf.git").git_dir
            run_drive("zipf (bench_recall.py's, bare)", zipf, make_queries(args.calls),
                      args.shell)
            if args.transports:
                compare_transports(zipf, make_queries(args.calls), args.transports)
        if args.drive in ("drivegen", "both"):
            full = make_full_drive(Path(tmp) / "drivegen")
            run_drive("drivegen (checkout)", full, queries(args.calls), args.shell)


if __name__ == "__main__":
    main()
