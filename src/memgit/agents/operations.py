"""What an agent does with a drive: the operations behind ``memgit mcp`` and the hooks.

:class:`AgentDrive` opens a drive once and re-reads the branch head on every call, so
agents sharing a drive see each other's writes. Writes go through the writer (policy,
secret gate, compare-and-swap, pending queue). Results never echo a skipped text: a skip
names its reason.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

from memgit import state
from memgit.errors import MemgitError, UsageError
from memgit.git.repository import Drive, open_drive, ref_target, require_drive
from memgit.index.search import Hit, hit_json
from memgit.policy.settings import Policy, drive_policy
from memgit.recall.defaults import DEFAULT_BUDGET, DEFAULT_LIMIT

T = TypeVar("T")
MAX_TEXT = 4096  # characters of one entry an agent may send; the policy's limits apply after
MAX_LIMIT = 50


@dataclass
class Recalled:
    """What recall found: each hit with the label of its drive (None: this drive alone)."""

    query: str
    mode: str
    hits: list[tuple[str | None, Hit]]
    warnings: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # mounts not searched, and why


def write_summary(result: Any) -> dict[str, Any]:
    """A write_ops.WriteResult as the agent sees it: what was committed, queued or skipped."""
    from memgit.write.ops import result_lines

    out: dict[str, Any] = {
        "status": result.status,
        "summary": result_lines(result)[0],
        "commit": result.commit,
        "added": [{"id": a.id, "topic": a.path, "text": a.text, "source": a.source,
                   "added": a.added} for a in result.added],
        "retired": list(result.retired),
        "edited": list(result.edited),
        "updated": list(result.updated),
        "skipped": [{"id": s.id or None, "reason": s.reason, "detail": s.detail}
                    for s in result.skipped],
        "warnings": list(result.warnings),
    }
    if result.proposed:
        out["proposed"] = {"ids": list(result.proposed),
                           "note": "the drive's autonomy rules made this a proposal: it waits "
                                   "for a person (memgit approve) and is not recalled before"}
    if result.status == "queued":
        out["queued"] = {"pending": result.pending, "why": result.error,
                         "note": "acknowledged; retried on the next write or read"}
    return out


def _text(value: str, what: str) -> str:
    if not value or not value.strip():
        raise UsageError(f"the {what} is empty", f"pass the {what} as a non-empty string")
    if len(value) > MAX_TEXT:
        raise UsageError(f"the {what} has {len(value)} characters (at most {MAX_TEXT})",
                         "split it into several shorter facts")
    return value


class AgentDrive:
    """A drive kept open for an agent's many calls (one call at a time)."""

    def __init__(self, path: str | None = None, agent: str = "") -> None:
        self.path = path
        self.agent = agent  # the writer's name for the drive's autonomy rules
        self._drive: Drive | None = None
        self._lock = threading.Lock()

    # --- the drive ---------------------------------------------------------------------

    def drive(self) -> Drive:
        """The open drive; a folder that is not a drive raises NotADriveError on every
        call (and is looked at again, so ``memgit init`` there later works)."""
        if self._drive is None:
            drive = open_drive(self.path)
            require_drive(drive, self.policy(drive).branch_ref)
            self._drive = drive
        return self._drive

    def policy(self, drive: Drive) -> Policy:
        """Read per call: an edited memgit.yaml takes effect without a restart."""
        return drive_policy(drive)

    def call(self, fn: Callable[[Drive, Policy], T]) -> T:
        with self._lock:
            drive = self.drive()
            return fn(drive, self.policy(drive))

    # --- writes --------------------------------------------------------------------------

    def _actor(self, why: str = "") -> Any:
        from memgit.write.propose import Actor

        return Actor(agent=self.agent, why=why)

    def remember(self, text: str, topic: str | None = None,
                 source: str | None = None, why: str = "") -> dict[str, Any]:
        from memgit.write.ops import NewFact
        from memgit.write.writer import commit_facts

        fact = NewFact(_text(text, "text"), source or None, topic or None)
        return self.call(lambda d, p: write_summary(
            commit_facts(d, [fact], (), "Remember 1 entry", policy=p,
                         actor=self._actor(why))))

    def edit(self, entry_id: str, text: str) -> dict[str, Any]:
        from memgit.write.writer import commit_facts

        new = _text(text, "text")
        return self.call(lambda d, p: write_summary(
            commit_facts(d, (), (), "Edit 1 entry", edits={_text(entry_id, "id"): new},
                         policy=p, actor=self._actor())))

    def forget(self, entry_id: str) -> dict[str, Any]:
        from memgit.write.writer import commit_facts

        ids = [_text(entry_id, "id")]
        return self.call(lambda d, p: write_summary(
            commit_facts(d, (), ids, "Forget 1 entry", policy=p, actor=self._actor())))

    # --- proposals (docs/review.md) ----------------------------------------------------------

    def proposals(self, mine: bool = True) -> dict[str, Any]:
        """The pending proposals; ``mine``: only those this agent proposed (its name, or
        every proposal when the server was started without one)."""
        from memgit.review.proposals import listing

        by = self.agent if mine and self.agent else None
        found = self.call(lambda d, p: listing(d, p, by=by))
        return {"count": len(found), "proposals": [x.as_dict() for x in found]}

    def approve(self, ids: list[str], text: str | None = None) -> dict[str, Any]:
        from memgit.review.proposals import approve

        chosen = [_text(i, "id") for i in ids]
        return self.call(lambda d, p: write_summary(approve(d, chosen, text=text, policy=p)))

    def reject(self, ids: list[str], reason: str) -> dict[str, Any]:
        from memgit.review.proposals import reject

        chosen = [_text(i, "id") for i in ids]
        why = _text(reason, "reason")
        return self.call(lambda d, p: write_summary(reject(d, chosen, reason=why, policy=p)))

    # --- reads ----------------------------------------------------------------------------

    def recall(self, query: str, limit: int = DEFAULT_LIMIT, count: bool = True,
               mode: str | None = None, mounts: bool = False) -> dict[str, Any]:
        """:meth:`recall_hits` as JSON (``hits`` by index.search.hit_json)."""
        found = self.recall_hits(query, limit, count, mode, mounts)
        out: dict[str, Any] = {"query": found.query, "mode": found.mode,
                               "count": len(found.hits)}
        if mounts:
            out["skipped"] = found.skipped
        out["hits"] = [hit_json(hit, label) for label, hit in found.hits]
        if found.warnings:
            out["warnings"] = found.warnings
        return out

    def recall_hits(self, query: str, limit: int = DEFAULT_LIMIT, count: bool = True,
                    mode: str | None = None, mounts: bool = False) -> Recalled:
        """The best entries for ``query``: by words and meaning (hybrid, the default with
        an ``embeddings:`` section), words only (lexical) or meaning only (semantic).
        The embedder stays loaded between calls; without it the answer is lexical and
        ``warnings`` says why. With ``mounts``, of this drive and every mounted shared
        drive by words (memgit.sync.mounts), each hit labelled with its drive (``self`` or
        the mount's name) and ``skipped`` naming a mount that could not be searched."""
        from memgit.recall.read_path import recall_in_mode

        text = _text(query, "query")
        if not 1 <= limit <= MAX_LIMIT:
            raise UsageError(f"limit {limit} is out of range", f"pass 1 to {MAX_LIMIT}")
        if mounts:
            from memgit.recall.hybrid import check_mounts_mode
            from memgit.sync.mounts import recall_with_mounts

            check_mounts_mode(mode)
            across = self.call(lambda d, p: recall_with_mounts(d, text, limit, count=count,
                                                               policy=p))
            return Recalled(text, "lexical", [(dh.drive, dh.hit) for dh in across.hits],
                            skipped=list(across.skipped))
        found = self.call(lambda d, p: recall_in_mode(d, text, limit, mode=mode, count=count,
                                                      policy=p))
        return Recalled(text, found.mode, [(None, h) for h in found.hits],
                        warnings=list(found.warnings))

    def warm_embedder(self) -> str | None:
        """Load the drive's embedder and its vectors now (the MCP server's first recall is
        then as fast as the others) and start filling missing vectors in the background;
        returns why semantic recall is unavailable, or None."""
        from memgit.embeddings import fill as vector_fill
        from memgit.recall.hybrid import warm
        from memgit.recall.read_path import catch_up

        def load(drive: Drive, policy: Policy) -> str | None:
            config = policy.embeddings()
            if config is None:
                return None
            catch_up(drive, policy=policy)
            unavailable = warm(state.connection(drive.git_dir), str(drive.git_dir), config)
            vector_fill.schedule(drive.git_dir, config)  # what no filler embedded yet
            return unavailable

        return self.call(load)

    def context(self, budget_tokens: int = DEFAULT_BUDGET,
                query: str | None = None) -> dict[str, Any]:
        from memgit.recall.context import build_packet

        if budget_tokens < 0:
            raise UsageError("the budget is negative", "pass a number of tokens, e.g. 2000")
        packet = self.call(lambda d, p: build_packet(d, budget_tokens, query, policy=p))
        return packet.as_dict()

    def memory_md(self) -> str:
        """MEMORY.md at the branch head (empty before the first commit)."""
        from memgit.recall.context import memory_text

        return self.call(lambda d, p: memory_text(d, ref_target(d, p.branch_ref)))

    def status(self) -> dict[str, Any]:
        return self.call(_status)

    # --- the questions board ----------------------------------------------------------------

    def ask(self, text: str) -> dict[str, Any]:
        from memgit.write.board import ask

        question = _text(text, "question")
        out = self.call(lambda d, p: write_summary(ask(d, question, policy=p)))
        out["question_id"] = out["added"][0]["id"] if out["added"] else None
        return out

    def answer(self, question_id: str, text: str) -> dict[str, Any]:
        from memgit.write.board import answer

        qid, body = _text(question_id, "question id"), _text(text, "answer")
        return self.call(lambda d, p: write_summary(answer(d, qid, body, policy=p)))

    def resolve(self, question_id: str) -> dict[str, Any]:
        from memgit.write.board import resolve

        qid = _text(question_id, "question id")
        return self.call(lambda d, p: write_summary(resolve(d, qid, policy=p)))

    def questions(self, include_resolved: bool = False) -> dict[str, Any]:
        from memgit.write.board import board

        found = self.call(lambda d, p: board(d, p))
        items = [asdict(q) for q in found if include_resolved or q.status == "open"]
        for item in items:
            item["answers"] = [{"id": a, "text": t} for a, t in item["answers"]]
        return {"count": len(items), "questions": items}


    # --- working memory (docs/working-memory.md) ---------------------------------------------
    # The scope is the server's: MEMGIT_AGENT/MEMGIT_TEAM, else git config memgit.agent and
    # memgit.team, else the agent "default" (working.store.resolve_scope).

    def memory_get(self, key: str) -> dict[str, Any]:
        from memgit.working.store import get_value, resolve_scope

        def read(drive: Drive, policy: Policy) -> dict[str, Any]:
            scope = resolve_scope(drive)
            found = get_value(drive, scope, key, policy)
            return {"key": key, "value": found.value, "id": found.id, "set": found.set_at,
                    "agent": scope.agent, "team": scope.team}
        return self.call(read)

    def memory_set(self, key: str, value: Any) -> dict[str, Any]:
        from memgit.working.store import resolve_scope, write_values

        def write(drive: Drive, policy: Policy) -> dict[str, Any]:
            done = write_values(drive, resolve_scope(drive), {key: value}, policy)
            return {"key": key, "id": done.ids.get(key), "commit": done.commit}
        return self.call(write)

    def memory_delete(self, key: str) -> dict[str, Any]:
        from memgit.working.store import UNSET, resolve_scope, write_values

        def delete(drive: Drive, policy: Policy) -> dict[str, Any]:
            done = write_values(drive, resolve_scope(drive), {key: UNSET}, policy)
            return {"key": key, "deleted": True, "commit": done.commit}
        return self.call(delete)

    def memory_list(self, prefix: str = "", limit: int | None = None,
                    after: str | None = None) -> dict[str, Any]:
        from memgit.working.store import list_keys, parse_page_args, resolve_scope

        size = parse_page_args(limit)

        def page(drive: Drive, _policy: Policy) -> dict[str, Any]:
            keys, cursor = list_keys(drive, resolve_scope(drive), prefix=prefix, after=after,
                                     limit=size)
            return {"keys": [{"key": k, "bytes": n} for k, n in keys], "next": cursor}
        return self.call(page)


def _status(drive: Drive, policy: Policy) -> dict[str, Any]:
    """Drive, branch, head, pending writes and the last sync (no network)."""
    from memgit.state import pending

    conn = state.connection(drive.git_dir)
    out: dict[str, Any] = {
        "drive": str(drive.root),
        "bare": drive.workdir is None,
        "branch": policy.branch,
        "head": ref_target(drive, policy.branch_ref),
        "pending_writes": pending.count(conn),
        "last_sync": None,
        "waiting_commits": None,
        "remote_url": None,
    }
    if drive.workdir is not None:
        from memgit.sync.client import sync_status

        try:
            synced = sync_status(drive, "origin")
        except MemgitError:
            return out
        out.update({k: synced[k] for k in ("last_sync", "waiting_commits", "remote_url")})
    return out
