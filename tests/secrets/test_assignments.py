"""Keyword assignments: the keyword rule's regex spelled case by case (``spell_cases``)
and with its core factored by leading letters (``factor_alternation``) matches exactly what
the readable pattern matches under re.IGNORECASE."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memgit.secrets import assignments
from memgit.secrets.factoring import factor_alternation

DEV = Path(__file__).parents[1] / "data" / "secrets" / "dev" / "lines.jsonl"
IGNORING = re.compile(assignments.KW_RE, re.IGNORECASE)
SPELLED = re.compile(assignments.spell_cases(assignments.KW_RE))
# the pattern as written for people: the core not factored, the name not atomic, the
# prefixes not guarded
READABLE = re.compile(
    assignments.KW_RE.replace(assignments._KW_CORE, assignments._KW_CORE_READABLE)
    .replace("(?>(?P<name>", "(?P<name>").replace(assignments._NAME_END + ")",
                                                 assignments._NAME_END)
    .replace(assignments._GLUED_GUARD, "").replace(assignments._PASS_GUARD, "")
    .replace(assignments._GAP_GUARD, "").replace(assignments._OP_GUARD, ""), re.IGNORECASE)


def _same_at_every_start(text: str) -> None:
    for start in range(len(text) + 1):
        a, b = IGNORING.match(text, start), SPELLED.match(text, start)
        c = READABLE.match(text, start)
        assert (a is None) == (b is None) == (c is None), start
        if a is not None and b is not None and c is not None:
            assert (a.span(), a.groupdict()) == (b.span(), b.groupdict()), start
            assert (a.span(), a.groupdict()) == (c.span(), c.groupdict()), start


def test_the_core_is_the_readable_core_factored():
    assert "(?P<core>" + assignments._KW_CORE + ")" in assignments.KW_RE
    assert READABLE.pattern.count("(?>") == 0 and assignments.KW_RE.count("(?>") == 1
    assert assignments.KW_RE.count(assignments._GLUED_GUARD) == 1
    assert assignments.KW_RE.count(assignments._PASS_GUARD) == 1
    assert assignments._GLUED_GUARD not in READABLE.pattern
    assert assignments._PASS_GUARD not in READABLE.pattern
    assert assignments.KW_RE.count(assignments._GAP_GUARD) == 1
    # the gap's guard lets through every first letter of a gap word
    firsts = {w[0] for w in assignments._GAP_WORDS_READABLE.split("|")}
    assert all(re.match(assignments._GAP_GUARD, " " + c) for c in firsts)
    assert assignments.KW_RE.count(assignments._OP_GUARD) == 1
    # the operator's guard lets through the first character of every operator
    assert all(re.match(assignments._OP_GUARD, c) for c in " \t:=|\uff1a\u2192-,是为為は는은")
    assert factor_alternation(assignments._KW_CORE_READABLE) == assignments._KW_CORE
    assert factor_alternation(assignments._GAP_WORDS_READABLE) == assignments._GAP_WORDS


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


# what the prefilter dispatches the rule by: each anchor keyword with _KW_TAIL after it
_TAIL = re.compile(assignments._KW_TAIL)
_ANCHOR_AT = re.compile("(?=(" + "|".join(map(re.escape, sorted(
    assignments._KW_ANCHORS, key=len, reverse=True))) + "))")


def _dispatched(match: re.Match[str], line: str) -> bool:
    """Whether an anchor keyword inside ``match`` has its tail after it on the lowered line
    (the keyword places the engine tries the rule at)."""
    low = line.lower()
    if len(low) != len(line):
        return True  # lower() moved offsets: the engine searches such a line whole
    for hit in _ANCHOR_AT.finditer(low, match.start(), match.end()):
        for kw in assignments._KW_ANCHORS:
            at = hit.start()
            if low.startswith(kw, at) and at + len(kw) <= match.end() and \
                    _TAIL.match(low, at + len(kw)):
                return True
    return False


def _every_match_dispatched(line: str) -> None:
    for m in SPELLED.finditer(line):
        assert _dispatched(m, line), (line, m.span())


def test_the_tail_dispatches_every_match_on_corpus_lines():
    """_KW_TAIL is a superset: every match of the rule's regex on a line (searched along it,
    with no prefilter) holds a keyword the prefilter finds with its tail after it."""
    lines = [json.loads(x)["line"] for x in DEV.read_text().splitlines()]
    found = 0
    for line in lines:
        _every_match_dispatched(line)
        found += SPELLED.search(line) is not None
    assert found > 1500


# names, operators, words and glue, as names and their operators are written
_TAIL_PIECES = st.sampled_from(
    ["password", "token", "key", "secret", "pwd", "_", "-", ".", " ", "=", ":", "->", ">",
     " is ", " for ", "is", "for", "set to", "string", "'", '"', "`", "*", "[0]", "(prod)",
     ",", " - ", "X9f2kLm7", "db", "api", "\u662f", "\uff1a", "\u2192"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_TAIL_PIECES, max_size=10).map("".join))
def test_the_tail_dispatches_every_match_on_random_text(text):
    _every_match_dispatched(text)


# the core's words, whole and cut into pieces, with separators, cases and foldings between
_CORE_WORDS = ("password", "passwort", "passord", "passphrase", "pwd", "pat", "pin",
               "personal access token", "private_key", "pre-shared key", "psk", "client secret",
               "consumer key", "contraseña", "cookie", "credentials", "creds",
               "secret access key", "secrete", "session", "service token", "senha",
               "signing key", "signature", "sid", "skey", "salasana", "salt", "access token",
               "auth key", "api key", "apikeys", "app key", "appkey", "adgangskode",
               "master token", "mot de passe", "mot_de_passe", "tokens", "totp", "hapikey",
               "hasło", "hash", "hmac", "kennwort", "keys", "licence key", "license", "lösenord",
               "jwt", "jelszó", "şifre", "sifre", "parola", "heslo", "пароль", "密码", "口令")
_CORE_PIECES = st.sampled_from(sorted(
    {w[i:j] for w in _CORE_WORDS for i in range(len(w)) for j in range(i + 1, len(w) + 1)
     if j - i <= 6}
    | set(_CORE_WORDS)
    | {"_", "-", ".", " ", "=", ": ", " is ", " for the ", "'", "`", "\u017f", "\u212a",
       "\u0130", "\u0131", "A", "K", "P", "S", "T", "X1", " key", " token", " access",
       ".value", "_b64", "2", " - ", "->", " (prod)", "**", "\u662f", "\uff1a", ", '"}))


@settings(max_examples=400, deadline=None)
@given(st.lists(_CORE_PIECES, max_size=8).map("".join))
def test_factored_core_on_pieces_of_its_words(text):
    _same_at_every_start(text)
    _same_at_every_start(text.upper() + "=Zq8Lm3Nx7R")


@pytest.mark.parametrize(("pattern", "factored"), [
    ("ab|ac|b", "a(?:b|c)|b"),
    ("ab|[x]y|ac", "ab|[x]y|ac"),  # a class is a barrier: nothing moves across it
    ("(?:ab|b)c|ad", "a(?:bc|d)|bc"),  # a leading group is distributed first
    ("s?keys?|sid", "s(?:keys?|id)|keys?"),  # so is a greedy optional character
    ("Ab|ab|Ac", "Ab|ab|Ac"),  # the same letter in two cases keeps its order
    ("ab|a", "a(?:b|)"),
])
def test_factor_alternation_forms(pattern, factored):
    assert factor_alternation(pattern) == factored
    words = ["".join(t) for n in range(5) for t in itertools.product("abcdkeysxAi", repeat=n)]
    before, after = re.compile(pattern), re.compile(factor_alternation(pattern))
    for w in words:
        a, b = before.match(w), after.match(w)
        assert (a and a.span()) == (b and b.span()), w


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


@pytest.mark.parametrize(
    "text",
    [
        # a UUID after a name that says what the key opens is the key itself (round 12)
        "hmac_key = 'dd4b516b-10db-418e-b306-48b5a69dc2e2'",
        "jwt_key: 4b066962-a52c-4e0e-9c57-851c62ca30a9",
        '"license_key": "d90bfefa-27b9-4d5e-9b53-6a9e92b04240"',
        "bearer=ec11f3cc-607c-4d20-8ca0-a41088905c08",
        # a weak key name holding what only a password generator writes
        "hmac_key=uMBOa%NN*e5+L3j!",
        "jwt_key = '0BE$3+7zQ)7Tp+3C'",
        "- license_key: `h9#Vq2!mT4$kLw`",
    ],
)
def test_key_names_that_say_what_they_open(text):
    from memgit.secrets import scan_text

    assert scan_text(text), text


@pytest.mark.parametrize(
    "text",
    [
        "key: 3f2b8c1e-9a4d-4e21-b7c5-0d8e6f1a2b3c",  # a record's id
        "session: 7c9e6679-7425-40de-944b-e07fc1f90ae7",
        "sid = '0f8fad5b-d9cb-469f-a165-70867728950e'",
        "hotkey: Ctrl+Shift+K",
        "key = 'F12+Alt+Shift'",
        "sig: (a*b)+(c*d)",
        "pin: v1.2.3-rc+build.45",
    ],
)
def test_key_names_that_only_name_a_record(text):
    from memgit.secrets import scan_text

    assert scan_text(text) == [], text
