"""The plugin seam: typed kinds of plugin, found by name through entry points.

Kinds ``model``, ``embedder`` and ``agent``, each a Protocol below and an entry-point
group whose entries name a factory taking the plugin's settings from memgit.yaml.
memgit's own are in ``BUILTIN``, so they work from a source checkout too
(plugins/README.md). Never loaded by pre-receive or pre-commit: this module imports
nothing heavy, and ``load`` imports a plugin only when called.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from memgit.errors import PluginError

GROUPS: dict[str, str] = {
    "model": "memgit.models",
    "embedder": "memgit.embedders",
    "agent": "memgit.agents",
}

# kind -> name -> "module:factory", memgit's own plugins
BUILTIN: dict[str, dict[str, str]] = {
    "model": {"openai": "memgit.dream.chat:make"},
    "embedder": {
        "local": "memgit.embeddings.local:make",
        "openai": "memgit.embeddings.openai_api:make",
    },
    "agent": {
        "claude-code": "memgit.agents.install:claude_code",
        "codex": "memgit.agents.install:codex",
        "gemini": "memgit.agents.install:gemini",
        "shell": "memgit.agents.install:shell",
    },
}

EmbedKind = Literal["query", "passage"]


@runtime_checkable
class ConsolidationModel(Protocol):
    """Proposes changes to a drive snapshot; code checks every proposal (docs/dream.md)."""

    name: str

    def propose(self, snapshot: Mapping[str, Any]) -> Mapping[str, Any]:
        """Return the proposal object (merges, contradictions, lessons, prunes)."""
        ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors of ``dimension`` floats, the same model every time."""

    name: str
    model_id: str
    dimension: int

    def embed(self, texts: Sequence[str], kind: EmbedKind = "passage") -> list[list[float]]:
        """One vector per text, in order; ``kind`` tells queries from stored passages."""
        ...


@runtime_checkable
class AgentIntegration(Protocol):
    """Installs an agent tool's integration (hooks, MCP entry) for a project."""

    name: str
    description: str

    def install(self, project: Path, drive: Path) -> list[Path]:
        """Write the integration's files under ``project``; return the paths written."""
        ...


PROTOCOLS: dict[str, type] = {
    "model": ConsolidationModel,
    "embedder": Embedder,
    "agent": AgentIntegration,
}


def _check_kind(kind: str) -> None:
    if kind not in GROUPS:
        raise PluginError(f"unknown plugin kind {kind!r}",
                          f"known kinds: {', '.join(sorted(GROUPS))}")


def _entry_points(kind: str) -> dict[str, str]:
    """Installed plugins of a kind: name -> "module:attr" (from package metadata)."""
    from importlib.metadata import entry_points

    return {ep.name: ep.value for ep in entry_points(group=GROUPS[kind])}


def available(kind: str) -> dict[str, str]:
    """Every plugin of ``kind`` by name: memgit's own, then installed distributions'."""
    _check_kind(kind)
    found = dict(BUILTIN[kind])
    for name, target in _entry_points(kind).items():
        found.setdefault(name, target)
    return found


def _resolve(target: str) -> Callable[..., Any]:
    module_name, _, attr = target.partition(":")
    module = importlib.import_module(module_name)
    factory: Any = module
    for part in attr.split(".") if attr else []:
        factory = getattr(factory, part)
    if not callable(factory):
        raise TypeError(f"{target} is not callable")
    return factory


def load(kind: str, name: str, settings: Mapping[str, Any] | None = None) -> Any:
    """Build the plugin ``name`` of ``kind`` with its settings; check it has the kind's shape.

    Raises PluginError naming the plugin when it is unknown, cannot be imported (an
    optional extra that is not installed, say) or does not provide the kind's methods.
    """
    _check_kind(kind)
    known = available(kind)
    target = known.get(name)
    if target is None:
        names = ", ".join(sorted(known)) or "none installed"
        raise PluginError(f"no {kind} plugin named {name!r}",
                          f"installed {kind} plugins: {names}")
    try:
        factory = _resolve(target)
    except ImportError as exc:
        raise PluginError(f"the {kind} plugin {name!r} cannot be loaded: {exc}",
                          f"install the extra it needs, e.g. {install_command('embed')}") from exc
    except (AttributeError, TypeError) as exc:
        raise PluginError(f"the {kind} plugin {name!r} points at {target!r}, "
                          f"which is not a factory: {exc}",
                          "fix the plugin's entry point") from exc
    plugin = factory(dict(settings or {}))
    if not isinstance(plugin, PROTOCOLS[kind]):
        raise PluginError(f"the {kind} plugin {name!r} does not provide what the {kind} kind needs",
                          f"see {PROTOCOLS[kind].__name__} in memgit/plugins.py")
    return plugin


def install_command(extra: str = "") -> str:
    """The pip command that installs this memgit (with the optional ``extra``) from where it
    came: the source folder or repository pip recorded (PEP 610's ``direct_url.json``), or
    the checkout it runs from. Never ``pip install memgit``: that name on the package index
    is another project's."""
    import importlib.metadata
    import json
    from urllib.parse import unquote, urlsplit

    suffix = f"[{extra}]" if extra else ""
    try:
        recorded = importlib.metadata.distribution("memgit").read_text("direct_url.json")
        origin = json.loads(recorded or "{}")
    except (importlib.metadata.PackageNotFoundError, ValueError):
        origin = {}
    url = origin.get("url", "") if isinstance(origin, dict) else ""
    if url.startswith("file://"):
        return f"pip install '{unquote(urlsplit(url).path)}{suffix}'"
    if url and isinstance(origin.get("vcs_info"), dict):
        return f"pip install 'memgit{suffix} @ {origin['vcs_info'].get('vcs', 'git')}+{url}'"
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").is_file():
        return f"pip install '{checkout}{suffix}'"
    return f"pip install '.{suffix}' in memgit's source folder"
