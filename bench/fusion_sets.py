"""The labelled recall sets as drives, and each query's ranked lists, for bench_fusion.py.

Two kinds of memory, each split once into a tuning and a report half:

* ``conversations``: tests/data/recall_conversations (LoCoMo: dialogue turns as entries,
  questions with their evidence turns, by category); one drive per half, made of that
  half's conversations (bench/make_recall_conversations.py drew them);
* ``faq``: tests/data/recall_semantic (FAQ answers as entries, questions by whether they
  share a content word with their answer); one drive, its queries split by answer entry.

A drive is committed with plain git, configured with ``embeddings: {plugin: local}`` and
embedded as ``memgit index --embeddings`` does (embedding.update) once, in a work folder
kept between runs (embedding the conversations takes about five minutes here). Then each
query's top :data:`DEPTH` of every list is taken once and cached as JSON beside the drive:
memgit's lexical recall (BM25 over the FTS5 index, the scores as recall shows them), the
cosine with e5's own query vector (``full``) and with the fast query encoder's (``fast``),
and plain BM25 (Okapi over the entry texts alone, no stemming, no topic path) for reference.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from memgit import state  # noqa: E402
from memgit.embeddings import embed as embedding  # noqa: E402
from memgit.git.repository import Drive, open_drive  # noqa: E402
from memgit.index import search as recall_search  # noqa: E402
from memgit.policy.settings import Policy, find_policy  # noqa: E402
from memgit.recall import hybrid  # noqa: E402
from memgit.recall.read_path import catch_up  # noqa: E402
from memgit.state import search as search_rows  # noqa: E402

CONVERSATIONS = ROOT / "tests" / "data" / "recall_conversations"
FAQ = ROOT / "tests" / "data" / "recall_semantic"
DEPTH = 50
ENCODERS = ("full", "fast")
LISTS_VERSION = 3  # bump when what a cached list holds changes


@dataclass
class Labelled:
    """One drive of a set and the queries asked of it."""

    name: str  # e.g. conversations/report
    source: list[Path]  # folders whose files make the drive (each copied under its name)
    queries: list[dict[str, Any]]  # each with "query", "relevant" (entry ids), "category"


def labelled_sets(which: tuple[str, ...] = ("conversations", "faq")) -> Iterator[Labelled]:
    """The drives of both kinds of memory, tuning half first (``test``: the part of the
    report half the tests measure; ``issue``: issue 32's set, both halves mixed)."""
    if "conversations" in which:
        queries = json.loads((CONVERSATIONS / "queries.json").read_text())
        for half in ("tune", "report"):
            chosen = [q for q in queries if q["half"] == half]
            convs = sorted({q["conversation"] for q in chosen})
            folders = [CONVERSATIONS / "drive" / ("c" + c.split("-")[1]) for c in convs]
            yield Labelled(f"conversations/{half}", folders, chosen)
    if "test" in which:
        yield test_subset()
    if "issue" in which:
        yield issue_set()
    if "faq" in which:
        faq = json.loads((FAQ / "queries.json").read_text())
        for q in faq:
            q["category"] = "paraphrase" if q["paraphrase"] else "other"
        yield Labelled("faq/all", [FAQ / "drive"], faq)


# The two smallest conversations of the report half (788 turns): what
# tests/recall/test_conversations.py embeds and measures, in about a minute.
TEST_CONVERSATIONS = ("conv-26", "conv-30")


def test_subset() -> Labelled:
    """The report half's questions of :data:`TEST_CONVERSATIONS`, in one drive of them."""
    queries = json.loads((CONVERSATIONS / "queries.json").read_text())
    chosen = [q for q in queries if q["conversation"] in TEST_CONVERSATIONS]
    assert all(q["half"] == "report" for q in chosen)
    folders = [CONVERSATIONS / "drive" / ("c" + c.split("-")[1]) for c in TEST_CONVERSATIONS]
    return Labelled("conversations/test", folders, chosen)


def issue_set() -> Labelled:
    """What issue 32's check measured: LoCoMo's first five conversations in one drive,
    questions of categories 1 to 4 (2,760 turns)."""
    queries = json.loads((CONVERSATIONS / "queries.json").read_text())
    convs = ["conv-26", "conv-30", "conv-41", "conv-42", "conv-43"]
    chosen = [q for q in queries if q["conversation"] in convs and q["category"] != "adversarial"]
    folders = [CONVERSATIONS / "drive" / ("c" + c.split("-")[1]) for c in convs]
    return Labelled("conversations/issue", folders, chosen)


# --- the drive ----------------------------------------------------------------------------

def _digest(folders: list[Path]) -> str:
    h = hashlib.sha256()
    for folder in folders:
        for path in sorted(folder.rglob("*.md")):
            h.update(str(path.relative_to(folder.parent)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def drive_of(labelled: Labelled, workdir: Path) -> tuple[Drive, Policy]:
    """The set's drive in ``workdir``, committed, indexed and embedded (made once: a drive
    whose files changed is made again)."""
    path = workdir / labelled.name.replace("/", "-")
    stamp = _digest(labelled.source)
    if not (path / ".git" / "memgit-bench-stamp").is_file() or \
            (path / ".git" / "memgit-bench-stamp").read_text() != stamp:
        if path.exists():
            shutil.rmtree(path)
        path.mkdir(parents=True)
        for folder in labelled.source:
            if folder.name == "drive":  # the FAQ drive: its files at the top
                shutil.copytree(folder, path, dirs_exist_ok=True)
            else:
                shutil.copytree(folder, path / folder.name)
        if not (path / "MEMORY.md").exists():
            write_index(path)
        git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
        for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "set"]):
            subprocess.run([*git, *args], cwd=path, check=True)
        (path / ".git" / "memgit.yaml").write_text(
            "embeddings: {plugin: local, query: full}\nlimits: {files: 1024}\n")
        (path / ".git" / "memgit-bench-stamp").write_text(stamp)
    drive = open_drive(path)
    policy = find_policy(None, drive.git_dir, None)
    catch_up(drive, policy=policy)
    config = policy.embeddings()
    assert config is not None
    made = embedding.update(state.connection(drive.git_dir), config)
    if made["missing"]:
        raise SystemExit(f"{labelled.name}: {made['missing']} entries left without a vector")
    return drive, policy


def write_index(path: Path) -> None:
    """MEMORY.md with the ## Index of every topic file under ``path``, as ``memgit lint
    --fix`` writes it."""
    topics = sorted(str(p.relative_to(path).with_suffix("")) for p in path.rglob("*.md")
                    if ".git" not in p.parts and p.name != "MEMORY.md")
    (path / "MEMORY.md").write_text("# Memory\n\n## Index\n"
                                    + "".join(f"- [[{t}]]\n" for t in topics))


# --- the lists ----------------------------------------------------------------------------

def _entry_ids(conn: state.Connection) -> dict[str, tuple[str, str]]:
    """fact id -> (entry id, text) of the searchable entries."""
    rows = conn.execute("SELECT fact_id, entry_id, text FROM facts "
                        "WHERE indexed AND valid_until IS NULL").fetchall()
    return {r[0]: (r[1], r[2]) for r in rows}


class PlainBM25:
    """Okapi BM25 (k1 1.2, b 0.75) over lower-cased word runs of the entry texts: the
    reference "plain BM25" of issue 32's table."""

    def __init__(self, docs: dict[str, str]) -> None:
        self.ids = list(docs)
        self.tf = [Counter(recall_search.words(docs[i].casefold())) for i in self.ids]
        self.lengths = [sum(t.values()) for t in self.tf]
        self.mean = sum(self.lengths) / max(len(self.lengths), 1)
        df: Counter[str] = Counter()
        for t in self.tf:
            df.update(t.keys())
        n = len(self.ids)
        self.idf = {w: math.log(1 + (n - d + 0.5) / (d + 0.5)) for w, d in df.items()}

    def top(self, query: str, limit: int) -> list[tuple[str, float]]:
        terms = set(recall_search.words(query.casefold()))
        scored = []
        for i, tf in enumerate(self.tf):
            s = 0.0
            for w in terms:
                f = tf.get(w)
                if f:
                    s += self.idf[w] * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * self.lengths[i]
                                                             / self.mean))
            if s > 0:
                scored.append((s, i))
        scored.sort(key=lambda t: (-t[0], t[1]))
        return [(self.ids[i], round(s, 4)) for s, i in scored[:limit]]


