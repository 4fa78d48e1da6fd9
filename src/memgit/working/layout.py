"""The tree of a scope: keys in buckets, so that reading one key or one page loads two small
trees whatever the number of keys (docs/working-memory.md, "Layout").

A scope's folder holds buckets; a bucket is a folder named by the hex of the smallest key
it held when it was made, holding files named by their keys' hex. Invariant: every key of
a bucket sorts at or after the bucket's name and before the next bucket's name. Hex keeps
byte order, and git orders a tree's entries by name bytes, so walking buckets then files
in tree order gives the keys in ascending UTF-8 order. A bucket over ``BUCKET_MAX`` files
is split into buckets of ``BUCKET_FILL``; an empty one goes.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from memgit.git.modes import MODE_FILE, MODE_TREE

BUCKET_MAX = 256
BUCKET_FILL = 128


def chunks(names: Sequence[str]) -> list[Sequence[str]]:
    """Sorted file names as buckets: one when it fits, else pieces of ``BUCKET_FILL``."""
    if len(names) <= BUCKET_MAX:
        return [names] if names else []
    return [names[i:i + BUCKET_FILL] for i in range(0, len(names), BUCKET_FILL)]


def bucket_for(buckets: Sequence[str], name: str) -> int:
    """The index of the bucket a key's file name belongs in (sorted bucket names, at least
    one): the last named at or before it, else the first (which is then renamed)."""
    return max(bisect.bisect_right(buckets, name) - 1, 0)


def write_tree(repo: Any, entries: Mapping[str, Any], mode: int) -> Any:
    """A tree of ``entries`` (name -> object id), every one with ``mode``."""
    builder = repo.TreeBuilder()
    for name, oid in entries.items():
        builder.insert(name, oid, mode)
    return builder.write()


def rebucket(repo: Any, files: Mapping[str, Any]) -> dict[str, Any]:
    """Buckets (name -> tree id) holding ``files`` (name -> blob id)."""
    names = sorted(files)
    return {part[0]: write_tree(repo, {n: files[n] for n in part}, MODE_FILE)
            for part in chunks(names)}


def replace_path(repo: Any, root: Any, parts: Sequence[str], new: Any) -> Any:
    """``root`` (a tree or None) with the entry at ``parts`` set to tree ``new`` (None:
    removed); a folder left empty goes. Returns the new tree id, None when empty."""
    builder = repo.TreeBuilder(root) if root is not None else repo.TreeBuilder()
    head = parts[0]
    if len(parts) == 1:
        child = new
    else:
        found = builder.get(head)
        sub = repo[found.id] if found is not None and found.filemode == MODE_TREE else None
        child = replace_path(repo, sub, parts[1:], new)
    if child is None:
        if builder.get(head) is not None:
            builder.remove(head)
    else:
        builder.insert(head, child, MODE_TREE)
    written = builder.write()
    return written if len(repo[written]) else None


def scope_files(repo: Any, scope_tree: Any) -> Iterable[tuple[str, Any]]:
    """(file name, blob id) of every key of a scope, in key order."""
    for bucket in scope_tree:
        for entry in repo[bucket.id]:
            yield entry.name, entry.id


def canonical_root(repo: Any, scopes: Mapping[str, Mapping[str, Any]]) -> Any:
    """The root tree holding each scope's files (scope path -> name -> blob id), bucketed
    afresh (what a merge writes)."""
    root = None
    for path, files in sorted(scopes.items()):
        if files:
            top = write_tree(repo, rebucket(repo, files), MODE_TREE)
            root = replace_path(repo, repo[root] if root is not None else None,
                                path.split("/"), top)
    return root if root is not None else write_tree(repo, {}, MODE_TREE)
