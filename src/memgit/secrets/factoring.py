"""Factoring a regex alternation by its leading characters (a trie), for patterns whose
factored form is written out in the source (``assignments._KW_CORE``): run by the tests
and by whoever edits such a pattern, never on import or by a scan."""

from __future__ import annotations

from collections.abc import Iterator

# Python's regex engine tries an alternation's branches one by one (it skips a branch whose
# first character cannot match, but still tests each); the keyword rule's core has 70 of
# them and is tried at every place a name's prefix could end. Grouped by leading letters,
# a place that starts no keyword costs a couple of tests instead of 70.
_SPECIAL = frozenset("\\[(.^$|)?*+{")


def _walk(pattern: str, i: int = 0) -> Iterator[tuple[int, str, int]]:
    """``(index, character, depth)`` of each character of ``pattern`` from ``i`` that is
    neither escaped nor inside a character class; ``depth`` is how many groups are open
    once that character is read (a ``(`` counts itself, a ``)`` no longer)."""
    depth = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i = _class_end(pattern, i)
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        yield i, c, depth
        i += 1


def _split_top(pattern: str) -> list[str]:
    """The top-level alternatives of ``pattern`` (``|`` outside groups and classes)."""
    out: list[str] = []
    start = 0
    for i, c, depth in _walk(pattern):
        if c == "|" and depth == 0:
            out.append(pattern[start:i])
            start = i + 1
    out.append(pattern[start:])
    return out


def _class_end(pattern: str, i: int) -> int:
    """The index after the character class that opens at ``pattern[i]``."""
    j = i + 1 + (pattern[i + 1] == "^")
    j += pattern[j] == "]"
    while pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    return j + 1


def _group_end(pattern: str, i: int) -> int:
    """The index after the group that opens at ``pattern[i]``."""
    for j, c, depth in _walk(pattern, i):
        if c == ")" and depth == 0:
            return j + 1
    raise ValueError(f"the group at {i} of {pattern!r} does not close")


def _expand_head(alt: str) -> list[str]:
    """``alt`` as alternatives that each start with their first character, in the order
    the engine tries them: ``(?:a|b)REST`` is ``aREST|bREST``, ``c?REST`` is
    ``cREST|REST`` (a greedy ``?``); anything else stays as it is."""
    if alt.startswith("(?:"):
        j = _group_end(alt, 0)
        if j < len(alt) and alt[j] in "?*+{":
            return [alt]
        out: list[str] = []
        for inner in _split_top(alt[3:j - 1]):
            out.extend(_expand_head(inner + alt[j:]))
        return out
    if len(alt) >= 2 and alt[0] not in _SPECIAL and alt[1] == "?" and alt[2:3] not in ("?", "+"):
        return _expand_head(alt[0] + alt[2:]) + _expand_head(alt[2:])
    return [alt]


def _literal_head(alt: str) -> str | None:
    """The plain ASCII character ``alt`` starts with (no quantifier on it), or None."""
    if not alt or alt[0] in _SPECIAL or not alt[0].isascii() or alt[1:2] in ("?", "*", "+", "{"):
        return None
    return alt[0]


def _trie(alts: list[str]) -> str:
    # (head, rests): the alternatives that start with one plain character, grouped; an
    # alternative without one (None) is a barrier nothing moves across. Alternatives with
    # different plain heads never match at the same place (an ASCII character's cases
    # and foldings belong to no other ASCII character), so moving one before another
    # changes no match; alternatives with one head keep their order.
    segs: list[tuple[str | None, list[str]]] = []
    for alt in alts:
        head = _literal_head(alt)
        placed = False
        if head is not None:
            for seg_head, rests in reversed(segs):
                if seg_head is None or seg_head.lower() == head.lower() != seg_head:
                    break  # a barrier, or the same letter in another case: keep the order
                if seg_head == head:
                    rests.append(alt[1:])
                    placed = True
                    break
        if not placed:
            segs.append((head, [alt if head is None else alt[1:]]))
    parts = []
    for head, rests in segs:
        if head is None:
            parts.append(rests[0])
        elif len(rests) == 1:
            parts.append(head + rests[0])
        else:
            inner = _trie(rests)
            parts.append(head + ("(?:" + inner + ")" if len(_split_top(inner)) > 1 else inner))
    return "|".join(parts)


def factor_alternation(pattern: str) -> str:
    """``pattern`` (an alternation) as a trie of its leading characters: the same matches,
    in the same order of preference, fewer branches tried where none matches. Handles
    the patterns of ``assignments`` (groups, classes, escapes, greedy ``?``); never run
    by a scan: ``assignments._KW_CORE`` holds its result, and a test checks that it
    still does."""
    alts: list[str] = []
    for alt in _split_top(pattern):
        alts.extend(_expand_head(alt))
    return _trie(alts)

