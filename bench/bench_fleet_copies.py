"""memgit fleet at ten times a generated root, without describing every drive again.

    python bench/bench_fleet.py --drives 1000 --keep /tmp/f1000     # generate, describe
    python bench/bench_fleet_copies.py /tmp/f1000/big /tmp/f10000 [--copies 10]

Describing 10,000 drives takes most of an hour on a small machine; census and find from
the index do not depend on how the rows got there. So each drive of a root that
bench_fleet.py made (and described) is copied ``--copies`` times with hard links (``cp
-al``: real folders and files, so the walk and every ``stat`` of the fingerprints are
real), and the fleet index is filled from the source root's index by SQL (each drive's
rows copied under its new name, its fingerprint taken from its copy). Then census from
the index (nothing changed) and find p50/p95 are measured, in wall clock and in CPU time.
"""

from __future__ import annotations

import argparse
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "bench")]


def copy_root(src: Path, dst: Path, copies: int) -> None:
    """``dst/cN/...``: every drive of ``src`` once per copy, hard-linked."""
    for c in range(copies):
        (dst / f"c{c}").mkdir(parents=True)
        for folder in sorted(p for p in src.iterdir() if p.is_dir() and
                             not p.name.startswith(".")):
            subprocess.run(["cp", "-al", str(folder), str(dst / f"c{c}" / folder.name)],
                           check=True)


def copy_index(src: Path, dst: Path, copies: int) -> None:
    """Fill ``dst``'s fleet index from ``src``'s: rows renamed, fingerprints recomputed."""
    from memgit.fleet.index import FleetIndex, fingerprint
    from memgit.fleet.store import DRIVE_SHIFT
    from memgit.git.roots import walk

    index = FleetIndex(dst)  # the schema, and this root's origin
    origin = index.origin
    index.close()
    conn = sqlite3.connect(dst / ".memgit-fleet" / "index.sqlite", isolation_level=None)
    conn.execute("ATTACH ? AS old", (str(src / ".memgit-fleet" / "index.sqlite"),))
    columns = [r[1] for r in conn.execute("PRAGMA old.table_info(drives)") if r[1] != "id"]
    conn.execute("BEGIN")
    for c in range(copies):
        chosen = {"origin": "?", "name": f"'c{c}/' || name", "path": f"? || '/c{c}/' || name"}
        select = ", ".join(chosen.get(k, k) for k in columns)
        conn.execute(f"INSERT INTO drives ({', '.join(columns)}) SELECT {select} FROM "
                     "old.drives", (origin, str(dst)))
        # an entry's id keeps its number within the drive, under the new drive's id
        conn.execute("INSERT INTO entries (id, drive_id, entry_id, digest, path, source, "
                     "added, text, terms, at_head) SELECT (nd.id << ?) | (e.id & ?), nd.id, "
                     "e.entry_id, e.digest, e.path, e.source, e.added, e.text, e.terms, "
                     "e.at_head FROM old.entries e JOIN old.drives od ON od.id = e.drive_id "
                     f"JOIN main.drives nd ON nd.name = 'c{c}/' || od.name",
                     (DRIVE_SHIFT, (1 << DRIVE_SHIFT) - 1))
    for repo in walk(dst):
        conn.execute("UPDATE drives SET fingerprint = ? WHERE name = ?",
                     (fingerprint(repo.path), repo.name))
    conn.execute("COMMIT")
    conn.close()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("source", type=Path, help="a root bench_fleet.py made and described")
    parser.add_argument("target", type=Path, help="a new folder for the copies")
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from bench_fleet import find_row, find_times

    from memgit.fleet.census import census
    from memgit.fleet.index import FleetIndex

    if not args.target.exists():
        copy_root(args.source, args.target, args.copies)
        copy_index(args.source, args.target, args.copies)
    index = FleetIndex(args.target)
    try:
        for n in range(3):
            start_cpu, start = time.process_time(), time.perf_counter()
            data = census(index)
            print(f"census of {data['summary']['drives']} drives from the index "
                  f"({data['summary']['described']} described again), run {n + 1}: "
                  f"{time.perf_counter() - start:.2f} s wall, "
                  f"{time.process_time() - start_cpu:.2f} s CPU", flush=True)
        label, value = find_row("SQLite", find_times(index, args.rounds))
        print(f"{label}: {value}")
        size = (args.target / ".memgit-fleet" / "index.sqlite").stat().st_size
        print(f"SQLite index size: {size / 2**20:.1f} MiB")
    finally:
        index.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
