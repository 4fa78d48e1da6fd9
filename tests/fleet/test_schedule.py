"""memgit fleet dream|maintain: each drive's night in its time zone, leases, retries, and
the outcomes counted in the drive (the clock is given as ``now``: nothing sleeps)."""

from __future__ import annotations

import datetime as _dt
import socket
from pathlib import Path

import pytest

from memgit.state import events
from tests.fleet_support import make_drive
from tests.servers import free_port

pytestmark = pytest.mark.slow

# 01:30 UTC on 1 May 2026: 03:30 in Berlin (CEST), 21:30 the day before in New York,
# 10:30 in Tokyo.
NOW = _dt.datetime(2026, 5, 1, 1, 30, tzinfo=_dt.UTC)
DUPES = ["Wrens nest in hedges near the river", "wrens nest in hedges near the river!"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    make_drive(root, "berlin.git", DUPES, policy="timezone: Europe/Berlin\n")
    make_drive(root, "newyork.git", DUPES, policy="timezone: America/New_York\n")
    make_drive(root, "unset.git", DUPES)
    return root


def _index(root: Path):  # type: ignore[no-untyped-def]
    from memgit.fleet.index import FleetIndex

    return FleetIndex(root)


def _run(root: Path, task: str, now: _dt.datetime, server_tz: str, jobs: int = 1
         ) -> dict[str, str]:
    from memgit.fleet.schedule import run

    index = _index(root)
    try:
        return {j.drive: j.status for j in run(index, task, now, jobs=jobs,
                                                 server_tz=server_tz, no_model=True)}
    finally:
        index.close()


def test_each_drive_dreams_in_its_own_night_once_a_day(root: Path) -> None:
    assert _run(root, "dream", NOW, "Asia/Tokyo", jobs=2) == {"berlin.git": "applied"}
    assert events.counts(root / "berlin.git")["dream_applied"] == 1
    # the same quarter hour again, and later that night: the day is done (the lease's day)
    assert _run(root, "dream", NOW, "Asia/Tokyo") == {"berlin.git": "skipped"}
    later = NOW + _dt.timedelta(hours=2)
    assert _run(root, "dream", later, "Asia/Tokyo")["berlin.git"] == "skipped"
    assert events.counts(root / "berlin.git")["dream_applied"] == 1
    # a drive without a timezone dreams in the server's night
    assert _run(root, "dream", NOW, "Europe/Paris") == {"berlin.git": "skipped",
                                                        "unset.git": "applied"}
    # New York's night comes seven hours later; the next Berlin night is a new day
    ny_night = NOW + _dt.timedelta(hours=7)
    assert _run(root, "dream", ny_night, "Asia/Tokyo") == {"newyork.git": "applied"}
    next_night = NOW + _dt.timedelta(days=1)
    result = _run(root, "dream", next_night, "Asia/Tokyo")
    assert result == {"berlin.git": "no_changes"}


def test_a_failing_night_is_retried_three_times_then_given_up(tmp_path: Path) -> None:
    root = tmp_path / "root"
    closed = free_port()  # nothing listens: every model call fails at once
    drive = make_drive(root, "failing.git", DUPES, policy=(
        "timezone: Europe/Berlin\ndream:\n  model: openai\n"
        f"  base_url: http://127.0.0.1:{closed}/v1\n  model_name: m\n  timeout: 2\n"))
    from memgit.fleet.schedule import run

    index = _index(root)
    try:
        statuses = []
        for minutes in (0, 15, 30, 45):
            jobs = run(index, "dream", NOW + _dt.timedelta(minutes=minutes),
                       server_tz="UTC")
            statuses.append(jobs[0].status)
        record = index.embedded.drives(index.origin)[(index.origin, "failing.git")]
    finally:
        index.close()
    assert statuses == ["failed", "failed", "gave_up", "gave_up"]
    counts = events.counts(drive)
    assert counts["dream_failed"] == 3 and counts["dream_gave_up"] == 1
    assert record.last_dream_status == "failed"  # census shows it


def test_a_stuck_run_is_taken_over_and_counted(root: Path) -> None:
    from memgit import state
    from memgit.state import dream as runs

    conn = state.connect(root / "berlin.git")
    stuck = runs.take_lease(conn, "2026-05-01", "due", NOW - _dt.timedelta(hours=2), due=True)
    assert isinstance(stuck, runs.Lease)  # a run that started two hours ago, never finished
    conn.close()
    assert _run(root, "dream", NOW, "Asia/Tokyo") == {"berlin.git": "applied"}
    counts = events.counts(root / "berlin.git")
    assert counts["dream_stuck"] == 1 and counts["dream_applied"] == 1
    conn = state.connect(root / "berlin.git")
    day = runs.runs(conn, day="2026-05-01")
    conn.close()
    assert [r.status for r in day] == ["applied", "failed"]
    assert "taken over" in day[1].error


def test_maintenance_runs_once_per_drive_and_night_under_a_lease(root: Path) -> None:
    assert _run(root, "maintain", NOW, "Asia/Tokyo") == {"berlin.git": "done"}
    assert _run(root, "maintain", NOW + _dt.timedelta(minutes=15), "Asia/Tokyo") == {}
    assert events.counts(root / "berlin.git")["maintain_ok"] == 1
    # a lease held by a live run is respected; one stuck over an hour is taken over
    from memgit.fleet.store import LeaseRow
    from memgit.state import stamp

    index = _index(root)
    try:
        with index.embedded.transaction():
            index.embedded.set_lease(LeaseRow(index.origin, "unset.git", "maintain",
                                              "2026-05-01", "running", 1, "t", 1,
                                              socket.gethostname() + "-elsewhere",
                                              stamp(NOW - _dt.timedelta(minutes=10))))
    finally:
        index.close()
    assert _run(root, "maintain", NOW, "Europe/Paris") == {}
    later = NOW + _dt.timedelta(minutes=65)
    assert _run(root, "maintain", later, "Europe/Paris") == {"unset.git": "done"}
    assert events.counts(root / "unset.git")["maintain_ok"] == 1


def test_the_fleet_dream_command_runs_from_cron(root: Path) -> None:
    from tests.fleet_support import fleet

    status, out, _err = fleet("dream", str(root), "--no-model", "--json",
                              "--now", "2026-05-01T03:30:00+02:00", "--jobs", "2")
    assert status == 0
    ran = {r["drive"]: r["status"] for r in out["runs"]}
    assert ran["berlin.git"] == "applied" and "newyork.git" not in ran  # (unset: the host's)
    status, census, _err = fleet("census", str(root), "--json")
    rows = {r["name"]: r for r in census["drives"]}
    assert rows["berlin.git"]["last_dream_day"] == "2026-05-01"
    assert rows["berlin.git"]["last_dream_status"] == "applied"
