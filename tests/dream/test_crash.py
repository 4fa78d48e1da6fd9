"""A dream killed with SIGKILL at random points leaves drive and index consistent, and the
next ``--due`` run completes the night (once).

Processes are forked (multiprocessing "fork"), as in test_writer_concurrency.py; each round
starts from a fresh copy of the same bare drive.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from memgit import state
from memgit.dream.run import dream
from memgit.format import entries as fmt
from memgit.git.repository import Drive, commit_info, open_drive, ref_target, tree_texts
from memgit.index.reindex import ensure_current
from memgit.policy.dream_settings import DreamConfig
from memgit.policy.settings import Policy
from memgit.state import dream as dream_runs
from tests.conftest import git
from tests.dream_support import make_dream_drive

CTX = multiprocessing.get_context("fork")
CONFIG = DreamConfig(window=(0, 24 * 60))
ROUNDS = 12


def pristine(tmp_path: Path, new_drive: Any) -> Path:
    path = tmp_path / "pristine.git"
    git("clone", "-q", "--bare", str(make_dream_drive(new_drive)), str(path), cwd=tmp_path)
    return path


def _child(path: str) -> None:
    dream(open_drive(path), Policy(), CONFIG, due=True, no_model=True)
    os._exit(0)


def head_entries(drive: Drive) -> set[str]:
    head = ref_target(drive, "refs/heads/main")
    assert head is not None
    texts = tree_texts(drive, commit_info(drive, head).tree)
    return {e.id for p, t in texts.items() for _l, e in fmt.parse_document(p, t).entries()}


def indexed(drive: Drive) -> set[str]:
    conn = state.connection(drive.git_dir)
    return {r[0] for r in conn.execute("SELECT entry_id FROM facts WHERE valid_until IS NULL")}


def fsck(path: Path) -> None:
    proc = subprocess.run(["git", "fsck", "--no-dangling", "--no-progress"], cwd=path,
                          capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()


def dream_commits(path: Path) -> list[str]:
    """The dream commits on main; a git log that fails fails the test (no empty list)."""
    out = git("log", "--format=%s", "main", cwd=path)
    return [s for s in out.stdout.decode().splitlines() if s.startswith("Dream ")]


def test_sigkill_at_random_points(tmp_path: Path, new_drive: Any) -> None:
    source = pristine(tmp_path, new_drive)
    start = ref_target(open_drive(source), "refs/heads/main")
    # one complete run: the tree every night must end with, and how long a run takes
    reference = tmp_path / "reference.git"
    shutil.copytree(source, reference)
    began = time.monotonic()
    done = dream(open_drive(reference), Policy(), CONFIG, due=True, no_model=True)
    duration = time.monotonic() - began
    assert done.status == "applied"
    expected = commit_info(open_drive(reference), done.commit).tree
    rng = random.Random(20260501)
    outcomes: dict[str, int] = {}
    for round_ in range(ROUNDS):
        path = tmp_path / f"round{round_}.git"
        shutil.copytree(source, path)
        proc: Any = CTX.Process(target=_child, args=(str(path),))
        proc.start()
        time.sleep(rng.uniform(0.0, duration * 1.5))
        os.kill(proc.pid, signal.SIGKILL)
        proc.join()
        drive = open_drive(path)
        fsck(path)
        head = ref_target(drive, "refs/heads/main")
        assert head is not None
        info = commit_info(drive, head)
        # the drive is the one before the night, or the whole night: nothing in between
        assert head == start or (info.parents == (start,) and info.tree == expected)
        assert len(dream_commits(path)) == (0 if head == start else 1)
        nxt = dream(drive, Policy(), CONFIG, due=True, no_model=True)
        key = nxt.status + (" (recovered)" if "recovered" in nxt.reason else "")
        outcomes[key] = outcomes.get(key, 0) + 1
        assert nxt.status in ("applied", "skipped"), nxt.reason
        if nxt.status == "skipped":
            assert "already dreamed" in nxt.reason  # the killed run had finished
        head = ref_target(drive, "refs/heads/main")
        assert head is not None and commit_info(drive, head).tree == expected
        assert len(dream_commits(path)) == 1  # never dreamed twice
        ensure_current(drive)
        assert indexed(drive) == head_entries(drive)
        runs = dream_runs.runs(state.connection(drive.git_dir))
        assert [r.status for r in runs if r.status != "failed"] == ["applied"]
        assert all(r.status != "running" for r in runs)
    assert sum(outcomes.values()) == ROUNDS
