"""Reading and writing working memory on ``refs/memgit/working`` (docs/working-memory.md).

Every write is one commit on that ref, moved by compare-and-swap (retried when another
writer moved it), so concurrent writers on one repository never lose a key. Nothing here
touches the branch, its recall index or its work tree.
"""

from __future__ import annotations

import bisect
import os
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from memgit.errors import NoSuchKeyError, RepoError, UsageError, ValueRefusedError
from memgit.git.modes import MODE_TREE
from memgit.git.repository import Drive, cas_ref, create_commit, ref_target, require_drive
from memgit.policy.judge import Violation
from memgit.policy.registry import PURGED_IDS_FILE, PurgeRegistry
from memgit.policy.settings import Policy, drive_policy
from memgit.policy.working import (
    DEFAULT_AGENT,
    WORKING_REF,
    Scope,
    Value,
    check_key,
    check_scope,
    check_value,
    key_name,
    name_key,
    parse_value,
    value_id,
    value_line,
)
from memgit.sync.client import PURGED_FROM
from memgit.working.layout import bucket_for, rebucket, replace_path, write_tree

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
_CAS_TRIES = 50


def raise_first(violations: list[Violation]) -> None:
    """Refuse with the first violation's code, message and hint (nothing is stored)."""
    if violations:
        v = violations[0]
        raise ValueRefusedError(v.code, v.message, v.hint)


def resolve_scope(drive: Drive, agent: str | None = None, team: str | None = None) -> Scope:
    """Whose working memory: ``--agent``/``--team``, else ``MEMGIT_AGENT``/``MEMGIT_TEAM``,
    else git config ``memgit.agent``/``memgit.team``, else the agent ``default`` and no
    team (an empty team given names no team). The repository must be a drive: working
    memory never lands in a code repository by accident."""
    require_drive(drive, drive_policy(drive).branch_ref)
    agent = agent or os.environ.get("MEMGIT_AGENT") or drive.config_value("memgit.agent") \
        or DEFAULT_AGENT
    if team is None:  # an empty --team (or MEMGIT_TEAM) names no team over the config's
        team = os.environ.get("MEMGIT_TEAM")
        team = drive.config_value("memgit.team") if team is None else team
    team = team or None
    raise_first(check_scope(agent, team))
    return Scope(agent, team)


def now_stamp() -> str:
    """The set time of a value: UTC, milliseconds (what sync's newest-wins compares)."""
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def _scope_tree(drive: Drive, commit: str | None, scope: Scope) -> Any:
    """The pygit2 tree of a scope's folder at ``commit``; None when it has none."""
    if commit is None:
        return None
    tree = drive.repo[commit].tree  # type: ignore[attr-defined]
    try:
        return drive.repo[tree[scope.path].id]
    except KeyError:
        return None


def get_value(drive: Drive, scope: Scope, key: str, policy: Policy) -> Value:
    """The value of ``key``; NoSuchKeyError when it has none (never set, unset or purged)."""
    raise_first(check_key(key, policy))
    found = _read(drive, ref_target(drive, WORKING_REF), scope, key)
    if found is None:
        raise NoSuchKeyError(f"no key {key!r} in the working memory of {scope.describe()}",
                             "list the keys with: memgit keys")
    return found


def _read(drive: Drive, commit: str | None, scope: Scope, key: str) -> Value | None:
    blob = _blob_of(drive, _scope_tree(drive, commit, scope), key_name(key))
    return parse_value(drive.repo[blob].data) if blob is not None else None  # type: ignore[attr-defined]


def _blob_of(drive: Drive, scope_tree: Any, name: str) -> Any:
    """The blob id of a key's file in a scope's tree (two small trees read), else None."""
    if scope_tree is None or not len(scope_tree):
        return None
    names = [e.name for e in scope_tree]
    bucket = drive.repo[scope_tree[names[bucket_for(names, name)]].id]
    try:
        return bucket[name].id  # type: ignore[index]
    except KeyError:
        return None


@dataclass
class WriteResult:
    """What a set or unset did: the new commit of the ref (None when nothing changed)."""

    commit: str | None
    ids: dict[str, str]


