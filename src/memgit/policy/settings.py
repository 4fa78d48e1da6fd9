"""The drive policy's settings: the :class:`Policy` record, memgit.yaml as a table of keys
(:data:`SECTIONS`, each with its parser) and where a drive's policy is found.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from memgit.errors import PolicyFileError
from memgit.git import DEFAULT_BRANCH
from memgit.policy.kinds import check_kind, check_require_source

if TYPE_CHECKING:
    from memgit.policy.autonomy import Rule as AutonomyRule
    from memgit.policy.dream_settings import DreamConfig
    from memgit.policy.embedding_settings import EmbedConfig

PUSH_BYTES_FACTOR = 4  # the default limits.push_bytes: this many times drive_bytes


@dataclass(frozen=True)
class Policy:
    """What may land on a drive. Hashable: the writer and lint cache verdicts per policy.

    A limit is a field with ``metadata={"limit": ...}``: adding one is one line here
    (memgit.yaml's ``limits:`` accepts it at once, as a positive integer). A key of
    memgit.yaml is one row of :data:`SECTIONS`.
    """

    profile: str = "drive"
    branch: str = DEFAULT_BRANCH
    file_bytes: int = field(default=65536, metadata={"limit": "bytes per file"})
    drive_bytes: int = field(default=2 * 1024 * 1024,
                             metadata={"limit": "bytes per drive (blob sizes at a commit)"})
    files: int = field(default=256, metadata={"limit": "files per drive"})
    push_commits: int = field(default=200, metadata={"limit": "new commits per push"})
    memory_bytes: int = field(default=4096, metadata={"limit": "bytes of MEMORY.md (warning)"})
    path_bytes: int = field(default=255, metadata={"limit": "bytes per path"})
    push_bytes: int = field(default=0, metadata={"limit": "bytes of new content per push "
                                                 "(0: PUSH_BYTES_FACTOR x drive_bytes)"})
    # caps (0: none); memgit compact removes what exceeds them (docs/shared.md)
    max_entries: int = field(default=0, metadata={"limit": "entries in topic files (a cap)"})
    max_age_days: int = field(default=0, metadata={"limit": "days since an entry was added "
                                                   "(a cap)"})
    near_limit: float = 0.8
    protected: tuple[str, ...] = ("twin/",)
    # the forge's CI files a drive hosted on GitHub or GitLab must hold (docs/forges.md):
    # exempt from the file-type rules, and protected like `protected` (no push changes them)
    ci_files: tuple[str, ...] = (".github/", ".gitlab-ci.yml", ".gitlab/", ".memgit/")
    timezone: str = "UTC"
    extensions: tuple[str, ...] = (".md",)
    strict_drive_rules: bool = True  # False under profile amr
    deep_secrets: bool = False  # secrets: deep adds detect-secrets' own plugins
    secret_rules: tuple[Any, ...] = ()  # secrets: {extra_rules: [...]} (memgit.secrets.Rule)
    # (key, value) of memgit.yaml sections without a field of their own; see setting()
    settings: tuple[tuple[str, Any], ...] = ()
    kind: str = "personal"  # memgit.policy.kinds: a kind sets defaults of the keys below it
    require_source: bool = False  # every entry names its agent (MG109)

    @property
    def branch_ref(self) -> str:
        return "refs/heads/" + self.branch

    @property
    def push_limit(self) -> int:
        """Bytes of new content one push may bring (limits.push_bytes)."""
        return self.push_bytes or PUSH_BYTES_FACTOR * self.drive_bytes

    def setting(self, key: str, default: Any = None) -> Any:
        """The parsed value of memgit.yaml section ``key`` (one without a Policy field)."""
        return dict(self.settings).get(key, default)

    def embeddings(self) -> EmbedConfig | None:
        """The embedder of semantic recall (``embeddings:``); None when there is none."""
        config: EmbedConfig | None = self.setting("embeddings")
        return config

    def autonomy_rules(self) -> tuple[AutonomyRule, ...]:
        """The ``autonomy:`` rules (none: every write is direct), parsed by
        memgit.policy.autonomy; read here without importing it (pre-receive asks every push)."""
        found: tuple[AutonomyRule, ...] = self.setting("autonomy", ())
        return found

    def dream(self) -> DreamConfig:
        """memgit dream's settings (``dream:``), the defaults when the key is absent."""
        config: DreamConfig | None = self.setting("dream")
        if config is None:
            from memgit.policy.dream_settings import DreamConfig

            return DreamConfig()
        return config


LIMITS: tuple[str, ...] = tuple(f.name for f in fields(Policy) if "limit" in f.metadata)
CAPS = ("max_entries", "max_age_days")  # limits where 0 means none (a kind's default undone)

Parser = Callable[[Any, str], Mapping[str, Any]]
"""A section's parser: (its value in memgit.yaml, where the policy came from) -> the
Policy fields it sets (``{"settings": value}`` for a section without a field of its
own). Mistakes raise PolicyFileError naming the key and how to fix it."""


def frozen(value: Any) -> Any:
    """A parsed YAML value made hashable (mappings and lists become tuples), so a
    section's value can live in a Policy."""
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), frozen(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(frozen(v) for v in value)
    return value


def _profile(value: Any, origin: str) -> Mapping[str, Any]:
    if value not in ("drive", "amr"):
        raise PolicyFileError(f"{origin}: profile must be 'drive' or 'amr', not {value!r}",
                              "write profile: drive (the default) or profile: amr")
    if value == "amr":
        return {"profile": value, "extensions": (), "strict_drive_rules": False}
    return {"profile": value}


def _branch(value: Any, origin: str) -> Mapping[str, Any]:
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z0-9._/-]+", value) \
            or value.startswith("refs/"):
        raise PolicyFileError(f"{origin}: branch must be a branch name such as main",
                              "write branch: main")
    return {"branch": value}


