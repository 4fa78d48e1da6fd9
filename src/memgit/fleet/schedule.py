"""``memgit fleet dream|maintain|daemon``: every drive's night, with leases and retries.

Run every 15 minutes (cron, or ``memgit fleet daemon``). Each run brings the index
current, then picks the drives whose night it is: the drive's ``dream.window``
(default 02:00-06:00) in its ``timezone`` from memgit.yaml, or the server's time zone
when the drive sets none. Those drives are handed to a pool of N worker processes.

* dream: each worker runs ``memgit dream --due`` (memgit.dream.run.dream), whose lease
  is the drive's own (``dream_runs`` in its state database, memgit.state.dream): one
  run per drive and day, a run whose heartbeat is over an hour old (or whose process
  is gone) taken over and counted as ``dream_stuck``, a failed night retried on the
  next runs up to ``MAX_ATTEMPTS`` (3), then given up for the day (``dream_gave_up``).
  Applied, unchanged and failed runs count their own events (memgit.state.dream).
* maintain: ``memgit maintain`` once per drive and day, with a lease of the same shape
  kept in the fleet's embedded index (table ``leases``), ``maintain_ok`` or
  ``maintain_failed`` counted in the drive.

Every function takes the clock as ``now`` so tests drive it without sleeping.
"""

from __future__ import annotations

import datetime as _dt
import os
import socket
import zoneinfo
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from memgit.fleet.index import FleetIndex
from memgit.fleet.store import DriveRecord, LeaseRow
from memgit.policy.dream_settings import in_window
from memgit.state.dream import MAX_ATTEMPTS, STALE_LEASE_SECONDS

TASKS = ("dream", "maintain")


@dataclass
class Job:
    """One drive's run this time: ``status`` says what happened."""

    drive: str
    task: str
    day: str
    status: str = ""
    reason: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"drive": self.drive, "task": self.task, "day": self.day,
                "status": self.status, "reason": self.reason}


def server_timezone() -> str:
    """This machine's time zone name: ``TZ``, /etc/timezone, the /etc/localtime link;
    UTC when none names a zone."""
    candidates = [os.environ.get("TZ", "").lstrip(":")]
    try:
        with open("/etc/timezone", encoding="utf-8") as fh:
            candidates.append(fh.read().strip())
    except OSError:
        pass
    try:
        candidates.append(os.readlink("/etc/localtime").split("zoneinfo/", 1)[-1])
    except OSError:
        pass
    for name in candidates:
        try:
            if name:
                zoneinfo.ZoneInfo(name)
                return name
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            continue
    return "UTC"


def local_time(record: DriveRecord, now: _dt.datetime, server_tz: str) -> _dt.datetime:
    return now.astimezone(zoneinfo.ZoneInfo(record.timezone or server_tz))


def in_night(record: DriveRecord, now: _dt.datetime, server_tz: str) -> bool:
    """Whether ``now`` falls in the drive's dream window, in the drive's time."""
    start, _sep, end = record.dream_window.partition("-")
    window = (int(start), int(end)) if start.isdigit() and end.isdigit() else (120, 360)
    local = local_time(record, now, server_tz)
    return in_window(window, local.hour * 60 + local.minute)


def due(index: FleetIndex, now: _dt.datetime, server_tz: str) -> list[DriveRecord]:
    """This root's drives whose night it is (in name order)."""
    records = index.embedded.drives(index.origin).values()
    return sorted((r for r in records if r.status == "drive" and in_night(r, now, server_tz)),
                  key=lambda r: r.name)


def run(index: FleetIndex, task: str, now: _dt.datetime, *, jobs: int = 1,
        server_tz: str | None = None, no_model: bool = False,
        progress: Callable[[int, int], None] | None = None) -> list[Job]:
    """One scheduling round of ``task`` (dream or maintain) at ``now``."""
    server_tz = server_tz or server_timezone()
    index.refresh(jobs=jobs)
    work = [(r, local_time(r, now, server_tz).date().isoformat())
            for r in due(index, now, server_tz)]
    if task == "maintain":
        work = [(r, day) for r, day in work if _take(index, r, day, now)]
    args = [(r.path, r.timezone or server_tz, task, day, now, no_model) for r, day in work]
    results = list(_pool(args, jobs, progress))
    if task == "maintain":
        for (record, day), job in zip(work, results, strict=True):
            _finish(index, record, day, job, now)
    if work:
        index.refresh(names=[r.name for r, _day in work])  # the runs' outcomes in census
    return [Job(r.name, task, day, j.status, j.reason)
            for (r, day), j in zip(work, results, strict=True)]


def _pool(args: list[tuple], jobs: int, progress: Callable[[int, int], None] | None
          ) -> Iterable[Job]:
    if jobs <= 1 or len(args) < 2:
        results: Iterable[Job] = map(_run_one, args)
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=jobs,
                                 mp_context=multiprocessing.get_context("fork")) as pool:
            results = list(pool.map(_run_one, args))
    for number, job in enumerate(results):
        if progress is not None:
            progress(number + 1, len(args))
        yield job


