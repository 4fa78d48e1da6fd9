"""The ``embeddings:`` section of memgit.yaml: which embedder makes the drive's vectors.

``check_section`` parses it wherever the policy is read, hooks included, into the
:class:`EmbedConfig` ``Policy.embeddings()`` gives out. A leaf importing nothing of memgit
but errors, so the hooks parse it without loading a plugin or NumPy. An API key is never
read from the file, only from the environment variable ``api_key_env`` names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memgit.errors import PolicyFileError

# The settings of memgit's own embedders (embedders/local.py, embedders/openai_api.py).
LOCAL_SETTINGS = frozenset({"threads", "query"})
LOCAL_QUERY_ENCODERS = ("auto", "fast", "full")  # embedders/local.py: how a question is embedded
OPENAI_SETTINGS = frozenset({
    "base_url", "model", "model_id", "api_key_env", "dimension", "batch_size", "timeout",
    "retries", "max_wait", "query_prefix", "passage_prefix", "input_type"})
BUILTIN_SETTINGS: dict[str, frozenset[str]] = {"local": LOCAL_SETTINGS,
                                               "openai": OPENAI_SETTINGS}
_PLUGIN_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
_ENV_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_URL_RE = re.compile(r"https?://[^/\s@]+(/\S*)?\Z")
EXAMPLE = "embeddings: {plugin: local} (or openai with base_url, model, api_key_env)"


@dataclass(frozen=True)
class EmbedConfig:
    """The drive's embedder: its plugin name and settings (canonical JSON, so that a
    Policy holding it stays hashable)."""

    plugin: str
    settings_json: str = "{}"

    @property
    def settings(self) -> dict[str, Any]:
        """What the plugin's factory gets (plugins.load), ``plugin`` left out."""
        return dict(json.loads(self.settings_json))


def _fail(origin: str, message: str, hint: str = EXAMPLE) -> PolicyFileError:
    return PolicyFileError(f"{origin}: embeddings.{message}", hint)


def _positive(origin: str, key: str, value: Any, *, whole: bool) -> None:
    kinds = (int,) if whole else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or value <= 0:
        what = "a whole number" if whole else "a number"
        raise _fail(origin, f"{key} must be {what} above 0", f"embeddings: {{{key}: 30}}")


def _check_common(origin: str, settings: Mapping[str, Any]) -> None:
    """The keys the issue names for every embedder: base_url, model, api_key_env,
    timeout, batch_size."""
    for key in ("base_url", "model", "api_key_env"):
        if key in settings and not (isinstance(settings[key], str) and settings[key].strip()):
            raise _fail(origin, f"{key} must be a non-empty string", f"embeddings: {{{key}: ...}}")
    url = settings.get("base_url")
    if url is not None:
        if re.match(r"[A-Za-z]+://[^/\s]*@", url):
            raise _fail(origin, "base_url must not carry a user name or password",
                        "put the key in the environment variable api_key_env names")
        if not _URL_RE.match(url):
            raise _fail(origin, "base_url must be an http:// or https:// URL",
                        "for example base_url: http://127.0.0.1:11434/v1")
    env = settings.get("api_key_env")
    if env is not None and not _ENV_RE.match(env):
        raise _fail(origin, "api_key_env must name an environment variable",
                    "for example api_key_env: OPENAI_API_KEY (the key itself never goes here)")
    if "timeout" in settings:
        _positive(origin, "timeout", settings["timeout"], whole=False)
    if "batch_size" in settings:
        _positive(origin, "batch_size", settings["batch_size"], whole=True)


def check_section(data: Any, origin: str = "policy") -> EmbedConfig | None:
    """Validate an ``embeddings:`` mapping; every mistake is a PolicyFileError naming the
    key (never its value: a misplaced key could be a credential). None: no embedder."""
    if data is None:
        return None
    if not isinstance(data, Mapping):
        raise PolicyFileError(f"{origin}: embeddings must be a mapping", EXAMPLE)
    plugin = data.get("plugin")
    if not isinstance(plugin, str) or not _PLUGIN_RE.match(plugin):
        raise _fail(origin, "plugin must name an embedder plugin (local, openai or an "
                    "installed one)")
    settings = {str(k): v for k, v in data.items() if k != "plugin"}
    known = BUILTIN_SETTINGS.get(plugin)
    if known is not None:
        unknown = sorted(set(settings) - known)
        if unknown:
            raise PolicyFileError(
                f"{origin}: unknown embeddings key(s) for the {plugin} embedder: "
                f"{', '.join(unknown)}",
                f"known: {', '.join(sorted(known))} (an API key goes in the environment "
                "variable api_key_env names)" if plugin == "openai"
                else f"known: {', '.join(sorted(known))}")
    _check_common(origin, settings)
    if plugin == "local" and settings.get("query", "auto") not in LOCAL_QUERY_ENCODERS:
        raise _fail(origin, "query must be auto, fast or full",
                    "embeddings: {plugin: local, query: auto}")
    try:
        settings_json = json.dumps(settings, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise _fail(origin, f"settings must be plain values (strings, numbers, true/false): "
                    f"{type(exc).__name__}", "quote dates and other values") from exc
    return EmbedConfig(plugin, settings_json)
