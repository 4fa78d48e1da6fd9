"""A drive's vectors: the configured embedder, the model check, embedding what lacks one.

Vectors are a cache beside the recall index: an entry keeps its vector while its text is
unchanged, and no read or write embeds a passage (the background filler or ``memgit index
--embeddings`` does). Two models' vectors are never compared: a model or dimension other
than the recorded one is refused (EmbeddingModelError) while vectors exist. NumPy is
imported only here and in embeddings.vectors, and only when vectors are made or searched.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from memgit import state
from memgit.errors import EmbedderError, EmbeddingModelError, PluginError
from memgit.plugins import install_command
from memgit.policy.embedding_settings import EmbedConfig
from memgit.state import vectors as rows

CHUNK = 256  # texts per call (and per commit) when a whole drive is embedded with progress

Progress = Callable[[int, int], None]

_lock = threading.Lock()
_embedders: dict[EmbedConfig, Any] = {}


def embedder_for(config: EmbedConfig) -> Any:
    """The embedder ``config`` names, built once per process (the model stays loaded).

    Raises PluginError (an unknown plugin, an extra not installed, a bad setting) or
    EmbedderError (a model that cannot load): recall takes either as "lexical only".
    """
    with _lock:
        found = _embedders.get(config)
        if found is None:
            from memgit import plugins

            found = plugins.load("embedder", config.plugin, config.settings)
            _embedders[config] = found
        return found


def forget_embedders() -> None:
    """Drop the process's embedders (the next call builds them again)."""
    with _lock:
        _embedders.clear()


def numpy() -> Any:
    """NumPy, or a PluginError saying how to install it (the vectors need it)."""
    try:
        import numpy as np
    except ImportError as exc:
        raise PluginError(f"semantic recall needs NumPy: {exc}",
                          f"{install_command('embed')} (or numpy alone for the openai "
                          "embedder)") from exc
    return np


def embed_texts(embedder: Any, texts: Sequence[str], kind: str) -> Any:
    """The vectors of ``texts`` as one float32 matrix (rows in order), unit length."""
    np = numpy()
    from memgit.embeddings.vectors import normalised

    if not texts:
        return np.zeros((0, max(int(embedder.dimension or 0), 1)), dtype=np.float32)
    with _lock_of(embedder):
        if hasattr(embedder, "embed_matrix"):
            matrix = embedder.embed_matrix(list(texts), kind)
        else:
            matrix = embedder.embed(list(texts), kind)
    out = np.asarray(matrix, dtype=np.float32)
    if out.ndim != 2 or out.shape[0] != len(texts):
        raise EmbedderError(f"the {embedder.name} embedder returned {out.shape[0]} vectors "
                            f"for {len(texts)} texts", "check the embedder plugin")
    return normalised(out)


_embed_locks: dict[int, threading.Lock] = {}


def _lock_of(embedder: Any) -> threading.Lock:
    """One call at a time per embedder (an in-process model is not known to be
    thread-safe; a background caller and a recall may share it)."""
    with _lock:
        return _embed_locks.setdefault(id(embedder), threading.Lock())


# --- the model --------------------------------------------------------------------------


def check_model(conn: state.Connection, embedder: Any, dimension: int | None = None) -> None:
    """EmbeddingModelError when vectors of another model or dimension are stored."""
    recorded = rows.recorded_model(conn)
    if recorded is None:
        return
    model, stored_dim = recorded
    dim = dimension or int(getattr(embedder, "dimension", 0) or 0)
    if model == embedder.model_id and (not dim or dim == stored_dim):
        return
    count = rows.count(conn)
    if count == 0:
        return  # nothing to mix: the next vector records the new model
    now = f"{embedder.model_id}" + (f" ({dim} dimensions)" if dim else "")
    raise EmbeddingModelError(
        f"the drive's {count} vectors were made with {model} ({stored_dim} dimensions), "
        f"but embeddings: now names {now}",
        "memgit index --rebuild --embeddings embeds the drive again with the new model; "
        "or set embeddings: back to the old one (memgit recall --mode lexical meanwhile)")


