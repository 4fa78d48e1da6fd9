"""What an agent hook reads and prints: the event JSON in, the tool's hook JSON out.

Both paths of ``memgit agent-hook`` use it, the quick one (no click, no pygit2) included,
so it imports the standard library only.
"""

from __future__ import annotations

import json

from memgit.safe_text import printable

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads it so)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

EVENTS = ("session-start", "prompt", "guard", "record")
QUICK_EVENTS = ("session-start", "prompt", "guard")  # the events fast_cli answers
CLAUDE_EVENT_NAMES = {"session-start": "SessionStart", "prompt": "UserPromptSubmit",
                      "guard": "PreToolUse"}
GEMINI_EVENT_NAMES = {"session-start": "SessionStart", "prompt": "BeforeAgent",
                      "guard": "BeforeTool"}
JSON_FORMS = ("claude-code", "gemini")  # the forms that print the tool's hook JSON
PROMPT_CHARS = 1000  # of a prompt used as the recall query


def read_event(raw: str) -> dict[str, Any]:
    """The hook input object; ``{}`` for empty or non-object input."""
    try:
        data = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def hook_cwd(data: Mapping[str, Any]) -> str | None:
    """The session's folder the event names (None: the hook's own folder); the drive is
    chosen from it when none is named (drives.choose)."""
    cwd = data.get("cwd")
    return cwd if isinstance(cwd, str) and cwd else None


def prompt_query(data: Mapping[str, Any], raw: str) -> str | None:
    """The recall query for a prompt event (its first PROMPT_CHARS characters); in text
    form the prompt may come as plain text. None when there is no prompt."""
    prompt = data.get("prompt") if data else raw
    if not isinstance(prompt, str) or not prompt.strip():
        return None
    return prompt[:PROMPT_CHARS]


def claude_context(event: str, text: str, form: str = "claude-code") -> dict[str, Any]:
    """Added context as Claude Code (and Codex) or Gemini CLI read it: the same
    ``hookSpecificOutput.additionalContext``, under each tool's name of the event."""
    names = GEMINI_EVENT_NAMES if form == "gemini" else CLAUDE_EVENT_NAMES
    return {"hookSpecificOutput": {"hookEventName": names[event],
                                   "additionalContext": text}}


def claude_deny(reason: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                   "permissionDecision": "deny",
                                   "permissionDecisionReason": reason}}


def context_output(event: str, text: str, form: str) -> str:
    """What the hook prints for added context ``text`` in ``form`` ('' for none)."""
    if not text:
        return ""
    body = json.dumps(claude_context(event, text, form)) if form in JSON_FORMS \
        else text.rstrip("\n")
    return body + "\n"


def deny_output(reason: str, form: str) -> tuple[str, bool, int]:
    """(what to print, whether on stderr, exit status) for a tool call the guard refuses:
    Claude Code's (and Codex's) deny JSON or Gemini CLI's (``decision: deny``, which it
    sends the model as the tool's error) on stdout and 0, or in text form the reason on
    stderr and 2."""
    if form == "claude-code":
        return json.dumps(claude_deny(reason)) + "\n", False, 0
    if form == "gemini":
        return json.dumps({"decision": "deny", "reason": reason}) + "\n", False, 0
    return reason + "\n", True, 2


def prompt_context(hits: list[Mapping[str, Any]]) -> str:
    """The added context for a prompt's recall hits ('' when there are none); entry text
    with control or invisible characters shows them escaped (safe_text.printable)."""
    if not hits:
        return ""
    lines = ["memgit: entries of the memory drive that may bear on this prompt "
             "(cite by id; change only through memgit):"]
    lines += [f"- {printable(h['text'])} [id: {h['id']}; {printable(h['topic'])}; "
              f"added {h['added'] or '?'}]" for h in hits]
    return "\n".join(lines) + "\n"
