"""Where a checkout stands against its server: the sync marks, the commits waiting for
``memgit sync``, and what ``memgit status`` shows.

The rules read history through :class:`History` (refs and the commit graph), so they are
written once for pygit2 (a Drive) and for the shell's quick path (ref files and one
``git`` per question); this module imports neither.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

from memgit.safe_text import display_url

LAST_SYNCED = "refs/memgit/last-synced"
SYNC_SOURCE = "refs/memgit/sync-source"
REMOTES = "refs/memgit/remotes/"  # + remote name: its main as last fetched
LAST_SYNC_CONFIG = "memgit.lastsync"


class History(Protocol):
    """A repository's refs and commit graph, as the sync rules read them."""

    def ref_target(self, ref: str) -> str | None: ...

    def is_ancestor(self, ancestor: str, descendant: str) -> bool: ...

    def merge_base(self, a: str, b: str) -> str | None: ...

    def first_parent_chain(self, head: str, stop: str | None) -> list[str]:
        """Commits from ``head`` back along first parents to ``stop`` (excluded),
        oldest first."""
        ...


def remote_head_ref(remote: str) -> str:
    return REMOTES + remote


def since(history: History, head: str, server_head: str | None) -> str | None:
    """The local commit after which the unsynced work starts."""
    for ref in (SYNC_SOURCE, LAST_SYNCED):
        mark = history.ref_target(ref)
        if mark is not None and history.is_ancestor(mark, head):
            return mark
    if server_head is not None:
        return history.merge_base(head, server_head)
    return None


def waiting_commits(history: History, branch: str, remote: str) -> list[str]:
    """Local commits not yet on the server (as far as the last sync knows)."""
    head = history.ref_target(f"refs/heads/{branch}")
    if head is None:
        return []
    start = since(history, head, history.ref_target(remote_head_ref(remote)))
    return history.first_parent_chain(head, start)


def status_lines(info: dict[str, Any]) -> list[str]:
    """What ``memgit status`` prints for :func:`status`'s answer."""
    waiting = info["waiting_commits"]
    lines = [f"{waiting} commit{'s' if waiting != 1 else ''} waiting for memgit sync"]
    if info["remote_url"] is None:
        remote = info["remote"]
        lines.append(f"no remote {remote!r}: working offline (git remote add {remote} URL)")
    lines.append(f"last sync: {info['last_sync'] or 'never'}")
    lines.append(f"kind: {info.get('kind', 'personal')} drive")
    return lines


def status(history: History, branch: str, remote: str, remote_url: str | None,
           last_sync: str | None, *, kind: str = "personal") -> dict[str, Any]:
    """What ``memgit status`` shows (no network: as of the last fetch); ``last_sync`` is
    the raw ``memgit.lastsync`` config value (seconds since the epoch), ``kind`` the
    drive's kind (its policy's, memgit.policy.kinds)."""
    last = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(last_sync))) \
        if last_sync and last_sync.isdigit() else None
    return {
        "kind": kind,
        "branch": branch,
        "head": history.ref_target(f"refs/heads/{branch}"),
        "remote": remote,
        "remote_url": None if remote_url is None else display_url(remote_url),
        "waiting_commits": len(waiting_commits(history, branch, remote)),
        "last_synced_commit": history.ref_target(LAST_SYNCED),
        "last_sync": last,
    }
