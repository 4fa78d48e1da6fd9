"""The read path: what every read does first (docs/spec.md, section 3).

:func:`catch_up` retries the writer's pending queue and, when the branch head is not the
indexed revision, repairs the recall index. It sits above both the writer and the recall
index so that neither calls the other.
"""

from __future__ import annotations

from memgit import state
from memgit.git.repository import Drive
from memgit.index import reindex as recall_index
from memgit.index import search as recall_search
from memgit.index.reindex import ReindexResult
from memgit.index.search import Hit
from memgit.policy.settings import Policy, drive_policy
from memgit.recall import hybrid
from memgit.recall.defaults import DEFAULT_LIMIT
from memgit.recall.hybrid import Recalled
from memgit.state import pending
from memgit.write.writer import retry_pending


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


def recall(drive: Drive, query: str, limit: int = DEFAULT_LIMIT, *, count: bool = True,
           policy: Policy | None = None) -> list[Hit]:
    """The ``limit`` best entries for ``query`` (BM25 over text and topic path), after
    :func:`catch_up`; counts one retrieval for each entry returned."""
    conn = state.connection(drive.git_dir)
    current = catch_up(drive, policy=policy, conn=conn)
    return recall_search.search(conn, query, limit, count=count,
                                key=(str(drive.git_dir), current.head or ""))


def recall_in_mode(drive: Drive, query: str, limit: int = DEFAULT_LIMIT, *, mode: str | None = None,
                   count: bool = True, policy: Policy | None = None) -> Recalled:
    """:func:`recall` in ``mode`` (hybrid, lexical or semantic; default hybrid when the
    policy has an ``embeddings:`` section, else lexical), after :func:`catch_up`. An
    unavailable embedder answers lexically with a warning (memgit.recall.hybrid)."""
    if policy is None:
        policy = drive_policy(drive)
    config = policy.embeddings()
    chosen = hybrid.choose_mode(mode, config)
    conn = state.connection(drive.git_dir)
    current = catch_up(drive, policy=policy, conn=conn)
    return hybrid.search(conn, (str(drive.git_dir), current.head or ""), query, limit,
                         mode=chosen, config=config, count=count)
