"""Many writers on one bare repository, and writers killed with SIGKILL.

Processes are forked (multiprocessing "fork") so each starts in milliseconds;
a child never touches a repository or database object of the parent.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import subprocess
import time
from pathlib import Path

from memgit import state
from memgit.git.repository import Drive, open_drive, ref_target
from memgit.recall.read_path import recall
from memgit.state import facts
from memgit.write.writer import commit_facts, retry_pending
from tests.conftest import bare_drive, entry_ids_at, git

CTX = multiprocessing.get_context("fork")
WORKERS = 8
PER_WORKER = 50


def indexed_entries(drive: Drive) -> set[str]:
    conn = state.connection(drive.git_dir)
    return {r[0] for r in conn.execute("SELECT entry_id FROM facts WHERE valid_until IS NULL")}


def fsck(drive: Drive) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "fsck", "--no-dangling", "--no-progress"], cwd=drive.git_dir,
                          capture_output=True)


def _worker(path: str, worker: int, out: str) -> None:
    drive = open_drive(path)
    lines = []
    for i in range(PER_WORKER):
        result = commit_facts(drive, [f"Worker {worker} learned fact number {i}"],
                              message="concurrency test")
        lines.append(f"{result.added[0].id} {result.status}")
    Path(out).write_text("\n".join(lines) + "\n")


def test_eight_processes_fifty_writes_each(tmp_path: Path) -> None:
    drive = bare_drive(tmp_path / "drive.git")
    outs = [tmp_path / f"worker{w}.txt" for w in range(WORKERS)]
    procs = [CTX.Process(target=_worker, args=(str(drive.git_dir), w, str(outs[w])))
             for w in range(WORKERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    assert [p.exitcode for p in procs] == [0] * WORKERS
    acknowledged = [line.split()[0] for out in outs for line in out.read_text().splitlines()]
    assert len(acknowledged) == WORKERS * PER_WORKER
    assert retry_pending(drive) == 0  # writes queued under contention (if any) land now
    head = ref_target(drive, "refs/heads/main")
    # the last writer's commit reindexed: the index agrees with the head without a repair
    assert facts.stats(state.connection(drive.git_dir)).indexed_rev == head
    in_drive = entry_ids_at(drive.git_dir)
    assert len(in_drive) == len(set(in_drive)) == WORKERS * PER_WORKER
    assert set(in_drive) == set(acknowledged)
    assert indexed_entries(drive) == set(in_drive)
    proc = fsck(drive)
    assert proc.returncode == 0, proc.stderr.decode()
    commits = git("rev-list", "--count", "main", cwd=drive.git_dir).stdout.decode()
    assert int(commits) == 1 + WORKERS * PER_WORKER  # one commit per write


def _crash_writer(path: str, ack: str, start: int) -> None:
    drive = open_drive(path)
    i = start
    while True:
        result = commit_facts(drive, [f"Crash test fact {i}"])
        # the write is acknowledged once commit_facts has returned
        with open(ack, "a") as fh:
            fh.write(f"{result.added[0].id} {result.status}\n")
            fh.flush()
            os.fsync(fh.fileno())
        i += 1


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_sigkill_at_random_points_loses_no_acknowledged_write(tmp_path: Path) -> None:
    drive = bare_drive(tmp_path / "drive.git")
    ack = tmp_path / "acknowledged.txt"
    rng = random.Random(20260903)
    for round_ in range(50):
        acks_before = _lines(ack)
        proc = CTX.Process(target=_crash_writer, args=(str(drive.git_dir), str(ack),
                                                       round_ * 10_000))
        proc.start()
        if round_ % 2:
            # every other round waits for one acknowledged write first, so the test
            # never depends on how fast the machine is; the kill point is random still
            deadline = time.monotonic() + 120
            while _lines(ack) == acks_before and time.monotonic() < deadline:
                time.sleep(0.005)
            time.sleep(rng.uniform(0.0, 0.05))
        else:
            time.sleep(rng.uniform(0.02, 0.25))
        os.kill(proc.pid, signal.SIGKILL)
        proc.join()
        assert proc.exitcode == -signal.SIGKILL
    lines = [ln for ln in ack.read_text().split("\n") if ln] if ack.exists() else []
    acknowledged = [ln.split()[0] for ln in lines]
    assert len(acknowledged) >= 20  # the writers did get work done between kills
    proc_ = fsck(drive)
    assert proc_.returncode == 0, proc_.stderr.decode()
    # the next write drains the pending queue; the next read repairs the index
    final = commit_facts(open_drive(drive.git_dir), ["After the crashes"])
    assert final.status == "committed"
    in_drive = set(entry_ids_at(drive.git_dir))
    missing = [i for i in acknowledged if i not in in_drive]
    assert missing == []
    hits = recall(drive, "Crash test fact", limit=1000, count=False)
    assert {h.entry_id for h in hits} >= set(acknowledged)
    conn = state.connection(drive.git_dir)
    assert facts.stats(conn).indexed_rev == ref_target(drive, "refs/heads/main")
    assert indexed_entries(drive) == in_drive
    assert fsck(drive).returncode == 0
