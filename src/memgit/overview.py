"""What ``memgit info`` and ``memgit metrics`` show: a drive at a glance.

Both are reads, so both first take the read path (memgit.read_path.catch_up:
queued writes retried, the recall index repaired), then report the branch head,
its size and file count against the policy's limits, the recall index, the
pending queue and the event counters.
"""

from __future__ import annotations

from typing import Any

from . import events, state
from .git.modes import MODE_EXEC, MODE_FILE
from .git.repository import Drive, FileEntry, commit_tree_id, open_drive, ref_target, tree_files
from .policy import Policy, find_policy
from .read_path import catch_up
from .state import facts, pending


def _head_files(drive: Drive, policy: Policy) -> tuple[str | None, list[FileEntry], int]:
    """(head, its files, the sum of its regular files' sizes)."""
    head = ref_target(drive, policy.branch_ref)
    files = tree_files(drive, commit_tree_id(drive, head)) if head else []
    return head, files, sum(f.size for f in files if f.mode in (MODE_FILE, MODE_EXEC))


def drive_info(drive: Drive, policy: Policy) -> dict[str, Any]:
    """Everything ``memgit info`` shows, as a dict (after the read path's catch-up)."""
    conn = state.connection(drive.git_dir)
    repaired = catch_up(drive, policy=policy, conn=conn)
    head, files, size = _head_files(drive, policy)
    stats = facts.stats(conn)
    queue = pending.listing(conn)
    return {
        "drive": str(drive.root),
        "bare": drive.workdir is None,
        "drive_id": stats.drive_id,
        "branch": policy.branch_ref,
        "head": head,
        "indexed_revision": stats.indexed_rev,
        "index_repaired": repaired.mode not in ("current", "empty"),
        "entries": stats.entries,
        "rows": stats.rows,
        "retired": stats.retired,
        "retrievals": stats.retrievals,
        "drive_bytes": size,
        "drive_bytes_limit": policy.drive_bytes,
        "files": len(files),
        "files_limit": policy.files,
        "pending_writes": len(queue),
        "pending": [p._asdict() for p in queue],
        "events": events.counts_with(conn),
        "state_db": str(state.state_path(drive.git_dir)),
    }


def drive_metrics(path: str | None) -> tuple[str, dict[str, int], dict[str, float]]:
    """(label, event counts, gauges) of one drive for ``events.prometheus``."""
    drive = open_drive(path)
    policy = find_policy(None, drive.git_dir, drive.config_value("memgit.policy"))
    conn = state.connection(drive.git_dir)
    catch_up(drive, policy=policy, conn=conn)
    counts = events.counts_with(conn)
    gauges: dict[str, float] = {"pending_writes": pending.count(conn),
                                "entries": facts.stats(conn).entries}
    _head, files, size = _head_files(drive, policy)
    gauges.update(drive_bytes=size, files=len(files))
    return str(drive.git_dir), counts, gauges
