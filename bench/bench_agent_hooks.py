"""What an agent tool waits for at every session start, prompt and tool call: ``memgit
agent-hook session-start``, ``prompt`` and ``guard`` from the shell, on the quick path and
on the full path (MEMGIT_QUICK=0), side by side with ``python3 -c 'import sqlite3'`` (the
least a Python hook can cost), alternated in one run.

Run: python bench/bench_agent_hooks.py [--rounds N]

The drive is bench/drivegen.py's checkout at the limits (256 files, about 2 MiB),
its recall index built first; prompts use drivegen's words.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_mcp import memgit_argv  # noqa: E402
from drivegen import WORDS, make_full_drive  # noqa: E402


def _time(argv: list[str], stdin: bytes, env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, input=stdin, capture_output=True, env=env, cwd=cwd)
    elapsed = (time.perf_counter() - start) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"{argv} exited {proc.returncode}: {proc.stderr.decode()[:300]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=21)
    args = parser.parse_args()
    rng = random.Random(7)
    memgit = memgit_argv()
    with tempfile.TemporaryDirectory() as tmp:
        drive = make_full_drive(Path(tmp) / "drive")
        subprocess.run([*memgit, "index"], cwd=drive, check=True, capture_output=True)
        env = dict(os.environ)
        env.pop("MEMGIT_DRIVE", None)
        full = dict(env, MEMGIT_QUICK="0")
        cases: dict[str, tuple[list[str], dict[str, str]]] = {
            "prompt, quick path": ([*memgit, "agent-hook", "prompt"], env),
            "prompt, full path": ([*memgit, "agent-hook", "prompt"], full),
            "session-start, quick path": ([*memgit, "agent-hook", "session-start"], env),
            "session-start, full path": ([*memgit, "agent-hook", "session-start"], full),
            "guard, quick path": ([*memgit, "agent-hook", "guard"], env),
            "guard, full path": ([*memgit, "agent-hook", "guard"], full),
            "python3 -c 'import sqlite3'": (["python3", "-c", "import sqlite3"], env),
        }
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.rounds):
            prompt = " ".join(rng.sample(WORDS, 3))
            # one event serves all: prompt reads "prompt", the guard judges the Write (into
            # the drive: refused, the longer of its two answers)
            stdin = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": prompt,
                                "cwd": str(drive), "tool_name": "Write",
                                "tool_input": {"file_path": "MEMORY.md"}}).encode()
            for name, (argv, case_env) in cases.items():
                times[name].append(_time(argv, stdin, case_env, drive))
    base = statistics.median(times["python3 -c 'import sqlite3'"])
    print(f"{args.rounds} rounds, medians, load average {os.getloadavg()[0]:.1f}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"  {name:30s} {median:7.1f} ms  {median / base:5.2f}x")


if __name__ == "__main__":
    main()
