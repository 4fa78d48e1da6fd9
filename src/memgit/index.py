"""The index: every entry of the drive's branch head in SQLite, and recall.

The drive is the truth, the index a cache (docs/index.md): it lives in the
state database (state.py), can be deleted at any time, and is rebuilt from the
branch head. Rules (SPEC section 3):

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
* every read compares the head with the indexed revision and repairs first.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

from . import format as fmt
from . import state
from .policy import MODE_EXEC, MODE_FILE, Policy, find_policy, text_digest
from .repo import (
    Drive,
    changed_files,
    commit_tree_id,
    config_set,
    has_commit,
    is_ancestor,
    read_blob,
    ref_target,
    root_commit,
    tree_files,
)

DRIVE_ID_KEY = "memgit.driveid"
_EXCLUDED_STATUS = ("proposed", "rejected")
_EXCLUDED_KINDS = ("question", "answer")


# --- rows ---------------------------------------------------------------------------


class Row(NamedTuple):
    fact_id: str
    entry_id: str
    path: str
    line: int
    text: str
    source: str
    added: str
    digest: str
    indexed: int


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
    mode: str  # "current", "incremental", "full" or "empty" (no branch yet)
    head: str | None
    files: int = 0  # files parsed
    inserted: int = 0
    updated: int = 0
    retired: int = 0
    changed_paths: list[str] = field(default_factory=list)


def fact_id(drive_id: str, entry_id: str) -> str:
    return "drive_" + hashlib.sha256(f"{drive_id}\n{entry_id}".encode()).hexdigest()


def is_indexable(path: str, meta: Mapping[str, str]) -> bool:
    """False for entries that are not memory (SPEC section 3, Index)."""
    if path.startswith("twin/"):
        return False
    if meta.get("status", "") in _EXCLUDED_STATUS:
        return False
    if meta.get("scope", "").startswith("twin"):
        return False
    if meta.get("memory_type", "") == "not_memory":
        return False
    return meta.get("kind", "") not in _EXCLUDED_KINDS


def topic_words(path: str) -> str:
    """The path as words for the full-text ``topic`` column: projects/payments.md ->
    'projects payments'."""
    stem = path[:-3] if path.endswith(".md") else path
    return re.sub(r"[/_.-]+", " ", stem).strip()


def file_rows(drive_id: str, path: str, text: str) -> Iterator[Row]:
    """The rows of one Markdown file, in line order."""
    doc = fmt.parse_document(path, text)
    for line, entry in doc.entries():
        meta = entry.meta
        entry_id = entry.id
        body = entry.text
        yield Row(fact_id(drive_id, entry_id), entry_id, path, line.number, body,
                  meta.get("source", ""), meta.get("added", ""), text_digest(body),
                  1 if is_indexable(path, meta) else 0)


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


# --- connections -----------------------------------------------------------------------

_conn_lock = threading.Lock()
_connections: dict[tuple[int, str], tuple[sqlite3.Connection, int]] = {}


def connection(drive: Drive) -> sqlite3.Connection:
    """The process's connection to the drive's state database (opened once).

    A database file deleted or replaced since it was opened is noticed (inode
    check) and reopened, so "delete state.sqlite" works in a running process too.
    """
    key = (os.getpid(), str(drive.git_dir))
    path = state.state_path(drive.git_dir)
    with _conn_lock:
        cached = _connections.get(key)
        if cached is not None:
            conn, inode = cached
            try:
                current = os.stat(path).st_ino
            except FileNotFoundError:
                current = -1
            if current == inode:
                return conn
            conn.close()
            del _connections[key]
        conn = state.connect(drive.git_dir)
        _connections[key] = (conn, os.stat(path).st_ino)
        return conn


def close_connections() -> None:
    with _conn_lock:
        for conn, _inode in _connections.values():
            conn.close()
        _connections.clear()


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# --- reindex ----------------------------------------------------------------------------


def reindex(drive: Drive, *, full: bool = False, policy: Policy | None = None,
            conn: sqlite3.Connection | None = None,
            also: Callable[[sqlite3.Connection], None] | None = None) -> ReindexResult:
    """Bring the index to the branch head (a full rebuild with ``full``).

    ``also`` runs inside the same transaction (the writer counts its events
    there: one fsync instead of two).
    """
    conn = conn if conn is not None else connection(drive)
    ref = branch_ref(drive, policy)
    with state.immediate(conn):
        if also is not None:
            also(conn)
        return _reindex_locked(drive, conn, ref, full)


def _reindex_locked(drive: Drive, conn: sqlite3.Connection, ref: str,
                    full: bool) -> ReindexResult:
    head = ref_target(drive, ref)
    indexed = state.get_meta(conn, "indexed_rev")
    if head is None:
        if indexed is not None:
            _retire_all(conn, _now())
            state.delete_meta(conn, "indexed_rev")
        return ReindexResult("empty", None)
    did = drive_id(drive, head)
    if state.get_meta(conn, "drive_id") not in (None, did):
        # Another drive id means other fact ids: start over.
        conn.execute("DELETE FROM facts")
        conn.execute("DELETE FROM facts_fts")
        indexed = None
    state.set_meta(conn, "drive_id", did)
    if indexed == head and not full:
        return ReindexResult("current", head)
    now = _now()
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
             into: dict[str, Row]) -> int:
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


class _Old(NamedTuple):
    rowid: int
    row: Row
    valid_until: str | None


_OLD_SQL = ("SELECT id, fact_id, entry_id, path, line, text, source, added, digest, indexed, "
            "valid_until FROM facts")


def _old(r: tuple) -> _Old:
    return _Old(r[0], Row(*r[1:10]), r[10])


def _full(drive: Drive, conn: sqlite3.Connection, did: str, tree: str,
          now: str) -> ReindexResult:
    new: dict[str, Row] = {}
    files = [(f.path, f.oid) for f in tree_files(drive, tree) if f.mode in (MODE_FILE, MODE_EXEC)]
    parsed = _collect(drive, did, files, new)
    old = {r[1]: _old(r) for r in conn.execute(_OLD_SQL)}
    result = ReindexResult("full", None, files=parsed)
    _sync(conn, new, old, None, now, result)
    return result


def _incremental(drive: Drive, conn: sqlite3.Connection, did: str, old_tree: str,
                 new_tree: str, now: str) -> ReindexResult:
    changes = changed_files(drive, old_tree, new_tree)
    paths = sorted({p for p, _oid in changes})
    new: dict[str, Row] = {}
    parsed = _collect(drive, did, [(p, oid) for p, oid in changes if oid is not None], new)
    old: dict[str, _Old] = {}
    for chunk in _chunks(paths, 500):
        marks = ",".join("?" * len(chunk))
        for r in conn.execute(f"{_OLD_SQL} WHERE valid_until IS NULL AND path IN ({marks})",
                              chunk):
            old[r[1]] = _old(r)
    result = ReindexResult("incremental", None, files=parsed, changed_paths=paths)
    _sync(conn, new, old, conn, now, result)
    return result


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def _sync(conn: sqlite3.Connection, new: dict[str, Row], old: dict[str, _Old],
          lookup: sqlite3.Connection | None, now: str, result: ReindexResult) -> None:
    """Make the rows in scope (``old``) match ``new``; rows outside the scope
    that ``new`` names are looked up when ``lookup`` is given."""
    retire = [o for fid, o in old.items() if fid not in new and o.valid_until is None]
    if retire:
        conn.executemany("UPDATE facts SET valid_until = ? WHERE id = ?",
                         [(now, o.rowid) for o in retire])
        conn.executemany("DELETE FROM facts_fts WHERE rowid = ?",
                         [(o.rowid,) for o in retire if o.row.indexed])
        result.retired += len(retire)
    inserts: list[Row] = []
    fts_add: list[tuple[int, str, str]] = []
    fts_del: list[tuple[int]] = []
    updates: list[tuple] = []
    for fid, row in new.items():
        prev = old.get(fid)
        if prev is None and lookup is not None:
            found = lookup.execute(f"{_OLD_SQL} WHERE fact_id = ?", (fid,)).fetchone()
            prev = _old(found) if found is not None else None
        if prev is None:
            inserts.append(row)
            continue
        active = prev.valid_until is None
        if active and prev.row == row:
            continue
        updates.append((row.entry_id, row.path, row.line, row.text, row.source, row.added,
                        row.digest, row.indexed, now if not active else None, prev.rowid))
        was_searchable = active and prev.row.indexed
        same_words = prev.row.text == row.text and prev.row.path == row.path
        if was_searchable and (not row.indexed or not same_words):
            fts_del.append((prev.rowid,))
        if row.indexed and not (was_searchable and same_words):
            fts_add.append((prev.rowid, row.text, topic_words(row.path)))
    if updates:
        conn.executemany(
            "UPDATE facts SET entry_id = ?, path = ?, line = ?, text = ?, source = ?, "
            "added = ?, digest = ?, indexed = ?, valid_from = coalesce(?, valid_from), "
            "valid_until = NULL WHERE id = ?", updates)
        result.updated += len(updates)
    if fts_del:
        conn.executemany("DELETE FROM facts_fts WHERE rowid = ?", fts_del)
    if inserts:
        cur = conn.execute("SELECT coalesce(max(id), 0) FROM facts")
        next_id = int(cur.fetchone()[0]) + 1
        rows = []
        for offset, row in enumerate(inserts):
            rowid = next_id + offset
            rows.append((rowid, *row, now))
            if row.indexed:
                fts_add.append((rowid, row.text, topic_words(row.path)))
        conn.executemany(
            "INSERT INTO facts (id, fact_id, entry_id, path, line, text, source, added, digest, "
            "indexed, valid_from) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        result.inserted += len(inserts)
    if fts_add:
        conn.executemany("INSERT INTO facts_fts (rowid, text, topic) VALUES (?, ?, ?)", fts_add)


def _retire_all(conn: sqlite3.Connection, now: str) -> None:
    conn.execute("UPDATE facts SET valid_until = ? WHERE valid_until IS NULL", (now,))
    conn.execute("DELETE FROM facts_fts")


def ensure_current(drive: Drive, *, policy: Policy | None = None,
                   conn: sqlite3.Connection | None = None,
                   drain_pending: bool = True) -> ReindexResult:
    """The read path's first step: retry pending writes, then repair a stale index.

    Costs one ref read and one small query when nothing is to be done.
    """
    conn = conn if conn is not None else connection(drive)
    ref = branch_ref(drive, policy)
    indexed, pending = conn.execute(
        "SELECT (SELECT value FROM meta WHERE key = 'indexed_rev'), "
        "(SELECT count(*) FROM pending)").fetchone()
    if pending and drain_pending:
        from .writer import retry_pending

        retry_pending(drive, policy=policy, timeout=0.0)
    head = ref_target(drive, ref)
    if head is not None and head == indexed:
        return ReindexResult("current", head)
    with state.immediate(conn):
        return _reindex_locked(drive, conn, ref, False)


# --- recall ------------------------------------------------------------------------------

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


def _term_counts(conn: sqlite3.Connection, key: tuple[str, str]) -> tuple[int, dict[str, int]]:
    drive, head = key
    cached = _df_cache.get(drive)
    if cached is not None and cached[0] == head:
        return cached[1], cached[2]
    total = int(conn.execute("SELECT count(*) FROM facts_fts").fetchone()[0])
    counts = cached[2] if cached is not None and abs(total - cached[1]) <= 0.02 * cached[1] \
        else {}
    if len(_df_cache) > 64:
        _df_cache.clear()
    _df_cache[drive] = (head, total, counts)
    return total, counts


def _matches(conn: sqlite3.Connection, counts: dict[str, int], term: str) -> int:
    if term not in counts:
        counts[term] = int(conn.execute(
            "SELECT count(*) FROM facts_fts WHERE facts_fts MATCH ?", (term,)).fetchone()[0])
    return counts[term]


def _prune_common(conn: sqlite3.Connection, key: tuple[str, str], expression: str) -> str:
    terms = expression.split(" OR ")
    if len(terms) < 2:
        return expression
    total, counts = _term_counts(conn, key)
    if total < COMMON_MIN_ENTRIES:
        return expression
    rare = [t for t in terms if _matches(conn, counts, t) <= COMMON_SHARE * total]
    return " OR ".join(rare) if rare else expression


def _only_common(conn: sqlite3.Connection, key: tuple[str, str], expression: str) -> bool:
    """A one-term query whose term matches a large share of a large drive ("the")."""
    if " OR " in expression:
        return False
    total, counts = _term_counts(conn, key)
    return total >= COMMON_MIN_ENTRIES and \
        _matches(conn, counts, expression) > COMMON_SHARE * total


# Rank inside the full-text table first and join only the top rows: joining
# every match before sorting costs a facts lookup per match (3x slower at p50
# on a 15,000-entry drive, bench/bench_recall.py).
_RECALL_SQL = (
    "SELECT f.entry_id, f.text, f.path, f.line, f.source, f.added, r.score, f.fact_id, "
    "f.retrievals, f.id FROM (SELECT rowid, bm25(facts_fts, 1.0, 0.4) AS score "
    "FROM facts_fts WHERE facts_fts MATCH ? ORDER BY score LIMIT ?) AS r "
    "JOIN facts f ON f.id = r.rowid ORDER BY r.score, f.id")
# A single term found in a large share of the drive carries almost no ranking
# information, and BM25 would score every match (6 ms for "the" on 15,000
# entries): take the newest matches instead, which FTS5 reads in rowid order
# and stops after ``limit``; they are still scored with BM25 for the output.
_RECENT_SQL = (
    "SELECT f.entry_id, f.text, f.path, f.line, f.source, f.added, r.score, f.fact_id, "
    "f.retrievals, f.id FROM (SELECT rowid, bm25(facts_fts, 1.0, 0.4) AS score "
    "FROM facts_fts WHERE facts_fts MATCH ? ORDER BY rowid DESC LIMIT ?) AS r "
    "JOIN facts f ON f.id = r.rowid ORDER BY r.score, f.id")


def recall(drive: Drive, query: str, limit: int = 5, *, count: bool = True,
           policy: Policy | None = None) -> list[Hit]:
    """The ``limit`` best entries for ``query`` (BM25 over text and topic path).

    Repairs a stale index first; counts one retrieval for each entry returned.
    """
    conn = connection(drive)
    current = ensure_current(drive, policy=policy, conn=conn)
    expression = match_expression(query)
    if not expression or limit <= 0:
        return []
    key = (str(drive.git_dir), current.head or "")
    expression = _prune_common(conn, key, expression)
    sql = _RECENT_SQL if _only_common(conn, key, expression) else _RECALL_SQL
    rows = conn.execute(sql, (expression, limit)).fetchall()
    hits = [Hit(r[0], r[1], r[2], r[3], r[4], r[5], round(-float(r[6]), 4), r[7],
                int(r[8]) + (1 if count else 0)) for r in rows]
    if count and rows:
        _count_retrievals(conn, [r[9] for r in rows])
    return hits


def _count_retrievals(conn: sqlite3.Connection, rowids: list[int]) -> None:
    """One transaction, committed without waiting for the disk.

    The only write memgit makes at ``synchronous=NORMAL``: in WAL mode a power
    loss can then lose the last few counts (never corrupt the file), and an fsync
    per recall would be most of its time (3 ms of 4, bench_recall.py). Counts
    are cache data: a rebuild resets them anyway (docs/index.md).
    """
    now = _now()
    conn.execute("PRAGMA synchronous = NORMAL")
    try:
        with state.immediate(conn):
            conn.executemany("UPDATE facts SET retrievals = retrievals + 1, "
                             "last_retrieved = ? WHERE id = ?", [(now, rid) for rid in rowids])
    finally:
        conn.execute("PRAGMA synchronous = FULL")


# --- lookups for the writer and info -----------------------------------------------------


def locate(conn: sqlite3.Connection, entry_ids: Iterable[str]) -> dict[str, str]:
    """entry id -> path of the present entries among ``entry_ids`` (index only)."""
    return _present_by(conn, "entry_id", "path", entry_ids)


def present_digests(conn: sqlite3.Connection, digests: Iterable[str]) -> dict[str, str]:
    """text digest -> entry id of present entries with that text."""
    return _present_by(conn, "digest", "entry_id", digests)


def _present_by(conn: sqlite3.Connection, key: str, value: str,
                wanted: Iterable[str]) -> dict[str, str]:
    """``key -> value`` of present rows whose ``key`` is in ``wanted`` (first row wins)."""
    items = list(dict.fromkeys(wanted))
    out: dict[str, str] = {}
    for chunk in _chunks(items, 500):
        marks = ",".join("?" * len(chunk))
        for k, v in conn.execute(f"SELECT {key}, {value} FROM facts WHERE valid_until IS NULL "
                                 f"AND {key} IN ({marks})", chunk):
            out.setdefault(k, v)
    return out


@dataclass(frozen=True)
class IndexStats:
    indexed_rev: str | None
    indexed_at: str | None
    drive_id: str | None
    entries: int  # searchable entries
    rows: int  # present rows, searchable or not
    retired: int
    retrievals: int


def stats(conn: sqlite3.Connection) -> IndexStats:
    searchable, present, retired, retrievals = conn.execute(
        "SELECT coalesce(sum(indexed AND valid_until IS NULL), 0), "
        "coalesce(sum(valid_until IS NULL), 0), coalesce(sum(valid_until IS NOT NULL), 0), "
        "coalesce(sum(retrievals), 0) FROM facts").fetchone()
    return IndexStats(state.get_meta(conn, "indexed_rev"), state.get_meta(conn, "indexed_at"),
                      state.get_meta(conn, "drive_id"), int(searchable), int(present),
                      int(retired), int(retrievals))


# --- purge support ------------------------------------------------------------------------


def forget_entries(drive: Drive, ids: Iterable[str], *, scrub: bool = True) -> int:
    """Delete the index rows (and full-text rows) of purged entries; returns rows deleted.

    Unlike a soft retire, nothing of the entry stays in the state database. With
    ``scrub=False`` the file is only rewritten when a row was deleted (sync calls it
    on every change of the server's purged ids).
    """
    conn = connection(drive)
    wanted = list(dict.fromkeys(ids))
    deleted = 0
    # A plain DELETE leaves the bytes in freed pages and FTS5 keeps the words in
    # its segments until they merge: secure_delete zeroes freed pages, the FTS5
    # 'optimize' command rewrites the segments, VACUUM rebuilds the file, and a
    # TRUNCATE checkpoint empties the WAL, which holds copies of old pages.
    conn.execute("PRAGMA secure_delete = ON")
    with state.immediate(conn):
        for chunk in _chunks(wanted, 500):
            marks = ",".join("?" * len(chunk))
            rowids = [r[0] for r in conn.execute(
                f"SELECT id FROM facts WHERE entry_id IN ({marks})", chunk)]
            conn.executemany("DELETE FROM facts_fts WHERE rowid = ?", [(r,) for r in rowids])
            conn.executemany("DELETE FROM facts WHERE id = ?", [(r,) for r in rowids])
            deleted += len(rowids)
        if not deleted and not scrub:
            return 0
        conn.execute("INSERT INTO facts_fts(facts_fts) VALUES ('optimize')")
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return deleted


def remap_revisions(drive: Drive, mapping: Mapping[str, str]) -> None:
    """After a history rewrite: replace stored commit ids (old -> new).

    The indexed revision keeps being an ancestor of the head, so the next read
    reindexes incrementally; a revision missing from ``mapping`` is dropped and
    the next read rebuilds fully.
    """
    conn = connection(drive)
    with state.immediate(conn):
        indexed = state.get_meta(conn, "indexed_rev")
        if indexed is None:
            return
        if indexed in mapping:
            state.set_meta(conn, "indexed_rev", mapping[indexed])
        else:
            state.delete_meta(conn, "indexed_rev")

