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


def _shape_lines(seed: int, n: int) -> list[str]:
    """Lines with the default shape's forms, whole and cut short, among other characters."""
    rng = random.Random(seed)
    hexes, token = "0123456789abcdefABCDEF", "aZ9_-"
    out = []
    def some(chars: str, low: int, high: int) -> str:
        return "".join(rng.choice(chars) for _ in range(rng.randrange(low, high)))

    for _ in range(n):
        forms = ["SK" + some(hexes, 28, 36), "AC" + some("0123456789abcdef", 28, 36),
                 "." + "x" * 6 + "." + some(token, 24, 30), "12345678:" + some(token, 31, 38)]
        glue = [" ", "=", "\u00e9", ":", "", "x", "\ud800"]
        out.append("".join(rng.choice(forms) + rng.choice(glue)
                           for _ in range(rng.randrange(1, 4))))
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_default_shape_needs_its_run(seed: int) -> None:
    """A line the default shape matches holds a run of SHAPE_TRIGGER_RUN token characters
    (the engine skips the shape's search on the others)."""
    shape = engine._Lazy(engine.SHAPE_TRIGGER)
    need = b"a" * engine.SHAPE_TRIGGER_RUN
    found = 0
    for line in _shape_lines(seed, 3000) + _lines(seed, 2000):
        if shape.search(line) is not None:
            found += 1
            runs = line.encode("utf-8", "surrogatepass").translate(engine._RUN_BYTES)
            assert runs.find(need) >= 0
    assert found > 500
