"""memgit maintain: its steps run in order, each says what it did, a failing one does not
stop the others."""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path
from typing import Any

import pytest

from conftest import memgit
from memgit import maintenance
from memgit.dream.observations import observe
from memgit.errors import RepoError, UsageError
from memgit.git.repository import Drive, open_drive
from memgit.maintenance import StepReport, maintain
from memgit.policy import Policy, policy_from_mapping


@pytest.fixture
def path(new_drive: Any) -> Path:
    return new_drive({"notes.md": "# Notes\n\n- A fact [source: imported:unknown; id: m-a]\n"})


def test_retention_follows_the_policy_and_reports_its_figures(path: Path) -> None:
    drive = open_drive(path)
    now = _dt.datetime.now(_dt.UTC)
    for days in (1, 3, 9):
        observe(drive, f"a turn {days} days old", now=now - _dt.timedelta(days=days))
    policy = policy_from_mapping({"dream": {"observations_days": 2}})
    [report] = maintain(drive, policy, now=now)
    assert report == StepReport("observations", "deleted 2 turn(s) older than 2 day(s)",
                                {"observations_deleted": 2, "observations_days": 2})
    assert maintain(drive, policy, now=now)[0].figures["observations_deleted"] == 0


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
    assert proc.stdout.decode() == "observations: deleted 1 turn(s) older than 7 day(s)\n"
    data = json.loads(memgit("maintain", "--json", "--step", "observations", cwd=path).stdout)
    assert data == {"steps": [{"step": "observations", "ok": True,
                               "did": "deleted 0 turn(s) older than 7 day(s)",
                               "observations_deleted": 0, "observations_days": 7}]}
    assert memgit("maintain", "--step", "vacuum", cwd=path).returncode == 2
