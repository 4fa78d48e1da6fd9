"""Recall on both kinds of memory, per category: lexical, dense (e5 and the fast query
encoder), hybrid, and the fusions tried for issue 32, side by side (docs/embeddings.md).

Run:
    python bench/bench_fusion.py                       # both sets, both halves, the table
    python bench/bench_fusion.py --halves report --methods shipped
    python bench/bench_fusion.py --through-memgit      # + hybrid through read_path.recall_in_mode
    python bench/bench_fusion.py --cli issue           # issue 32's table, through the CLI
    python bench/bench_fusion.py --paired --halves report  # + gaps, per question, sign test

The sets and their lists come from bench/fusion_sets.py (the drives are built and embedded
once in ``--workdir``, about ten minutes the first time). Every figure is evidence recall@5
/ recall@10: the share of a question's labelled entries among the first 5 / 10 hits,
averaged over the questions of a category. Fusion methods are computed from the same lists
memgit's recall fuses (the top 50 of each), so they compare exactly; ``--through-memgit``
checks that the shipped method here gives what memgit's own recall returns.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import fusion_sets as fs  # noqa: E402

from memgit.embeddings import vectors  # noqa: E402
from memgit.index.search import words as recall_words  # noqa: E402

Method = Callable[[dict[str, Any]], list[str]]


def ids(ranked: list[list[Any]]) -> list[str]:
    return [e for e, _ in ranked]


def rrf(encoder: str, k: int, weight: float) -> Method:
    """Reciprocal rank fusion of the lexical list and one dense list (memgit.embeddings.vectors)."""
    def method(item: dict[str, Any]) -> list[str]:
        return vectors.fuse({"lexical": ids(item["lexical"]), "semantic": ids(item[encoder])},
                            k=k, weights={"lexical": 1.0, "semantic": weight})
    return method


def named(item: dict[str, Any]) -> bool:
    """Whether the question names the speaker of one of its first lexical hits, as
    memgit.recall.hybrid.search asks memgit.embeddings.vectors.names_a_speaker."""
    return vectors.names_a_speaker(recall_words(item["query"].casefold()),
                                   item["lexical_texts"][:vectors.SPEAKER_DEPTH])


def tied(item: dict[str, Any]) -> bool:
    """Whether the first two lexical hits score within vectors.TIED of each other, as
    memgit.recall.hybrid.search asks memgit.embeddings.vectors.tied_first."""
    return vectors.tied_first([score for _e, score in item["lexical"][:2]])


def shipped(encoder: str, speakers: bool = True, ties: bool = True) -> Method:
    """What memgit's hybrid recall does with this encoder's query vectors (the weights for
    the question by memgit.embeddings.vectors.weak_lexical, from the evidence
    hybrid.lexical_evidence gave when the lists were taken); ``speakers=False``: the rule
    before a question naming a speaker made the words strong (issue 32, second round);
    ``ties=False``: the rule before tied first hits made them weak (third round)."""
    fusion = vectors.FAST_FUSION if encoder == "fast" else vectors.E5_FUSION

    def method(item: dict[str, Any]) -> list[str]:
        weak = vectors.weak_lexical(item["terms"], item["known"], item["matched"],
                                    named=speakers and named(item),
                                    tied=ties and tied(item))
        return vectors.fuse({"lexical": ids(item["lexical"]), "semantic": ids(item[encoder])},
                            k=fusion.k, weights=fusion.weights(weak))
    return method


# --- the other fusions tried (each with the parameters best on both tuning halves for e5:
# the largest worst-category margin against the better single list, grids in the docs) ----

def _idf(matches: int, entries: int) -> float:
    """FTS5's BM25 idf of a term that ``matches`` of ``entries`` rows match."""
    return max(math.log((entries - matches + 0.5) / (matches + 0.5)), 1e-6)


def lexical_confidence(item: dict[str, Any]) -> float:
    """The first lexical hit's BM25 score over the sum of the idf of every term of the
    question (a term no entry has counts too): how much of the question it explains."""
    ideal = sum(_idf(n, item["entries"]) for n in item["df"]) or 1.0
    return item["lexical"][0][1] / ideal if item["lexical"] else 0.0


