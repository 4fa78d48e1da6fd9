"""memgit import at scale: plan and apply, their counts side by side, and their time.

Run: python bench/bench_import.py [--runs N] [--notes N] [--only KIND/SAMPLE ...]

For every real sample (tests/data/realworld/<kind>/<sample>/) and a generated folder of
``--notes`` basic-memory style notes of 40-120 KiB each (tests/importing/corpus.py, made of
the basic-memory knowledge base's own blocks), in a new drive each:

* the plan's counts (entries, present, repeated, verbatim, refused, structure, topic
  files, notes split into parts) and what apply created, side by side, and whether a
  second apply added nothing;
* for the large sources (the basic-memory specs and the generated folder), the wall
  and CPU time of ``build_plan`` and ``apply_plan`` per phase (reading, preparing,
  judging or writing), ``--runs`` times, each run printed.

The generated folder is over the default drive limits (2 MiB, 256 files): it is
planned once with the defaults (the plan reports the overflow and what to do), then
planned and applied into a drive whose memgit.yaml raises ``drive_bytes`` and
``files``. The machine is shared: CPU time (``process_time``) is the steadier figure.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.importing.corpus import make_notes  # noqa: E402

from memgit.drives.create import create_drive  # noqa: E402
from memgit.git.repository import Drive, open_drive  # noqa: E402
from memgit.importing import report  # noqa: E402
from memgit.importing.apply import ApplyResult, apply_plan  # noqa: E402
from memgit.importing.plan import Plan, build_plan  # noqa: E402
from memgit.policy.settings import Policy, find_policy  # noqa: E402

T = TypeVar("T")

REALWORLD = ROOT / "tests" / "data" / "realworld"
LARGE = {"basic-memory/specs"}
RAISED = "limits: {drive_bytes: 268435456, files: 8000}\n"


class Phases:
    """Wall and CPU seconds per phase, from the progress calls (phase, done, total)."""

    def __init__(self) -> None:
        self.phase = ""
        self.marks: dict[str, list[float]] = {}
        self.start = (time.perf_counter(), time.process_time())

    def __call__(self, phase: str, done: int, total: int) -> None:
        if phase != self.phase:
            self._close()
            self.phase, self.start = phase, (time.perf_counter(), time.process_time())

    def _close(self) -> None:
        if self.phase:
            wall, cpu = time.perf_counter() - self.start[0], time.process_time() - self.start[1]
            acc = self.marks.setdefault(self.phase, [0.0, 0.0])
            acc[0] += wall
            acc[1] += cpu

    def text(self) -> str:
        self._close()
        self.phase = ""
        return ", ".join(f"{k} {w:.1f}s/{c:.1f}s cpu" for k, (w, c) in self.marks.items())


def timed(fn: Callable[[Phases], T]) -> tuple[T, float, float, str]:
    phases = Phases()
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn(phases)
    return out, time.perf_counter() - wall, time.process_time() - cpu, phases.text()


def _plan(source: Path, policy: Policy, progress: Phases) -> Plan:
    return build_plan(source, progress=progress, policy=policy)


def _apply(drive: Drive, plan: Plan, policy: Policy, progress: Phases) -> ApplyResult:
    return apply_plan(drive, plan, policy=policy, progress=progress)


def source_of(sample: Path) -> Path:
    exports = list(sample.glob("*.json"))
    return exports[0] if sample.parent.name == "mem0" else sample


def one(name: str, source: Path, work: Path, runs: int, raised: bool = False) -> None:
    """Plan and apply ``source`` into a new drive per run; print counts and times."""
    for run in range(1, runs + 1):
        drive_path = create_drive(work / f"drive-{run}", bare=False)
        if raised:
            (drive_path / ".git" / "memgit.yaml").write_text(RAISED, encoding="utf-8")
        drive = open_drive(drive_path)
        policy = find_policy(None, drive.git_dir)
        plan, plan_wall, plan_cpu, plan_phases = timed(
            partial(_plan, source, policy))
        result, apply_wall, apply_cpu, apply_phases = timed(
            partial(_apply, drive, plan, policy))
        again = apply_plan(drive, plan, policy=policy)
        counts = plan.counts()
        summary = report.summary(plan)
        created = len(result.created)
        if run == 1:
            print(f"{name:<34} plan: {counts['entry']:>6} entries {counts['present']:>3} present "
                  f"{counts['duplicate']:>4} repeated {counts['verbatim']:>4} verbatim "
                  f"{counts['refused']:>3} refused {counts['structure']:>6} structure, "
                  f"{summary['topic_files']:>3} files ({summary['split_notes']} split) | "
                  f"apply: {created:>6} created {'==' if created == counts['entry'] else '!='} "
                  f"plan, {len(result.changed)} changed | again: "
                  f"{len(again.created)} created")
        if name in LARGE or raised:
            print(f"    run {run}: plan {plan_wall:.1f}s ({plan_cpu:.1f}s cpu: {plan_phases}); "
                  f"apply {apply_wall:.1f}s ({apply_cpu:.1f}s cpu: {apply_phases})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--notes", type=int, default=200)
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-import-") as folder:
        work = Path(folder)
        for sample in sorted(p for p in REALWORLD.glob("*/*") if p.is_dir()):
            name = f"{sample.parent.name}/{sample.name}"
            if args.only is not None and name not in args.only:
                continue
            one(name, source_of(sample), work / name.replace("/", "-"),
                args.runs if name in LARGE else 1)
        if args.only is None or "generated" in args.only:
            notes = work / "notes"
            items = make_notes(notes, count=args.notes)
            size = sum(p.stat().st_size for p in notes.iterdir())
            print(f"generated: {args.notes} notes, {size:,} bytes, {items:,} items and "
                  "paragraphs")
            default = build_plan(notes, policy=Policy())
            for over in default.overflow:
                print(f"    default limits: {over['message']}")
            one("generated", notes, work / "generated", args.runs, raised=True)
            shutil.rmtree(notes)


if __name__ == "__main__":
    main()
