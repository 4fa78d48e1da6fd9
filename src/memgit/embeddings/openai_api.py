"""The ``openai`` embedder: any endpoint speaking the OpenAI embeddings protocol, standard
library only (settings: docs/embeddings.md).

The API key comes from the environment variable ``api_key_env`` names, is sent only when
set, and never appears in memgit.yaml, a message or a log. A dimension not configured is
learnt from the first answer and enforced from then on.
"""

from __future__ import annotations

import http.client
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Any

from memgit.embeddings.embedders import (
    check_keys,
    check_vectors,
    setting_float,
    setting_int,
    setting_str,
)
from memgit.errors import EmbedderError, PluginError
from memgit.http_client import error_detail, failure_reason, public_url, retry_after
from memgit.plugins import EmbedKind
from memgit.policy.embedding_settings import OPENAI_SETTINGS

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "text-embedding-3-small"
# Dimensions of OpenAI's own models, so that they need no ``dimension`` setting.
KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
_PLUGIN = "openai"
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
SETTINGS = set(OPENAI_SETTINGS)


def make(settings: Mapping[str, Any]) -> OpenAIEmbedder:
    """The plugin factory (``plugins.BUILTIN["embedder"]["openai"]``)."""
    return OpenAIEmbedder(settings)


class OpenAIEmbedder:
    """An embedder behind an OpenAI-compatible ``/embeddings`` endpoint."""

    name = _PLUGIN

    def __init__(self, settings: Mapping[str, Any]) -> None:
        check_keys(settings, SETTINGS, plugin=_PLUGIN)
        base_url = setting_str(settings, "base_url", DEFAULT_BASE_URL, plugin=_PLUGIN)
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise PluginError(f"embeddings.base_url must be an http(s) URL, not {base_url!r}",
                              "for example base_url: http://127.0.0.1:11434/v1")
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = setting_str(settings, "model", DEFAULT_MODEL, plugin=_PLUGIN)
        self.model_id = setting_str(settings, "model_id", self.model, plugin=_PLUGIN)
        known = KNOWN_DIMENSIONS.get(self.model, 0)
        # 0 until the first answer when neither configured nor known (then enforced).
        self.dimension = setting_int(settings, "dimension", known, plugin=_PLUGIN,
                                     minimum=0)
        self.batch_size = setting_int(settings, "batch_size", 2048, plugin=_PLUGIN)
        self.timeout = setting_float(settings, "timeout", 30.0, plugin=_PLUGIN)
        self.retries = setting_int(settings, "retries", 2, plugin=_PLUGIN, minimum=0)
        self.max_wait = setting_float(settings, "max_wait", 20.0, plugin=_PLUGIN)
        self.prefixes = {
            "query": setting_str(settings, "query_prefix", "", plugin=_PLUGIN),
            "passage": setting_str(settings, "passage_prefix", "", plugin=_PLUGIN),
        }
        self.input_type = bool(settings.get("input_type", False))
        self._key_env = setting_str(settings, "api_key_env", "OPENAI_API_KEY", plugin=_PLUGIN)
        # The endpoint as messages name it: no user name, password or query from the URL.
        self.endpoint = public_url(self.url)

    def embed(self, texts: Sequence[str], kind: EmbedKind = "passage") -> list[list[float]]:
        """One vector per text, in order: one request per ``batch_size`` texts."""
        if kind not in self.prefixes:
            raise ValueError(f"kind must be 'query' or 'passage', not {kind!r}")
        prefix = self.prefixes[kind]
        items = [prefix + t for t in texts]
        out: list[list[float]] = []
        for start in range(0, len(items), self.batch_size):
            out.extend(self._request(items[start:start + self.batch_size], kind))
        return out

    # --- one request ----------------------------------------------------------------

    def _request(self, inputs: list[str], kind: EmbedKind) -> list[list[float]]:
        body: dict[str, Any] = {"model": self.model, "input": inputs,
                                "encoding_format": "float"}
        if self.input_type:
            body["input_type"] = kind
        payload = json.dumps(body).encode("utf-8")
        key = os.environ.get(self._key_env, "")
        attempt = 0
        while True:
            try:
                raw = self._post(payload, key)
                break
            except urllib.error.HTTPError as exc:
                status = exc.code
                detail = _detail(exc, key)
                wait = retry_after(exc.headers.get("Retry-After") if exc.headers else None,
                                   attempt, base=0.5)
                exc.close()
                if status in _RETRY_STATUSES and attempt < self.retries and \
                        wait <= self.max_wait:
                    time.sleep(wait)
                    attempt += 1
                    continue
                raise EmbedderError(
                    f"embeddings endpoint {self.endpoint} answered HTTP {status}"
                    + (f": {detail}" if detail else ""), _hint(status, self._key_env),
                    status=status) from None
            except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
                raise EmbedderError(f"cannot reach the embeddings endpoint {self.endpoint}: "
                                    f"{_reason(exc, self.timeout, key)}",
                                    "start the embeddings server or fix embeddings.base_url; "
                                    "recall falls back to lexical meanwhile") from None
        return self._vectors(raw, len(inputs))

    def _post(self, payload: bytes, key: str) -> bytes:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(self.url, data=payload, headers=headers,
                                         method="POST")
        with urllib.request.urlopen(request, timeout=self.timeout) as response:
            data: bytes = response.read()
            return data

    def _vectors(self, raw: bytes, count: int) -> list[list[float]]:
        where = f"embeddings endpoint {self.endpoint}"
        try:
            doc = json.loads(raw)
            items = doc["data"]
            if not isinstance(items, list):
                raise TypeError("data is not a list")
            ordered: list[Any] = [None] * len(items)
            for position, item in enumerate(items):
                index = item.get("index", position) if isinstance(item, dict) else None
                if not isinstance(index, int) or not 0 <= index < len(items) or \
                        ordered[index] is not None:
                    raise ValueError(f"bad or repeated index {index!r}")
                ordered[index] = item["embedding"]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise EmbedderError(f"{where} returned malformed JSON ({str(exc)[:80]})",
                                "check that base_url points at an OpenAI-compatible "
                                "embeddings API (POST {base_url}/embeddings)") from None
        if not all(isinstance(v, list) for v in ordered):
            raise EmbedderError(f"{where} returned an embedding that is not a list of numbers",
                                "memgit asks for encoding_format float; check the server")
        if self.dimension == 0 and ordered:
            self.dimension = len(ordered[0])
        check_vectors(ordered, count, self.dimension, where)
        return [[float(x) for x in v] for v in ordered]


# --- helpers ----------------------------------------------------------------------------


def _detail(exc: urllib.error.HTTPError, key: str) -> str:
    """The server's message in an error answer, short (http_client.error_detail)."""
    try:
        raw = exc.read(4096)
    except (OSError, http.client.HTTPException):
        return ""
    return error_detail(raw, key, limit=160) if raw else ""


def _reason(exc: BaseException, timeout: float, key: str) -> str:
    reason = failure_reason(exc, timeout, key)
    return reason + " (embeddings.timeout)" if reason.startswith("no answer within") else reason


def _hint(status: int, key_env: str) -> str:
    if status in (401, 403):
        return f"check the API key in the environment variable {key_env} (embeddings.api_key_env)"
    if status == 404:
        return "check embeddings.base_url (it ends before /embeddings) and embeddings.model"
    if status == 429:
        return "the endpoint is rate limiting; retry later or lower embeddings.batch_size"
    if status == 413:
        return "lower embeddings.batch_size to the endpoint's limit"
    return "recall falls back to lexical until the endpoint answers"
