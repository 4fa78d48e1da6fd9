"""Recall in three modes: lexical (BM25), semantic (cosine over the drive's vectors) and
hybrid (both rankings fused by reciprocal rank), on a current recall index.

Hybrid is the default with an ``embeddings:`` section (docs/embeddings.md): the top
:data:`DEPTH` of each ranking fused by reciprocal rank, the semantic ranking dominating
when the lexical one is weak evidence for the question (embeddings.vectors.weak_lexical;
never when the question names the speaker of a lexical hit: names_a_speaker).
Query vectors are kept in an in-process LRU, never in the state database: a query is not a
memory. A recall never embeds an entry: one without a vector is ranked by its words and a
background filler started. An unavailable embedder makes the recall lexical with a
warning; vectors of another model are refused (EmbeddingModelError). No pygit2 here:
callers make the index current first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from memgit import state
from memgit.embeddings import embed as embedding
from memgit.embeddings import fill as vector_fill
from memgit.embeddings.vectors import (
    E5_FUSION,
    SPEAKER_DEPTH,
    names_a_speaker,
    tied_first,
    weak_lexical,
)
from memgit.errors import EmbedderError, PluginError, UsageError
from memgit.index import search as recall_search
from memgit.index.search import Hit
from memgit.plugins import install_command
from memgit.policy.embedding_settings import EmbedConfig
from memgit.recall.defaults import MODES
from memgit.state import search as search_rows
from memgit.state import vectors as vector_rows

DEPTH = 50  # hits of each ranking that go into the fusion (docs/embeddings.md)
QUERY_CACHE = 512  # query vectors kept per process
MANY_MISSING = 16  # entries without a vector beyond which a hybrid recall says so


@dataclass
class Recalled:
    """What a recall found, the mode that answered, and what the caller should say."""

    hits: list[Hit]
    mode: str
    warnings: list[str] = field(default_factory=list)


def choose_mode(requested: str | None, config: EmbedConfig | None) -> str:
    """The mode a recall runs in: ``requested``, else hybrid with an embedder, else lexical."""
    if requested is None:
        return "hybrid" if config is not None else "lexical"
    if requested not in MODES:
        raise UsageError(f"unknown recall mode {requested!r}", f"use one of {', '.join(MODES)}")
    if requested != "lexical" and config is None:
        raise UsageError(f"--mode {requested} needs an embedder, and the drive's policy has "
                         "no embeddings: section",
                         "add embeddings: {plugin: local} to memgit.yaml "
                         f"({install_command('embed')}), or use --mode lexical")
    return requested


def check_mounts_mode(requested: str | None) -> None:
    """Recall across mounts ranks by matched words (recall_search.merge_drives: scores of
    different drives do not compare), so a mode by meaning is refused with it."""
    if requested not in (None, "lexical"):
        raise UsageError(f"--mode {requested} cannot be combined with mounts: recall across "
                         "mounted drives is by words only",
                         "drop --mounts to search this drive by meaning, or drop --mode")


def search(conn: state.Connection, key: tuple[str, str], query: str, limit: int, *,
           mode: str, config: EmbedConfig | None, count: bool = True) -> Recalled:
    """The ``limit`` best entries for ``query`` in ``mode`` on a current recall index;
    ``key`` is (git dir, head) as recall_search.search takes it."""
    if mode == "lexical" or config is None or limit <= 0:
        return Recalled(recall_search.search(conn, query, limit, count=count, key=key),
                        "lexical")
    warnings: list[str] = []
    try:
        embedder = embedding.embedder_for(config)
        matrix = _matrix(conn, key[0], embedder)
        pending = _query_vector(embedder, query)
        lexical = recall_search.search(conn, query, DEPTH, count=False, key=key) \
            if mode == "hybrid" else []
        qvec = pending.result()
    except (EmbedderError, PluginError) as err:
        warnings.append(f"semantic recall unavailable, lexical results only: {why(err)}")
        found = Recalled(recall_search.search(conn, query, limit, count=count, key=key),
                         "lexical", warnings)
        vector_fill.schedule(key[0], config, conn, after_read=True)
        return found
    semantic = matrix.nearest(qvec, DEPTH) if matrix is not None else []
    incomplete = vector_fill.needs_fill(conn)
    if incomplete and lexical:
        semantic = _imputed(semantic, [h.fact_id for h in lexical],
                            vector_rows.without_vector(conn, [h.fact_id for h in lexical]))
    fusion = getattr(embedder, "fusion", None) or E5_FUSION
    weights = fusion.weights(mode == "hybrid" and weak_lexical(
        *lexical_evidence(conn, query, lexical[0].fact_id if lexical else None),
        named=names_a_speaker(recall_search.words(query.casefold()),
                              [h.text for h in lexical[:SPEAKER_DEPTH]]),
        tied=tied_first([h.score for h in lexical[:2]])))
    found = Recalled(_ranked(conn, lexical, semantic, limit, mode, count, fusion.k, weights),
                     mode, warnings)
    if incomplete:
        _note_missing(conn, key[0], config, found)
    return found


def _imputed(semantic: list[tuple[str, float]], lexical: list[str],
             unembedded: set[str]) -> list[tuple[str, float]]:
    """The semantic ranking with each lexical hit that has no vector yet put in at its
    lexical rank (cosine unknown: 0.0): absent from the semantic ranking, an entry just
    written would weigh 1/(k + rank) in the fusion against weight/(k + rank) for the
    entries found by meaning (a weight up to 10), and fall out of the top few however
    well its words match."""
    out = list(semantic)
    for rank, fact_id in enumerate(lexical):
        if fact_id in unembedded:
            out.insert(rank, (fact_id, 0.0))
    return out


def _note_missing(conn: state.Connection, git_dir: str, config: EmbedConfig,
                  found: Recalled) -> None:
    """Entries without a vector yet (just written, or brought by a sync or a pull): a
    filler is started for them in the background (memgit.embeddings.fill; the read never
    embeds a passage), and the answer says they were missed by meaning: in semantic
    mode always, in hybrid mode (where their words rank them: :func:`_imputed`) only
    when many are."""
    missing = vector_rows.missing_fast(conn)
    vector_fill.schedule(git_dir, config, conn, after_read=True)
    if found.mode == "semantic" or missing > MANY_MISSING:
        how = "not found by meaning" if found.mode == "semantic" else \
            "found by their words only"
        found.warnings.append(
            f"{missing} entr{'y has' if missing == 1 else 'ies have'} no vector yet: {how} "
            "until embedded in the background (memgit index --embeddings embeds them now)")


def lexical_evidence(conn: state.Connection, query: str,
                     first: str | None) -> tuple[int, int, int]:
    """(terms, known, first_matches) for memgit.embeddings.vectors.weak_lexical: how many
    FTS5 terms ``query`` has, how many of them match some entry, how many the lexical
    ranking's first hit (fact id ``first``) matches; FTS5's own tokenizer and stemming
    decide a match (a few indexed look-ups; their cost is in docs/embeddings.md)."""
    expression = recall_search.match_expression(query)
    terms = expression.split(" OR ") if expression else []
    known = sum(1 for term in terms if search_rows.has_match(conn, term))
    matched = search_rows.terms_matched(conn, first, terms) if first is not None else 0
    return len(terms), known, matched


def _ranked(conn: state.Connection, lexical: list[Hit], semantic: list[tuple[str, float]],
            limit: int, mode: str, count: bool, k: int,
            weights: dict[str, float]) -> list[Hit]:
    """Hits in the order of the semantic ranking (score: the cosine) or of the fusion by
    reciprocal rank with ``k`` and ``weights`` (score: the fused score); retrievals
    counted for those returned."""
    from memgit.embeddings.vectors import fuse, fused_scores

    if mode == "semantic":
        scores = dict(semantic)
        order = [fid for fid, _ in semantic]
    else:
        rankings = {"lexical": [h.fact_id for h in lexical],
                    "semantic": [fid for fid, _ in semantic]}
        scores = fused_scores(rankings, k=k, weights=weights)
        order = fuse(rankings, k=k, weights=weights)
    found = vector_rows.found_rows(conn, order[:2 * limit + 10])
    picked = [found[fid] for fid in order if fid in found][:limit]
    hits = [Hit(r[0], r[1], r[2], r[3], r[4], r[5], round(scores[r[7]], 4), r[7],
                int(r[8]) + (1 if count else 0)) for r in picked]
    if count and picked:
        search_rows.count_retrievals(conn, [r[9] for r in picked])
    return hits


# --- the drive's matrix ----------------------------------------------------------------------

@dataclass
class _Cached:
    """A drive's matrix as this process last read it: under which stamp and model, the
    seq of each row (state.vectors.seqs), and the rows in a buffer with room to grow, so
    a change reads only the new rows and an append copies nothing."""

    stamp: str
    model: tuple[str, int]
    seqs: Any  # numpy int64 array, ascending, one per row
    buffer: Any  # numpy float32 (capacity, dimension); rows [:len(seqs)] are the matrix
    matrix: Any  # VectorMatrix over buffer[:len(seqs)]


_matrices: dict[str, _Cached] = {}
_matrix_lock = threading.Lock()


def _matrix(conn: state.Connection, git_dir: str, embedder: Any) -> Any:
    """The drive's vectors as a VectorMatrix (None without any), cached per process
    under the vectors' stamp and the model; EmbeddingModelError for another model.

    When the stamp moved (a write's entry embedded, rows dropped by a reindex or a
    purge) and the model did not, the cached matrix is refreshed: only the rows stored
    after the last seq read are loaded (a seq is never reused), appended in place, and
    the rows whose seq is gone dropped."""
    embedding.check_model(conn, embedder)
    recorded = vector_rows.recorded_model(conn)
    if recorded is None:
        return None
    stamp = vector_rows.stamp(conn)
    with _matrix_lock:  # held while refreshing: two refreshes would share the buffer
        cached = _matrices.get(git_dir)
        if cached is not None and cached.stamp == stamp and cached.model == recorded:
            return cached.matrix
        np = embedding.numpy()
        fresh = _refreshed(conn, cached, np) \
            if cached is not None and cached.model == recorded else None
        if fresh is None:
            fresh = _grown(None, np.zeros(0, dtype=np.int64), None, vector_rows.load(conn),
                           recorded, np)
        fresh.stamp = stamp
        if len(_matrices) > 16:
            _matrices.clear()
        _matrices[git_dir] = fresh
        return fresh.matrix


def _refreshed(conn: state.Connection, cached: _Cached, np: Any) -> _Cached | None:
    """``cached`` brought up to the table (None when it cannot be: read it whole)."""
    last = int(cached.seqs[-1]) if len(cached.seqs) else 0
    added = vector_rows.load(conn, after=last)
    if vector_rows.count(conn) == len(cached.seqs) + len(added):
        return _grown(cached, cached.seqs, None, added, cached.model, np)  # nothing gone
    now = np.sort(np.array(vector_rows.seqs(conn), dtype=np.int64))
    keep = np.isin(cached.seqs, now[now <= last], assume_unique=True)
    if int(keep.sum()) + len(added) != len(now):
        return None  # rows changed under an old seq: cannot happen, but never guess
    return _grown(cached, cached.seqs[keep], keep, added, cached.model, np)


def _grown(cached: _Cached | None, seqs: Any, keep: Any, added: list[tuple[int, str, bytes]],
           model: tuple[str, int], np: Any) -> _Cached:
    """The rows of ``cached`` (those ``keep`` marks, all when None) followed by
    ``added``: written into the cached buffer when nothing was dropped and it has room,
    else into a new buffer with a quarter to spare."""
    from memgit.embeddings.vectors import VectorMatrix

    new = VectorMatrix.from_blobs(((fid, blob) for _seq, fid, blob in added), model[1])
    if cached is None:
        ids, rows = [], np.zeros((0, model[1]), dtype=np.float32)
    elif keep is None:
        ids, rows = cached.matrix.ids, cached.matrix.matrix
    else:
        ids = [fid for fid, k in zip(cached.matrix.ids, keep.tolist(), strict=True) if k]
        rows = cached.matrix.matrix[keep]
    size = len(ids) + len(new.ids)
    if cached is not None and keep is None and size <= len(cached.buffer):
        buffer = cached.buffer  # rows past the old view: no reader of it sees them
    else:
        buffer = np.empty((size + size // 4 + 64, model[1]), dtype=np.float32)
        buffer[:len(ids)] = rows
    buffer[len(ids):size] = new.matrix
    all_seqs = np.concatenate([seqs, np.array([r[0] for r in added], dtype=np.int64)])
    return _Cached("", model, all_seqs, buffer, VectorMatrix(ids + new.ids, buffer[:size]))


# --- the query's vector ---------------------------------------------------------------------

_queries: OrderedDict[tuple[str, str], Any] = OrderedDict()
_query_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None


def _query_vector(embedder: Any, query: str) -> Future[Any]:
    """The query's unit vector: from the LRU, else embedded in the worker thread."""
    global _pool
    # the model id names what made the stored vectors; one model may encode questions in
    # more than one way (the local embedder's fast and full query encoders)
    encoder = f"{embedder.model_id}/{getattr(embedder, 'query_encoder', '')}"
    key = (encoder, query)
    with _query_lock:
        cached = _queries.get(key)
        if cached is not None:
            _queries.move_to_end(key)
            done: Future[Any] = Future()
            done.set_result(cached)
            return done
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memgit-query")
    return _pool.submit(_embed_query, embedder, key)


