"""memgit fleet at scale (issue 26): census, find, forget + purge, push cost, index size.

    python bench/bench_fleet.py --drives 10000 [--entries 50] [--jobs 2] [--postgres]

Generates ``--drives`` bare drives of ``--entries`` entries each (plain git fast-import,
one commit per drive; one person, "Jane Roe", in 1% of them), then measures:

* the first census (every drive described: what ``memgit info`` computes, and its
  entry versions) and a census from the index (nothing changed: fingerprints only);
* find p50/p95 over a set of queries through the SQLite index (and PostgreSQL with
  ``--postgres``: a private cluster like the tests'), against a scan of every drive
  (one query: it reads every drive); and the whole command, ``memgit fleet find ROOT
  heron --json`` (a word in 15% of the entries), with its stat walk of the root and
  with ``--no-refresh``;
* forget + purge of the person across the drives that mention her;
* a push (and its background work, post-receive's fleet row included) to one drive in
  a root of 10 drives against the same in this root, alternated, several runs;
* the index's size.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]  # tests/ as a package: tests.servers

WORDS = ("payments launch owner deadline pricing website billing customer dashboard team "
         "product review metrics rollout incident runbook database staging cluster budget "
         "roadmap design feedback migration schema rotation meeting weekly quarter contract "
         "vendor support escalation release kestrel heron osprey lattice quartz").split()
PERSON = "Jane Roe"
QUERIES = ["jane roe", '"jane roe"', "kestrel quartz", "heron", "osprey lattice",
           "pricing vendor", '"weekly meeting"', "escalation runbook", "drive 4242",
           "nobody here", "staging cluster kestrel", "budget quarter", "fleet item 17"]


def _entry(rng: random.Random, drive: int, n: int, person: bool) -> str:
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 9)))
    if person:
        words = f"{PERSON} asked about {words}"
    return (f"- {words.capitalize()} drive {drive} fleet item {n} [source: imported:unknown; "
            f"added: 2026-{rng.randint(1, 12):02}-{rng.randint(1, 28):02}; "
            f"id: m-{drive:010d}{n:016d}]\n")


def make_drive(path: Path, drive: int, entries: int, person: bool) -> None:
    """A bare drive with one commit: MEMORY.md (its Index) and notes.md."""
    rng = random.Random(drive)
    notes = "# Notes\n\n" + "".join(_entry(rng, drive, n, person and n == 7)
                                    for n in range(entries))
    memory = "# Memory\n\n## Index\n\n- [[notes]]\n"
    blobs = {"MEMORY.md": memory.encode(), "notes.md": notes.encode()}
    stream = [b"commit refs/heads/main\n",
              b"committer bench <bench@example.com> 1767225600 +0000\n",
              b"data 6\ncreate\n"]
    for name, data in blobs.items():
        stream.append(f"M 100644 inline {name}\ndata {len(data)}\n".encode() + data + b"\n")
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(path)], check=True)
    subprocess.run(["git", "--git-dir", str(path), "fast-import", "--quiet"],
                   input=b"".join(stream), check=True)


def make_root(root: Path, drives: int, entries: int, person_every: int = 100) -> None:
    for i in range(drives):
        make_drive(root / f"org{i % 50:02}" / f"d{i:05}.git", i, entries,
                   i % person_every == 3)


class Rows(list[tuple[str, str]]):
    """The table's rows, each also printed on stderr as it is measured (a long run that
    fails late keeps what it measured)."""

    def append(self, row: tuple[str, str]) -> None:
        print(f"{row[0]}: {row[1]}", file=sys.stderr, flush=True)
        super().append(row)


def timed(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    value = fn(*args, **kwargs)
    return time.perf_counter() - start, value


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def find_times(index, rounds: int) -> tuple[list[float], list[float]]:  # type: ignore[no-untyped-def]
    """Each query's time (ms), ``rounds`` times: wall clock, and this process's CPU time
    (on a shared machine the wall clock also counts the waits for a core)."""
    from memgit.fleet.find import find
    from memgit.fleet.match import parse_query

    wall, cpu = [], []
    for _ in range(rounds):
        for q in QUERIES:
            start_cpu = time.process_time()
            took, _found = timed(find, index, parse_query(q))
            cpu.append((time.process_time() - start_cpu) * 1000)
            wall.append(took * 1000)
    return wall, cpu


def find_row(label: str, times: tuple[list[float], list[float]]) -> tuple[str, str]:
    wall, cpu = times
    return (f"find through {label}, {len(wall)} queries: p50 / p95 (wall; CPU)",
            f"{pct(wall, 50):.1f} / {pct(wall, 95):.1f} ms; {pct(cpu, 50):.1f} / "
            f"{pct(cpu, 95):.1f} ms")


def cli_find(root: Path, *extra: str, runs: int = 5) -> str:
    """The median wall clock of the whole ``memgit fleet find`` command."""
    memgit = str(Path(sys.executable).parent / "memgit")
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([memgit, "fleet", "find", str(root), "heron", "--json", *extra],
                       check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return f"{statistics.median(times) * 1000:.0f} ms (median of {runs}; " \
        f"{min(times) * 1000:.0f}-{max(times) * 1000:.0f})"


def push_cost(root: Path, name: str, work: Path, n: int) -> float:
    """One push of one new entry to ROOT/NAME and its background work (ms)."""
    from memgit.githooks.post_receive import wait_for_background

    notes = work / "notes.md"
    notes.write_text(notes.read_text() + f"- Push number {n} lands here "
                     f"[source: imported:unknown; id: m-push{n:022d}]\n")
    subprocess.run(["git", "-C", str(work), "commit", "-qam", f"push {n}"], check=True)
    start = time.perf_counter()
    subprocess.run(["git", "-C", str(work), "push", "-q", "origin", "main"], check=True)
    wait_for_background(root / name)
    return (time.perf_counter() - start) * 1000


def prepare_push(root: Path, name: str, tmp: Path) -> Path:

    subprocess.run([sys.executable, "-m", "memgit", "install-hooks", "--server",
                    str(root / name)], check=True, capture_output=True,
                   env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    work = tmp / f"work-{root.name}"
    subprocess.run(["git", "clone", "-q", str(root / name), str(work)], check=True)
    for key, value in (("user.name", "bench"), ("user.email", "bench@example.com")):
        subprocess.run(["git", "-C", str(work), "config", key, value], check=True)
    return work


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--drives", type=int, default=10000)
    parser.add_argument("--entries", type=int, default=50)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pushes", type=int, default=5)
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument("--keep", default="", help="generate into (or reuse) this folder")
    args = parser.parse_args()
    from memgit.fleet.census import census
    from memgit.fleet.find import scan
    from memgit.fleet.forget import carry_out, plan
    from memgit.fleet.index import FleetIndex
    from memgit.fleet.match import parse_query

    tmp = Path(args.keep or tempfile.mkdtemp(prefix="bench-fleet-"))
    big, small = tmp / "big", tmp / "small"
    rows = Rows()
    if not big.exists():
        took, _ = timed(make_root, big, args.drives, args.entries)
        rows.append(("generate drives (git fast-import)", f"{took:.1f} s"))
        make_root(small, 10, args.entries)
    index = FleetIndex(big)
    took, data = timed(census, index, jobs=args.jobs)
    rows.append((f"first census, {data['summary']['described']} of "
                 f"{data['summary']['drives']} drives described (--jobs {args.jobs})",
                 f"{took:.1f} s"))
    for n in range(3):
        took, data = timed(census, index)
        rows.append((f"census from the index, nothing changed (run {n + 1})",
                     f"{took:.2f} s"))
    rows.append(find_row("SQLite", find_times(index, args.rounds)))
    rows.append(("memgit fleet find ROOT heron --json (a stat walk of the root first)",
                 cli_find(big)))
    rows.append(("memgit fleet find ROOT heron --json --no-refresh",
                 cli_find(big, "--no-refresh")))
    took, found = timed(scan, big, parse_query("jane roe"))
    rows.append((f"find by a scan of every drive (1 query, {len(found.hits)} hits)",
                 f"{took * 1000:.0f} ms"))
    size = (big / ".memgit-fleet" / "index.sqlite").stat().st_size
    rows.append(("SQLite index size", f"{size / 2**20:.1f} MiB"))
    if args.postgres:
        from tests.servers import PostgresServer

        server = PostgresServer().start()
        try:
            url = server.create_database("fleet")
            index.settings.url = url
            index.settings.save(big)
            index.close()
            index = FleetIndex(big)
            took, _ = timed(index.sync_shared)
            rows.append(("copy the index to PostgreSQL", f"{took:.1f} s"))
            rows.append(find_row("PostgreSQL", find_times(index, args.rounds)))
            shared = index.shared()
            assert shared is not None
            pg_size = shared._execute("SELECT pg_database_size(current_database())"
                                      ).fetchone()[0]
            rows.append(("PostgreSQL database size", f"{pg_size / 2**20:.1f} MiB"))
            index.settings.url = ""
            index.settings.save(big)
            index.close()
            index = FleetIndex(big)
        finally:
            server.stop()
    # push cost: a root of 10 against this root, alternated
    FleetIndex(small).refresh()
    work_small = prepare_push(small, "org00/d00000.git", tmp)
    work_big = prepare_push(big, "org00/d00000.git", tmp)
    costs: dict[str, list[float]] = {"10": [], str(args.drives): []}
    for n in range(args.pushes):
        costs["10"].append(push_cost(small, "org00/d00000.git", work_small, 2 * n))
        costs[str(args.drives)].append(push_cost(big, "org00/d00000.git", work_big, 2 * n + 1))
    for label, values in costs.items():
        rows.append((f"push + background work, root of {label} drives (runs)",
                     " ".join(f"{v:.0f}" for v in values) +
                     f" ms; median {statistics.median(values):.0f}"))
    planned = plan(index, parse_query('"jane roe"'), purge=True)
    took, receipt = timed(carry_out, index, planned, by="bench")
    rows.append((f"forget + purge '{PERSON}' in {len(planned.drives)} drives",
                 f"{took:.1f} s ({receipt['totals']['purged']} ids purged)"))
    index.close()
    width = max(len(r[0]) for r in rows)
    print(f"| {'measure'.ljust(width)} | result |")
    print(f"|{'-' * (width + 2)}|--------|")
    for name, value in rows:
        print(f"| {name.ljust(width)} | {value} |")
    print(f"(drives under {tmp})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