def _limits(value: Any, origin: str) -> Mapping[str, Any]:
    value = value or {}
    if not isinstance(value, Mapping):
        raise PolicyFileError(f"{origin}: limits must be a mapping", "limits: {files: 256}")
    out: dict[str, int] = {}
    for key, number in value.items():
        if key not in LIMITS:
            raise PolicyFileError(f"{origin}: unknown limit {key!r}",
                                  f"allowed limits: {', '.join(sorted(LIMITS))}")
        if not isinstance(number, int) or isinstance(number, bool) or number < 0 \
                or (number == 0 and key not in CAPS):
            raise PolicyFileError(f"{origin}: limits.{key} must be a positive integer"
                                  + (" (0: no cap)" if key in CAPS else ""),
                                  f"for example limits: {{{key}: 100}}")
        out[key] = number
    return out


def _protected(value: Any, origin: str) -> Mapping[str, Any]:
    if not isinstance(value, list) or not all(isinstance(p, str) and p for p in value):
        raise PolicyFileError(f"{origin}: protected must be a list of path prefixes",
                              "protected: [twin/]")
    return {"protected": tuple(value)}


def _ci_files(value: Any, origin: str) -> Mapping[str, Any]:
    if not isinstance(value, list) or not all(isinstance(p, str) and p for p in value):
        raise PolicyFileError(f"{origin}: ci_files must be a list of path prefixes",
                              "ci_files: [.github/, .gitlab-ci.yml] (or [] for none)")
    return {"ci_files": tuple(value)}


def _extensions(value: Any, origin: str) -> Mapping[str, Any]:
    if not isinstance(value, list) or not all(isinstance(e, str) and e.startswith(".")
                                               for e in value):
        raise PolicyFileError(f"{origin}: extensions must be a list like ['.md']",
                              "extensions: ['.md']")
    return {"extensions": tuple(value)}


