"""A rule located at runs (the generated-token rule) finds, from the runs' starts alone,
exactly what its regex's ``finditer`` finds on the whole line."""

from __future__ import annotations

import random

import pytest

from memgit.secrets import _compiled, engine, scan_text
from memgit.secrets.rules import Rule


def _entry() -> engine._Entry:
    scan_text("x")
    comp = _compiled[()]
    return next(e for shape in comp.gated for e in shape[1] if e.runs)


def _lines(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    chars = "aZ9_+/=.~-" * 3 + " \t:\"'()\u00e9"
    out = ["".join(rng.choice(chars) for _ in range(rng.randrange(0, 120))) for _ in range(n)]
    for size in (19, 20, 21, 1024, 1025, 2100):
        for before in ("", "=", " ", "==", " ="):
            for after in ("", "=", "====", " x", "=x"):
                out.append(before + "A" * size + after + " " + "=" + "b" * size)
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_run_matches_are_the_regex_matches(seed: int) -> None:
    e = _entry()
    for line in _lines(seed, 5000):
        assert [m.span() for m in engine._run_matches(e, line)] == \
            [m.span() for m in e.rx.finditer(line)]


def test_runs_need_the_run_lookbehind() -> None:
    with pytest.raises(ValueError, match="runs"):
        engine._Entry(Rule("x", "X", r"[A-Za-z0-9]{20,}", locate="runs"), 0)
