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

The indexes store each word as a *term* (:func:`term`): a word of ASCII letters and
digits as it is, any other word spelled in hex. A term is one token for SQLite's
``unicode61`` tokenizer and for PostgreSQL's parser alike, whatever the Unicode
version of either, so their full-text search of terms finds exactly what the matcher
finds: a count from the index is the count of matching entries, with no entry read.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from memgit.errors import UsageError

_WORD_RE = re.compile(r"[^\W_]+")
_HEX_LIMIT = 31  # bytes of a word spelled in hex: a term is at most 64 characters


def words_of(text: str) -> list[str]:
    """The words of ``text`` in order: letters and digits, NFKC, case-folded."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return _WORD_RE.findall(folded)


def term(word: str) -> str:
    """``word`` as the indexes store it: one token of ASCII letters and digits, and a
    different word never the same term.

    Kept as it is: digits alone, or a letter and then letters and digits (at most 64,
    not starting with ``zq``). PostgreSQL's parser splits a word that starts with
    digits, an ``e`` and digits (``1e5x`` is the float ``1e5`` and ``x``), so such a word
    is spelled in hex like any word outside ASCII: ``zq`` and the hex of its UTF-8 (up to
    31 bytes), or ``zqx`` and 40 hex digits of its SHA-256 (longer; ``x`` is no hex digit,
    so the two spellings never meet)."""
    if word.isascii() and len(word) <= 64 and (
            word.isdigit() or (word[0].isalpha() and not word.startswith("zq"))):
        return word
    raw = word.encode("utf-8")
    if len(raw) <= _HEX_LIMIT:
        return "zq" + raw.hex()
    import hashlib

    return "zqx" + hashlib.sha256(raw).hexdigest()[:40]


def terms_of(text: str) -> str:
    """The terms of ``text``'s words, space-separated (what the indexes store)."""
    return " ".join(term(w) for w in words_of(text))


@dataclass(frozen=True)
class Query:
    """A parsed query: ``kind`` is words, phrase or regex."""

    kind: str
    words: tuple[str, ...] = ()
    pattern: str = ""

    @property
    def terms(self) -> tuple[str, ...]:
        """The query's words as the indexes store them (:func:`term`)."""
        return tuple(term(w) for w in self.words)

    def matches(self, text: str, terms: str | None = None) -> bool:
        """Whether ``text`` matches; ``terms`` is :func:`terms_of` ``(text)`` when the
        caller has it already (the fleet index stores it), so it is not worked out again."""
        return self.predicate()(text, terms_of(text) if terms is None else terms)

    def predicate(self) -> Callable[[str, str], bool]:
        """:meth:`matches` as a function of (text, terms), made once per query: a judge
        calls it for every candidate. Terms hold no space and a word has one term, so a
        word (or a phrase) is in the text exactly when its term(s) are in the terms with
        a space on each side."""
        if self.kind == "regex":
            search = _compiled(self.pattern).search
            return lambda text, _terms: search(text) is not None
        if self.kind == "phrase":
            needle = f" {' '.join(self.terms)} "
            return lambda _text, terms: needle in f" {terms} "
        needles = tuple(f" {t} " for t in self.terms)

        def every_word(_text: str, terms: str) -> bool:
            padded = f" {terms} "
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