class _Unset:
    """What :data:`UNSET` is: not a JSON value (``None`` is JSON's null, a value)."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


def write_values(drive: Drive, scope: Scope, changes: Mapping[str, Any],
                 policy: Policy, *, unset_missing_ok: bool = False) -> WriteResult:
    """Set each key to its value (:data:`UNSET`: unset it) in one commit on the working ref.

    Every key and value is judged first; one refusal stores nothing. Unsetting a key that
    has no value is NoSuchKeyError unless ``unset_missing_ok``.
    """
    for key, value in changes.items():
        raise_first(check_key(key, policy))
        if value is not UNSET:
            raise_first(check_value(value, policy))
    purged = known_purged_ids(drive)
    for _ in range(_CAS_TRIES):
        old = ref_target(drive, WORKING_REF)
        scope_tree = _scope_tree(drive, old, scope)
        buckets = {e.name: e.id for e in scope_tree} if scope_tree is not None else {}
        names = sorted(buckets)
        groups: dict[str | None, list[tuple[str, Any]]] = {}
        for key, value in changes.items():
            name = key_name(key)
            groups.setdefault(names[bucket_for(names, name)] if names else None,
                              []).append((key, value))
        ids: dict[str, str] = {}
        stamp = now_stamp()
        changed = False
        for bucket, items in groups.items():
            held: Any = drive.repo[buckets.pop(bucket)] if bucket is not None else ()
            files: dict[str, Any] = {e.name: e.id for e in held}
            for key, value in items:
                changed = _apply(drive, scope, files, key, value, stamp, ids, purged,
                                 unset_missing_ok) or changed
            buckets.update(rebucket(drive.repo, files))
        if not changed:
            return WriteResult(None, ids)
        top = write_tree(drive.repo, buckets, MODE_TREE) if buckets else None
        root = replace_path(drive.repo, drive.repo[old].tree if old else None,  # type: ignore[attr-defined]
                            scope.path.split("/"), top)
        tree = str(root if root is not None else write_tree(drive.repo, {}, MODE_TREE))
        what = "Set" if any(v is not UNSET for v in changes.values()) else "Unset"
        message = f"{what} {len(changes)} key{'s' if len(changes) != 1 else ''} of " \
                  f"{scope.describe()}\n"
        commit = create_commit(drive, tree, [old] if old else [], message)
        if cas_ref(drive, WORKING_REF, old, commit, f"memgit {what.lower()}"):
            return WriteResult(commit, ids)
        time.sleep(0.005)
    raise RepoError(f"{WORKING_REF} kept moving", "retry the command")


def _fresh_id(scope: Scope, key: str, purged: set[str], *, retired: bool) -> str:
    """The key's id: the same on every machine for a key's first value; a new random one
    when a purge retired the key's id (its file is left empty, or the id is known to be
    purged), since the server refuses a purged id for ever (MG606)."""
    candidate = value_id(scope, key)
    return fresh_id() if retired or candidate in purged else candidate


def fresh_id() -> str:
    """A random value id (after a purge retired a key's id)."""
    return "w-" + secrets.token_hex(16)


def known_purged_ids(drive: Drive) -> set[str]:
    """Ids this drive's purges removed (its registry) and those its servers published
    (``refs/memgit/purged-from/REMOTE``, fetched by memgit sync)."""
    ids = set(PurgeRegistry.load(drive.git_dir).ids)
    for name in drive.repo.references:
        if name.startswith(PURGED_FROM):
            tree = drive.repo[drive.repo.references[name].target].tree  # type: ignore[attr-defined]
            try:
                data = drive.repo[tree[PURGED_IDS_FILE].id].data  # type: ignore[attr-defined]
            except KeyError:
                continue
            ids.update(line for line in data.decode("utf-8", "replace").split("\n") if line)
    return ids


def _apply(drive: Drive, scope: Scope, files: dict[str, Any], key: str, value: Any,
           stamp: str, ids: dict[str, str], purged: set[str], missing_ok: bool) -> bool:
    """Set or unset one key in a bucket's files (name -> blob id); whether it changed."""
    name = key_name(key)
    blob = files.get(name)
    current = parse_value(drive.repo[blob].data) if blob is not None else None  # type: ignore[attr-defined]
    if value is UNSET:
        if current is None and not missing_ok:
            raise NoSuchKeyError(f"no key {key!r} in the working memory of "
                                 f"{scope.describe()}", "list the keys with: memgit keys")
        return files.pop(name, None) is not None and current is not None
    # an empty file is what a purge leaves of a value: its id is retired
    retired = blob is not None and drive.repo[blob].size == 0  # type: ignore[attr-defined]
    ids[key] = current.id if current is not None and current.id not in purged else \
        _fresh_id(scope, key, purged, retired=retired)
    files[name] = drive.repo.create_blob(value_line(value, ids[key], stamp))
    return True


def parse_page_args(limit: int | None) -> int:
    """The page size (default 100, at most 1000); a bad one is a usage error."""
    size = DEFAULT_LIMIT if limit is None else limit
    if not 1 <= size <= MAX_LIMIT:
        raise UsageError(f"--limit must be between 1 and {MAX_LIMIT}",
                         "page through more with --after and the next cursor")
    return size


def list_keys(drive: Drive, scope: Scope, *, prefix: str = "", after: str | None = None,
              limit: int = DEFAULT_LIMIT) -> tuple[list[tuple[str, int]], str | None]:
    """One page of keys in ascending UTF-8 order: ``(key, stored size)`` pairs and the
    cursor of the next page (the last key given) when more follow, else None.

    The page starts in the bucket found by binary search over the bucket names (working.
    layout), then at the first file after the cursor (or at the prefix) found the same
    way, and reads on bucket by bucket only until the page is full: the cost follows the
    page size, not the number of keys.
    """
    top = _scope_tree(drive, ref_target(drive, WORKING_REF), scope)
    if top is None:
        return [], None
    start = key_name(max(after, prefix) if after is not None else prefix)
    strict = after is not None and start == key_name(after)  # after a key, or at a prefix
    names = [e.name for e in top]
    out: list[tuple[str, int]] = []
    for index in range(bucket_for(names, start), len(names)):
        bucket = drive.repo[top[names[index]].id]
        files = [e.name for e in bucket]  # type: ignore[attr-defined]
        at = (bisect.bisect_right if strict else bisect.bisect_left)(files, start)
        for name in files[at:]:
            key = name_key(name)
            if key is None:
                continue
            if prefix and not key.startswith(prefix):
                return out, None
            size = drive.repo[bucket[name].id].size  # type: ignore[index, attr-defined]
            if size == 0:  # a purged value
                continue
            if len(out) == limit:
                return out, out[-1][0]
            out.append((key, size))
    return out, None