def adaptive_confidence(encoder: str, k: int, threshold: float, strong: float,
                        weak: float) -> Method:
    """RRF whose semantic weight is ``weak`` when lexical_confidence < ``threshold``."""
    def method(item: dict[str, Any]) -> list[str]:
        w = strong if lexical_confidence(item) >= threshold else weak
        return vectors.fuse({"lexical": ids(item["lexical"]), "semantic": ids(item[encoder])},
                            k=k, weights={"lexical": 1.0, "semantic": w})
    return method


def score_fusion(encoder: str, beta: float, floor: float) -> Method:
    """Scores, not ranks: BM25 over the question's ideal score (lexical_confidence's
    denominator) + ``beta`` x the cosine above ``floor``, scaled to [0, 1]."""
    def method(item: dict[str, Any]) -> list[str]:
        ideal = sum(_idf(n, item["entries"]) for n in item["df"]) or 1.0
        fused = {e: s / ideal for e, s in item["lexical"]}
        for e, c in item[encoder]:
            fused[e] = fused.get(e, 0.0) + beta * max(0.0, (c - floor) / (1 - floor))
        return sorted(fused, key=lambda e: -fused[e])
    return method


def minmax_fusion(encoder: str, alpha: float) -> Method:
    """Scores, not ranks: each list's scores scaled to [0, 1] by its own best and worst,
    ``alpha`` x lexical + (1 - ``alpha``) x semantic."""
    def method(item: dict[str, Any]) -> list[str]:
        fused: dict[str, float] = {}
        for ranked, weight in ((item["lexical"], alpha), (item[encoder], 1 - alpha)):
            if ranked:
                hi, lo = ranked[0][1], ranked[-1][1]
                for e, v in ranked:
                    fused[e] = fused.get(e, 0.0) + weight * ((v - lo) / (hi - lo)
                                                             if hi > lo else 1.0)
        return sorted(fused, key=lambda e: -fused[e])
    return method


def restricted(encoder: str) -> Method:
    """The shipped rule, but when the lexical ranking is strong the semantic ranking only
    re-ranks the lexical hits (entries found by meaning alone are left out)."""
    fusion = vectors.FAST_FUSION if encoder == "fast" else vectors.E5_FUSION

    def method(item: dict[str, Any]) -> list[str]:
        lexical = ids(item["lexical"])
        weak = vectors.weak_lexical(item["terms"], item["known"], item["matched"])
        found = set(lexical)
        semantic = ids(item[encoder]) if weak else \
            [e for e in ids(item[encoder]) if e in found]
        return vectors.fuse({"lexical": lexical, "semantic": semantic}, k=fusion.k,
                            weights=fusion.weights(weak))
    return method


def guaranteed(encoder: str, weak_lexical_top: int, strong_semantic_top: int) -> Method:
    """The shipped rule (without speakers), but each list's first hits are sure of a
    place in the top 5: the lexical ranking's first ``weak_lexical_top`` when the words
    are weak, the semantic ranking's first ``strong_semantic_top`` when they are strong
    (in the fused order; the rest of the top 5 and all below as fused)."""
    base = shipped(encoder, speakers=False)

    def method(item: dict[str, Any]) -> list[str]:
        fused = base(item)
        weak = vectors.weak_lexical(item["terms"], item["known"], item["matched"])
        sure = set(ids(item["lexical"])[:weak_lexical_top] if weak
                   else ids(item[encoder])[:strong_semantic_top])
        must = [e for e in fused if e in sure]
        top = set(must + [e for e in fused if e not in sure][:max(0, 5 - len(must))])
        return [e for e in fused if e in top] + [e for e in fused if e not in top]
    return method


def agreement(encoder: str, depth: int, bonus: float) -> Method:
    """The shipped rule (without speakers), an entry in the first ``depth`` of both
    lists scoring ``1 + bonus`` times its fused score."""
    fusion = vectors.FAST_FUSION if encoder == "fast" else vectors.E5_FUSION

    def method(item: dict[str, Any]) -> list[str]:
        lexical, semantic = ids(item["lexical"]), ids(item[encoder])
        weak = vectors.weak_lexical(item["terms"], item["known"], item["matched"])
        scored = vectors.fused_scores({"lexical": lexical, "semantic": semantic}, k=fusion.k,
                                      weights=fusion.weights(weak))
        for e in set(lexical[:depth]) & set(semantic[:depth]):
            scored[e] *= 1 + bonus
        order = {e: n for n, e in enumerate(scored)}
        return sorted(scored, key=lambda e: (-scored[e], order[e]))
    return method


