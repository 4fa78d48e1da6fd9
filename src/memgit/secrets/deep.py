"""Optional second engines behind ``secrets: deep``: detect-secrets and betterleaks.

Neither runs in the default path: importing detect-secrets costs about 100 ms
(it pulls in ``requests``) and its ``scan_line`` about 1 ms a line; betterleaks
(``pip install '.[deep]'`` from memgit's folder, the successor of gitleaks as a Go library) costs
about 40 ms to load and 70 us a line. A finding's kind is the engine's rule name, a
fixed string, never the text. docs/security.md has what each adds, measured.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Plugins that make sense on prose lines. Left out: the two high-entropy plugins
# (in line-by-line scanning they flag ordinary words) and public IPs.
_DS_EXCLUDED = frozenset({"Base64HighEntropyString", "HexHighEntropyString", "IPPublicDetector"})
_ready: dict[str, Any] = {}


def _detect_secrets_scan() -> Callable[[str], list[tuple[str, str]]]:
    if "ds" not in _ready:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import get_settings

        plugins: list[type] = list(get_mapping_from_secret_type_to_class().values())
        names = sorted(c.__name__ for c in plugins if c.__name__ not in _DS_EXCLUDED)
        settings = get_settings()
        settings.clear()  # detect-secrets' default filters, and only the plugins named here
        settings.configure_plugins([{"name": n} for n in names])

        def run(text: str) -> list[tuple[str, str]]:
            return [(f"{s.type} (detect-secrets)", s.secret_value or "") for s in scan_line(text)]

        _ready["ds"] = run
    return _ready["ds"]  # type: ignore[no-any-return]


def betterleaks_available() -> bool:
    try:
        import betterleaks  # noqa: F401
    except ImportError:
        return False
    return True


def _betterleaks_scan() -> Callable[[str], list[tuple[str, str]]] | None:
    if "bl" not in _ready:
        if not betterleaks_available():
            _ready["bl"] = None
        else:
            import betterleaks

            def run(text: str) -> list[tuple[str, str]]:
                return [(f"{f.rule_id} (betterleaks)", f.match.value or f.match.full)
                        for f in betterleaks.scan_string(text)]

            _ready["bl"] = run
    return _ready["bl"]  # type: ignore[no-any-return]


def engine_findings(text: str, engine: str) -> list[tuple[str, str]]:
    """(kind, value) from one optional engine: "detect-secrets" or "betterleaks"."""
    if engine == "detect-secrets":
        return _detect_secrets_scan()(text)
    run = _betterleaks_scan()
    return run(text) if run is not None else []


def deep_findings(text: str, found: list[Any], make: Callable[..., Any]) -> list[Any]:
    """``found`` plus what the optional engines add where nothing was found yet."""
    spans = [(f.start, f.end) for f in found]
    engines = ["detect-secrets"] + (["betterleaks"] if betterleaks_available() else [])
    for engine in engines:
        for kind, value in engine_findings(text, engine):
            start = text.find(value) if value else -1
            end = start + len(value) if start >= 0 else len(text)
            start = max(start, 0)
            if any(not (end <= s or start >= e) for s, e in spans):
                continue
            found.append(make(kind, start, end))
            spans.append((start, end))
    return sorted(found, key=lambda f: f.start)
