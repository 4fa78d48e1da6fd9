"""The value tests' Aho-Corasick searches answer as the regex and the XOR they stand for.

``values._has_mark`` (the marks of a documentation example) and ``values._typed_run`` (a
typed run's gate) search with ahocorasick_rs when it is installed and fall back to the
trie regex and the XOR otherwise: both ways must give the same answer on any string."""

from __future__ import annotations

import random

import pytest

from memgit.secrets import values as V

_PIECES = sorted(V._MARKS) + [
    "<", ">", "<a>", "<" + "a" * 61 + ">", "<" + "b" * 60 + ">", "<<x>", "\ud800", "\u00c9",
    "\u0130", "\x01", "\x01\x01\x01", "aaaa", "abcd", "zyxw", "qwer", "asdf", "0123", "3210",
    "z", "9", "-", "_", ".", " ", "A1b2C3d4", "k3j5h6g7f8d9s0a1",
]


def _strings(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        s = "".join(rng.choice(_PIECES) if rng.random() < 0.3 else
                    rng.choice("abcdefghijklmnopqrstuvwxyz0123456789-_.!?$ ")
                    for _k in range(rng.randrange(0, 24)))
        out.append(s[: rng.randrange(len(s) + 1)] if rng.random() < 0.2 else s)
    return out


def _with_finders(on: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(V, "_MARK_FINDER", [] if on else [None])
    monkeypatch.setattr(V, "_TYPED_FINDER", [] if on else [None])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_marks_and_typed_runs_same_with_and_without_aho_corasick(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ahocorasick_rs")
    values = _strings(seed, 4000)
    answers = []
    for on in (False, True):
        _with_finders(on, monkeypatch)
        answers.append([(V._has_mark(v.lower()),
                         V._typed_run(v.lower(), v.lower().encode("ascii", "replace")),
                         V.is_placeholder.__wrapped__(v)) for v in values])
    assert answers[0] == answers[1]


def test_marks_follow_the_trie_regex() -> None:
    for v in _strings(4, 4000):
        low = v.lower()
        assert V._has_mark(low) == (V.R.marks.search(low) is not None)