def _run_one(args: tuple) -> Job:
    """In a worker: one drive's dream or maintenance."""
    from memgit import state

    path, timezone, task, day, now, no_model = args
    job = Job(path, task, day)
    try:
        if task == "dream":
            _dream(job, path, timezone, now, no_model)
        else:
            _maintain(job, path, timezone, now)
    except Exception as exc:  # noqa: BLE001 - one drive's failure never stops the round
        message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        job.status, job.reason = "failed", message
    finally:
        state.close_connections()
    return job


def _policy(path: str, timezone: str):  # type: ignore[no-untyped-def]
    """The drive and its policy, in the time zone the scheduler chose."""
    import dataclasses

    from memgit.git.repository import open_drive
    from memgit.policy.settings import drive_policy

    drive = open_drive(path)
    policy = drive_policy(drive)
    return drive, dataclasses.replace(policy, timezone=timezone)


def _dream(job: Job, path: str, timezone: str, now: _dt.datetime, no_model: bool) -> None:
    from memgit import state
    from memgit.dream.run import dream
    from memgit.state import dream as runs
    from memgit.state import events

    drive, policy = _policy(path, timezone)
    outcome = dream(drive, policy, policy.dream(), due=True, now=now,
                    no_model=no_model)
    job.status, job.reason = outcome.status, outcome.reason
    if outcome.status == "failed":
        day_runs = runs.runs(state.connection(drive.git_dir), day=outcome.day, limit=100)
        if sum(1 for r in day_runs if r.status == "failed") >= MAX_ATTEMPTS:
            events.record(drive.git_dir, "dream_gave_up")
            job.status = "gave_up"
    elif outcome.status == "skipped" and "failed runs on" in outcome.reason:
        job.status = "gave_up"


def _maintain(job: Job, path: str, timezone: str, now: _dt.datetime) -> None:
    from memgit.drives.maintain import maintain
    from memgit.state import events

    drive, policy = _policy(path, timezone)
    reports = maintain(drive, policy, now=now)
    failed = [r for r in reports if not r.ok]
    job.status = "failed" if failed else "done"
    job.reason = "; ".join(f"{r.step}: {r.did}" for r in failed)
    events.record(drive.git_dir, "maintain_failed" if failed else "maintain_ok")


# --- the maintenance lease (the fleet's embedded index) --------------------------------


def _take(index: FleetIndex, record: DriveRecord, day: str, now: _dt.datetime) -> bool:
    """Take the drive's maintenance lease for ``day``: not when done, running with a
    fresh heartbeat, or failed ``MAX_ATTEMPTS`` times; a stale running lease counts as
    a failed attempt and is taken over."""
    from memgit import state
    from memgit.state.dream import _holder_alive

    store = index.embedded
    with store.transaction():
        row = store.lease(index.origin, record.name, "maintain", day)
        if row is None:
            row = LeaseRow(index.origin, record.name, "maintain", day, "failed")
        if row.status == "done":
            return False
        if row.status == "running":
            age = (now - state.parse_stamp(row.heartbeat)).total_seconds()
            if age < STALE_LEASE_SECONDS and _holder_alive(row.pid, row.host):
                return False
        if row.attempts >= MAX_ATTEMPTS:
            if row.status != "failed":
                row.status, row.error = "failed", "stuck; attempts used up"
                store.set_lease(row)
            return False
        row.status, row.attempts, row.pid = "running", row.attempts + 1, os.getpid()
        row.host, row.heartbeat = socket.gethostname(), state.stamp(now)
        store.set_lease(row)
    return True


def _finish(index: FleetIndex, record: DriveRecord, day: str, job: Job,
            now: _dt.datetime) -> None:
    """Record the run's end in its lease; the last allowed failed attempt gives up."""
    store = index.embedded
    with store.transaction():
        row = store.lease(index.origin, record.name, "maintain", day)
        if row is None:
            return
        row.status = "done" if job.status == "done" else "failed"
        row.error, row.heartbeat = job.reason, row.heartbeat
        store.set_lease(row)
    if row.status == "failed" and row.attempts >= MAX_ATTEMPTS:
        job.status = "gave_up"


def daemon(index: FleetIndex, *, jobs: int = 1, interval: float = 900.0,
           no_model: bool = False, rounds: int | None = None,
           clock: Callable[[], _dt.datetime] | None = None,
           sleep: Callable[[float], None] | None = None,
           report: Callable[[list[Job]], None] | None = None) -> int:
    """Dream and maintain every ``interval`` seconds until stopped (SIGTERM or Ctrl-C),
    or for ``rounds`` rounds; returns the rounds run."""
    import signal
    import time

    clock = clock or (lambda: _dt.datetime.now(_dt.UTC))
    sleep = sleep or time.sleep
    stopping: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda *_a: stopping.append(1))
    done = 0
    try:
        while not stopping and (rounds is None or done < rounds):
            for task in TASKS:
                jobs_done = run(index, task, clock(), jobs=jobs, no_model=no_model)
                if report is not None:
                    report(jobs_done)
            done += 1
            if rounds is None or done < rounds:
                sleep(interval)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
    return done
