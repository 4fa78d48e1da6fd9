"""Adopting the memory people already keep: ``memgit import plan`` and ``apply``.

``build_plan(SOURCE, tool)`` reads a memory folder (Agent Memory Repo, Claude
Code auto-memory, Letta MemFS, OpenClaw workspace, Cline memory bank,
basic-memory notes, plain Markdown) or a mem0 JSON export into a Plan without
changing it; ``apply_plan(drive, plan)`` writes the plan's entries through the
writer as one commit with a receipt under ``imports/``. docs/import.md
describes the plan format; docs/compat.md what was measured on real folders.
"""

from __future__ import annotations

from .apply import ApplyResult, apply_plan
from .plan import Item, Plan, build_plan, load_plan, plan_from_dict
from .readers import TOOLS, detect

__all__ = ["TOOLS", "ApplyResult", "Item", "Plan", "apply_plan", "build_plan", "detect",
           "load_plan", "plan_from_dict"]
