"""Reading and writing working memory on ``refs/memgit/working`` (docs/working-memory.md).

Every write is one commit on that ref, moved by compare-and-swap (retried when another
writer moved it), so concurrent writers on one repository never lose a key. Nothing here
touches the branch, its recall index or its work tree.
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from memgit.errors import NoSuchKeyError, RepoError, UsageError, ValueRefusedError
from memgit.git.repository import Drive, build_tree, cas_ref, create_commit, ref_target
from memgit.policy.judge import Violation
from memgit.policy.registry import PURGED_IDS_FILE, PurgeRegistry
from memgit.policy.settings import Policy
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
    team (an empty team given names no team)."""
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
    tree = _scope_tree(drive, commit, scope)
    if tree is None:
        return None
    try:
        blob = drive.repo[tree[key_name(key)].id]
    except KeyError:
        return None
    return parse_value(blob.data)  # type: ignore[attr-defined]


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
        files: dict[str, bytes | None] = {}
        ids: dict[str, str] = {}
        stamp = now_stamp()
        for key, value in changes.items():
            current = _read(drive, old, scope, key)
            path = f"{scope.path}/{key_name(key)}"
            if value is UNSET:
                if current is None and not unset_missing_ok:
                    raise NoSuchKeyError(f"no key {key!r} in the working memory of "
                                         f"{scope.describe()}", "list the keys with: "
                                                                "memgit keys")
                if current is not None:
                    files[path] = None
                continue
            ids[key] = current.id if current is not None and current.id not in purged else \
                _fresh_id(scope, key, purged, retired=_purged_here(drive, old, path))
            files[path] = value_line(value, ids[key], stamp)
        if not files:
            return WriteResult(None, ids)
        base_tree = str(drive.repo[old].tree.id) if old else None  # type: ignore[attr-defined]
        tree = build_tree(drive, base_tree, files)
        what = "Set" if any(v is not None for v in files.values()) else "Unset"
        message = f"{what} {len(files)} key{'s' if len(files) != 1 else ''} of " \
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


def _purged_here(drive: Drive, commit: str | None, path: str) -> bool:
    """Whether the key's file exists and is empty: what a purge leaves of a value."""
    if commit is None:
        return False
    try:
        entry = drive.repo[commit].tree[path]  # type: ignore[attr-defined]
    except KeyError:
        return False
    return bool(drive.repo[entry.id].size == 0)  # type: ignore[attr-defined]


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

    The scope's folder is one tree whose names are the keys' hex (byte order = key
    order), so the first key of the page is found by binary search over the tree's
    entries and only the page's entries are read: the cost follows the page size.
    """
    tree = _scope_tree(drive, ref_target(drive, WORKING_REF), scope)
    if tree is None:
        return [], None
    start = key_name(max(after, prefix) if after is not None else prefix)
    lo, hi = 0, len(tree)
    while lo < hi:  # the first entry whose name sorts after (or at, for a prefix) start
        mid = (lo + hi) // 2
        name = tree[mid].name
        if name < start or (after is not None and start == key_name(after) and name == start):
            lo = mid + 1
        else:
            hi = mid
    out: list[tuple[str, int]] = []
    index = lo
    while index < len(tree):
        entry = tree[index]
        index += 1
        key = name_key(entry.name)
        if key is None:
            continue
        if prefix and not key.startswith(prefix):
            break
        size = drive.repo[entry.id].size  # type: ignore[attr-defined]
        if size == 0:  # a purged value
            continue
        if len(out) == limit:
            return out, out[-1][0]
        out.append((key, size))
    return out, None