def _near_limit(value: Any, origin: str) -> Mapping[str, Any]:
    if not isinstance(value, int | float) or not 0 < value <= 1:
        raise PolicyFileError(f"{origin}: near_limit must be a fraction in (0, 1]",
                              "near_limit: 0.8")
    return {"near_limit": float(value)}


def _secrets(value: Any, origin: str) -> Mapping[str, Any]:
    """``secrets: fast|deep`` or ``secrets: {mode: fast|deep, extra_rules: [...]}``."""
    hint = ("secrets: fast (memgit's rules) or deep (plus detect-secrets), or "
            "{mode: fast, extra_rules: [{id, kind, regex, keywords}]}")
    if isinstance(value, Mapping):
        unknown = set(value) - {"mode", "extra_rules"}
        if unknown:
            raise PolicyFileError(f"{origin}: unknown key(s) under secrets: "
                                  f"{', '.join(sorted(map(str, unknown)))}", hint)
        mode = value.get("mode", "fast")
        items = value.get("extra_rules", []) or []
    else:
        mode, items = value, []
    if mode not in ("fast", "deep"):
        raise PolicyFileError(f"{origin}: secrets must be 'fast' or 'deep', not {mode!r}", hint)
    if not items:
        return {"deep_secrets": mode == "deep", "secret_rules": ()}
    from memgit.secrets.rules import RuleError, extra_rules_from_config

    try:
        rules = extra_rules_from_config(items)
    except RuleError as exc:
        raise PolicyFileError(f"{origin}: secrets.extra_rules: {exc}",
                              "see docs/security.md, 'Extra rules'") from exc
    return {"deep_secrets": mode == "deep", "secret_rules": rules}


def _timezone(value: Any, origin: str) -> Mapping[str, Any]:
    if not isinstance(value, str):
        raise PolicyFileError(f"{origin}: timezone must be a name such as Europe/Berlin",
                              "timezone: UTC")
    try:
        import zoneinfo

        zoneinfo.ZoneInfo(value)
    except Exception as exc:
        raise PolicyFileError(f"{origin}: unknown timezone {value!r}",
                              "use an IANA name such as UTC or Europe/Berlin") from exc
    return {"timezone": value}


def _dream(value: Any, origin: str) -> Mapping[str, Any]:
    """``dream: {...}``: memgit dream's settings (docs/dream.md), kept as a DreamConfig."""
    from memgit.policy.dream_settings import check_section  # a leaf: imports errors only

    return {"settings": check_section(value, origin)}


def _embeddings(value: Any, origin: str) -> Mapping[str, Any]:
    """``embeddings: {plugin: ...}``: the embedder of semantic recall (docs/embeddings.md),
    kept as an EmbedConfig; no plugin is loaded here."""
    from memgit.policy.embedding_settings import check_section  # a leaf: imports errors only

    config = check_section(value, origin)
    return {"settings": config} if config is not None else {}


def _sync(value: Any, origin: str) -> Mapping[str, Any]:
    """``sync: {retry_seconds: N}``: how long memgit sync keeps retrying a push that
    loses races to other pushes (docs/sync.md; git config memgit.syncRetrySeconds wins)."""
    hint = "sync: {retry_seconds: 60}"
    if not isinstance(value, Mapping) or set(value) - {"retry_seconds"}:
        raise PolicyFileError(f"{origin}: sync must be a mapping with the key retry_seconds",
                              hint)
    seconds = value.get("retry_seconds", 60)
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not \
            0 <= seconds < float("inf"):
        raise PolicyFileError(f"{origin}: sync.retry_seconds must be a number of seconds "
                              "(0: do not retry)", hint)
    return {"settings": {"retry_seconds": float(seconds)}}


def _autonomy(value: Any, origin: str) -> Mapping[str, Any]:
    """``autonomy: [...]``: who may write what directly (memgit.policy.autonomy)."""
    from memgit.policy.autonomy import parse_rules

    return parse_rules(value, origin)


def _review(value: Any, origin: str) -> Mapping[str, Any]:
    from memgit.policy.autonomy import parse_review

    return parse_review(value, origin)


