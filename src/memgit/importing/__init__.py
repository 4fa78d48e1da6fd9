"""Adopting the memory people already keep: ``memgit import plan`` and ``apply``.

``plan.build_plan(SOURCE, tool)`` reads a memory folder (Agent Memory Repo,
Claude Code auto-memory, Letta MemFS, OpenClaw workspace, Cline memory bank,
basic-memory notes, Cursor, Windsurf, Copilot, Gemini CLI and AGENTS.md
instruction files, an Obsidian vault, plain Markdown) or a mem0 JSON export into a
Plan without changing it, judged as apply will judge it; ``apply.apply_plan(drive,
plan)`` writes the plan's entries through the writer as one commit with a receipt
under ``imports/``. The parts: markdown.py (what each block becomes), readers.py,
sources.py, obsidian.py (each tool), items.py (the plan document), verdict.py (the
one judgement plan and apply share), layout.py (files under the limit), keep.py
(reference files, the receipt), report.py (what the commands print).
docs/import.md describes the plan format; docs/compat.md what was measured.

The names below load their module on first use, so that importing one part
(the readers, say) does not load the writer.
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
