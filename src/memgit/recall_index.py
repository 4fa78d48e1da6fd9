"""The recall index: every entry of the drive's branch head as a row, and search.

"Recall index" is this SQLite cache only; git's index is called the staging area
(memgit.git.worktree.staged_files) and MEMORY.md's ``## Index`` the Index section
(format.regenerate_index_section). The drive is the truth, the recall index a
cache (docs/index.md): it lives in the state database (memgit.state), can be
deleted at any time, and is rebuilt from the branch head. Rules (docs/spec.md, section 3):

* each entry is a row keyed by the fact id ``drive_`` + sha256(drive id + "\\n"
  + entry id), so retrieval counts survive edits of the entry's text;
* entries that leave the drive are retired softly (``valid_until`` set) and
  revived when they return;
* entries that are not memory (``status: proposed|rejected``, ``scope: twin*``,
  ``memory_type: not_memory``, ``kind: question|answer``, anything under
  ``twin/``) are kept as rows (the writer finds entries by id through them) but
  never enter the full-text table, so recall cannot return them;
* reindexing runs inside one ``BEGIN IMMEDIATE`` transaction: incremental from
  a tree diff when the indexed revision is an ancestor of the head, a full
  rebuild otherwise;
* every read compares the head with the indexed revision and repairs first
  (memgit.read_path, which also drains the writer's pending queue first).

The rows live in the state database (state.facts holds their SQL); this module
decides what they are and when they change. It never imports the writer.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from . import format as fmt
from . import state
from .git.modes import MODE_EXEC, MODE_FILE
from .git.plumbing import config_set
from .git.repository import (
    Drive,
    changed_files,
    commit_tree_id,
    has_commit,
    is_ancestor,
    local_branches,
    missing_branch,
    read_blob,
    ref_target,
    root_commit,
    tree_files,
)
from .policy import Policy, find_policy, text_digest
from .state import facts
from .state.facts import FactRow

DRIVE_ID_KEY = "memgit.driveid"
_EXCLUDED_STATUS = ("proposed", "rejected")
_EXCLUDED_KINDS = ("question", "answer")


# --- rows ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Hit:
    """One recall result."""

    entry_id: str
    text: str
    path: str
    line: int
    source: str
    added: str
    score: float
    fact_id: str
    retrievals: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ReindexResult:
    mode: str  # "current", "incremental", "full" or "empty" (no commit yet)
    head: str | None
    files: int = 0  # files parsed
    inserted: int = 0
    updated: int = 0
    retired: int = 0
    changed_paths: list[str] = field(default_factory=list)


def fact_id(drive_id: str, entry_id: str) -> str:
    return "drive_" + hashlib.sha256(f"{drive_id}\n{entry_id}".encode()).hexdigest()


def is_indexable(path: str, meta: Mapping[str, str]) -> bool:
    """False for entries that are not memory (docs/spec.md, section 3, Index)."""
    if path.startswith("twin/"):
        return False
    if meta.get("status", "") in _EXCLUDED_STATUS:
        return False
    if meta.get("scope", "").startswith("twin"):
        return False
    if meta.get("memory_type", "") == "not_memory":
        return False
    return meta.get("kind", "") not in _EXCLUDED_KINDS


def file_rows(drive_id: str, path: str, text: str) -> Iterator[FactRow]:
    """The rows of one Markdown file, in line order; each row's context is the heading
    trail above the entry and its ``context`` key (memgit import writes the source's
    trail there)."""
    doc = fmt.parse_document(path, text)
    trails = fmt.heading_trails(doc)
    for line, entry in doc.entries():
        meta = entry.meta
        entry_id = entry.id
        body = entry.text
        context = " > ".join(c for c in (trails.get(line.number, ""), meta.get("context", ""))
                             if c)
        yield FactRow(fact_id(drive_id, entry_id), entry_id, path, line.number, body,
                      meta.get("source", ""), meta.get("added", ""), text_digest(body),
                      1 if is_indexable(path, meta) else 0, context)


# --- the drive id, the branch ----------------------------------------------------------


def drive_id(drive: Drive, head: str | None = None) -> str:
    """The drive's id: git config ``memgit.driveid`` or, when unset, the id of the
    branch's first commit, written to the config so a later history rewrite
    (purge) keeps the fact ids. Clones of a drive share their first commit,
    hence their drive id."""
    value = drive.config_value(DRIVE_ID_KEY)
    if value:
        return value
    if head is None:
        head = ref_target(drive, branch_ref(drive))
        if head is None:
            return ""
    root = root_commit(drive, head)
    try:
        config_set(drive.git_dir, DRIVE_ID_KEY, root)
    except Exception:  # noqa: BLE001 - a read-only or locked config: the value is derivable
        pass
    return root


def _policy(drive: Drive, policy: Policy | None) -> Policy:
    if policy is not None:
        return policy
    return find_policy(None, drive.git_dir, drive.config_value("memgit.policy"))


def branch_ref(drive: Drive, policy: Policy | None = None) -> str:
    return _policy(drive, policy).branch_ref


# --- reindex ----------------------------------------------------------------------------


def reindex(drive: Drive, *, full: bool = False, policy: Policy | None = None,
            conn: state.Connection | None = None,
            also: Callable[[state.Connection], None] | None = None) -> ReindexResult:
    """Bring the index to the branch head (a full rebuild with ``full``).

    ``also`` runs inside the same transaction (the writer counts its events
    there: one fsync instead of two).
    """
    conn = conn if conn is not None else state.connection(drive.git_dir)
    ref = branch_ref(drive, policy)
    with state.immediate(conn):
        if also is not None:
            also(conn)
        return _reindex_locked(drive, conn, ref, full)


def ensure_current(drive: Drive, *, policy: Policy | None = None,
                   conn: state.Connection | None = None) -> ReindexResult:
    """Repair a stale index: one ref read and one small query when nothing is to be
    done. (Reads go through memgit.read_path.catch_up, which drains the writer's
    pending queue first.)"""
    conn = conn if conn is not None else state.connection(drive.git_dir)
    ref = branch_ref(drive, policy)
    head = ref_target(drive, ref)
    if head is not None and head == state.get_meta(conn, "indexed_rev"):
        return ReindexResult("current", head)
    with state.immediate(conn):
        return _reindex_locked(drive, conn, ref, False)


def _reindex_locked(drive: Drive, conn: state.Connection, ref: str,
                    full: bool) -> ReindexResult:
    head = ref_target(drive, ref)
    indexed = state.get_meta(conn, "indexed_rev")
    if head is None:
        # never empty the index because the branch is not there (a repository on
        # master, a policy naming another branch): say so; only a repository without
        # any commit, never indexed, is an empty drive
        if indexed is None and not local_branches(drive):
            return ReindexResult("empty", None)
        raise missing_branch(drive, ref)
    did = drive_id(drive, head)
    if state.get_meta(conn, "drive_id") not in (None, did):
        facts.clear(conn)  # another drive id means other fact ids: start over
        indexed = None
    state.set_meta(conn, "drive_id", did)
    if indexed == head and not full:
        return ReindexResult("current", head)
    now = state.utc_now(micro=True)
    new_tree = commit_tree_id(drive, head)
    if (not full and indexed is not None and has_commit(drive, indexed)
            and is_ancestor(drive, indexed, head)):
        result = _incremental(drive, conn, did, commit_tree_id(drive, indexed), new_tree, now)
    else:
        result = _full(drive, conn, did, new_tree, now)
    result.head = head
    state.set_meta(conn, "indexed_rev", head)
    state.set_meta(conn, "indexed_at", now)
    return result


def _read_text(drive: Drive, oid: str) -> str | None:
    try:
        return read_blob(drive, oid).decode("utf-8")
    except UnicodeDecodeError:
        return None  # not text: no entries (the policy reports it)


def _collect(drive: Drive, did: str, files: Iterable[tuple[str, str]],
             into: dict[str, FactRow]) -> int:
    count = 0
    for path, oid in sorted(files):
        if not path.endswith(".md"):
            continue
        text = _read_text(drive, oid)
        if text is None:
            continue
        count += 1
        for row in file_rows(did, path, text):
            into.setdefault(row.fact_id, row)  # a duplicated id: the first path wins
    return count


def _keep_copies(drive: Drive, did: str, tree: str, changed: set[str],
                 old: Mapping[str, facts.StoredRow], new: dict[str, FactRow]) -> None:
    """An id-less line written twice has one derived id, hence one row: when the copy
    the row points at leaves a changed file, the row stays (moved to another copy) while
    an unchanged file still holds one. Only files holding the line's text are parsed."""
    leaving = {fid: o.row for fid, o in old.items()
               if fid not in new and o.valid_until is None and o.row.entry_id.startswith("entry-")}
    if not leaving:
        return
    needles = {row.text.encode() for row in leaving.values()}
    for entry in tree_files(drive, tree):
        if entry.path in changed or not entry.path.endswith(".md") \
                or entry.mode not in (MODE_FILE, MODE_EXEC):
            continue
        data = read_blob(drive, entry.oid)
        if not any(needle in data for needle in needles):
            continue
        for row in file_rows(did, entry.path, data.decode("utf-8", "replace")):
            if row.fact_id in leaving:
                new.setdefault(row.fact_id, row)


