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
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from . import values as V
from .rules import CHECKS, Rule, value_passes

# Twilio SK/AC, Discord bot tokens, Telegram bot tokens: case-sensitive shapes on the
# original line, each starting with a rare character (S, A, '.', ':').
SHAPE_TRIGGER = (
    r"SK[0-9a-fA-F]{32}|AC[0-9a-f]{32}"
    r"|\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27}"
    r"|:(?<=\d{8}:)[A-Za-z0-9_-]{35}"
)
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def trie_regex(words: Iterable[str], tails: dict[str, str]) -> str:
    """An alternation of literals shaped as a trie (one branch tested per position);
    a word listed in `tails` counts only when its tail regex follows it."""
    trie: dict[str, dict] = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {"": tails.get(word, "")}  # type: ignore[dict-item]

    def build(node: dict[str, dict]) -> str:
        alts = [re.escape(ch) + build(child) for ch, child in sorted(node.items()) if ch]
        end = node.get("")
        if end is not None:
            ahead: str = end[""]  # type: ignore[assignment]
            alts.append("(?=" + ahead + ")" if ahead else "")
        if len(alts) == 1:
            return alts[0]
        return "(?:" + "|".join(alts) + ")"

    return build(trie)


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


@dataclass
class _Entry:
    rule: Rule
    rx: _Lazy
    trigger: _Lazy | None


@dataclass
class Compiled:
    anchors: re.Pattern[str] | None
    by_anchor: dict[str, list[_Entry]]
    shape: re.Pattern[str]
    shape_rules: list[_Entry]
    always: list[_Entry]


def compile_rules(rules: Sequence[Rule]) -> Compiled:
    entries = [_Entry(r, _Lazy(r.regex, r.flags), _Lazy(r.trigger) if r.trigger else None)
               for r in rules]
    direct: dict[str, list[_Entry]] = {}
    tails: dict[str, str] = {}
    for e in entries:
        own_tails = dict(e.rule.keyword_tails)
        for kw in e.rule.keywords:
            direct.setdefault(kw, []).append(e)
            # a keyword shared by rules with and without a tail counts without one
            if kw in tails and tails[kw] != own_tails.get(kw, ""):
                tails[kw] = ""
            else:
                tails.setdefault(kw, own_tails.get(kw, ""))
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
        shape=re.compile(SHAPE_TRIGGER),
        shape_rules=[e for e in entries if e.rule.shape],
        always=[e for e in entries if not e.rule.keywords and not e.rule.shape],
    )


def _select(text: str, lowered: str, comp: Compiled) -> list[_Entry]:
    selected: list[_Entry] = list(comp.always)
    if comp.anchors is not None:
        for hit in comp.anchors.finditer(lowered):
            for e in comp.by_anchor[hit.group(0)]:
                if e not in selected:
                    selected.append(e)
    if comp.shape_rules and comp.shape.search(text):
        selected.extend(comp.shape_rules)
    return selected


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
    for hit in hits:
        starts = [hit.start()] if e.rule.locate == "at" else _name_starts(text, hit.start())
        for start in starts:
            m = e.rx.rx.match(text, start)
            if m is not None:
                yield m
                break


def scan(text: str, comp: Compiled) -> list[tuple[int, int, str]]:
    """(start, end, kind) of each credential in one line, sorted, never overlapping."""
    lowered = text.lower()
    selected = _select(text, lowered, comp)
    if not selected:
        return []
    candidates: list[tuple[int, int, int, str]] = []  # priority, start, end, kind
    for e in selected:
        rule = e.rule
        fn = CHECKS.get(rule.check) if rule.check else None
        for m in _matches(e, text, lowered):
            kind = rule.kind
            start, end = m.span(rule.group)
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
