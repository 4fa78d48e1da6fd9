"""memgit.fleet.match: what a fleet query matches, the same whether the words are worked
out from the text or read from the index."""

from __future__ import annotations

import pytest

from memgit.errors import UsageError
from memgit.fleet.match import parse_query, words_of

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
    # the index's path: the stored words, judged by the predicate made once
    assert [i for i, t in enumerate(TEXTS) if test(t, " ".join(words_of(t)))] == expected


def test_queries_that_hold_nothing_to_look_for_are_refused() -> None:
    for query, regex, message in (("  ", False, "holds no word"), ("--", False, "holds no word"),
                                  ("x*", True, "matches every text"),
                                  ("(", True, "not a valid regular expression")):
        with pytest.raises(UsageError) as caught:
            parse_query(query, regex=regex)
        assert caught.value.code == "MG001" and message in caught.value.message