def _full(drive: Drive, conn: state.Connection, did: str, tree: str,
          now: str) -> ReindexResult:
    new: dict[str, FactRow] = {}
    files = [(f.path, f.oid) for f in tree_files(drive, tree) if f.mode in (MODE_FILE, MODE_EXEC)]
    parsed = _collect(drive, did, files, new)
    counts = facts.sync_rows(conn, new, facts.stored_rows(conn), look_up_others=False, now=now)
    return ReindexResult("full", None, parsed, *counts)


def _incremental(drive: Drive, conn: state.Connection, did: str, old_tree: str,
                 new_tree: str, now: str) -> ReindexResult:
    changes = changed_files(drive, old_tree, new_tree)
    paths = sorted({p for p, _oid in changes})
    new: dict[str, FactRow] = {}
    parsed = _collect(drive, did, [(p, oid) for p, oid in changes if oid is not None], new)
    old = facts.present_rows_in(conn, paths)
    _keep_copies(drive, did, new_tree, set(paths), old, new)
    counts = facts.sync_rows(conn, new, old, look_up_others=True, now=now)
    return ReindexResult("incremental", None, parsed, *counts, changed_paths=paths)


# --- search ------------------------------------------------------------------------------
_STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its
itself just me more most my myself no nor not now of off on once only or other our ours
ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours yourself yourselves
tell know find get got anything something anyone someone thing things remember recall did
does say said us
""".split())
_WORD_RE = re.compile(r"\w+", re.UNICODE)


def match_expression(query: str) -> str:
    """The FTS5 query for free text: its words (stop words dropped), OR-ed.

    Each word is quoted, so FTS5 syntax in the query is never interpreted;
    words of four letters or more also match as prefixes (config ->
    configuration). BM25 then ranks entries matching more and rarer words first.
    """
    words: list[str] = []
    for word in _WORD_RE.findall(query.casefold()):
        if word in _STOPWORDS or word in words:
            continue
        words.append(word)
    if not words:  # a query of stop words only: search them as given
        words = list(dict.fromkeys(_WORD_RE.findall(query.casefold())))
    return " OR ".join(match_terms(words))


def match_terms(words: Iterable[str]) -> list[str]:
    return [f'"{w}"*' if len(w) >= 4 else f'"{w}"' for w in words]


# Terms matching more than this share of a large drive's entries are dropped
# from a query that has rarer terms: BM25 gives them almost no weight, but
# scoring their thousands of matches dominates the time (bench_recall.py).
COMMON_SHARE = 0.2
COMMON_MIN_ENTRIES = 1000
# Per drive: the head the counts were taken at, the number of entries then, and
# the number of entries matching each term. Document frequencies move slowly, so
# they survive new heads until the drive's size has changed by more than 2%.
_df_cache: dict[str, tuple[str, int, dict[str, int]]] = {}


def _term_counts(conn: state.Connection, key: tuple[str, str]) -> tuple[int, dict[str, int]]:
    drive, head = key
    cached = _df_cache.get(drive)
    if cached is not None and cached[0] == head:
        return cached[1], cached[2]
    total = facts.searchable_count(conn)
    counts = cached[2] if cached is not None and abs(total - cached[1]) <= 0.02 * cached[1] \
        else {}
    if len(_df_cache) > 64:
        _df_cache.clear()
    _df_cache[drive] = (head, total, counts)
    return total, counts


def _matches(conn: state.Connection, counts: dict[str, int], term: str) -> int:
    if term not in counts:
        counts[term] = facts.match_count(conn, term)
    return counts[term]


def _prune_common(conn: state.Connection, key: tuple[str, str], expression: str) -> str:
    terms = expression.split(" OR ")
    if len(terms) < 2:
        return expression
    total, counts = _term_counts(conn, key)
    if total < COMMON_MIN_ENTRIES:
        return expression
    rare = [t for t in terms if _matches(conn, counts, t) <= COMMON_SHARE * total]
    return " OR ".join(rare) if rare else expression


def _only_common(conn: state.Connection, key: tuple[str, str], expression: str) -> bool:
    """A one-term query whose term matches a large share of a large drive ("the")."""
    if " OR " in expression:
        return False
    total, counts = _term_counts(conn, key)
    return total >= COMMON_MIN_ENTRIES and \
        _matches(conn, counts, expression) > COMMON_SHARE * total


def search(conn: state.Connection, query: str, limit: int = 5, *, count: bool = True,
           key: tuple[str, str] = ("", "")) -> list[Hit]:
    """The ``limit`` best entries for ``query`` (BM25 over text and topic path) in an
    index that is current; counts one retrieval for each entry returned. ``key``
    (git dir, head) names the index for the cached word counts. Reads call
    memgit.read_path.recall, which makes the index current first."""
    expression = match_expression(query)
    if not expression or limit <= 0:
        return []
    expression = _prune_common(conn, key, expression)
    rows = facts.search(conn, expression, limit, newest=_only_common(conn, key, expression))
    hits = [Hit(r.entry_id, r.text, r.path, r.line, r.source, r.added,
                round(-float(r.score), 4), r.fact_id, int(r.retrievals) + (1 if count else 0))
            for r in rows]
    if count and rows:
        facts.count_retrievals(conn, [r.rowid for r in rows])
    return hits


# --- purge support ------------------------------------------------------------------------


def forget_entries(drive: Drive, ids: Iterable[str], *, scrub: bool = True) -> int:
    """Delete the index rows (and full-text rows) of purged entries; returns rows deleted
    (``scrub=False``: leave the file as it is when no row was there)."""
    return facts.delete_entries(state.connection(drive.git_dir), ids, scrub=scrub)


def remap_revisions(drive: Drive, mapping: Mapping[str, str]) -> None:
    """After a history rewrite: replace stored commit ids (old -> new).

    The indexed revision keeps being an ancestor of the head, so the next read
    reindexes incrementally; a revision missing from ``mapping`` is dropped and
    the next read rebuilds fully.
    """
    conn = state.connection(drive.git_dir)
    with state.immediate(conn):
        indexed = state.get_meta(conn, "indexed_rev")
        if indexed is None:
            return
        if indexed in mapping:
            state.set_meta(conn, "indexed_rev", mapping[indexed])
        else:
            state.delete_meta(conn, "indexed_rev")