def query_lists(labelled: Labelled, drive: Drive, workdir: Path) -> list[dict[str, Any]]:
    """For each query: its lists (``lexical``, ``full``, ``fast``, ``bm25``: [entry id,
    score] best first, ``lexical_texts``: the texts of the first 10 lexical hits) and the
    lexical list's features (``terms``: the query's FTS5 terms,
    ``known``: how many of them the drive has, ``matched``: how many the first lexical hit
    matches, ``df``: how many entries match each, ``entries``: how many are searchable).
    Cached in ``workdir`` under the drive's stamp."""
    stamp = (drive.git_dir / "memgit-bench-stamp").read_text()
    cache = workdir / f"{labelled.name.replace('/', '-')}-lists.json"
    if cache.is_file():
        cached = json.loads(cache.read_text())
        if cached["stamp"] == stamp and cached["version"] == LISTS_VERSION and \
                cached["queries"] == [q["query"] for q in labelled.queries]:
            return list(cached["lists"])
    conn = state.connection(drive.git_dir)
    head = drive.head_commit()
    key = (str(drive.git_dir), str(head.id) if head is not None else "")
    entries = _entry_ids(conn)
    matrix = _matrix(conn, entries)
    bm25 = PlainBM25({e: t for e, t in entries.values()})
    texts = [q["query"] for q in labelled.queries]
    qvecs = {enc: _query_vectors(texts, enc) for enc in ENCODERS}
    out = []
    for n, text in enumerate(texts):
        lexical = recall_search.search(conn, text, DEPTH, count=False, key=key)
        expression = recall_search.match_expression(text)
        terms = expression.split(" OR ") if expression else []
        df = [search_rows.match_count(conn, t) for t in terms]
        _n, known, matched = hybrid.lexical_evidence(conn, text,
                                                     lexical[0].fact_id if lexical else None)
        item: dict[str, Any] = {
            "query": text, "lexical_texts": [h.text for h in lexical[:10]],
            "lexical": [[h.entry_id, h.score] for h in lexical],
            "bm25": bm25.top(text, DEPTH), "terms": len(terms), "known": known,
            "matched": matched, "df": df, "entries": len(entries)}
        for enc in ENCODERS:
            item[enc] = [[entries[fid][0], round(s, 5)]
                         for fid, s in matrix.nearest(qvecs[enc][n], DEPTH)]
        out.append(item)
    cache.write_text(json.dumps({"stamp": stamp, "version": LISTS_VERSION, "queries": texts,
                                 "lists": out}))
    return out


def _matrix(conn: state.Connection, entries: dict[str, tuple[str, str]]) -> Any:
    from memgit.embeddings.vectors import VectorMatrix
    from memgit.state import vectors as vector_rows

    recorded = vector_rows.recorded_model(conn)
    assert recorded is not None
    rows = [(fid, blob) for _seq, fid, blob in vector_rows.load(conn) if fid in entries]
    return VectorMatrix.from_blobs(rows, recorded[1])


def _query_vectors(texts: list[str], encoder: str) -> Any:
    from memgit.embeddings.local import LocalEmbedder

    model = LocalEmbedder({"query": encoder})
    assert model.query_encoder == encoder
    return embedding.embed_texts(model, texts, "query")
