"""The ``dream:`` section of memgit.yaml: which proposer, and when and how to dream.

``check_section`` is the section's parser in ``policy.SECTIONS`` (a typo fails wherever
the policy is read) and makes the :class:`DreamConfig` ``Policy.dream()`` gives out. A
leaf: it imports nothing of memgit but errors, so it is cheap to import.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memgit.errors import PolicyFileError

DEFAULT_WINDOW = "02:00-06:00"
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 1800
DEFAULT_OBSERVATION_DAYS = 7
KEYS = ("model", "base_url", "model_name", "api_key_env", "timeout", "prune", "window",
        "observations_days", "options")
_WINDOW_RE = re.compile(r"([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-3]|24):([0-5]\d)\Z")
_ENV_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_PLUGIN_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")


@dataclass(frozen=True)
class DreamConfig:
    """memgit dream's settings; ``model`` "" means the rule-based proposer. Hashable
    (a Policy holds it): the plugin's ``options`` are kept as canonical JSON."""

    model: str = ""
    base_url: str = ""
    model_name: str = ""
    api_key_env: str = ""
    timeout: float = DEFAULT_TIMEOUT
    prune: bool = False
    window: tuple[int, int] = (120, 360)  # minutes after midnight, drive time
    observations_days: int = DEFAULT_OBSERVATION_DAYS
    options_json: str = "{}"

    @property
    def options(self) -> dict[str, Any]:
        return dict(json.loads(self.options_json))

    def plugin_settings(self) -> dict[str, Any]:
        """What the model plugin's factory gets (plugins.load)."""
        return {**self.options, "base_url": self.base_url, "model_name": self.model_name,
                "api_key_env": self.api_key_env, "timeout": self.timeout}


def parse_window(value: str) -> tuple[int, int] | None:
    """"HH:MM-HH:MM" -> (start, end) minutes; the window may wrap past midnight."""
    m = _WINDOW_RE.match(value.strip()) if isinstance(value, str) else None
    if m is None:
        return None
    start = int(m.group(1)) * 60 + int(m.group(2))
    end = int(m.group(3)) * 60 + int(m.group(4))
    if end > 24 * 60 or start == end:
        return None
    return start, end


def in_window(window: tuple[int, int], minute: int) -> bool:
    start, end = window
    if start < end:
        return start <= minute < end
    return minute >= start or minute < end


def _fail(origin: str, message: str, hint: str) -> PolicyFileError:
    return PolicyFileError(f"{origin}: dream.{message}", hint)


def check_section(data: Any, origin: str = "policy") -> DreamConfig:
    """Validate a ``dream:`` mapping; every mistake is a PolicyFileError naming the key."""
    if data is None:
        return DreamConfig()
    if not isinstance(data, Mapping):
        raise PolicyFileError(f"{origin}: dream must be a mapping",
                              "dream: {model: openai, base_url: http://127.0.0.1:11434/v1}")
    unknown = sorted(str(k) for k in data if k not in KEYS)
    if unknown:
        raise PolicyFileError(f"{origin}: unknown dream key(s): {', '.join(unknown)}",
                              f"allowed: {', '.join(KEYS)} (plugin settings go under options)")
    kwargs: dict[str, Any] = {}
    for key in ("model", "base_url", "model_name", "api_key_env"):
        value = data.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise _fail(origin, f"{key} must be a string", f"dream: {{{key}: ...}}")
        kwargs[key] = value.strip()
    if kwargs.get("model") and not _PLUGIN_RE.match(kwargs["model"]):
        raise _fail(origin, "model must be a model plugin's name", "dream: {model: openai}")
    base_url = kwargs.get("base_url", "")
    if base_url and not re.match(r"https?://[^/\s]+", base_url):
        raise _fail(origin, "base_url must be an http:// or https:// URL",
                    "for example base_url: http://127.0.0.1:11434/v1")
    if kwargs.get("api_key_env") and not _ENV_RE.match(kwargs["api_key_env"]):
        raise _fail(origin, "api_key_env must name an environment variable",
                    "for example api_key_env: OPENAI_API_KEY (the key itself never goes here)")
    if "timeout" in data:
        timeout = data["timeout"]
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) \
                or not 0 < timeout <= MAX_TIMEOUT:
            # a run must end well within the lease's hour (state.dream.STALE_LEASE_SECONDS)
            raise _fail(origin, f"timeout must be seconds in (0, {MAX_TIMEOUT}]",
                        "dream: {timeout: 60}")
        kwargs["timeout"] = float(timeout)
    if "prune" in data:
        if not isinstance(data["prune"], bool):
            raise _fail(origin, "prune must be true or false", "dream: {prune: true}")
        kwargs["prune"] = data["prune"]
    if "window" in data:
        window = parse_window(data["window"])
        if window is None:
            raise _fail(origin, "window must be HH:MM-HH:MM (drive time, start != end)",
                        f"dream: {{window: '{DEFAULT_WINDOW}'}}")
        kwargs["window"] = window
    if "observations_days" in data:
        days = data["observations_days"]
        if isinstance(days, bool) or not isinstance(days, int) or not 0 <= days <= 3650:
            raise _fail(origin, "observations_days must be a whole number of days (0-3650)",
                        "dream: {observations_days: 7}")
        kwargs["observations_days"] = days
    if "options" in data:
        if not isinstance(data["options"], Mapping):
            raise _fail(origin, "options must be a mapping", "dream: {options: {key: value}}")
        try:
            kwargs["options_json"] = json.dumps(data["options"], sort_keys=True,
                                                ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            raise _fail(origin, f"options must hold plain values (strings, numbers, true/false, "
                        f"lists, mappings): {exc}", "quote dates and other values") from exc
    return DreamConfig(**kwargs)
