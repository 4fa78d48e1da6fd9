"""Semantic recall through memgit's own read and write paths, at the limits, each figure
side by side with its baseline in the same run (issue 15; docs/embeddings.md).

Run: python bench/bench_semantic.py [--writes N] [--queries N] [--real-vectors]
     python bench/bench_semantic.py --quality

``--quality``: recall@5 and MRR of each mode on the labelled set (tests/data/recall_
semantic, its two halves, paraphrases and the rest apart), through the same path:
the set's drive committed, ``embeddings: {plugin: local}``, ``memgit index``'s
embedding.update, then read_path.recall_in_mode per query (top 10).

Two copies of one 15,000-entry bare drive (bench_writer.make_bare_drive): one without
an ``embeddings:`` section (lexical), one with ``embeddings: {plugin: local}``. Measured,
the two drives taken alternately:

* embedding the drive (embedding.update, as ``memgit index`` does): with
  ``--real-vectors`` every entry through the local model (about 5 minutes here);
  without, the entries' vectors are random unit vectors stored under the local model's
  id (the scan's cost does not depend on the values), and only the queries and the
  written entries go through the model;
* a one-entry write (writer.commit_facts) on each drive, then the next recall on each
  (read_path.recall_in_mode), what the user feels, with embeddings and without; on
  the embedding drive the write starts a detached filler (memgit.embeddings.fill) that
  embeds the entry beside that recall: the time until its vector is stored
  (vector_fill.wait_for_fill) and the CPU it used (the child's rusage) are the
  background's cost, and one more recall after it shows the read once filled;
* recall in process, top 5: lexical on the lexical drive, lexical, hybrid and semantic
  on the embedding drive, each query new to the process (the query-vector cache
  cleared), and hybrid with the query vector cached (an agent repeating itself).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from bench_recall import make_queries  # noqa: E402
from bench_writer import make_bare_drive, pct  # noqa: E402

from memgit import state  # noqa: E402
from memgit.embeddings import embed as embedding
from memgit.embeddings import fill as vector_fill
from memgit.git.repository import Drive, open_drive  # noqa: E402
from memgit.policy.settings import Policy, drive_policy  # noqa: E402
from memgit.recall import hybrid
from memgit.recall.read_path import catch_up, recall_in_mode  # noqa: E402
from memgit.write.ops import NewFact  # noqa: E402
from memgit.write.writer import commit_facts  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SEMANTIC = ROOT / "tests" / "data" / "recall_semantic"


def ms(values: list[float]) -> str:
    return (f"p50 {statistics.median(values):7.2f} ms  p99 {pct(values, 0.99):7.2f} ms  "
            f"(n={len(values)})")


class RandomPassages:
    """The local embedder's id and dimension with random unit vectors for passages: what
    fills a 15,000-entry drive in seconds when only the search's cost is measured."""

    name = "random"

    def __init__(self, model_id: str, dimension: int) -> None:
        self.model_id, self.dimension = model_id, dimension
        self.rng = random.Random(7)

    def embed_matrix(self, texts: Sequence[str], kind: str) -> Any:
        import numpy as np

        return np.array([[self.rng.gauss(0, 1) for _ in range(self.dimension)]
                         for _ in texts], dtype=np.float32)


def drive_pair(tmp: Path) -> tuple[Drive, Drive]:
    """The lexical drive and a copy configured for the local embedder, indexed."""
    import shutil

    make_bare_drive(tmp / "lexical.git", files=254)  # room for the writes' topic file
    shutil.copytree(tmp / "lexical.git", tmp / "semantic.git")
    (tmp / "semantic.git" / "memgit.yaml").write_text("embeddings: {plugin: local}\n")
    drives = open_drive(tmp / "lexical.git"), open_drive(tmp / "semantic.git")
    for drive in drives:
        catch_up(drive, policy=policy_of(drive))
    return drives


def policy_of(drive: Drive) -> Policy:
    return drive_policy(drive)