def _embed_query(embedder: Any, key: tuple[str, str]) -> Any:
    vector = embedding.embed_texts(embedder, [key[1]], "query")[0]
    with _query_lock:
        _queries[key] = vector
        while len(_queries) > QUERY_CACHE:
            _queries.popitem(last=False)
    return vector


def warm(conn: state.Connection, git_dir: str, config: EmbedConfig) -> str | None:
    """Load the embedder (its first call included) and the drive's matrix, as a long-lived
    server does at start; returns why semantic recall is unavailable, or None."""
    try:
        embedder = embedding.embedder_for(config)
        embedding.embed_texts(embedder, ["warm up"], "query")
        _matrix(conn, git_dir, embedder)
    except (EmbedderError, PluginError) as err:
        return why(err)
    return None


def why(err: EmbedderError | PluginError) -> str:
    """Why semantic recall is unavailable, and the fix (install the extra, start the
    endpoint): hints are memgit's own texts, and an EmbedderError's message never carries
    an API key."""
    return f"{err.code} {err.message}" + (f"; {err.hint}" if err.hint else "")


def clear_caches() -> None:
    """Forget the cached matrices and query vectors (benchmarks measure without them)."""
    with _matrix_lock:
        _matrices.clear()
    clear_query_cache()


def clear_query_cache() -> None:
    """Forget the query vectors (a benchmark's queries are then each new to the process)."""
    with _query_lock:
        _queries.clear()
