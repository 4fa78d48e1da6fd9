"""What a fleet query matches: words, a phrase, or a regular expression.

One matcher decides for every path (the SQLite index, the PostgreSQL index, a scan of
the drives), so all three give the same answer: the indexes only narrow the candidate
entries with their full-text search over :func:`words_of` (the same words the matcher
compares), and every candidate is then judged here.

* words: ``Jane Roe`` matches an entry holding both words, in any order and case;
* phrase: ``"Jane Roe"`` (in double quotes) matches the words next to each other;
* regex (``--regex``): Python's ``re``, case-insensitive, searched in the entry text
  (no index narrows a regex: every entry is judged, the same on every path).

Words are runs of letters and digits after NFKC and case folding (``purge_key``'s
normal form, so ``ＪＡＮＥ`` and ``jane`` are one word).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from memgit.errors import UsageError

_WORD_RE = re.compile(r"[^\W_]+")


def words_of(text: str) -> list[str]:
    """The words of ``text`` in order: letters and digits, NFKC, case-folded."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return _WORD_RE.findall(folded)


@dataclass(frozen=True)
class Query:
    """A parsed query: ``kind`` is words, phrase or regex."""

    kind: str
    words: tuple[str, ...] = ()
    pattern: str = ""

    def matches(self, text: str, words: str | None = None) -> bool:
        """Whether ``text`` matches; ``words`` is ``" ".join(words_of(text))`` when the
        caller has it already (the fleet index stores it), so it is not worked out again."""
        return self.predicate()(text, " ".join(words_of(text)) if words is None else words)

    def predicate(self) -> Callable[[str, str], bool]:
        """:meth:`matches` as a function of (text, words), made once per query: a judge
        calls it for every candidate. Words hold no space, so a word (or a phrase) is in
        the words exactly when it is there with a space on each side."""
        if self.kind == "regex":
            search = _compiled(self.pattern).search
            return lambda text, _words: search(text) is not None
        if self.kind == "phrase":
            needle = f" {' '.join(self.words)} "
            return lambda _text, words: needle in f" {words} "
        needles = tuple(f" {w} " for w in self.words)

        def every_word(_text: str, words: str) -> bool:
            padded = f" {words} "
            return all(n in padded for n in needles)
        return every_word

    def describe(self) -> str:
        """The query's shape without its text (for receipts and logs)."""
        if self.kind == "regex":
            return "regex"
        return f"{self.kind} ({len(self.words)} word{'s' if len(self.words) != 1 else ''})"


_CACHE: dict[str, re.Pattern[str]] = {}


def _compiled(pattern: str) -> re.Pattern[str]:
    found = _CACHE.get(pattern)
    if found is None:
        found = _CACHE[pattern] = re.compile(pattern, re.IGNORECASE)
    return found


def parse_query(text: str, *, regex: bool = False) -> Query:
    """``text`` as a query; a usage error when it holds nothing to look for."""
    if regex:
        try:
            compiled = _compiled(text)
        except re.error as exc:
            raise UsageError(f"not a valid regular expression: {exc}",
                             "the pattern is Python's re syntax, matched case-insensitively"
                             ) from exc
        if compiled.search("") is not None:
            raise UsageError("the regular expression matches every text (it matches the "
                             "empty text)", "name what to look for")
        return Query("regex", pattern=text)
    stripped = text.strip()
    phrase = len(stripped) >= 2 and stripped[0] == stripped[-1] == '"'
    words = tuple(words_of(stripped[1:-1] if phrase else stripped))
    if not words:
        raise UsageError("the query holds no word to look for",
                         'give words (Jane Roe), a phrase ("Jane Roe") or --regex PATTERN')
    return Query("phrase" if phrase and len(words) > 1 else "words", words)