# Every key of memgit.yaml and its parser, applied in this order to the keys present
# (kind first: it sets defaults any other key overrides; then profile: amr sets defaults
# that extensions may override). Adding a key is one row here (and its parser); an
# absent key keeps the Policy default.
SECTIONS: dict[str, Parser] = {
    "kind": check_kind,
    "profile": _profile,
    "branch": _branch,
    "limits": _limits,
    "protected": _protected,
    "ci_files": _ci_files,
    "extensions": _extensions,
    "near_limit": _near_limit,
    "secrets": _secrets,
    "timezone": _timezone,
    "dream": _dream,
    "require_source": check_require_source,
    "embeddings": _embeddings,
    "sync": _sync,
    "autonomy": _autonomy,
    "review": _review,
}


def policy_from_mapping(data: Mapping[str, Any], origin: str = "policy") -> Policy:
    """Build a Policy from parsed YAML; every mistake is a PolicyFileError naming the key."""
    if not isinstance(data, Mapping):
        raise PolicyFileError(f"{origin}: the policy must be a mapping of keys to values",
                              "see docs/policy.md for the keys")
    unknown = set(data) - set(SECTIONS)
    if unknown:
        raise PolicyFileError(f"{origin}: unknown key(s): {', '.join(sorted(map(str, unknown)))}",
                              f"allowed keys: {', '.join(sorted(SECTIONS))}")
    kwargs: dict[str, Any] = {}
    settings: dict[str, Any] = {}
    for key, parse in SECTIONS.items():
        if key not in data:
            continue
        for name, value in parse(data[key], origin).items():
            if name == "settings":
                settings[key] = frozen(value)
            else:
                kwargs[name] = value
    if settings:
        kwargs["settings"] = tuple(sorted(settings.items()))
    return Policy(**kwargs)


def load_policy_file(path: str | Path) -> Policy:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyFileError(f"cannot read policy file {p}: {exc}",
                              "check the path and that the file is UTF-8 YAML") from exc
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise PolicyFileError(f"{p}: not valid YAML: {exc}".splitlines()[0],
                              "fix the YAML syntax") from exc
    return policy_from_mapping(data if data is not None else {}, str(p))


POLICY_KEY = "memgit.policy"  # the git config key that names a drive's policy file


class HasPolicy(Protocol):
    """A drive as the policy lookup needs it: pygit2's Drive, the quick path's Location."""

    @property
    def git_dir(self) -> Path | str: ...

    def config_value(self, key: str) -> str | None: ...


def today_in(policy: Policy) -> str:
    """Today's date in the drive's time zone (write.ops.today)."""
    import datetime
    import zoneinfo

    return datetime.datetime.now(zoneinfo.ZoneInfo(policy.timezone)).date().isoformat()


def drive_policy(drive: HasPolicy, explicit: str | Path | None = None) -> Policy:
    """The policy of ``drive``, the one way every command finds it: ``--policy FILE``
    (``explicit``), memgit.yaml in its git directory, the file its ``memgit.policy`` git
    config value names, else the defaults."""
    return find_policy(explicit, Path(drive.git_dir), drive.config_value(POLICY_KEY))


def find_policy(explicit: str | Path | None, git_dir: Path | None,
                config_value: str | None = None) -> Policy:
    """``--policy FILE``, then memgit.yaml in the git directory, then ``memgit.policy``."""
    path = policy_path(explicit, git_dir, config_value)
    return load_policy_file(path) if path is not None else Policy()


def policy_path(explicit: str | Path | None, git_dir: Path | None,
                config_value: str | None = None) -> Path | None:
    """The file :func:`find_policy` reads, in its order; None: the defaults."""
    if explicit:
        return Path(explicit)
    if git_dir is not None:
        candidate = git_dir / "memgit.yaml"
        if candidate.exists():
            return candidate
    if config_value:
        return Path(config_value)
    return None