def disagreement(encoder: str, lexical_top: int, semantic_top: int) -> Method:
    """The shipped rule, but a question whose first ``lexical_top`` lexical hits are all
    outside the semantic ranking's first ``semantic_top`` counts as weak by its words
    (unless it names a speaker)."""
    fusion = vectors.FAST_FUSION if encoder == "fast" else vectors.E5_FUSION

    def method(item: dict[str, Any]) -> list[str]:
        lexical, semantic = ids(item["lexical"]), ids(item[encoder])
        speaks = named(item)
        weak = vectors.weak_lexical(item["terms"], item["known"], item["matched"],
                                    named=speaks)
        if not speaks and lexical and not set(lexical[:lexical_top]) & set(
                semantic[:semantic_top]):
            weak = True
        return vectors.fuse({"lexical": lexical, "semantic": semantic}, k=fusion.k,
                            weights=fusion.weights(weak))
    return method


def methods(names: str) -> dict[str, Method]:
    """The methods to show, by group name (comma-separated): ``lists`` (each list alone),
    ``old`` (the fusion before issue 32), ``tried`` (the other fusions tried, with e5),
    ``tried2`` (those of issue 32's second round, both encoders; the logistic model is
    bench/fusion_logistic.py), ``before`` (the rule before speakers), ``second`` (the
    rule before ties), ``shipped``."""
    out: dict[str, Method] = {}
    for group in names.split(","):
        if group == "lists":
            out["lexical (memgit)"] = lambda i: ids(i["lexical"])
            out["plain BM25"] = lambda i: ids(i["bm25"])
            out["dense, e5"] = lambda i: ids(i["full"])
            out["dense, fast encoder"] = lambda i: ids(i["fast"])
        elif group == "old":
            out["old hybrid, e5 (RRF k5 w3)"] = rrf("full", 5, 3.0)
            out["old hybrid, fast (RRF k1 w2)"] = rrf("fast", 1, 2.0)
        elif group == "tried":
            out["RRF k1 w2, one weighting"] = rrf("full", 1, 2.0)
            out["RRF, confidence < 0.7: w3, else w0.75"] = adaptive_confidence(
                "full", 1, 0.7, 0.75, 3.0)
            out["scores: BM25/ideal + 4 x cosine above 0.8"] = score_fusion("full", 4.0, 0.8)
            out["scores: min-max, 0.4 lexical"] = minmax_fusion("full", 0.4)
            out["shipped rule, meaning re-ranks words"] = restricted("full")
        elif group == "tried2":  # issue 32, second round: both encoders
            for enc, name in (("full", "e5"), ("fast", "fast")):
                out[f"{name}: top hits sure of the top 5 (weak: lexical 1, strong: "
                    "semantic 1)"] = guaranteed(enc, 1, 1)
                out[f"{name}: agreement, x2 in both top 10s"] = agreement(enc, 10, 1.0)
                out[f"{name}: speakers + the lexical first 2 outside the semantic first 20: "
                    "weak"] = disagreement(enc, 2, 20)
        elif group == "before":  # the rule before speakers (issue 32, first round)
            out["hybrid, e5, without speakers"] = shipped("full", speakers=False, ties=False)
            out["hybrid, fast, without speakers"] = shipped("fast", speakers=False, ties=False)
        elif group == "second":  # the rule before ties (issue 32, second round)
            out["hybrid, e5, without ties"] = shipped("full", ties=False)
            out["hybrid, fast, without ties"] = shipped("fast", ties=False)
        elif group == "shipped":
            out["hybrid, e5"] = shipped("full")
            out["hybrid, fast encoder"] = shipped("fast")
        else:
            raise SystemExit(f"unknown method group {group!r}")
    return out


# --- the table ------------------------------------------------------------------------------

def recall_at(ranked: list[str], relevant: list[str], k: int) -> float:
    return len(set(relevant) & set(ranked[:k])) / len(relevant)


