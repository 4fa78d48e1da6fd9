"""Per-question weights from a tiny logistic model, for issue 32's second round: what was
tried and not kept (docs/embeddings.md, "What was tried").

Run (after bench/bench_fusion.py has cached the lists):
    python bench/fusion_logistic.py              # cheap features
    python bench/fusion_logistic.py --speakers   # + the share of each list's top 5 whose
                                                 #   speaker the question names

For each encoder (e5, fast), a logistic model on cheap features of the question and its
two lists predicts whether the lexical ranking finds more of the evidence than the
semantic one (recall@5 + recall@10; ties left out). Fitted on the tuning halves of both
sets (conversations and FAQ) pooled: 5-fold cross-validation gives every tuning question
an out-of-fold probability, on which the thresholds and weights are chosen (the least
fall of the worst category below the better single list, then the best recall@5 over
both sets); the model fitted on all the tuning questions is then scored on the report
halves. The semantic ranking weighs ``low`` when p > ``hi``, ``high`` when p < ``lo``,
1 otherwise (reciprocal rank fusion, k=2).
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

import fusion_sets as fs  # noqa: E402

from memgit.embeddings import vectors  # noqa: E402
from memgit.index.search import words  # noqa: E402

Sets = dict[tuple[str, str], tuple[list[dict[str, Any]], list[dict[str, Any]]]]


def load(workdir: Path) -> Sets:
    out: Sets = {}
    for labelled in fs.labelled_sets(("conversations", "faq")):
        drive, _policy = fs.drive_of(labelled, workdir)
        lists = fs.query_lists(labelled, drive, workdir)
        for half in ("tune", "report"):
            chosen = [(q, li) for q, li in zip(labelled.queries, lists, strict=True)
                      if q.get("half") == half]
            if chosen:
                out[(labelled.name.split("/")[0], half)] = ([q for q, _ in chosen],
                                                            [li for _, li in chosen])
    return out


def entry_texts() -> dict[str, str]:
    out = {}
    for base in (fs.CONVERSATIONS / "drive", fs.FAQ / "drive"):
        for path in base.rglob("*.md"):
            for line in path.read_text().splitlines():
                if line.startswith("- ") and "; id: " in line:
                    text, meta = line[2:].rsplit(" [source:", 1)
                    out[meta.split("; id: ")[1].rstrip("]")] = text
    return out


TEXTS: dict[str, str] = {}


def ids(ranked: list[list[Any]]) -> list[str]:
    return [e for e, _ in ranked]


def named_share(ranked: list[str], query: str) -> float:
    asked = set(words(query.casefold()))
    top = ranked[:5]
    return sum(vectors.speaker(TEXTS.get(e, "")) in asked for e in top) / max(len(top), 1)


def idf(matches: int, entries: int) -> float:
    return max(math.log((entries - matches + 0.5) / (matches + 0.5)), 1e-6)


def features(item: dict[str, Any], query: str, enc: str, speakers: bool) -> list[float]:
    """bias; log terms; share of terms known; share the first hit matches; weak (the
    shipped rule); first BM25 over the ideal; BM25 gap 1-2; cosine 1; cosine gap 1-2;
    cosine gap 1-10; overlap of the top 10s; rank of each list's first in the other."""
    lexical, semantic = ids(item["lexical"]), ids(item[enc])
    n = max(item["terms"], 1)
    ideal = sum(idf(m, item["entries"]) for m in item["df"]) or 1.0
    bm = [s for _, s in item["lexical"]]
    cos = [s for _, s in item[enc]]
    out = [1.0, math.log(n), item["known"] / n, item["matched"] / n,
           float(vectors.weak_lexical(item["terms"], item["known"], item["matched"])),
           bm[0] / ideal if bm else 0.0,
           (bm[0] - bm[1]) / bm[0] if len(bm) > 1 and bm[0] else 0.0,
           cos[0] if cos else 0.0,
           10 * (cos[0] - cos[1]) if len(cos) > 1 else 0.0,
           10 * (cos[0] - cos[9]) if len(cos) > 9 else 0.0,
           len(set(lexical[:10]) & set(semantic[:10])) / 10,
           math.log(1 + (semantic.index(lexical[0]) if lexical and lexical[0] in semantic
                         else 50)) / math.log(51),
           math.log(1 + (lexical.index(semantic[0]) if semantic and semantic[0] in lexical
                         else 50)) / math.log(51)]
    if speakers:
        out += [named_share(lexical, query), named_share(semantic, query)]
    return out


def recall(ranked: list[str], relevant: list[str], k: int) -> float:
    return len(set(relevant) & set(ranked[:k])) / len(relevant)


def target(item: dict[str, Any], q: dict[str, Any], enc: str) -> int | None:
    def both(r: list[str]) -> float:
        return recall(r, q["relevant"], 5) + recall(r, q["relevant"], 10)
    a, b = both(ids(item["lexical"])), both(ids(item[enc]))
    return None if a == b else int(a > b)


Model = tuple[Any, Any, Any]


