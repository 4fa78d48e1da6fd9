"""The recall index: every entry of the drive's branch head as a row (docs/index.md).

The drive is the truth and the index a cache, rebuilt from the branch head at any time. A
row's fact id is ``drive_`` + sha256(drive id + "\\n" + entry id), so retrieval counts
survive edits. Entries that leave are retired (``valid_until``), not deleted, and revived
when they return. Entries that are not memory keep a row (the writer finds them by id) but
never enter the full-text table, so recall cannot return them. A reindex is one ``BEGIN
IMMEDIATE`` transaction: incremental from a tree diff when the indexed revision is an
ancestor of the head, else a full rebuild. It never imports the writer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from memgit import state
from memgit.format import entries as fmt
from memgit.git.modes import MODE_EXEC, MODE_FILE
from memgit.git.plumbing import config_set
from memgit.git.repository import (
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
from memgit.policy.judge import text_digest
from memgit.policy.settings import Policy, drive_policy
from memgit.state import facts
from memgit.state.facts import FactRow

DRIVE_ID_KEY = "memgit.driveid"
_EXCLUDED_STATUS = ("proposed", "rejected")
_EXCLUDED_KINDS = ("question", "answer")


# --- rows ---------------------------------------------------------------------------


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
    return drive_policy(drive)


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
    done. (Reads go through memgit.recall.read_path.catch_up, which drains the writer's
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