def scores(rankings: list[list[str]], queries: list[dict[str, Any]]) -> dict[str, tuple]:
    """category -> (recall@5, recall@10, questions), and "all"."""
    cats = sorted({q["category"] for q in queries}) + ["all"]
    out = {}
    for cat in cats:
        chosen = [(r, q) for r, q in zip(rankings, queries, strict=True)
                  if cat == "all" or q["category"] == cat]
        out[cat] = (statistics.mean(recall_at(r, q["relevant"], 5) for r, q in chosen),
                    statistics.mean(recall_at(r, q["relevant"], 10) for r, q in chosen),
                    len(chosen))
    return out


def print_table(title: str, rows: dict[str, dict[str, tuple]]) -> None:
    cats = list(next(iter(rows.values())))
    first = next(iter(rows.values()))
    print(f"\n== {title} (recall@5 / @10) ==")
    print("| method | " + " | ".join(f"{c} ({first[c][2]})" for c in cats) + " |")
    print("|---" * (len(cats) + 1) + "|")
    for name, row in rows.items():
        print(f"| {name} | " + " | ".join(f"{row[c][0]:.3f} / {row[c][1]:.3f}" for c in cats)
              + " |")


def sign_test(wins: int, losses: int) -> float:
    """Two-sided sign test: the chance of a split at least this uneven between ``wins``
    and ``losses`` if either list were as likely to do better on a question."""
    n, low = wins + losses, min(wins, losses)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(low + 1)) / 2 ** n) if n else 1.0


def per_question(method: Method, chosen: list[tuple[dict[str, Any], dict[str, Any]]],
                 k: int) -> list[float]:
    return [recall_at(method(i), q["relevant"], k) for q, i in chosen]


def print_paired(title: str, method: Method, encoder: str, queries: list[dict[str, Any]],
                 items: list[dict[str, Any]]) -> None:
    """Per category and depth, the fusion against the better of the lexical list and
    ``encoder``'s list: the gap, the questions it does better and worse on, and the sign
    test's p (the noise: a gap whose p is high is a few questions either way)."""
    print(f"\n== {title}: {encoder} fused against the better single list ==")
    print("| category | depth | fused | better single | gap | questions +/- | sign test p |")
    print("|---|---|---|---|---|---|---|")
    for cat in sorted({q["category"] for q in queries}):
        chosen = [(q, i) for q, i in zip(queries, items, strict=True) if q["category"] == cat]
        for k in (5, 10):
            fused = per_question(method, chosen, k)
            singles = {"lexical": per_question(lambda i: ids(i["lexical"]), chosen, k),
                       encoder: per_question(lambda i: ids(i[encoder]), chosen, k)}
            name = max(singles, key=lambda n: statistics.mean(singles[n]))
            best = singles[name]
            wins = sum(f > b for f, b in zip(fused, best, strict=True))
            losses = sum(f < b for f, b in zip(fused, best, strict=True))
            print(f"| {cat} ({len(chosen)}) | @{k} | {statistics.mean(fused):.3f} | "
                  f"{statistics.mean(best):.3f} ({name}) | "
                  f"{statistics.mean(fused) - statistics.mean(best):+.3f} | +{wins} / -{losses} "
                  f"| {sign_test(wins, losses):.2f} |")


def halves_of(labelled: fs.Labelled, lists: list[dict[str, Any]],
              wanted: tuple[str, ...]) -> list[tuple[str, list[dict], list[dict]]]:
    """(title, queries, lists) of each wanted half of a set."""
    if labelled.name.endswith("/issue"):
        return [("issue 32's set: LoCoMo conv-26, 30, 41, 42, 43 in one drive, categories "
                 "1-4", labelled.queries, lists)]
    out = []
    for half in wanted:
        chosen = [(q, li) for q, li in zip(labelled.queries, lists, strict=True)
                  if q.get("half") == half]
        if chosen:
            kind = labelled.name.split("/")[0]
            if labelled.name.endswith("/test"):
                kind += " (the tests' part: " + ", ".join(fs.TEST_CONVERSATIONS) + ")"
            out.append((f"{kind}, {half} half", [q for q, _ in chosen], [li for _, li in chosen]))
    return out


# --- through memgit ---------------------------------------------------------------------------

