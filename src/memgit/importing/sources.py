"""Agent instruction files: which files of a folder are a tool's memory, and what their
front matter says.

Cursor, Windsurf, GitHub Copilot, Gemini CLI and AGENTS.md keep what an agent should
remember as rule or instruction files inside a project:

| tool | its files |
|---|---|
| ``cursor`` | ``.cursorrules``, ``.cursor/rules/**/*.mdc`` (and ``.md``), any ``*.mdc`` |
| ``windsurf`` | ``.windsurfrules``, ``.windsurf/rules/**/*.md``, ``global_rules.md`` |
| ``copilot`` | ``.github/copilot-instructions.md``, ``.github/instructions/**``, |
|  | any ``*.instructions.md`` |
| ``gemini`` | every ``GEMINI.md`` (the hierarchy Gemini CLI loads) |
| ``agents`` | every ``AGENTS.md`` |

In a project (the folder holds the tool's dotted folder or rules file: ``.cursor/``,
``.cursorrules``, ``.windsurf/``, ``.windsurfrules``, ``.github/``) only those files are
read, so a project's README and docs do not become memory; a folder of rules alone (a
rule collection, Windsurf's ``memories`` folder) is read whole. ``gemini`` and ``agents``
read their files only, always. The files left unread are counted in the plan.

``.mdc``, ``.cursorrules`` and ``.windsurfrules`` are Markdown. Front matter saying where a
rule applies (Cursor ``globs``, Copilot ``applyTo``, Windsurf ``globs``) is kept on every
entry of the file as ``applies-to``. A Gemini CLI line ``@path/to/file.md`` imports
another file into the context: structure (that file is read on its own when it is in
the folder).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

INSTRUCTION_TOOLS = ("cursor", "windsurf", "copilot", "gemini", "agents")
MARKDOWN_NAMES = (".cursorrules", ".windsurfrules")
_FILES = {
    "cursor": re.compile(r"(?:.*/)?\.cursorrules\Z|(?:.*/)?\.cursor/rules/.+\.mdc?\Z|.+\.mdc\Z"),
    "windsurf": re.compile(r"(?:.*/)?\.windsurfrules\Z|(?:.*/)?\.windsurf/rules/.+\.md\Z"
                           r"|(?:.*/)?global_rules\.md\Z"),
    "copilot": re.compile(r"(?:.*/)?\.github/copilot-instructions\.md\Z"
                          r"|(?:.*/)?\.github/instructions/.+\.md\Z|.+\.instructions\.md\Z"),
    "gemini": re.compile(r"(?:.*/)?GEMINI\.md\Z"),
    "agents": re.compile(r"(?:.*/)?AGENTS\.md\Z"),
}
# a folder holding one of these is a project: only the tool's own files are its memory
_PROJECT_MARKS = {
    "cursor": (".cursor/", ".cursorrules"),
    "windsurf": (".windsurf/", ".windsurfrules"),
    "copilot": (".github/",),
}
_APPLIES_KEYS = {"cursor": ("globs",), "windsurf": ("globs",), "copilot": ("applyTo",)}
_IMPORT_RE = re.compile(r"@(?:\./|\.\./|~/|/)?[\w.-]+(?:/[\w.-]+)*\Z")
_VALUE_TABLE = str.maketrans({";": ",", "[": "(", "]": ")"})


def is_tool_file(tool: str, rel: str) -> bool:
    """Whether ``rel`` (a posix path inside the source) is one of ``tool``'s own files."""
    pattern = _FILES.get(tool)
    return pattern is not None and pattern.fullmatch(rel) is not None


def is_project(tool: str, rels: Iterable[str]) -> bool:
    """Whether the folder is a project holding ``tool``'s files (only those are read)."""
    if tool in ("gemini", "agents"):
        return True
    marks = _PROJECT_MARKS.get(tool, ())
    return any(rel == mark or rel.startswith(mark) or f"/{mark}" in f"/{rel}"
               for rel in rels for mark in marks)


def select(tool: str, rels: list[str]) -> tuple[list[str], list[str]]:
    """(the files read, the files left unread) of a folder for ``tool``."""
    if tool not in INSTRUCTION_TOOLS:
        return rels, []
    if is_project(tool, rels):
        read = [rel for rel in rels if is_tool_file(tool, rel)]
    else:
        read = [rel for rel in rels if is_markdown_name(rel)]
    chosen = set(read)
    return read, [rel for rel in rels if rel not in chosen]


def is_markdown_name(rel: str) -> bool:
    """Markdown by its name: ``.md``, ``.markdown``, ``.mdc``, ``.cursorrules``,
    ``.windsurfrules``."""
    name = rel.rsplit("/", 1)[-1]
    return name.endswith((".md", ".markdown", ".mdc")) or name in MARKDOWN_NAMES


def applies_to(tool: str, meta: dict[str, Any]) -> str:
    """Where a rule file says it applies (its globs), as a metadata value; "" if nowhere."""
    for key in _APPLIES_KEYS.get(tool, ()):
        value = meta.get(key)
        if isinstance(value, list):
            value = ", ".join(str(v) for v in value if v not in (None, ""))
        if isinstance(value, str) and value.strip():
            return " ".join(value.translate(_VALUE_TABLE).split())
    return ""


def is_import_line(text: str) -> bool:
    """A Gemini CLI import (``@docs/style.md``): the paragraph is only a file reference."""
    parts = text.split()
    return bool(parts) and all(_IMPORT_RE.fullmatch(part) and ("." in part or "/" in part[1:])
                               for part in parts)
