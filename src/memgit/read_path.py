"""The read path: what every read (recall, info, index, metrics) does first.

docs/spec.md, section 3: the pending queue is retried on the next write or read, and
every read compares the branch head with the indexed revision and repairs a
stale index first. :func:`catch_up` is that one step, above both the writer
(which drains the queue) and the recall index (which repairs itself), so
neither of them calls the other.
"""

from __future__ import annotations

from . import recall_index, recall_search, state
from .git.repository import Drive
from .policy import Policy
from .recall_index import ReindexResult
from .recall_search import Hit
from .state import pending
from .writer import retry_pending


def catch_up(drive: Drive, *, policy: Policy | None = None,
             conn: state.Connection | None = None) -> ReindexResult:
    """Retry queued writes (without waiting for a writer that holds the lock: it
    drains the queue itself), then bring the recall index to the branch head.

    Costs two small queries and one ref read when there is nothing to do.
    """
    conn = conn if conn is not None else state.connection(drive.git_dir)
    if pending.count(conn):
        retry_pending(drive, policy=policy, timeout=0.0)
    return recall_index.ensure_current(drive, policy=policy, conn=conn)


def recall(drive: Drive, query: str, limit: int = 5, *, count: bool = True,
           policy: Policy | None = None) -> list[Hit]:
    """The ``limit`` best entries for ``query`` (BM25 over text and topic path), after
    :func:`catch_up`; counts one retrieval for each entry returned."""
    conn = state.connection(drive.git_dir)
    current = catch_up(drive, policy=policy, conn=conn)
    return recall_search.search(conn, query, limit, count=count,
                                key=(str(drive.git_dir), current.head or ""))