def through_memgit(labelled: fs.Labelled, workdir: Path, encoder: str) -> list[list[str]]:
    """Each query's top 10 from read_path.recall_in_mode (hybrid), the drive set to
    ``query: encoder``."""
    from memgit.policy.settings import find_policy
    from memgit.recall import hybrid
    from memgit.recall.read_path import recall_in_mode

    drive, _policy = fs.drive_of(labelled, workdir)
    policy_file = drive.git_dir / "memgit.yaml"
    saved = policy_file.read_text()
    policy_file.write_text(saved.replace("query: full", f"query: {encoder}"))
    try:
        policy = find_policy(None, drive.git_dir, None)
        hybrid.clear_caches()
        return [[h.entry_id for h in recall_in_mode(drive, q["query"], 10, mode="hybrid",
                                                    count=False, policy=policy).hits]
                for q in labelled.queries]
    finally:
        policy_file.write_text(saved)


def through_cli(labelled: fs.Labelled, workdir: Path, mode: str) -> list[list[str]]:
    """Each query's top 10 from ``memgit recall --json --no-count --limit 10 --mode MODE --
    QUESTION`` run in the drive, as a user's script would."""
    drive, _policy = fs.drive_of(labelled, workdir)
    out = []
    for q in labelled.queries:
        proc = subprocess.run(["memgit", "recall", "--json", "--no-count", "--limit", "10",
                               "--mode", mode, "--", q["query"]],
                              cwd=drive.root, capture_output=True, text=True)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"memgit recall failed ({proc.returncode}): {proc.stderr}")
        found = json.loads(proc.stdout) if proc.stdout.strip() else []
        hits = found["hits"] if isinstance(found, dict) else found
        out.append([h["id"] for h in hits])  # the one JSON shape of a hit (README)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/memgit-bench-fusion"))
    parser.add_argument("--sets", default="conversations,faq")
    parser.add_argument("--halves", default="tune,report")
    parser.add_argument("--methods", default="lists,old,tried,before,shipped")
    parser.add_argument("--through-memgit", action="store_true")
    parser.add_argument("--cli", choices=("issue",), help="issue 32's table through the CLI")
    parser.add_argument("--paired", action="store_true",
                        help="the shipped fusion against the better single list, per question")
    args = parser.parse_args()
    print("$ python bench/bench_fusion.py " + " ".join(sys.argv[1:]))
    args.workdir.mkdir(parents=True, exist_ok=True)
    if args.cli:
        cli_table(args.workdir)
        return
    chosen = methods(args.methods)
    for labelled in fs.labelled_sets(tuple(args.sets.split(","))):
        drive, _policy = fs.drive_of(labelled, args.workdir)
        lists = fs.query_lists(labelled, drive, args.workdir)
        for title, queries, items in halves_of(labelled, lists, tuple(args.halves.split(","))):
            rows = {name: scores([m(i) for i in items], queries) for name, m in chosen.items()}
            if args.through_memgit:
                for enc in fs.ENCODERS:
                    ranked = through_memgit(fs.Labelled(labelled.name, labelled.source,
                                                        queries), args.workdir, enc)
                    rows[f"hybrid, {enc}, through read_path"] = scores(ranked, queries)
            print_table(title, rows)
            if args.paired:
                for enc in fs.ENCODERS:
                    print_paired(title, shipped(enc), enc, queries, items)


def cli_table(workdir: Path) -> None:
    labelled = fs.issue_set()
    drive, _policy = fs.drive_of(labelled, workdir)
    lists = fs.query_lists(labelled, drive, workdir)
    rows = {}
    for mode in ("hybrid", "lexical", "semantic"):
        started = time.perf_counter()
        rows[f"memgit recall --mode {mode}"] = scores(through_cli(labelled, workdir, mode),
                                                      labelled.queries)
        print(f"  {mode}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    rows["plain BM25"] = scores([ids(i["bm25"]) for i in lists], labelled.queries)
    print_table("issue 32's set: LoCoMo conv-26, 30, 41, 42, 43, categories 1-4, one drive "
                "(command: memgit recall --json --no-count --limit 10 --mode MODE -- QUESTION)",
                rows)


if __name__ == "__main__":
    main()
