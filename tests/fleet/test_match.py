"""memgit.fleet.match: what a fleet query matches, the same whether the words are worked
out from the text or read from the index."""

from __future__ import annotations

import pytest

from memgit.errors import UsageError
from memgit.fleet.match import parse_query, term, terms_of, words_of

TEXTS = ["Jane Roe prefers tea", "ＪＡＮＥ ROE signed", "Roe, Jane: the contract",
         "jane likes roes", "Janet Roe", "Q3 budget for Jane_Roe", "jane-roe@example.org",
         "Zürich office", ""]


@pytest.mark.parametrize(("query", "regex", "expected"), [
    ("jane roe", False, [0, 1, 2, 5, 6]),  # every word, any order or case, NFKC; _ splits
    ('"Jane Roe"', False, [0, 1, 5, 6]),  # the words next to each other, in that order
    ("roe", False, [0, 1, 2, 4, 5, 6]),  # whole words: not 'roes'
    ("zürich", False, [7]),
    ("zurich", False, []),  # no accent folding: the word is not the same
    (r"q\d budget", True, [5]),
    (r"jane[_-]roe", True, [5, 6]),
])
def test_words_phrases_and_patterns(query: str, regex: bool, expected: list[int]) -> None:
    parsed = parse_query(query, regex=regex)
    test = parsed.predicate()
    found = [i for i, t in enumerate(TEXTS) if parsed.matches(t)]
    assert found == expected
    # the index's path: the stored terms, judged by the predicate made once
    assert [i for i, t in enumerate(TEXTS) if test(t, terms_of(t))] == expected


WORDS = ["jane", "2026", "q3", "zq", "zqx", "zq6a", "1e5", "1e5x", "12e34e", "3e86xuwt", "10am",
         "zürich", "ｊａｎｅ", "東京", "ꭰꭱ", "é", "x" * 64, "x" * 65, "ü" * 15, "ü" * 16,
         "١٢٣", "ǆ", "a1b2"]


def test_terms_are_one_ascii_token_each_and_never_two_words_alike() -> None:
    folded = [w for word in WORDS for w in words_of(word)]
    terms = [term(w) for w in folded]
    for word, t in zip(folded, terms, strict=True):
        assert t.isascii() and t.isalnum() and t == t.lower() and len(t) <= 64, (word, t)
        # the spellings PostgreSQL's parser would split start with a letter or are digits
        assert t.isdigit() or t[0].isalpha(), (word, t)
    assert len(set(terms)) == len(set(folded))  # one term per word, never shared
    assert term("jane") == "jane" and term("2026") == "2026"
    assert term("1e5x").startswith("zq") and term("zq6a") != "zq6a"
    assert terms_of("Jane's 2026 Zürich") == f"jane s 2026 {term('zürich')}"


def test_queries_that_hold_nothing_to_look_for_are_refused() -> None:
    for query, regex, message in (("  ", False, "holds no word"), ("--", False, "holds no word"),
                                  ("x*", True, "matches every text"),
                                  ("(", True, "not a valid regular expression")):
        with pytest.raises(UsageError) as caught:
            parse_query(query, regex=regex)
        assert caught.value.code == "MG001" and message in caught.value.message
