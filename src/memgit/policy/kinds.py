"""Drive kinds: what a drive is for, and the policy defaults each kind sets (docs/shared.md).

``kind:`` in memgit.yaml is ``personal`` (the default), ``team``, ``project``, ``bot`` or
``swarm``. A kind only sets defaults: the parser applies ``kind`` first, so any key written
in memgit.yaml overrides the kind's value. A leaf: it imports nothing of memgit but errors,
since every path that reads a policy (pre-receive included) calls it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memgit.errors import PolicyFileError

DEFAULT_KIND = "personal"

# kind -> the Policy fields it sets (docs/shared.md, "Kinds", lists the same table)
KINDS: dict[str, Mapping[str, Any]] = {
    "personal": {},
    "team": {"require_source": True},
    "project": {"require_source": True},
    "bot": {"max_entries": 2000, "max_age_days": 365},
    "swarm": {"require_source": True, "max_entries": 5000, "max_age_days": 90},
}


def check_kind(value: Any, origin: str) -> Mapping[str, Any]:
    """``kind: NAME``: the kind and the defaults it sets (a PolicyFileError otherwise)."""
    if not isinstance(value, str) or value not in KINDS:
        raise PolicyFileError(f"{origin}: kind must be one of {', '.join(KINDS)}, not "
                              f"{str(value)[:40]!r}", "write kind: personal (the default), "
                              "team, project, bot or swarm")
    return {"kind": value, **KINDS[value]}


def check_require_source(value: Any, origin: str) -> Mapping[str, Any]:
    """``require_source: true|false``: every entry must carry a source naming its agent."""
    if not isinstance(value, bool):
        raise PolicyFileError(f"{origin}: require_source must be true or false",
                              "write require_source: true")
    return {"require_source": value}
