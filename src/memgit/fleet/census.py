"""``memgit fleet census``: every repository under a root, from the index.

The index is refreshed first (memgit.fleet.index: only the drives whose fingerprint
changed are described again, by what ``memgit info`` computes), then every row is
read back with its limits: the drive's size and files against ``limits``, its entries
against ``limits.max_entries`` when the drive has that cap. A figure at or over the
drive's ``limits.near_limit`` share (default 0.8) of its limit is *near*, one over the
limit is *over*; the summary counts them, with the repositories that are not drives
and those that could not be read.
"""

from __future__ import annotations

from typing import Any

from memgit.fleet.index import FleetIndex, Progress, _no_progress
from memgit.fleet.store import COLUMNS, DriveRecord


def limits(record: DriveRecord) -> dict[str, tuple[int, int]]:
    """limit name -> (used, limit) for the limits the drive has."""
    out = {"drive_bytes": (record.drive_bytes, record.drive_bytes_limit),
           "files": (record.files, record.files_limit)}
    if record.max_entries:
        out["max_entries"] = (record.cap_entries, record.max_entries)
    return {k: v for k, v in out.items() if v[1] > 0}


def standing(record: DriveRecord) -> tuple[list[str], list[str]]:
    """(limits the drive is near, limits it is over)."""
    near, over = [], []
    for name, (used, limit) in limits(record).items():
        if used > limit:
            over.append(name)
        elif used >= record.near_limit * limit:
            near.append(name)
    return near, over


def row(record: DriveRecord) -> dict[str, Any]:
    """A census row for JSON: the record without its bookkeeping, with its standing."""
    data = {name: getattr(record, name) for name in COLUMNS
            if name not in ("fingerprint", "tips")}
    near, over = standing(record)
    data.update(near=near, over=over)
    return data


def census(index: FleetIndex, *, jobs: int = 1, rebuild: bool = False,
           progress: Progress = _no_progress) -> dict[str, Any]:
    """Refresh the index for this root, then every row and the summary."""
    refreshed = index.refresh(jobs=jobs, force=rebuild, progress=progress)
    records = sorted(index.embedded.drives(index.origin).values(), key=lambda r: r.name)
    rows = [row(r) for r in records]
    drives = [r for r in rows if r["status"] == "drive"]
    summary = {
        "repositories": len(rows),
        "drives": len(drives),
        "not_drives": sum(1 for r in rows if r["status"] == "not_drive"),
        "errors": sum(1 for r in rows if r["status"] == "error"),
        "near_limit": sum(1 for r in drives if r["near"] and not r["over"]),
        "over_limit": sum(1 for r in drives if r["over"]),
        "pending_writes": sum(r["pending_writes"] for r in drives),
        "entries": sum(r["entries"] for r in drives),
        "dreams_failed": sum(1 for r in drives if r["last_dream_status"] == "failed"),
        "described": len(refreshed.described),
        "removed": len(refreshed.removed),
    }
    return {"root": str(index.root), "origin": index.origin, "summary": summary,
            "drives": rows, "warning": index.warning}