def embed_drive(drive: Drive, real: bool) -> None:
    config = policy_of(drive).embeddings()
    assert config is not None
    conn = state.connection(drive.git_dir)
    started, cpu = time.perf_counter(), time.process_time()
    if real:
        done = embedding.update(conn, config)
        what = f"{done['embedded']} entries through the local model in {done['calls']} call(s)"
    else:
        model = embedding.embedder_for(config)
        filled = embedding.fill(conn, RandomPassages(model.model_id, model.dimension))
        what = f"{filled.embedded} random vectors under {model.model_id}"
    print(f"  embed the drive: {what}: {time.perf_counter() - started:.1f} s "
          f"(CPU {time.process_time() - cpu:.1f} s)")


def timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def children_cpu() -> float:
    """CPU seconds (user + system) of the child processes reaped so far: the detached
    fillers (vector_fill.start_process) are this process's children."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def reap_children() -> None:
    """Reap the fillers that have exited (their CPU then counts in children_cpu)."""
    import os

    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.002)  # exited (the wait lock is free) but not yet a zombie


def bench_writes(lexical: Drive, semantic: Drive, n: int) -> None:
    """What the user feels: a one-entry write and the recall right after it (the filler
    starting beside it, on the same 2 cores), each drive side by side; then what the
    background costs: the time until the entry's vector is stored, the filler's CPU."""
    print(f"\n== one-entry write, then the next recall ({n} each, drives alternately) ==")
    policies = {d.git_dir: policy_of(d) for d in (lexical, semantic)}
    texts = [q["query"].rstrip("?") + " is answered in the runbook"
             for q in json.loads((SEMANTIC / "queries.json").read_text())]
    figures: dict[str, list[float]] = {k: [] for k in (
        "write off", "write on", "read off", "read on", "write+read off", "write+read on",
        "read on during fill", "vector in", "filler cpu", "read on after fill")}
    conn = state.connection(semantic.git_dir)
    for i in range(n):
        for drive, tag in ((lexical, "off"), (semantic, "on")):
            policy = policies[drive.git_dir]
            fact = NewFact(f"{texts[i % len(texts)]} (note {i})", "imported:unknown", "bench.md")
            query = f"runbook note {i}"
            cpu = children_cpu()
            started = time.perf_counter()
            write = timed(lambda d=drive, f=fact, p=policy: commit_facts(d, [f], policy=p))
            # the recall an agent often makes right after its write
            read = timed(lambda d=drive, q=query, p=policy: recall_in_mode(
                d, q, 5, count=False, policy=p))
            figures[f"write {tag}"].append(write)
            figures[f"read {tag}"].append(read)
            figures[f"write+read {tag}"].append(write + read)
            if tag == "on":
                # 0.5 s after the write: the filler (started 0.3 s after it) is loading
                # the model or embedding, beside this recall
                time.sleep(max(0.0, started + 0.5 - time.perf_counter()))
                figures["read on during fill"].append(timed(
                    lambda d=drive, q=query, p=policy: recall_in_mode(
                        d, q + " meanwhile", 5, count=False, policy=p)))
                assert vector_fill.wait_for_fill(drive.git_dir, timeout=600)
                figures["vector in"].append((time.perf_counter() - started) * 1000)
                reap_children()
                figures["filler cpu"].append((children_cpu() - cpu) * 1000)
                assert not vector_fill.needs_fill(conn), "the filler left a vector out"
                figures["read on after fill"].append(timed(
                    lambda d=drive, q=query, p=policy: recall_in_mode(
                        d, q + " again", 5, count=False, policy=p)))
    for key, values in figures.items():
        print(f"  {key:19} {ms(values)}")
    off = statistics.median(figures["write+read off"])
    on = statistics.median(figures["write+read on"])
    print(f"  write + next read, p50: {on:.1f} ms with embeddings vs {off:.1f} ms without "
          f"(+{on - off:.1f} ms, {on / off:.2f}x)")
    write_adds = statistics.median(figures["write on"]) - statistics.median(figures["write off"])
    read_adds = statistics.median(figures["read on"]) - \
        statistics.median(figures["read on after fill"])
    print(f"  what the write adds on the embedding drive, p50: {write_adds:+.1f} ms to the write, "
          f"{read_adds:+.1f} ms to the next recall (against a recall once filled): "
          f"{write_adds + read_adds:+.1f} ms")
    print(f"  in the background: the vector stored {statistics.median(figures['vector in']):.0f} "
          f"ms after the write began (p50), the filler used "
          f"{statistics.median(figures['filler cpu']):.0f} ms of CPU per write (p50)")


def bench_recall(lexical: Drive, semantic: Drive, n: int) -> None:
    print(f"\n== recall in process, top 5, {n} queries (modes alternately) ==")
    real = [q["query"] for q in json.loads((SEMANTIC / "queries.json").read_text())]
    queries = [q for pair in zip(make_queries(n), real * 3, strict=False) for q in pair][:n]
    policies = {d.git_dir: policy_of(d) for d in (lexical, semantic)}
    runs: list[tuple[str, Drive, str]] = [
        ("lexical drive, lexical", lexical, "lexical"),
        ("embedding drive, lexical", semantic, "lexical"),
        ("embedding drive, hybrid", semantic, "hybrid"),
        ("embedding drive, semantic", semantic, "semantic"),
    ]
    for drive in (lexical, semantic):  # warm: the model loaded, the matrix read
        recall_in_mode(drive, "warm up", 5, count=False, policy=policies[drive.git_dir])
    figures: dict[str, list[float]] = {name: [] for name, _d, _m in runs}
    figures["embedding drive, hybrid, query cached"] = []
    for query in queries:
        for name, drive, mode in runs:
            hybrid.clear_query_cache()
            figures[name].append(timed(lambda d=drive, q=query, m=mode: recall_in_mode(
                d, q, 5, mode=m, count=False, policy=policies[d.git_dir])))
        figures["embedding drive, hybrid, query cached"].append(timed(
            lambda q=query: recall_in_mode(semantic, q, 5, mode="hybrid", count=False,
                                           policy=policies[semantic.git_dir])))
    base = statistics.median(figures["lexical drive, lexical"])
    for name, values in figures.items():
        print(f"  {name:40} {ms(values)}  ({statistics.median(values) / base:.1f}x lexical)")


def bench_quality(tmp: Path) -> None:
    import shutil
    import subprocess

    sys.path.insert(0, str(ROOT / "tests"))
    import recall_eval

    print("\n== quality on the labelled set (recall@5 / MRR, queries) ==")
    path = tmp / "set"
    shutil.copytree(SEMANTIC / "drive", path)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"],
                 ["-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-qm", "set"]):
        subprocess.run(["git", *args], cwd=path, check=True)
    (path / ".git" / "memgit.yaml").write_text("embeddings: {plugin: local}\n")
    drive = open_drive(path)
    policy = policy_of(drive)
    catch_up(drive, policy=policy)
    config = policy.embeddings()
    assert config is not None
    print(f"  embedded: {embedding.update(state.connection(drive.git_dir), config)}")
    queries = json.loads((SEMANTIC / "queries.json").read_text())
    print(f"  {'mode':10}" + "".join(f"{h + ', ' + k:>24}" for h in ("tune", "report")
                                     for k in ("paraphrases", "others")))
    for mode in ("lexical", "semantic", "hybrid"):
        cells = []
        for half in ("tune", "report"):
            for para in (True, False):
                chosen = [q for q in queries if q["half"] == half and q["paraphrase"] == para]
                ranked = [[h.entry_id for h in recall_in_mode(
                    drive, q["query"], 10, mode=mode, count=False, policy=policy).hits]
                    for q in chosen]
                r5 = statistics.mean(recall_eval.recall_at(r, q["relevant"])
                                     for r, q in zip(ranked, chosen, strict=True))
                mrr = statistics.mean(recall_eval.reciprocal_rank(r, q["relevant"])
                                      for r, q in zip(ranked, chosen, strict=True))
                cells.append(f"{r5:.3f} / {mrr:.3f} ({len(chosen)})")
        print(f"  {mode:10}" + "".join(f"{c:>24}" for c in cells))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--writes", type=int, default=40)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--real-vectors", action="store_true",
                    help="embed all 15,000 entries with the local model (minutes)")
    ap.add_argument("--quality", action="store_true",
                    help="only the quality table on the labelled set")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.quality:
            bench_quality(Path(tmp))
            return
        print("== a 15,000-entry drive, twice ==")
        lexical, semantic = drive_pair(Path(tmp))
        embed_drive(semantic, args.real_vectors)
        bench_recall(lexical, semantic, args.queries)
        bench_writes(lexical, semantic, args.writes)


if __name__ == "__main__":
    main()