def stored_model(conn: state.Connection) -> tuple[str, int] | None:
    return rows.recorded_model(conn)


# --- filling ----------------------------------------------------------------------------


@dataclass
class FillResult:
    embedded: int = 0  # vectors stored by this call
    missing: int = 0  # searchable entries still without a vector (0 when complete)
    model_id: str = ""
    calls: int = 0  # calls to the embedder


def needs_fill(conn: state.Connection) -> bool:
    """Whether some searchable entry may lack a vector (three meta reads)."""
    return rows.done_mark(conn) != _mark(conn)


def _mark(conn: state.Connection) -> str:
    return f"{state.get_meta(conn, 'indexed_rev') or ''} {rows.stamp(conn)}"


def fill(conn: state.Connection, embedder: Any, *, limit: int | None = None,
         progress: Progress | None = None) -> FillResult:
    """Embed the searchable entries that lack a vector (newest first; at most ``limit``).

    One call to the embedder for all of them (an endpoint's plugin splits it only at
    its own limit); with ``progress``, a whole drive goes in calls of :data:`CHUNK`
    texts, each committed, so an interrupted run keeps what it made.
    """
    check_model(conn, embedder)
    revision = state.get_meta(conn, "indexed_rev")
    todo = rows.missing(conn, limit)
    result = FillResult(model_id=embedder.model_id)
    size = len(todo) if progress is None else CHUNK
    for start in range(0, len(todo), max(size, 1)):
        part = todo[start:start + size]
        matrix = embed_texts(embedder, [text for _fid, _digest, text in part], "passage")
        result.calls += 1
        blobs = [(fid, digest, matrix[i].astype("<f4").tobytes())
                 for i, (fid, digest, _text) in enumerate(part)]
        with state.immediate(conn):
            dimension = int(matrix.shape[1])
            check_model(conn, embedder, dimension)  # another process may have stored some
            if rows.recorded_model(conn) != (embedder.model_id, dimension):
                rows.record_model(conn, embedder.model_id, dimension)  # none stored yet
            result.embedded += rows.store(conn, blobs)
        if progress is not None:
            progress(start + len(part), len(todo))
    if limit is not None and len(todo) >= limit:
        result.missing = rows.missing_count(conn)
    if result.missing == 0:
        with state.immediate(conn):
            # Every entry missing was stored and no reindex ran since they were listed
            # (the revision is unchanged): none can be missing, no need to scan again.
            complete = result.embedded == len(todo) and \
                state.get_meta(conn, "indexed_rev") == revision
            if complete or not rows.missing(conn, 1):
                rows.set_done_mark(conn, _mark(conn))
            else:
                result.missing = rows.missing_count(conn)
    return result


def rebuild(conn: state.Connection, embedder: Any, *,
            progress: Progress | None = None) -> FillResult:
    """Drop every vector (and the model recorded) and embed the whole drive again."""
    with state.immediate(conn):
        rows.clear(conn)
    return fill(conn, embedder, progress=progress)


def update(conn: state.Connection, config: EmbedConfig, *, again: bool = False,
           progress: Progress | None = None) -> dict[str, Any]:
    """What ``memgit index`` does for the vectors: fill (or, ``again``, rebuild) with the
    configured embedder; returns the figures it reports (JSON-ready)."""
    started = time.perf_counter()
    embedder = embedder_for(config)
    filled = (rebuild if again else fill)(conn, embedder, progress=progress)
    now = summary(conn)
    return {"embedded": filled.embedded, "calls": filled.calls, "model": filled.model_id,
            "vectors": now["vectors"], "missing": now["missing"],
            "seconds": round(time.perf_counter() - started, 3)}


def summary(conn: state.Connection) -> dict[str, Any]:
    """What ``memgit info`` shows: the model, the vectors stored, the entries without."""
    recorded = rows.recorded_model(conn)
    return {"model": recorded[0] if recorded else None,
            "dimension": recorded[1] if recorded else None,
            "vectors": rows.count(conn), "missing": rows.missing_fast(conn)}
