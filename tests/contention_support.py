"""Many agents, one server drive: N checkouts doing K rounds of ``memgit remember`` +
``memgit sync`` at once, as real processes (the contention test and
bench/bench_contention.py share this runner).

Each agent is a thread that only starts subprocesses (the real ``memgit`` command
line), so the agents run in parallel; a barrier starts them together.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class SyncRun:
    """One ``memgit sync`` of one agent: how long it took and how it ended."""

    agent: int
    round: int
    seconds: float
    returncode: int
    races: int  # lost races the sync retried (from --json; 0 when it failed)
    error: str  # the memgit error line of a failed sync, else ""
    phases: tuple[tuple[str, float], ...] = ()  # the report's seconds per phase


def memgit_command(*args: str, cwd: Path, env: Mapping[str, str] | None = None,
                   timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """The real command line (``python -m memgit``, the same entry as the script)."""
    full = dict(os.environ if env is None else env)
    full["PYTHONPATH"] = str(ROOT / "src")
    return subprocess.run([sys.executable, "-m", "memgit", *args], cwd=cwd, env=full,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=timeout)


def clone_agents(url: str, base: Path, count: int,
                 env: Mapping[str, str] | None = None) -> list[Path]:
    """``memgit clone URL base/agentN`` for N in 1..count."""
    paths = []
    for n in range(1, count + 1):
        path = base / f"agent{n}"
        proc = memgit_command("clone", url, str(path), cwd=base, env=env)
        if proc.returncode != 0:
            raise RuntimeError(f"memgit clone failed: {proc.stderr}")
        paths.append(path)
    return paths


def error_line(stderr: str) -> str:
    """The ``memgit: error MGnnn ...`` line of a failed command (else its last line)."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    for line in lines:
        if line.startswith("memgit: error"):
            return line
    return lines[-1] if lines else ""


def sync_once(agent: int, round_: int, work: Path,
              env: Mapping[str, str] | None = None) -> SyncRun:
    """One timed ``memgit sync --json`` in ``work``."""
    started = time.perf_counter()
    proc = memgit_command("sync", "--json", cwd=work, env=env)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        return SyncRun(agent, round_, seconds, proc.returncode, 0, error_line(proc.stderr))
    report = json.loads(proc.stdout)
    return SyncRun(agent, round_, seconds, 0, int(report.get("races", 0)), "",
                   tuple(sorted(report.get("seconds", {}).items())))


def run_agents(checkouts: Sequence[Path], rounds: int,
               env: Mapping[str, str] | None = None) -> list[SyncRun]:
    """Every checkout does ``rounds`` rounds of remember + sync, all at once.

    A failed ``memgit remember`` raises (it writes locally: nothing to contend for).
    """
    barrier = threading.Barrier(len(checkouts))
    runs: list[SyncRun] = []
    problems: list[str] = []
    lock = threading.Lock()

    def agent(number: int, work: Path) -> None:
        barrier.wait()
        for r in range(1, rounds + 1):
            wrote = memgit_command("remember", f"agent {number} learned fact {r} of the "
                                   "contention run", cwd=work, env=env)
            if wrote.returncode != 0:
                with lock:
                    problems.append(f"agent {number} round {r}: remember failed: "
                                    f"{error_line(wrote.stderr)}")
                return
            run = sync_once(number, r, work, env)
            with lock:
                runs.append(run)

    threads = [threading.Thread(target=agent, args=(n, w), daemon=True)
               for n, w in enumerate(checkouts, start=1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if problems:
        raise RuntimeError("; ".join(problems))
    return runs


def final_syncs(checkouts: Sequence[Path],
                env: Mapping[str, str] | None = None) -> list[SyncRun]:
    """One sync per checkout, one after the other, then a second pass so that every
    checkout also takes the entries the others pushed in the first pass."""
    out = []
    for _pass in range(2):
        for n, work in enumerate(checkouts, start=1):
            out.append(sync_once(n, 0, work, env))
    return out


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile (``fraction`` in 0..1) of ``values``."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, min(len(ordered), math.ceil(fraction * len(ordered))))
    return ordered[rank - 1]


def entry_ids(path: Path) -> set[str]:
    """The entry ids at the head of a checkout or a bare drive."""
    from memgit.git.repository import open_drive, tree_texts
    from memgit.sync.replay import entry_map

    drive = open_drive(path)
    head = drive.head_commit()
    return set() if head is None else set(entry_map(tree_texts(drive, str(head.tree_id))))
