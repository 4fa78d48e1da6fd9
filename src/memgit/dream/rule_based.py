"""The rule-based proposer: duplicates become merges, stale entries prune candidates.

It answers the proposal object a model does, so its suggestions pass the same checks. Near
duplicates must also share word order, numbers and negations ("from Berlin to Paris" is
no duplicate of "from Paris to Berlin", "uses X" none of "no longer uses X"). The most
retrieved entry is kept (its count survives), and a near merge keeps the longest text, so
no word is lost.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

NEAR = 0.75
MIN_WORDS = 4
PRUNE_DAYS = 30
_WORD_RE = re.compile(r"\w+", re.UNICODE)
_STOP = frozenset("a an the is are was were be of to in on at for and or by with".split())
_NEGATIONS = frozenset("not no never none nobody nothing neither nor without cannot "
                       "isn aren wasn weren don doesn didn won wouldn shouldn can couldn "
                       "longer".split())


def normalised(text: str) -> str:
    return " ".join(_WORD_RE.findall(text.casefold()))


def words(text: str) -> list[str]:
    return [w for w in _WORD_RE.findall(text.casefold()) if w not in _STOP]


class _Item:
    __slots__ = ("data", "key", "words", "set", "pairs", "numbers", "negations")

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = data
        text = str(data.get("text", ""))
        self.key = normalised(text)
        self.words = words(text)
        self.set = frozenset(self.words)
        every = self.key.split()
        self.pairs = frozenset(zip(every, every[1:], strict=False))
        self.numbers = frozenset(w for w in self.set if any(c.isdigit() for c in w))
        self.negations = self.set & _NEGATIONS


Item = _Item  # the public name (memgit audit compares entries the dream's way)


def near_duplicates(a: _Item, b: _Item) -> bool:
    if a.key == b.key:
        return True
    if min(len(a.set), len(b.set)) < MIN_WORDS:
        return False
    if a.numbers != b.numbers or a.negations != b.negations:
        return False
    small, large = sorted((len(a.set), len(b.set)))
    if small < NEAR * large:  # Jaccard <= small / large
        return False
    jaccard = len(a.set & b.set) / len(a.set | b.set)
    if jaccard < NEAR:
        return False
    shorter = min(len(a.pairs), len(b.pairs))
    return shorter > 0 and len(a.pairs & b.pairs) >= NEAR * shorter


def _keeper_order(item: _Item) -> tuple:
    d = item.data
    return (-int(d.get("retrievals") or 0), str(d.get("added") or "9999"),
            -len(str(d.get("text", ""))), str(d.get("id")))


def propose_rules(entries: Sequence[Mapping[str, Any]], *, prune: bool) -> dict[str, Any]:
    """The proposal object for ``entries`` (the snapshot's entry mappings)."""
    items = [_Item(e) for e in entries]
    by_key: dict[str, list[int]] = {}
    for n, item in enumerate(items):
        by_key.setdefault(item.key, []).append(n)
    grouped: set[int] = set()
    merges: list[dict[str, Any]] = []
    for n, item in enumerate(items):
        if n in grouped or not item.key:
            continue
        group = [m for m in by_key[item.key] if m not in grouped]
        for m in range(n + 1, len(items)):
            if m not in grouped and m not in group and near_duplicates(item, items[m]):
                group.append(m)
        if len(group) < 2:
            continue
        grouped.update(group)
        members = sorted((items[m] for m in group), key=_keeper_order)
        exact = len({m.key for m in members}) == 1
        # exact duplicates keep the kept entry's text; near ones the longest, losing no word
        text = members[0].data["text"] if exact else max(
            (m.data["text"] for m in members), key=lambda t: len(str(t)))
        merges.append({"ids": [str(m.data["id"]) for m in members], "text": str(text),
                       "reason": "exact duplicates" if exact else "near duplicates"})
    prunes: list[dict[str, Any]] = []
    if prune:
        for n, item in enumerate(items):
            age = item.data.get("age_days")
            if n in grouped or int(item.data.get("retrievals") or 0) != 0 \
                    or not isinstance(age, int) or age < PRUNE_DAYS:
                continue
            prunes.append({"id": str(item.data["id"]),
                           "reason": f"never retrieved in {age} days"})
    return {"merges": merges, "contradictions": [], "lessons": [], "prunes": prunes}


class RuleProposer:
    """The rule-based proposer, with the shape of a model plugin."""

    name = "rules"

    def __init__(self, prune: bool = False) -> None:
        self.prune = prune

    def propose(self, snapshot: Mapping[str, Any]) -> Mapping[str, Any]:
        return propose_rules(list(snapshot.get("entries", [])), prune=self.prune)