def fit(x: list[list[float]], y: list[int], l2: float = 1.0) -> Model:
    """L2-regularised logistic regression (Newton), features standardised."""
    xa, ya = np.asarray(x), np.asarray(y, dtype=float)
    mu, sd = xa[:, 1:].mean(0), xa[:, 1:].std(0) + 1e-9
    z = xa.copy()
    z[:, 1:] = (z[:, 1:] - mu) / sd
    w = np.zeros(xa.shape[1])
    penalty = l2 * np.diag(np.r_[0.0, np.ones(len(w) - 1)])
    for _ in range(100):
        p = 1 / (1 + np.exp(-z @ w))
        step = np.linalg.solve((z * (p * (1 - p))[:, None]).T @ z + penalty,
                               z.T @ (p - ya) + penalty @ w)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return w, mu, sd


def predict(model: Model, x: list[float]) -> float:
    w, mu, sd = model
    z = np.asarray(x, dtype=float)
    z[1:] = (z[1:] - mu) / sd
    return float(1 / (1 + math.exp(-float(z @ w))))


def probabilities(sets: Sets, enc: str, speakers: bool) -> tuple[dict[int, float], Model]:
    """Out-of-fold p(lexical better) of each tuning question (5 folds), and the model
    fitted on every tuning question."""
    rows = [(id(i), features(i, q["query"], enc, speakers), target(i, q, enc))
            for kind in ("conversations", "faq")
            for q, i in zip(*sets[(kind, "tune")], strict=True)]
    order = list(range(len(rows)))
    random.Random(7).shuffle(order)
    fold = {rows[j][0]: n % 5 for n, j in enumerate(order)}
    oof = {}
    for f in range(5):
        kept = [(x, y) for key, x, y in rows if fold[key] != f and y is not None]
        model = fit([x for x, _ in kept], [y for _, y in kept])
        oof.update({key: predict(model, x) for key, x, _ in rows if fold[key] == f})
    kept = [(x, y) for _, x, y in rows if y is not None]
    return oof, fit([x for x, _ in kept], [y for _, y in kept])


def ranking(item: dict[str, Any], p: float, enc: str, cfg: tuple[float, ...]) -> list[str]:
    lo, hi, low, high = cfg
    w = low if p > hi else high if p < lo else 1.0
    return vectors.fuse({"lexical": ids(item["lexical"]), "semantic": ids(item[enc])}, k=2,
                        weights={"lexical": 1.0, "semantic": w})


def score(sets: Sets, half: str, enc: str, prob: Any, cfg: tuple[float, ...]
          ) -> tuple[float, str, dict[str, dict[str, tuple[float, float]]]]:
    """(worst fall below the better single list, where, per set and category @5/@10)."""
    worst, where, table = 9.0, "", {}
    for kind in ("conversations", "faq"):
        qs, items = sets[(kind, half)]
        rows = {"m": [ranking(i, prob(i, q), enc, cfg) for q, i in zip(qs, items,
                                                                        strict=True)],
                "l": [ids(i["lexical"]) for i in items], "d": [ids(i[enc]) for i in items]}
        table[kind] = {}
        for cat in sorted({q["category"] for q in qs}) + ["all"]:
            got = {}
            for name, ranked in rows.items():
                chosen = [(r, q) for r, q in zip(ranked, qs, strict=True)
                          if cat == "all" or q["category"] == cat]
                got[name] = [statistics.mean(recall(r, q["relevant"], k) for r, q in chosen)
                             for k in (5, 10)]
            table[kind][cat] = (got["m"][0], got["m"][1])
            if cat != "all":
                for j, k in enumerate((5, 10)):
                    fall = got["m"][j] - max(got["l"][j], got["d"][j])
                    if fall < worst:
                        worst, where = fall, f"{kind}/{cat}@{k}"
    return worst, where, table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/memgit-bench-fusion"))
    parser.add_argument("--speakers", action="store_true")
    args = parser.parse_args()
    print("$ python bench/fusion_logistic.py " + " ".join(sys.argv[1:]))
    TEXTS.update(entry_texts())
    sets = load(args.workdir)
    for enc in ("full", "fast"):
        oof, model = probabilities(sets, enc, args.speakers)
        grid = [(lo, hi, low, high) for lo in (0.2, 0.3, 0.4, 0.5)
                for hi in (0.5, 0.6, 0.7, 0.8, 1.01) if hi >= lo
                for low in (0.1, 0.25, 0.5) for high in (3.0, 10.0)]
        tuned = []
        for cfg in grid:
            worst, where, table = score(sets, "tune", enc,
                                        lambda i, _q, oof=oof: oof[id(i)], cfg)
            tuned.append((worst, table["conversations"]["all"][0] + table["faq"]["all"][0],
                          where, cfg))
        worst, _total, where, cfg = max(tuned, key=lambda t: (t[0], t[1]))

        def fitted(i: dict[str, Any], q: dict[str, Any], model: Model = model,
                   enc: str = enc) -> float:
            return predict(model, features(i, q["query"], enc, args.speakers))
        rworst, rwhere, table = score(sets, "report", enc, fitted, cfg)
        print(f"\n{enc}: chosen (p thresholds {cfg[0]}-{cfg[1]}, semantic weight {cfg[2]} / 1 "
              f"/ {cfg[3]}); tuning halves (out of fold): worst {worst:+.3f} ({where})")
        print(f"  report halves: worst {rworst:+.3f} ({rwhere})")
        for kind, cats in table.items():
            print(f"  {kind}: " + ", ".join(f"{c} {v[0]:.3f} / {v[1]:.3f}"
                                            for c, v in cats.items()))


if __name__ == "__main__":
    main()
