"""Keyword assignments: the keyword rule's regex spelled case by case (``spell_cases``)
matches exactly what the readable pattern matches under re.IGNORECASE."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memgit.secrets import assignments

DEV = Path(__file__).parents[1] / "data" / "secrets" / "dev" / "lines.jsonl"
IGNORING = re.compile(assignments.KW_RE, re.IGNORECASE)
SPELLED = re.compile(assignments.spell_cases(assignments.KW_RE))


def _same_at_every_start(text: str) -> None:
    for start in range(len(text) + 1):
        a, b = IGNORING.match(text, start), SPELLED.match(text, start)
        assert (a is None) == (b is None), start
        if a is not None and b is not None:
            assert (a.span(), a.groupdict()) == (b.span(), b.groupdict()), start


def test_the_rule_runs_the_spelled_pattern_without_the_flag():
    rule = assignments.KEYWORD_ASSIGNMENT
    assert rule.regex == assignments.spell_cases(assignments.KW_RE)
    assert not rule.ignore_case


def test_spelled_pattern_matches_like_the_flag_on_corpus_lines():
    lines = [json.loads(x)["line"] for x in DEV.read_text().splitlines()]
    for line in lines[::7]:  # about 1,200 lines, every start of each
        _same_at_every_start(line)


@pytest.mark.parametrize("text", [
    "DB_PASSWORD=hunter22", "dbPassword: 'Xk9fQ2mLp0Zr'", "PAſSWORD=abc123def",
    "api_\u212aey = 'Zq8Lm3Nx7Rt2Vb6Kw9Yp'", "contraseÑa: s3cr3t0!", "- **Password:** X9f2kLm",
    "SECRET_KEY is now changed to abcDEF123456", "token (prod): 'ab12CD34ef56GH78'",
])
def test_spelled_pattern_on_cases_and_foldings(text):
    _same_at_every_start(text)


# letters of the keywords, operators, quotes, and what ignore-case folds onto ASCII letters
_ALPHABET = st.sampled_from(list("pPaAsSwWoOrRdDkKeEyYtTnN_=: '\"`*-.1x"
                                 "\u017f\u212a\u0130\u0131\u00f1\u00d1"))


@settings(max_examples=300, deadline=None)
@given(st.lists(_ALPHABET, max_size=40).map("".join))
def test_spelled_pattern_on_random_text(text):
    _same_at_every_start(text)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["password", "secret_key", "api_key", "token", "pwd", "licence_key"]),
       st.lists(_ALPHABET, max_size=24).map("".join))
def test_spelled_pattern_after_a_keyword(word, tail):
    _same_at_every_start(word + tail)
    _same_at_every_start(word.upper() + tail)


def test_spell_cases_refuses_letters_it_has_no_table_for():
    with pytest.raises(ValueError):
        assignments.spell_cases("stra\u00dfe")  # ß upper-cases to two letters


@pytest.mark.parametrize("word", ["пароль", "hasło", "şifre", "contraseña", "jelszó", "密码",
                                  "パスワード", "비밀번호"])
def test_spelled_pattern_on_other_languages(word):
    """The password words of other languages, in every case the regex engine folds onto
    (Cyrillic о also matches ᲂ), match spelled exactly as under re.IGNORECASE."""
    for variant in {word, word.upper(), word.capitalize(), word.replace("о", "\u1c82")}:
        _same_at_every_start(variant + ": Zq8Lm3Nx7R")
