"""The keyword search as an Aho-Corasick DFA (what a process gets after ``DFA_AFTER``
lines) finds what the NFA built first finds, and the scan with it finds the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memgit.secrets import builtin_rules, engine

DATA = Path(__file__).parents[1] / "data" / "secrets"

pytest.importorskip("ahocorasick_rs")


def _lines() -> list[str]:
    dev = [json.loads(x)["line"] for x in (DATA / "dev" / "lines.jsonl").read_text().splitlines()]
    return dev + ["caf\udce9 token: x", "İstanbul PASSWORD=x", "", "ſecret key: Zq8Lm3Nx7R"]


def _ids(selected: dict) -> dict[str, list[int] | None]:
    return {e.rule.id: where for e, where in selected.items()}


def test_the_dfa_finds_what_the_nfa_finds():
    engine.use_trie_finder(False)
    comp = engine.compile_rules(builtin_rules())
    assert isinstance(comp.finder, engine._AcFinder) and not comp.finder.dfa
    lines = _lines()
    before = [engine.scan(line, comp) for line in lines]
    nfa = comp.find
    selected = [_ids(engine._select(line, line.lower(), comp)) for line in lines]
    engine._to_dfa(comp)
    assert comp.finder.dfa
    assert [engine.scan(line, comp) for line in lines] == before
    assert [_ids(engine._select(line, line.lower(), comp)) for line in lines] == selected
    for line in lines:
        low = line.lower()
        try:
            assert sorted(comp.find(low, True)) == sorted(nfa(low, True))
        except UnicodeEncodeError:
            pass  # a lone surrogate: the engine replaces it before the search (either finder)


def test_the_trie_finder_is_kept():
    engine.use_trie_finder(True)
    try:
        comp = engine.compile_rules(builtin_rules())
        finder = comp.finder
        engine._to_dfa(comp)
        assert comp.finder is finder
    finally:
        engine.use_trie_finder(False)


def test_the_switch_comes_after_dfa_after_lines(monkeypatch):
    """The process's line count reaching DFA_AFTER gives the rules in use the DFA (once)."""
    comp = engine.compile_rules(builtin_rules())
    monkeypatch.setattr(engine, "DFA_AFTER", next(engine._SCANNED) + 3)
    for _ in range(2):
        engine.scan("a note", comp)
    assert not comp.finder.dfa
    engine.scan("a note", comp)
    assert comp.finder.dfa
