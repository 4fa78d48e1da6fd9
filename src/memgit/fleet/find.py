"""``memgit fleet find``: every entry in every drive that matches a query.

Through the index (:func:`find`): the store's full-text search narrows, the matcher
(memgit.fleet.match) judges each candidate. By reading every drive (:func:`scan`):
the same matcher over each drive's entries read from git; the benchmark compares the
two, and the tests hold them to the same answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any

from memgit.fleet.history import read_versions
from memgit.fleet.index import FleetIndex
from memgit.fleet.match import Query, words_of
from memgit.fleet.store import Hit
from memgit.git.roots import walk


@dataclass
class Found:
    """The answer: ``hits`` at the heads; ``history`` the matching versions that only
    history holds (with ``--history``); where it was read and any warning."""

    hits: list[Hit]
    history: list[Hit] = field(default_factory=list)
    index: str = ""
    warning: str = ""

    def drives(self) -> list[str]:
        return sorted({h.drive for h in self.hits + self.history})

    def as_dict(self) -> dict[str, Any]:
        return {"index": self.index, "warning": self.warning, "drives": self.drives(),
                "hits": [_hit(h) for h in self.hits],
                "history": [_hit(h) for h in self.history]}


def _hit(hit: Hit) -> dict[str, Any]:
    data = hit._asdict()
    del data["words"]
    data["topic"] = data.pop("path")
    data["date"] = data.pop("added")
    return data


# origin, drive, path, entry id, text: the order of every answer (Hit's fields by index)
_ORDER = itemgetter(0, 1, 3, 2, 6)


def judge(query: Query, candidates: list[Hit], history: bool) -> Found:
    """Keep the candidates the query matches; a version only history holds goes to
    ``history`` (when asked for), one at a head to ``hits``."""
    test = query.predicate()
    kept = [h for h in candidates if (history or h.at_head) and test(h.text, h.words)]
    kept.sort(key=_ORDER)
    return Found([h for h in kept if h.at_head], [h for h in kept if not h.at_head])


def find(index: FleetIndex, query: Query, *, history: bool = False,
         origin: str | None = None) -> Found:
    """Answer from the index (PostgreSQL when configured and reachable)."""
    store = index.reader()
    if store is index.embedded:  # it holds this root's rows only, whatever it once held
        origin = index.origin
    found = judge(query, store.search(query, history=history, origin=origin), history)
    found.index, found.warning = store.kind, index.warning
    return found


def scan(root: Path, query: Query, *, history: bool = False, origin: str = "") -> Found:
    """Answer by reading every drive under ``root`` (no index)."""
    from memgit.git.repository import open_drive, require_drive
    from memgit.policy.settings import drive_policy

    candidates: list[Hit] = []
    for repo in walk(root):
        if repo.checkout:
            continue
        try:
            drive = open_drive(repo.path)
            policy = drive_policy(drive)
            head = require_drive(drive, policy.branch_ref)
        except Exception:  # noqa: BLE001 - not a drive: census lists it, find skips it
            continue
        read = read_versions(drive.git_dir, head, (), policy.extensions,
                             head_only=not history)
        candidates.extend(Hit(origin, repo.name, v.entry_id, v.path, v.source, v.added,
                              v.text, v.at_head, " ".join(words_of(v.text)))
                          for v in read.versions)
    found = judge(query, candidates, history)
    found.index = "scan"
    return found
