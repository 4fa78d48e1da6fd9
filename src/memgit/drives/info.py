"""What ``memgit info`` and ``memgit metrics`` show: a drive at a glance.

Both are reads, so both take the read path first (queued writes retried, the recall index
repaired), then report the branch head, its size against the policy's limits, the recall
index, the pending queue and the event counters.
"""

from __future__ import annotations

from typing import Any

from memgit import state
from memgit.drives.fork import parent_of
from memgit.format.entries import is_valid_date
from memgit.git.modes import MODE_EXEC, MODE_FILE
from memgit.git.repository import (
    Drive,
    FileEntry,
    commit_tree_id,
    open_drive,
    ref_target,
    tree_files,
)
from memgit.policy.judge import check_caps, counts_toward_caps
from memgit.policy.settings import Policy, drive_policy
from memgit.recall.read_path import catch_up
from memgit.state import events, facts, pending
from memgit.sync.mounts import mount_names


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
        "kind": policy.kind,
        "parent": parent_of(drive),
        "caps": cap_status(conn, policy),
        "mounts": mount_names(drive),
        "embeddings": _embeddings(conn, policy),
    }


def _embeddings(conn: state.Connection, policy: Policy) -> dict[str, Any] | None:
    """The embedder configured, the model of the stored vectors, how many are stored and
    how many searchable entries have none (memgit index embeds them); None without an
    ``embeddings:`` section."""
    from memgit.embeddings import embed as embedding
    from memgit.embeddings import fill as vector_fill

    config = policy.embeddings()
    if config is None:
        return None
    return {"plugin": config.plugin, **embedding.summary(conn),
            "fill_failed": vector_fill.last_failure(conn)}


def cap_status(conn: state.Connection, policy: Policy) -> dict[str, Any]:
    """The entries the caps count (policy.counts_toward_caps), the earliest added date
    among them (when the drive has caps), the caps, and the warnings they give now
    (docs/shared.md, "Caps")."""
    capped = bool(policy.max_entries or policy.max_age_days)
    summary = [s for s in facts.cap_summary(conn, oldest=capped) if counts_toward_caps(s[0])]
    oldest = min((m for _p, _n, m in summary if m), default="")
    if oldest and not is_valid_date(oldest):  # a malformed date sorts first: read each row
        oldest = min((r.added for r in facts.cap_rows(conn) if counts_toward_caps(r.path)
                      and is_valid_date(r.added)), default="")
    entries = sum(n for _p, n, _m in summary)
    return {"entries": entries, "oldest_added": oldest or None,
            "max_entries": policy.max_entries, "max_age_days": policy.max_age_days,
            "warnings": [v.format() for v in check_caps(entries, oldest, policy)]}


def drive_metrics(path: str | None, label: str | None = None
                  ) -> tuple[str, dict[str, int], dict[str, float]]:
    """(label, event counts, gauges) of one drive for ``events.prometheus``; the label is
    the drive's git directory unless one is given (memgit serve: ``owner/drive``)."""
    drive = open_drive(path)
    policy = drive_policy(drive)
    conn = state.connection(drive.git_dir)
    catch_up(drive, policy=policy, conn=conn)
    counts = events.counts_with(conn)
    gauges: dict[str, float] = {"pending_writes": pending.count(conn),
                                "entries": facts.stats(conn).entries}
    _head, files, size = _head_files(drive, policy)
    gauges.update(drive_bytes=size, files=len(files))
    if policy.max_entries or policy.max_age_days:  # a drive with caps: how it stands
        caps = cap_status(conn, policy)
        gauges["cap_entries"] = caps["entries"]
        gauges["over_cap"] = int(any("MG291" in w for w in caps["warnings"]))
        if policy.max_entries:
            gauges["max_entries"] = policy.max_entries
    return label or str(drive.git_dir), counts, gauges
