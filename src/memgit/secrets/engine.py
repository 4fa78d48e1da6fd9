"""The scanning engine: one prefilter over all rules, then only the rules it selects.

``scan_text(line)`` lowercases the line and runs one trie-shaped regex of the
rules' literal keywords (``akia``, ``ghp_``, ``://``, ``password``...); a keyword
with a tail counts only when its tail follows (``key`` only before an operator).
A case-sensitive shape regex dispatches the formats without a literal (Twilio,
Discord, Telegram). Rules compile the first time a line needs them, so a hook
that scans nothing compiles nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from . import values as V
from .rules import CHECKS, Rule, value_passes
from .values import trie_regex

# Twilio SK/AC, Discord bot tokens, Telegram bot tokens: case-sensitive shapes on the
# original line, each starting with a rare character (S, A, '.', ':').
SHAPE_TRIGGER = (
    r"SK[0-9a-fA-F]{32}|AC[0-9a-f]{32}"
    r"|\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27}"
    r"|:(?<=\d{8}:)[A-Za-z0-9_-]{35}"
)
_WORD = re.compile(r"[a-z][a-z0-9]{3,}")
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


class _Lazy:
    """A regex compiled the first time a line needs it."""

    __slots__ = ("pattern", "flags", "_rx")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._rx: re.Pattern[str] | None = None

    @property
    def rx(self) -> re.Pattern[str]:
        if self._rx is None:
            self._rx = re.compile(self.pattern, self.flags)
        return self._rx


@dataclass(eq=False)
class _Entry:
    rule: Rule
    rx: _Lazy
    trigger: _Lazy | None


@dataclass
class Compiled:
    anchors: re.Pattern[str] | None
    by_anchor: dict[str, list[_Entry]]
    words: dict[str, list[_Entry]]  # whole-word keywords (provider names)
    word_set: frozenset[str]
    shapes: list[tuple[re.Pattern[str], list[_Entry]]]
    always: list[_Entry]


def compile_rules(rules: Sequence[Rule]) -> Compiled:
    entries = [_Entry(r, _Lazy(r.regex, r.flags), _Lazy(r.trigger) if r.trigger else None)
               for r in rules]
    direct: dict[str, list[_Entry]] = {}
    words: dict[str, list[_Entry]] = {}
    tail_sets: dict[str, set[str]] = {}
    for e in entries:
        own_tails = dict(e.rule.keyword_tails)
        for kw in e.rule.keywords:
            if e.rule.word_keywords and kw.isalnum():
                words.setdefault(kw, []).append(e)
                continue
            direct.setdefault(kw, []).append(e)
            tail_sets.setdefault(kw, set()).add(own_tails.get(kw, ""))
    # a keyword shared by rules with different tails counts when any tail follows it,
    # and without condition when one of its rules has no tail
    tails = {kw: "" if "" in ts else "|".join(sorted(ts)) for kw, ts in tail_sets.items()}
    # The prefilter reports the longest keyword at each place, so a keyword also
    # dispatches the rules of every keyword it contains ("sk-ant-" has "sk-").
    by_anchor: dict[str, list[_Entry]] = {}
    for kw in direct:
        merged: list[_Entry] = []
        for other, es in direct.items():
            if other in kw:
                merged.extend(x for x in es if x not in merged)
        by_anchor[kw] = merged
    return Compiled(
        anchors=re.compile(trie_regex(direct, tails)) if direct else None,
        by_anchor=by_anchor,
        words=words,
        word_set=frozenset(words),
        shapes=_shapes(entries),
        always=[e for e in entries if not e.rule.keywords and not e.rule.shape],
    )


def _shapes(entries: list[_Entry]) -> list[tuple[re.Pattern[str], list[_Entry]]]:
    groups: dict[str, list[_Entry]] = {}
    for e in entries:
        if e.rule.shape:
            groups.setdefault(e.rule.shape, []).append(e)
    return [(re.compile(SHAPE_TRIGGER if k == "default" else k), v) for k, v in groups.items()]


def _select(text: str, lowered: str, comp: Compiled) -> list[_Entry]:
    selected: dict[int, _Entry] = {id(e): e for e in comp.always}
    if comp.anchors is not None:
        for hit in comp.anchors.findall(lowered):
            for e in comp.by_anchor[hit]:
                selected[id(e)] = e
    if comp.words:
        for word in comp.word_set.intersection(_WORD.findall(lowered)):
            for e in comp.words[word]:
                selected[id(e)] = e
    for shape, rules in comp.shapes:
        if shape.search(text):
            for e in rules:
                selected[id(e)] = e
    return list(selected.values())


def _name_starts(text: str, at: int) -> list[int]:
    """Where a keyword name containing the keyword found at `at` may begin:
    DB_PASSWORD, dbPassword, "api key", --password, or the keyword itself."""
    p = at
    low = max(0, at - 64)
    while p > low and text[p - 1] in _NAME_CHARS:
        p -= 1
    starts = [p]
    if p >= 4 and text[p - 4 : p].lower() == "api ":
        starts.insert(0, p - 4)
    q = p
    while q < at and not text[q].isalnum():
        q += 1
    if q not in starts:
        starts.append(q)
    if at not in starts:
        starts.append(at)
    return starts


def _matches(e: _Entry, text: str, lowered: str) -> Iterator[re.Match[str]]:
    if e.trigger is None:
        yield from e.rx.rx.finditer(text)
        return
    hits = list(e.trigger.rx.finditer(lowered))
    if not hits:
        return
    if len(lowered) != len(text):  # lower() changed offsets (rare Unicode): scan it all
        yield from e.rx.rx.finditer(text)
        return
    covered = -1  # hits inside the last match belong to it (keeps long lines linear)
    for hit in hits:
        if hit.start() < covered:
            continue
        starts = [hit.start()] if e.rule.locate == "at" else _name_starts(text, hit.start())
        for start in starts:
            m = e.rx.rx.match(text, start)
            if m is not None:
                covered = m.end()
                yield m
                break


def scan(text: str, comp: Compiled) -> list[tuple[int, int, str]]:
    """(start, end, kind) of each credential in one line, sorted, never overlapping."""
    lowered = text.lower()
    selected = _select(text, lowered, comp)
    if not selected:
        return []
    candidates: list[tuple[int, int, int, str]] = []  # priority, start, end, kind
    selected.sort(key=lambda e: e.rule.priority)
    for e in selected:
        rule = e.rule
        fn = CHECKS.get(rule.check) if rule.check else None
        for m in _matches(e, text, lowered):
            start, end = m.span(rule.group)
            # a weaker rule's match inside a stronger finding can only lose: skip its checks
            if any(p < rule.priority and s <= start and end <= t for p, s, t, _k in candidates):
                continue
            kind = rule.kind
            if fn is not None:
                verdict = fn(m, text)
                if not verdict:
                    continue
                if isinstance(verdict, tuple):
                    start, end, kind = verdict
            value = text[start:end]
            if end <= start or V.is_placeholder(value) or not value_passes(rule, value):
                continue
            candidates.append((rule.priority, start, end, kind))
    if not candidates:
        return []
    candidates.sort()
    kept: list[tuple[int, int, str]] = []
    for _prio, start, end, kind in candidates:
        if all(end <= s or start >= e for s, e, _k in kept):
            kept.append((start, end, kind))
    kept.sort()
    return kept
