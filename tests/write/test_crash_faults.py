"""Fault injection: memgit writes and syncs killed with SIGKILL at random moments.

Real processes (``python -m memgit``) on a real checkout of a real ``memgit init --bare``
server drive with memgit's hooks. A fixed seed picks each run's command and, for a random
subset, the moment of the kill. Afterwards the next write and a sync succeed, ``git fsck``
is clean on both sides, no temporary file or lock is left, and every write that exited 0
is on the branch and, after the sync, on the server. The figures go to docs/writer.md.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import ROOT, entry_ids_at, git, memgit_ok

SEED = 22
RUNS = 100
KILL_SHARE = 0.45


@dataclass
class Tally:
    runs: int = 0
    killed: int = 0
    ok: int = 0
    failed: list[str] = field(default_factory=list)
    repairs: int = 0
    present: set[str] = field(default_factory=set)  # ids whose last exit-0 write kept them
    gone: set[str] = field(default_factory=set)  # ids an exit-0 forget removed


def start(args: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "memgit", *args], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))


def run_maybe_killed(args: list[str], cwd: Path, rng: random.Random, tally: Tally,
                     longest: float) -> tuple[int, bytes, bytes]:
    """Run one command; in a random subset kill it after a random share of ``longest``."""
    proc = start(args, cwd)
    tally.runs += 1
    if rng.random() < KILL_SHARE:
        time.sleep(rng.uniform(0.0, longest))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            tally.killed += 1
    out, err = proc.communicate()
    tally.repairs += err.count(b"memgit: repaired:") + out.count(b"killed memgit left")
    if proc.returncode == 0:
        tally.ok += 1
    elif proc.returncode != -signal.SIGKILL:
        tally.failed.append(f"{' '.join(args[:2])}: {err.decode(errors='replace')[-400:]}")
    return proc.returncode, out, err


def leftovers(*roots: Path) -> list[str]:
    """Temporary files, journals and locks a killed process could leave."""
    found = []
    for root in roots:
        for path in root.rglob("*"):
            name = path.name
            if (name.endswith(".memgit-tmp") or name == "memgit-checkout.json"
                    or name.startswith("tmp_") or name == "index.lock"
                    or (name.endswith(".lock") and "refs" in path.parts)):
                found.append(str(path.relative_to(root)))
    return found


def fault_run(tmp_path: Path, runs: int, seed: int) -> Tally:
    memgit_ok("init", "--bare", str(tmp_path / "server.git"))
    memgit_ok("clone", (tmp_path / "server.git").as_uri(), str(tmp_path / "a"))
    work = tmp_path / "a"
    rng = random.Random(seed)
    tally = Tally()
    for number in range(runs):
        ids = entry_ids_at(work / ".git")
        choice = rng.random()
        if choice < 0.55 or not ids:
            code, out, _err = run_maybe_killed(
                ["remember", "--json", f"fault run {number}: the kiln fires at dawn"],
                work, rng, tally, 0.9)
            if code == 0:
                tally.present.update(a["id"] for a in json.loads(out)["added"])
        elif choice < 0.70:
            target = rng.choice(ids)
            code, _out, _err = run_maybe_killed(
                ["edit", target, f"fault run {number}: edited text"], work, rng, tally, 0.9)
        elif choice < 0.82:
            target = rng.choice(ids)
            code, _out, _err = run_maybe_killed(["forget", target], work, rng, tally, 0.9)
            if code == 0:
                tally.present.discard(target)
                tally.gone.add(target)
        else:
            run_maybe_killed(["sync"], work, rng, tally, 2.5)
    # the next write and a sync succeed
    after = json.loads(memgit_ok("remember", "--json", "after the faults", cwd=work).stdout)
    tally.present.update(a["id"] for a in after["added"])
    memgit_ok("sync", cwd=work)
    on_branch = set(entry_ids_at(work / ".git"))
    on_server = set(entry_ids_at(tmp_path / "server.git"))
    assert tally.present <= on_branch, sorted(tally.present - on_branch)
    assert tally.present <= on_server, sorted(tally.present - on_server)
    assert not (tally.gone & on_branch)
    assert git("fsck", "--no-dangling", cwd=work).returncode == 0
    assert git("fsck", "--no-dangling", cwd=tmp_path / "server.git").returncode == 0
    assert git("status", "--porcelain", cwd=work).stdout == b""
    assert leftovers(work, tmp_path / "server.git") == []
    info = json.loads(memgit_ok("info", "--json", cwd=work).stdout)
    assert info.get("pending_writes", 0) == 0
    return tally


@pytest.mark.slow
def test_writes_and_syncs_killed_at_random_moments(tmp_path: Path) -> None:
    tally = fault_run(tmp_path, RUNS, SEED)
    print(f"\nfault injection: {tally.runs} runs, {tally.killed} killed, {tally.ok} exit 0, "
          f"{len(tally.failed)} failed otherwise, {tally.repairs} repairs reported, "
          f"{len(tally.present)} entries checked on branch and server, lost: 0")
    assert tally.killed >= 20
    assert tally.failed == []
