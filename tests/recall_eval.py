"""What the recall benchmarks share: the paraphrase test and the ranking measures.

A query is a *paraphrase* of its answer entry when they share no content word: words
are lower-cased ``\\w+`` runs, memgit's recall stop words are dropped (the words lexical
recall ignores), and the rest are reduced to their Snowball (Porter 2) English stems, so
"deleting" and "delete" count as one word. The entry's file name counts as entry words,
since lexical recall searches the topic path too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import snowballstemmer

from memgit.index.search import _STOPWORDS
from memgit.state.facts import topic_words

_WORD_RE = re.compile(r"\w+", re.UNICODE)
_STEMMER = snowballstemmer.stemmer("english")


def content_words(text: str) -> set[str]:
    """The stems of ``text``'s words that are not stop words."""
    words = [w for w in _WORD_RE.findall(text.casefold()) if w not in _STOPWORDS]
    return set(_STEMMER.stemWords(words))


def is_paraphrase(query: str, entry_text: str, entry_path: str = "") -> bool:
    """True when ``query`` shares no content word with the entry (text and topic path)."""
    entry = content_words(entry_text) | content_words(topic_words(entry_path))
    return not (content_words(query) & entry)


def first_rank(ranked: Sequence[str], relevant: Iterable[str]) -> int | None:
    """1-based rank of the first relevant id, None when none is ranked."""
    wanted = set(relevant)
    return next((i for i, e in enumerate(ranked, 1) if e in wanted), None)


def recall_at(ranked: Sequence[str], relevant: Sequence[str], k: int = 5) -> float:
    """Share of the relevant ids among the first ``k`` ranked."""
    return len(set(relevant) & set(ranked[:k])) / len(relevant)


def reciprocal_rank(ranked: Sequence[str], relevant: Sequence[str]) -> float:
    rank = first_rank(ranked, relevant)
    return 1.0 / rank if rank else 0.0
