"""agent_hook_io: reading a hook's event and printing what the agent tool expects."""

from __future__ import annotations

import json

from memgit.agents import hook_io as io


def test_read_event_takes_objects_only() -> None:
    assert io.read_event('{"prompt": "hi", "cwd": "/d"}') == {"prompt": "hi", "cwd": "/d"}
    assert io.read_event("not json") == {} and io.read_event("[1, 2]") == {}
    assert io.read_event("   ") == {}


def test_the_session_folder_is_the_events_cwd() -> None:
    assert io.hook_cwd({"cwd": "/e"}) == "/e"
    assert io.hook_cwd({}) is None and io.hook_cwd({"cwd": 3}) is None


def test_gemini_form_names_geminis_events_and_denies_with_a_decision() -> None:
    out = json.loads(io.context_output("prompt", "hits", "gemini"))
    assert out == {"hookSpecificOutput": {"hookEventName": "BeforeAgent",
                                          "additionalContext": "hits"}}
    text, on_stderr, code = io.deny_output("no", "gemini")
    assert json.loads(text) == {"decision": "deny", "reason": "no"}
    assert (on_stderr, code) == (False, 0)


def test_prompt_query_is_cut_and_needs_text() -> None:
    assert io.prompt_query({"prompt": "x" * 5000}, "") == "x" * io.PROMPT_CHARS
    assert io.prompt_query({}, "plain text prompt") == "plain text prompt"
    assert io.prompt_query({"prompt": "  "}, "") is None
    assert io.prompt_query({"prompt": 3}, "") is None


def test_context_output_in_both_forms() -> None:
    out = io.context_output("prompt", "memgit: a\n", "claude-code")
    assert json.loads(out) == {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                                      "additionalContext": "memgit: a\n"}}
    assert io.context_output("session-start", "a\nb\n", "text") == "a\nb\n"
    assert io.context_output("prompt", "", "claude-code") == ""


def test_prompt_context_escapes_control_characters() -> None:
    text = io.prompt_context([{"id": "m-01x", "text": "Ring\x07 \x1b[2J", "topic": "a.md",
                               "added": ""}])
    assert "\x07" not in text and "\x1b" not in text
    assert text.splitlines()[1] == "- Ring\\x07 \\x1b[2J [id: m-01x; a.md; added ?]"
    assert io.prompt_context([]) == ""


def test_deny_output_in_both_forms() -> None:
    text, on_stderr, code = io.deny_output("memgit: no", "claude-code")
    assert (on_stderr, code) == (False, 0)
    assert json.loads(text)["hookSpecificOutput"] == {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "memgit: no"}
    assert io.deny_output("memgit: no", "text") == ("memgit: no\n", True, 2)
