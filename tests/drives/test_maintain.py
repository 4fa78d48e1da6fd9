"""memgit maintain: its steps run in order, each says what it did, a failing one does not
stop the others."""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path
from typing import Any

import pytest

from memgit.dream.observations import observe
from memgit.drives import maintain as maintenance
from memgit.drives.maintain import StepReport, maintain
from memgit.errors import RepoError, UsageError
from memgit.git.repository import Drive, open_drive
from memgit.policy.settings import Policy, policy_from_mapping
from tests.conftest import memgit, memgit_ok


@pytest.fixture
def path(new_drive: Any) -> Path:
    return new_drive({"notes.md": "# Notes\n\n- A fact [source: imported:unknown; id: m-a]\n"})


def test_retention_follows_the_policy_and_reports_its_figures(path: Path) -> None:
    drive = open_drive(path)
    now = _dt.datetime.now(_dt.UTC)
    for days in (1, 3, 9):
        observe(drive, f"a turn {days} days old", now=now - _dt.timedelta(days=days))
    policy = policy_from_mapping({"dream": {"observations_days": 2}})
    [report] = maintain(drive, policy, now=now, only=["observations"])
    assert report == StepReport("observations", "deleted 2 turn(s) older than 2 day(s)",
                                {"observations_deleted": 2, "observations_days": 2})
    assert maintain(drive, policy, now=now)[0].figures["observations_deleted"] == 0
    assert [r.step for r in maintain(drive, policy, now=now)] == [
        "observations", "pending", "dream_runs", "retired", "rejected", "sqlite", "git"]


def test_a_failing_step_is_reported_and_the_next_still_runs(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[str] = []

    def broken(_drive: Drive, _policy: Policy, _now: _dt.datetime) -> StepReport:
        ran.append("broken")
        raise RepoError("the object store is read-only")

    def after(_drive: Drive, _policy: Policy, _now: _dt.datetime) -> StepReport:
        ran.append("after")
        return StepReport("after", "did its part", {"n": 1})

    monkeypatch.setattr(maintenance, "STEPS", [("broken", broken), ("after", after)])
    reports = maintain(open_drive(path), Policy())
    assert ran == ["broken", "after"]
    assert [(r.step, r.ok) for r in reports] == [("broken", False), ("after", True)]
    assert reports[0].did == "failed: the object store is read-only"
    assert [r.step for r in maintain(open_drive(path), Policy(), only=["after"])] == ["after"]
    with pytest.raises(UsageError, match="unknown maintenance step"):
        maintain(open_drive(path), Policy(), only=["gc"])


def test_the_command_prints_one_line_per_step(path: Path) -> None:
    observe(open_drive(path), "an old turn",
            now=_dt.datetime.now(_dt.UTC) - _dt.timedelta(days=30))
    proc = memgit("maintain", cwd=path)
    assert proc.returncode == 0, proc.stderr.decode()
    lines = proc.stdout.decode().splitlines()
    assert lines[0] == "observations: deleted 1 turn(s) older than 7 day(s)"
    assert [line.split(":")[0] for line in lines] == [name for name, _s in maintenance.STEPS]
    data = json.loads(memgit_ok("maintain", "--json", "--step", "observations",
                                cwd=path).stdout)
    assert data == {"steps": [{"step": "observations", "ok": True,
                               "did": "deleted 0 turn(s) older than 7 day(s)",
                               "observations_deleted": 0, "observations_days": 7}]}
    assert memgit("maintain", "--step", "vacuum", cwd=path).returncode == 2
    assert b"Invalid value for '--step': 'vacuum'" in memgit(
        "maintain", "--step", "vacuum", cwd=path).stderr  # click's usage error (no MG code)


# --- the upkeep steps (docs/shared.md, "Maintenance") ------------------------------------------


def test_old_records_and_retired_rows_go_and_the_database_shrinks(path: Path) -> None:
    from memgit import state
    from memgit.state import dream as runs
    from memgit.write.writer import commit_facts

    drive = open_drive(path)
    conn = state.connection(drive.git_dir)
    lease = runs.take_lease(conn, "2026-01-01", "manual", _dt.datetime.now(_dt.UTC), due=False)
    assert not isinstance(lease, runs.Busy)
    runs.finish(conn, lease, "no_changes")
    text = "The retired entry about the Quasar dashboard"
    added = commit_facts(drive, [text]).added[0].id
    commit_facts(drive, [], [added])  # retired: the row stays, marked, with its text
    for days in range(300):  # many turns, then their retention: free pages in the file
        observe(drive, "an observed turn " + "padding " * 200,
                now=_dt.datetime.now(_dt.UTC) - _dt.timedelta(days=30, minutes=days))
    soon = maintain(drive, Policy(), only=["dream_runs", "retired"])
    assert [r.figures for r in soon] == [{"dream_runs_deleted": 0},
                                         {"retired_rows_deleted": 0}]
    later = _dt.datetime.now(_dt.UTC) + _dt.timedelta(days=91)
    reports = {r.step: r for r in maintain(drive, Policy(), now=later)}
    assert all(r.ok for r in reports.values()), reports
    assert reports["observations"].figures["observations_deleted"] == 300
    assert reports["dream_runs"].figures["dream_runs_deleted"] == 1
    assert reports["retired"].figures["retired_rows_deleted"] == 1
    sqlite = reports["sqlite"].figures
    assert sqlite["sqlite_vacuumed"] == 1
    assert sqlite["sqlite_bytes_after"] < sqlite["sqlite_bytes_before"]
    assert sqlite["sqlite_free_pages_after"] == 0
    database = state.state_path(drive.git_dir)
    assert text.encode() not in database.read_bytes()
    assert b"A fact" in database.read_bytes()  # the live entry's row: the file holds rows
    assert not Path(str(database) + "-wal").exists() or \
        Path(str(database) + "-wal").stat().st_size == 0
    again = {r.step: r for r in maintain(drive, Policy(), now=later)}
    assert again["sqlite"].figures["sqlite_vacuumed"] == 0  # nothing worth a VACUUM now


def test_git_gc_runs_when_worthwhile_and_the_queue_is_retried(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import fcntl
    import os

    from memgit import state
    from memgit.write.writer import commit_facts

    drive = open_drive(path)
    assert maintain(drive, Policy(), only=["git"])[0].figures["git_gc"] == 0
    for i in range(6):
        commit_facts(drive, [f"Loose object maker {i}"])
    loose = maintain(drive, Policy(), only=["git"])[0].figures["git_loose_objects"]
    assert loose >= 18  # blob, trees and commit per write, loose
    monkeypatch.setattr(maintenance, "GC_LOOSE", 10)
    [report] = maintain(drive, Policy(), only=["git"])
    assert report.figures["git_gc"] == 1
    assert maintain(drive, Policy(), only=["git"])[0].figures["git_loose_objects"] < 10
    assert memgit("lint", "--rev", "main", cwd=path).returncode == 0  # history intact
    # the queue: a write queued while another writer held the lock lands on maintain
    from tests.conftest import git

    git("config", "memgit.writeLockTimeout", "0.2", cwd=drive.git_dir)
    drive = open_drive(path)
    fd = os.open(state.state_dir(drive.git_dir) / "write.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        queued = commit_facts(drive, ["Written while the lock was held"])
    finally:
        os.close(fd)
    assert queued.status == "queued"
    [report] = maintain(drive, Policy(), only=["pending"])
    assert report.figures == {"pending_before": 1, "pending_left": 0}
    assert memgit("recall", "--json", "lock held", cwd=path).returncode == 0
