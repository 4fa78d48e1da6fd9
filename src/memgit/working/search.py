"""Which working-memory values mention something: what ``memgit fleet forget`` removes.

A value is judged by its JSON text with every character as itself (the file stores
ASCII escapes, a person wrote the characters), at the working ref's tip or, for a purge,
in every commit of the ref's history: a purge must reach every version, and every version
of a key carries the key's one id (policy/working.py), so purging the ids found removes
them all (docs/working-memory.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

from memgit.git.repository import Drive, ref_target
from memgit.policy.working import WORKING_REF, parse_value


def value_texts(drive: Drive, *, history: bool) -> Iterator[tuple[str, str]]:
    """(id, JSON text) of each value at the ref's tip, or in any of its commits when
    ``history``; every tree and blob is read once however many commits share it."""
    tip = ref_target(drive, WORKING_REF)
    if tip is None:
        return
    repo = drive.repo
    commits = repo.walk(repo[tip].id) if history else [repo[tip]]
    seen: set[object] = set()
    for commit in commits:
        stack = [commit.tree]
        while stack:
            tree = stack.pop()
            for entry in tree:
                if entry.id in seen:
                    continue
                seen.add(entry.id)
                if entry.type_str == "tree":
                    stack.append(repo[entry.id])  # type: ignore[arg-type]
                elif entry.type_str == "blob":
                    value = parse_value(repo[entry.id].data)  # type: ignore[attr-defined]
                    if value is not None:
                        yield value.id, json.dumps(value.value, ensure_ascii=False)


def matching_ids(drive: Drive, matches: Callable[[str], bool], *, history: bool) -> list[str]:
    """The ids of the values whose text ``matches`` (sorted, each once)."""
    return sorted({value_id for value_id, text in value_texts(drive, history=history)
                   if matches(text)})
