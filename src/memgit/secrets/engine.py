"""The scanning engine: one prefilter over all rules, then only the rules it selects.

``scan_text(line)`` lowercases the line and searches it with one trie-shaped regex
of the rules' literal keywords (``akia``, ``ghp_``, ``://``, ``password``...). A
keyword with a tail counts only when its tail follows (``key`` only before an
operator); tails are checked in Python at each hit, so the prefilter regex stays
small (cheap to compile on a hook's first line, cheap to run). Provider names
match whole words through a set, and case-sensitive shape regexes dispatch the
formats without a literal (Twilio, Discord, Telegram, hashes, generated tokens).
Every rule's own regex compiles the first time a line needs it, so a hook that
scans nothing compiles nothing, and a hook that scans one note compiles only the
prefilter and the rules that note selects.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from itertools import count
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from . import values as V
from .rules import CHECKS, Check, Rule, value_passes
from .values import trie_regex

# Twilio SK/AC, Discord bot tokens, Telegram bot tokens: case-sensitive shapes on the
# original line, each starting with a rare character (S, A, '.', ':'). Each holds a run of
# 20 token characters, so a line without one (RUN_SHAPE, most lines of notes) skips it.
RUN_SHAPE = r"[A-Za-z0-9_+/=.~-]{20}"
SHAPE_TRIGGER = (
    r"SK[0-9a-fA-F]{32}|AC[0-9a-f]{32}"
    r"|\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27}"
    r"|:(?<=\d{8}:)[A-Za-z0-9_-]{35}"
)
# Each of SHAPE_TRIGGER's forms holds 34 run characters in a row (SK or AC and 32 hex; a dot,
# 6, a dot and 27; 35 after Telegram's colon): a line whose longest run is shorter (most lines
# with a run of 20) cannot match it, and the run test's translation tells without the search.
SHAPE_TRIGGER_RUN = 34
# A rule located at runs (locate="runs"): its regex starts with this lookbehind (no run
# character before), then needs 20 or more run characters and matches run characters only
# (the generated-token rule: [A-Za-z0-9_+/.~-]{20,1024}={0,3}).
RUN_LOOKBEHIND = r"(?<![A-Za-z0-9_+/=.~-])"
# the characters of a keyword name around a hit: DB_PASSWORD, dbPassword, --password (read
# up to 64 characters back)
_NAME_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"


class _Slots:
    """What ``_Lazy`` and ``_Ready`` hold (one layout, so an object may change between them)."""

    __slots__ = ("pattern", "flags", "_rx", "match", "search", "finditer")

    if TYPE_CHECKING:
        _rx: re.Pattern[str]
        match: Any
        search: Any
        finditer: Any

    @property
    def rx(self) -> re.Pattern[str]:
        return self._rx  # _Lazy.__getattr__ compiles it


class _Lazy(_Slots):
    """A regex compiled the first time a line needs it. ``match``/``search``/``finditer``
    are slots left empty until then: reading one finds nothing, so Python calls
    ``__getattr__``, which compiles the pattern, fills all three with the compiled
    pattern's methods and makes the object a ``_Ready``: the same slots without
    ``__getattr__``. A class with one reads every attribute through a slow hook (about 150
    instructions, six reads a line), where the interpreter specialises a plain slot read.
    Making one (a hook's first scan makes about 800) sets two slots."""

    __slots__ = ()

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags

    def __getattr__(self, name: str) -> Any:
        if name not in ("match", "search", "finditer", "_rx"):
            raise AttributeError(name)
        rx = re.compile(self.pattern, self.flags)
        self._rx, self.match, self.search, self.finditer = rx, rx.match, rx.search, rx.finditer
        self.__class__ = _Ready  # type: ignore[assignment]  # the same layout (_Slots)
        return getattr(self, name)


class _Ready(_Slots):
    """A ``_Lazy`` once compiled: its slots filled, no ``__getattr__``."""

    __slots__ = ()


class _Entry:
    """A rule as the engine runs it: its regexes (lazy), its check, its rank."""

    __slots__ = ("rule", "rx", "trigger", "fn", "priority", "group", "at", "placed", "order",
                 "rank", "names", "value_tests", "runs", "bound")

    def __init__(self, rule: Rule, order: int) -> None:
        self.rule = rule
        self.rx = _Lazy(rule.regex, rule.flags)
        self.trigger = _Lazy(rule.trigger) if rule.trigger else None
        self.fn: Check | None = CHECKS.get(rule.check) if rule.check else None
        self.priority = rule.priority
        self.group = rule.group
        self.bound = rule.value_group  # "": the group's span bounds what the check reports
        self.at = rule.locate == "at"
        self.runs = rule.locate == "runs"  # matches only at the starts of runs: _run_matches
        if self.runs and not rule.regex.startswith(RUN_LOOKBEHIND):
            raise ValueError(f"rule {rule.id}: locate='runs' needs a regex that starts with "
                             f"{RUN_LOOKBEHIND}")
        # where the rule's matches start: at its keywords (a trigger or locate="at")
        self.placed = self.trigger is not None or self.at
        self.order = order  # rank among equal priorities: the rules' order
        self.rank = (self.priority, order)
        self.names = not self.at  # a placed rule matches where a keyword *name* may start
        # whether value_passes has anything to test (most records declare no value test)
        self.value_tests = bool(rule.min_length or rule.min_distinct or rule.entropy
                                or rule.charset)


# What a keyword found on a line dispatches: a provider name, its rules when it stands as a
# whole word; or its actions: a rule with the tail that must follow the keyword (None:
# none) and whether the rule starts at the keyword (then the keyword's place is kept).
# One action per (tail, rule): flat, so a hit costs one loop step per rule it may select.
_Action = tuple["_Lazy | None", _Entry, bool]
_Kw = tuple[bool, tuple[_Entry, ...], tuple[_Action, ...]]
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


class _TrieFinder:
    """Every occurrence of every keyword, from one regex: a lookahead trie reports the
    longest keyword starting at each place, the keywords it begins with are added."""

    def __init__(self, keywords: list[str]) -> None:
        index = {kw: i for i, kw in enumerate(keywords)}
        self.index = index
        self.prefixes = {kw: [(index[kw[:n]], n) for n in range(len(kw), 0, -1) if kw[:n] in index]
                         for kw in keywords}
        self.source = "(?=(" + trie_regex(keywords) + "))"
        self._rx: re.Pattern[str] | None = None

    def find(self, lowered: str, overlapping: bool = True) -> list[tuple[int, int, int]]:
        if self._rx is None:
            self._rx = re.compile(self.source)
        out = []
        for m in self._rx.finditer(lowered):
            start = m.start()
            for i, n in self.prefixes[m.group(1)]:
                out.append((i, start, start + n))
        return out


# After this many lines scanned with one set of rules, a process that keeps scanning gets
# the Aho-Corasick search as a DFA: a third less time a line (0.7 against 1.0 us on the
# evaluation half), but 4 ms to build and 2.7 MB, against 0.7 ms and 0.3 MB for the NFA
# built first. The NFA's extra cost over these lines is about one DFA build (0.3 us a line),
# so a process never pays more than twice what the better choice in hindsight would cost
# (the ski-rental bound); a hook, which scans a few notes, never builds it.
DFA_AFTER = 12_000


def _finder(keywords: list[str], dfa: bool = False) -> Any:
    """Aho-Corasick (ahocorasick_rs, about ten times faster than the trie regex on a
    line of notes and built in a fraction of a millisecond) or the trie regex; ``dfa``:
    the Aho-Corasick DFA (``DFA_AFTER``)."""
    if _FINDER[0] == "auto":
        try:
            import ahocorasick_rs
        except ImportError:
            _FINDER[0] = "trie"
        else:
            _FINDER[0] = "aho-corasick"
            _FINDER.append(ahocorasick_rs)
    if _FINDER[0] == "trie":
        return _TrieFinder(keywords)
    module = _FINDER[1]
    if dfa:
        ac = module.AhoCorasick(keywords, matchkind=module.MatchKind.Standard,
                                implementation=module.Implementation.DFA)
    else:
        ac = module.AhoCorasick(keywords, matchkind=module.MatchKind.Standard)
    return _AcFinder(ac, dfa)


class _AcFinder:
    """``find(lowered, True)``: overlapping matches, the flag passed by position (a keyword
    argument costs more than the search itself on a line of notes: PyO3 parses keywords
    the slow way). The engine calls it directly (no wrapper frame per line) and catches
    UnicodeEncodeError itself: a lone surrogate (a non-UTF-8 path read with
    surrogateescape) cannot cross into Rust (``_SURROGATE``)."""

    __slots__ = ("find", "dfa")

    def __init__(self, ac: Any, dfa: bool = False) -> None:
        self.find = ac.find_matches_as_indexes
        self.dfa = dfa


_SURROGATE = re.compile("[\ud800-\udfff]")


# "auto", then the finder in use ("aho-corasick" and its module, or "trie");
# use_trie_finder() pins the regex one (tests run both)
_FINDER: list[Any] = ["auto"]


def use_trie_finder(on: bool = True) -> None:
    """Pin the regex searches (``on``: the trie finder, and the value tests' regex and XOR,
    as without ahocorasick_rs) or let the next compile pick Aho-Corasick again."""
    _FINDER[:] = ["trie"] if on else ["auto"]
    V.use_regex_searches(on)


# a shape: its regex (lazy), its rules, and for a gated one the run its matches need (None:
# the run shape itself, then the run decides alone). The shapes that need a run of token
# characters (the run shape and the default one) are "gated": a line without a run of 20
# (most lines of notes) skips them all, and one without a run of 34 skips the default one.
_Shape = tuple[_Lazy, tuple[_Entry, ...], bytes | None]


class Compiled:
    __slots__ = ("finder", "find", "table", "gated", "ungated", "always", "keywords", "escaped")

    def __init__(self, finder: Any, table: list[_Kw], shapes: list[tuple[str, tuple[_Entry, ...]]],
                 always: tuple[_Entry, ...], keywords: list[str] | None = None,
                 escaped: _Entry | None = None):
        self.finder = finder
        self.find: Any = finder.find if finder is not None else None  # find(lowered, True)
        self.keywords = keywords or []  # for the DFA (_to_dfa)
        self.table = table
        self.gated = tuple(_shape(k, es) for k, es in shapes if k in (SHAPE_TRIGGER, RUN_SHAPE))
        self.ungated = tuple(_shape(k, es) for k, es in shapes
                             if k not in (SHAPE_TRIGGER, RUN_SHAPE))
        self.always = always
        self.escaped = escaped


def compile_rules(rules: Sequence[Rule]) -> Compiled:
    entries = [_Entry(r, i) for i, r in enumerate(rules)]
    # (keyword, tail) -> rules: the rules sharing a keyword and a tail are dispatched together
    direct: dict[str, dict[str, list[_Entry]]] = {}
    words: dict[str, list[_Entry]] = {}
    for e in entries:
        own_tails = dict(e.rule.keyword_tails)
        for kw in e.rule.keywords:
            if e.rule.word_keywords and kw.isalnum():
                words.setdefault(kw, []).append(e)
            else:
                direct.setdefault(kw, {}).setdefault(own_tails.get(kw, ""), []).append(e)
    tails: dict[str, _Lazy] = {}
    keywords = sorted(set(direct) | set(words))
    table: list[_Kw] = []
    for kw in keywords:
        actions = tuple(
            (tails.setdefault(tail, _Lazy(tail)) if tail else None, e, e.placed)
            for tail, es in direct.get(kw, {}).items() for e in es)
        table.append((kw in words, tuple(words.get(kw, ())), actions))
    shapes: dict[str, list[_Entry]] = {}
    for e in entries:
        if e.rule.shape:
            shapes.setdefault(e.rule.shape, []).append(e)
    return Compiled(
        finder=_finder(keywords) if keywords else None,
        table=table,
        shapes=[(SHAPE_TRIGGER if k == "default" else k, tuple(shapes[k])) for k in sorted(shapes)],
        always=tuple(e for e in entries if not e.rule.keywords and not e.rule.shape),
        keywords=keywords,
        escaped=next((e for e in entries if e.rule.locate == "unescaped"), None),
    )


def _to_dfa(comp: Compiled) -> None:
    """The keyword search of ``comp`` as an Aho-Corasick DFA (the same matches), if it is an
    Aho-Corasick NFA (not the trie regex, not a DFA already)."""
    if isinstance(comp.finder, _AcFinder) and not comp.finder.dfa:
        comp.finder = _finder(comp.keywords, dfa=True)
        comp.find = comp.finder.find


# lines scanned in this process (any rules): at DFA_AFTER, the rules in use get the DFA
# (a C counter: no attribute written, no int kept a line)
_SCANNED = count(1)


def _shape(pattern: str, entries: tuple[_Entry, ...]) -> _Shape:
    need = None if pattern == RUN_SHAPE else b"a" * SHAPE_TRIGGER_RUN \
        if pattern == SHAPE_TRIGGER else b""
    return (_Lazy(pattern), entries, need)


def _select(text: str, lowered: str, comp: Compiled) -> dict[_Entry, list[int] | None]:
    """The rules a line needs; for a rule with a trigger, where its keywords are."""
    selected: dict[_Entry, list[int] | None] = dict.fromkeys(comp.always) if comp.always else {}
    find = comp.find
    if find is not None:
        if next(_SCANNED) == DFA_AFTER:
            _to_dfa(comp)
            find = comp.find
        table = comp.table
        n = len(lowered)
        try:
            hits = find(lowered, True)
        except UnicodeEncodeError:  # Aho-Corasick: one replacement character per surrogate
            hits = find(_SURROGATE.sub("\ufffd", lowered), True)  # keeps every index
        for idx, start, end in hits:
            is_word, named, actions = table[idx]
            if is_word and (start == 0 or lowered[start - 1] not in _ALNUM) and (
                    end == n or lowered[end] not in _ALNUM):
                for e in named:
                    if e.placed:
                        selected.setdefault(e, []).append(start)  # type: ignore[union-attr]
                    else:
                        selected.setdefault(e, None)
            for tail, e, placed in actions:
                if tail is not None and tail.match(lowered, end) is None:
                    continue
                if placed:  # a placed rule's value is always a list (never None)
                    where = selected.get(e)
                    if where is None:
                        selected[e] = [start]
                    else:
                        where.append(start)
                elif e not in selected:
                    selected[e] = None
    # _has_run(text), inline: one test for every gated shape
    if comp.gated and len(text) >= 20:
        runs = text.encode("utf-8", "surrogatepass").translate(_RUN_BYTES)
        if runs.find(_RUN) >= 0:
            for shape, es, need in comp.gated:
                if need is None or (runs.find(need) >= 0 and shape.search(text) is not None):
                    for e in es:  # a rule located at runs gets the translation (_run_matches)
                        selected.setdefault(e, runs if e.runs else None)  # type: ignore[arg-type]
    for shape, es, _need in comp.ungated:
        if shape.search(text) is not None:
            for e in es:
                selected.setdefault(e, None)
    return selected


# RUN_SHAPE's characters as "a", every other byte (and each byte of a non-ASCII one) as " "
_RUN_BYTES = bytes(97 if chr(c) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                   "0123456789_+/=.~-" else 32 for c in range(256))


_RUN = b"a" * 20


def _has_run(text: str) -> bool:
    """Whether RUN_SHAPE can match: twenty token characters in a row, found with one
    byte translation and one substring search (cheaper than the regex on a line;
    ``_select`` runs it inline)."""
    return len(text) >= 20 and text.encode("utf-8", "surrogatepass").translate(
        _RUN_BYTES).find(_RUN) >= 0


def _run_matches(e: _Entry, text: str, runs: Any = None) -> Any:
    """``e.rx.finditer(text)`` for a rule located at runs, from its possible starts only.

    Such a regex matches only at a place with no run character before it and 20 run
    characters from it: the start of a maximal run of 20 or more; and its match holds run
    characters only, so it ends inside that run and the next search cannot start before
    the run ends. One match at most a run, at its start: on an ASCII line (bytes and
    characters at the same offsets) the run starts come from the run test's translation
    (the first 20 run characters after a run's end start the next run), one ``match``
    each, instead of the regex entering at every place of every word. ``runs``: the run
    test's translation of ``text`` if ``_select`` made it (the same bytes on an ASCII line)."""
    if not text.isascii():
        return e.rx.finditer(text)
    if runs.__class__ is not bytes:
        runs = text.encode("ascii").translate(_RUN_BYTES)
    match = e.rx.match
    out = []
    start = runs.find(_RUN)
    while start >= 0:
        m = match(text, start)
        if m is not None:
            out.append(m)
        end = runs.find(b" ", start)
        if end < 0:
            break
        start = runs.find(_RUN, end)
    return out


def _name_starts(text: str, lowered: str, at: int) -> list[int]:
    """Where a keyword name containing the keyword found at `at` may begin:
    DB_PASSWORD, dbPassword, "api key", --password, or the keyword itself.
    ``lowered`` is ``text.lower()`` with the same offsets (the caller checks the lengths):
    the words before a name are compared on it, without lowercasing a slice each time."""
    if at:
        # the run of name characters that ends at ``at`` (64 at most): what rstrip removes
        window = text[at - 64 if at > 64 else 0: at]
        p = at - len(window) + len(window.rstrip(_NAME_CHARS))
    else:
        p = 0
    starts = [p]
    if p >= 4 and lowered[p - 4 : p] == "api ":
        starts.insert(0, p - 4)
    elif p >= 7 and lowered[p - 7 : p] == "mot de ":
        starts.insert(0, p - 7)  # French: mot de passe
    elif p >= 11 and lowered[p - 7 : p] == "shared " and lowered[p - 11: p - 7] in (
            "pre-", "pre_", "pre "):
        starts.insert(0, p - 11)  # pre-shared key
    if p == at:
        return starts  # the keyword starts the name: no separator to skip, nothing to add
    q = p
    while q < at and not text[q].isalnum():
        q += 1
    if q not in starts:
        starts.append(q)
    if at not in starts:
        starts.append(at)
    return starts


def _matches(e: _Entry, text: str, lowered: str, where: list[int] | None
             ) -> list[re.Match[str]]:
    if not e.placed or (where is None and e.trigger is None):
        return list(e.rx.finditer(text))
    if where is None:  # dispatched without a keyword place: the trigger finds them all
        places = [h.start() for h in e.trigger.finditer(lowered)]  # type: ignore[union-attr]
    else:  # the prefilter found the rule's keywords with their tails: the trigger's places
        places = sorted(set(where)) if len(where) > 1 else where
    if not places:
        return []
    if len(lowered) != len(text):  # lower() changed offsets (rare Unicode): scan it all
        return list(e.rx.finditer(text))
    match = e.rx.match
    out = []
    covered = -1  # places inside the last match belong to it (keeps long lines linear)
    for place in places:
        if place < covered:
            continue
        for start in _name_starts(text, lowered, place) if e.names else (place,):
            m = match(text, start)
            if m is not None:
                covered = m.end()
                out.append(m)
                break
    return out


def scan(text: str, comp: Compiled) -> list[tuple[int, int, str]]:
    """(start, end, kind) of each credential in one line, sorted, never overlapping."""
    lowered = text.lower()
    selected = _select(text, lowered, comp)
    if not selected:
        return []
    candidates: list[tuple[int, int, int, str]] = []  # priority, start, end, kind
    order = sorted(selected, key=_RANK) if len(selected) > 1 else selected
    is_placeholder = V.is_placeholder
    for e in order:
        rule = e.rule
        prio = e.priority
        fn = e.fn
        where = selected[e]
        if e.runs:
            found: Any = _run_matches(e, text, where)
        elif not e.placed or (where is None and e.trigger is None):
            found = e.rx.finditer(text)  # the common case, without a list
        else:
            found = _matches(e, text, lowered, where)
        for m in found:
            start, end = m.span(e.group)
            # a weaker rule's match inside a stronger finding can only lose: skip its checks
            if candidates and len(candidates) <= 32:  # a shortcut only: _resolve decides
                lo, hi = (start, end) if not e.bound else _value_span(m, e.bound, text)
                inside = False
                for p, s, t, _k in candidates:
                    if p < prio and s <= lo and hi <= t:
                        inside = True
                        break
                if inside:
                    continue
            kind = rule.kind
            if fn is not None:
                verdict: Any = fn(m, text)
                if not verdict:
                    continue
                if isinstance(verdict, tuple):
                    start, end, kind = verdict
            if end <= start:
                continue
            value = text[start:end]
            if is_placeholder(value) or (e.value_tests and not value_passes(rule, value)):
                continue
            candidates.append((prio, start, end, kind))
    if not candidates:
        return scan_unescaped(text, comp) if comp.escaped in selected else []
    candidates.sort()
    return _resolve(candidates)


def _value_span(m: re.Match[str], group: str, text: str) -> tuple[int, int]:
    """The span of ``m``'s ``group`` less one pair of quotes around it (the rule's
    ``value_group``: its check reports nothing outside it)."""
    lo, hi = m.span(group)
    if hi - lo >= 2 and text[lo] in "\"'`" and text[hi - 1] == text[lo]:
        return lo + 1, hi - 1
    return lo, hi


# a string literal's escapes for a line break or a tab (C, Java, JS, Python, Go, JSON): the
# text after one starts a line of its own ("...\\npassword=X"), each read as two spaces
_BREAK_ESCAPES = ("\\n", "\\r", "\\t")


def scan_unescaped(text: str, comp: Compiled) -> list[tuple[int, int, str]]:
    """A line that quotes with ``\\"`` (JSON inside a string: a ``curl -d`` body, a log's
    escaped payload, ``"{\\"password\\": \\"X\\"}"``) or breaks its lines with ``\\n``
    (a multi-line text in one literal: ``"host=db\\npassword=X"``) read once more with those
    escapes undone (a break escape becomes two spaces, so offsets stay), its spans mapped
    back onto the line. ``scan`` calls it where nothing was found and the prefilter marked
    the line (a rule with ``locate="unescaped"``, whose keywords are ``\\"`` and the
    break escapes)."""
    plain = text
    for escape in _BREAK_ESCAPES:
        if escape in plain:
            plain = plain.replace(escape, "  ")
    plain = plain.replace('\\"', '"')
    if plain == text:
        return []
    # plain is shorter than text, or as long and without a break escape: the recursion ends
    found = scan(plain, comp)
    if not found:
        return []
    removed: list[int] = []  # where, in ``plain``, each quote that lost its backslash is
    i = text.find('\\"')
    while i >= 0:
        removed.append(i - len(removed))
        i = text.find('\\"', i + 2)
    return [(s + bisect_right(removed, s), e + bisect_right(removed, e - 1), k)
            for s, e, k in found]


def _resolve(candidates: list[tuple[int, int, int, str]]) -> list[tuple[int, int, str]]:
    """The strongest candidates that do not overlap one already kept, sorted by start.
    Kept spans never overlap, so their starts and ends are in the same order: one bisect
    finds the only neighbours a new span could overlap (a line with thousands of
    findings stays n log n)."""
    if len(candidates) == 1:
        _prio, start, end, kind = candidates[0]
        return [(start, end, kind)]
    starts: list[int] = []
    kept: list[tuple[int, int, str]] = []
    for _prio, start, end, kind in candidates:
        i = bisect_right(starts, start)
        if i and kept[i - 1][1] > start:
            continue  # overlaps the kept span that starts at or before it
        if i < len(kept) and kept[i][0] < end:
            continue  # overlaps the kept span that starts after it
        starts.insert(i, start)
        kept.insert(i, (start, end, kind))
    return kept


_RANK = attrgetter("rank")
