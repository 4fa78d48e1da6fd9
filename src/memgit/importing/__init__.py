"""Adopting the memory people already keep: ``memgit import plan`` and ``apply``.

Owns: ``readers``, ``sources`` and ``obsidian`` (one reader per memory tool, and
detecting which wrote a folder), ``markdown`` (what becomes of each block of a Markdown
file), ``items`` (the plan document), ``verdict`` (the one judgement plan and apply
share), ``layout`` (topic files split under the file limit), ``keep`` (reference files
and the receipt), ``report`` (what the commands print), ``plan`` (a folder or a mem0
export read into a plan, changing nothing), ``apply`` (a plan's entries written as one
commit with a receipt under ``imports/``). docs/import.md describes the plan.
May import: recall, write, policy, state, format, git and what is below them.
The names below load their module on first use, so importing one part (the readers, say)
does not load the writer.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {"TOOLS": "readers", "detect": "readers", "Item": "plan", "Plan": "plan",
            "build_plan": "plan", "load_plan": "plan", "plan_from_dict": "plan",
            "ApplyResult": "apply", "apply_plan": "apply"}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
