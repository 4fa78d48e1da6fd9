"""``memgit fleet find``: every entry in every drive that matches a query.

Through the index (:func:`find`): the full-text index counts the matching entries of
every drive (exact: memgit.fleet.store's invariants), then only the drives of the first
``limit`` hits are read and their candidates judged by the matcher (memgit.fleet.match).
A regex, which no index narrows, has every version judged. By reading every drive
(:func:`scan`): the same matcher over each drive's entries read from git; the benchmark
compares the two, and the tests hold them to the same answer.

An answer is ordered by origin, drive, topic, id and text, and cut at ``limit`` hits at
the heads and ``limit`` in history (``None``: every one); the drives and the totals are
always complete.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any

from memgit.fleet.history import read_versions
from memgit.fleet.index import FleetIndex
from memgit.fleet.match import Query, terms_of
from memgit.fleet.store import Hit
from memgit.git.roots import walk

DEFAULT_LIMIT = 1000


@dataclass
class Found:
    """The answer: ``hits`` at the heads; ``history`` the matching versions that only
    history holds (with ``--history``), each cut at the limit; ``totals`` how many of
    each there are and ``names`` every drive holding one (both complete); where it was
    read and any warning."""

    hits: list[Hit]
    history: list[Hit] = field(default_factory=list)
    index: str = ""
    warning: str = ""
    totals: tuple[int, int] = (0, 0)
    names: list[str] = field(default_factory=list)

    def drives(self) -> list[str]:
        return self.names

    def cut(self) -> bool:
        """Whether hits were left out at the limit."""
        return (len(self.hits), len(self.history)) != self.totals

    def as_dict(self) -> dict[str, Any]:
        return {"index": self.index, "warning": self.warning, "drives": self.drives(),
                "total": self.totals[0], "history_total": self.totals[1],
                "hits": [_hit(h) for h in self.hits],
                "history": [_hit(h) for h in self.history]}


def _hit(hit: Hit) -> dict[str, Any]:
    data = hit._asdict()
    del data["terms"]
    data["topic"] = data.pop("path")
    data["date"] = data.pop("added")
    return data


# origin, drive, path, entry id, text: the order of every answer (Hit's fields by index)
_ORDER = itemgetter(0, 1, 3, 2, 6)


def judge(query: Query, candidates: list[Hit], history: bool) -> Found:
    """Keep the candidates the query matches; a version only history holds goes to
    ``history`` (when asked for), one at a head to ``hits``. Every one is kept: the
    totals and the drives are theirs."""
    test = query.predicate()
    kept = [h for h in candidates if (history or h.at_head) and test(h.text, h.terms)]
    kept.sort(key=_ORDER)
    hits = [h for h in kept if h.at_head]
    past = [h for h in kept if not h.at_head]
    return Found(hits, past, totals=(len(hits), len(past)),
                 names=sorted({h.drive for h in kept}))


def _limited(found: Found, limit: int | None) -> Found:
    if limit is not None:
        found.hits, found.history = found.hits[:limit], found.history[:limit]
    return found


def find(index: FleetIndex, query: Query, *, history: bool = False,
         origin: str | None = None, limit: int | None = DEFAULT_LIMIT) -> Found:
    """Answer from the index (PostgreSQL when configured and reachable)."""
    store = index.reader()
    if store is index.embedded:  # it holds this root's rows only, whatever it once held
        origin = index.origin
    if query.kind == "regex" or limit is None:
        found = judge(query, store.search(query, history=history, origin=origin), history)
    else:
        counts, candidates = store.answer(query, history=history, origin=origin, limit=limit)
        page = judge(query, candidates, history)
        found = Found(page.hits, page.history,
                      totals=(sum(c.head for c in counts), sum(c.past for c in counts)),
                      names=sorted({c.name for c in counts}))
    found.index, found.warning = store.kind, index.warning
    return _limited(found, limit)


def scan(root: Path, query: Query, *, history: bool = False, origin: str = "",
         limit: int | None = DEFAULT_LIMIT) -> Found:
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
                              v.text, v.at_head, terms_of(v.text))
                          for v in read.versions)
    found = judge(query, candidates, history)
    found.index = "scan"
    return _limited(found, limit)
