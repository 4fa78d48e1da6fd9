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

from tests.conftest import ROOT, entry_ids_at, git, memgit, memgit_ok

SEED = 22
RUNS = 100
KILL_SHARE = 0.45


@dataclass
class Tally:
    runs: int = 0
    killed: int = 0
    ok: int = 0
    failed: list[str] = field(default_factory=list)
    repairs: int = 0  # repair notes the next commands printed
    left: int = 0  # kills that left a lagging checkout, a journal, a lock or a temporary file
    present: set[str] = field(default_factory=set)  # ids whose last exit-0 write kept them
    gone: set[str] = field(default_factory=set)  # ids an exit-0 forget removed


def start(args: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "memgit", *args], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))


def branch_stamp(work: Path) -> bytes:
    """What the checked-out branch points at, read from its loose ref (b"" until a write
    makes one): polled without starting a process."""
    try:
        return (work / ".git" / "refs" / "heads" / "main").read_bytes()
    except FileNotFoundError:
        return b""


def run_maybe_killed(args: list[str], work: Path, rng: random.Random, tally: Tally,
                     longest: float) -> tuple[int, bytes, bytes]:
    """Run one command; in a random subset kill it: half of those after a random share
    of ``longest``, half within 3 ms of the moment the branch moves (the window between
    the branch and the checkout, which a random moment rarely hits)."""
    proc = start(args, work)
    tally.runs += 1
    if rng.random() < KILL_SHARE:
        if rng.random() < 0.5:
            time.sleep(rng.uniform(0.0, longest))
        else:
            before, pause = branch_stamp(work), rng.uniform(0.0, 0.003)
            while proc.poll() is None and branch_stamp(work) == before:
                time.sleep(0.0002)
            time.sleep(pause)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            tally.killed += 1
    out, err = proc.communicate()
    if proc.returncode == -signal.SIGKILL:
        tally.left += bool(leftovers(work) or git("status", "--porcelain", cwd=work).stdout)
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
            tally.present.discard(target)  # a killed forget may have landed whole: either way
            if code == 0:
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
          f"{len(tally.failed)} failed otherwise, {tally.left} left something to repair, "
          f"{tally.repairs} repairs reported, "
          f"{len(tally.present)} entries checked on branch and server, lost: 0")
    assert tally.killed >= 20
    assert tally.failed == []


REALWORLD = ROOT / "tests" / "data" / "realworld"
FEW = 6
PURGES = 8


def kill_runs(args: list[str], work: Path, seed: int, watch: Path, tally: Tally,
              longest: float, times: int = FEW) -> None:
    """Run ``args`` ``times`` times, each killed (half at a random moment, half at the
    branch move, as above; a run that ends first is not counted as killed)."""
    rng = random.Random(seed)
    for _ in range(times):
        proc = start(args, work)
        tally.runs += 1
        if rng.random() < 0.5:
            time.sleep(rng.uniform(0.0, longest))
        else:
            before = branch_stamp(watch)
            while proc.poll() is None and branch_stamp(watch) == before:
                time.sleep(0.0002)
            time.sleep(rng.uniform(0.0, 0.003))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            tally.killed += 1
        proc.communicate()
        tally.left += bool(leftovers(work))


def sound(*paths: Path) -> None:
    for path in paths:
        assert git("fsck", "--no-dangling", cwd=path).returncode == 0
        assert leftovers(path) == [], leftovers(path)
    for path in paths:
        if (path / ".git").exists():
            assert git("status", "--porcelain", cwd=path).stdout == b""


@pytest.mark.slow
def test_import_apply_and_dream_killed_at_random_moments(tmp_path: Path) -> None:
    memgit_ok("init", "--bare", str(tmp_path / "server.git"))
    memgit_ok("clone", (tmp_path / "server.git").as_uri(), str(tmp_path / "a"))
    work = tmp_path / "a"
    plan = tmp_path / "plan.json"
    summary = json.loads(memgit_ok("import", "plan", str(REALWORLD / "cline" / "nftbk"),
                                   "-o", str(plan), "--json", cwd=work).stdout)
    tally = Tally()
    kill_runs(["import", "apply", str(plan)], work, 1, work, tally, 3.0)
    applied = json.loads(memgit_ok("import", "apply", str(plan), "--json", cwd=work).stdout)
    assert applied["status"] in ("committed", "unchanged")
    ids = entry_ids_at(work / ".git")
    assert len(ids) == summary["counts"]["entry"]  # the import is all there, once
    kill_runs(["dream", "--no-model"], work, 2, work, tally, 3.0)
    memgit_ok("dream", "--no-model", cwd=work)
    memgit_ok("remember", "after the faults", cwd=work)
    memgit_ok("sync", cwd=work)
    assert set(entry_ids_at(work / ".git")) == set(entry_ids_at(tmp_path / "server.git"))
    sound(work, tmp_path / "server.git")
    print(f"\nimport apply and dream: {tally.runs} runs, {tally.killed} killed, "
          f"{tally.left} left something to repair, lost: 0")
    # at least one run was killed (how many depends on how long each run takes: a run
    # that ends before its random moment is not killed, and reruns of an applied plan or
    # of a dream with nothing to do are quick)
    assert tally.killed >= 1


@pytest.mark.slow
def test_purge_killed_at_random_moments_is_finished_or_rolled_back(tmp_path: Path) -> None:
    server = tmp_path / "server.git"
    memgit_ok("init", "--bare", str(server))
    memgit_ok("clone", server.as_uri(), str(tmp_path / "a"))
    work = tmp_path / "a"
    secret_ids = []
    for number in range(PURGES):
        out = memgit_ok("remember", "--json", f"a note to purge, number {number}", cwd=work)
        secret_ids.append(json.loads(out.stdout)["added"][0]["id"])
        memgit_ok("remember", f"a note to keep, number {number}", cwd=work)
    memgit_ok("sync", cwd=work)
    tally = Tally()
    watch = tmp_path / "watch"  # the bare drive's branch, seen through a checkout-like path
    watch.mkdir()
    (watch / ".git").symlink_to(server)
    for number, entry_id in enumerate(secret_ids):
        kill_runs(["purge", entry_id, "--yes", "--repo", str(server)], tmp_path, 10 + number,
                  watch, tally, 2.0, times=1)
        resumed = memgit("purge", "--resume", "--yes", "--repo", str(server), cwd=tmp_path)
        assert resumed.returncode == 0, resumed.stderr
        tally.repairs += resumed.stderr.count(b"memgit: repaired:")
        if entry_id in entry_ids_at(server):  # rolled back, or never reached the refs
            memgit_ok("purge", entry_id, "--yes", "--repo", str(server), cwd=tmp_path)
        history = git("log", "--all", "-p", cwd=server).stdout.decode()
        assert f"a note to purge, number {number}" not in history
        assert entry_id in (server / "memgit-purged").read_text()
    sound(server)
    assert not (server / "memgit-purge.json").exists()
    assert not (server / "memgit-purge.lock").exists()
    # the pushes go on: a new write and a sync land on the server
    memgit_ok("remember", "after the purges", cwd=work)
    synced = memgit("sync", cwd=work)
    assert synced.returncode == 0, synced.stderr
    kept = [i for i in entry_ids_at(server) if i not in secret_ids]
    assert len(kept) == PURGES + 1 and not set(secret_ids) & set(entry_ids_at(server))
    print(f"\npurge: {tally.runs} runs, {tally.killed} killed, {tally.left} left something, "
          f"{tally.repairs} resumed, purged texts left in history: 0")
