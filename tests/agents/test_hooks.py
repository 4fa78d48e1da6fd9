"""Agent hooks: the guard's decisions, and the hook script run with the JSON Claude Code
sends on stdin (tests/data/agents/claude-code/, origins in its README) against a real drive."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memgit.agents.hooks import (
    DrivePaths,
    command_reason,
    find_drive_paths,
    guard_reason,
    observe_argv,
    turn_text,
)
from tests.conftest import ROOT, git

SAMPLES = ROOT / "tests" / "data" / "agents" / "claude-code"
SCRIPT = ROOT / "plugins" / "claude-code" / "hooks" / "memgit-hook.sh"
FACTS = {"people.md": "# People\n\n- Joe leads the product team [source: https://example.com/s/1; "
                      "added: 2026-01-05; id: m-01jd3xk8q7c9v2n4r6t8w0y1z3]\n",
         "projects/payments.md": "# Payments\n\n- The payments launch is on 2026-03-01 [source: "
                                 "https://example.com/s/2; added: 2026-01-06; "
                                 "id: m-01jd3xk8q7c9v2n4r6t8w0y1z4]\n"}


def sample(name: str, **values: str) -> dict:
    text = (SAMPLES / f"{name}.json").read_text()
    for key, value in values.items():
        text = text.replace(f'"{key}"', json.dumps(value))
    return json.loads(text)


@pytest.fixture
def drive(new_drive) -> Path:
    return new_drive(FACTS)


@pytest.fixture
def paths(drive: Path) -> DrivePaths:
    found = find_drive_paths(str(drive))
    assert found is not None
    return found


# --- the guard's decisions -------------------------------------------------------------------


def test_find_drive_paths_needs_memory_md(drive: Path, tmp_path: Path) -> None:
    found = find_drive_paths(str(drive / "projects"))
    assert found == DrivePaths(drive.resolve(), (drive / ".git").resolve())
    code = tmp_path / "code"
    code.mkdir()
    git("init", "-q", cwd=code)
    assert find_drive_paths(str(code)) is None
    assert find_drive_paths(str(tmp_path / "missing")) is None


@pytest.mark.parametrize("tool", ["pre-tool-use-write", "pre-tool-use-edit",
                                  "pre-tool-use-multiedit"])
def test_file_tools_on_drive_files_are_refused(tool: str, drive: Path, paths: DrivePaths,
                                               tmp_path: Path) -> None:
    inside = sample(tool, CWD=str(tmp_path), FILE=str(drive / "people.md"))
    reason = guard_reason(inside, paths)
    assert reason is not None and "remember" in reason
    relative = sample(tool, CWD=str(drive), FILE="projects/payments.md")
    assert guard_reason(relative, paths) is not None
    git_file = sample(tool, CWD=str(tmp_path), FILE=str(drive / ".git" / "config"))
    assert guard_reason(git_file, paths) is not None
    outside = sample(tool, CWD=str(drive), FILE=str(tmp_path / "notes.md"))
    assert guard_reason(outside, paths) is None


def test_a_symlink_into_the_drive_is_followed(drive: Path, paths: DrivePaths,
                                             tmp_path: Path) -> None:
    link = tmp_path / "shortcut"
    link.symlink_to(drive)
    event = sample("pre-tool-use-write", CWD=str(tmp_path), FILE=str(link / "people.md"))
    assert guard_reason(event, paths) is not None


@pytest.mark.parametrize("command", [
    "echo 'Joe leads design' >> {d}/people.md",
    "cd {d} && printf x > notes.md",
    "cd {d}\nsed -i 's/product/design/' people.md",
    "cp /tmp/x.md {d}/notes.md",
    "mv {d}/people.md /tmp/",
    "rm -rf {d}/projects",
    "git -C {d} commit -am 'quick fix'",
    "cd {d} && git add -A && git commit -m x",
    "tee -a {d}/people.md < /tmp/x",
    "FOO=1 sudo touch {d}/new.md",
    "dd if=/dev/zero of={d}/people.md count=1",
])
def test_shell_writes_into_the_drive_are_refused(command: str, drive: Path,
                                                 paths: DrivePaths, tmp_path: Path) -> None:
    assert command_reason(command.format(d=drive), tmp_path, paths) is not None


@pytest.mark.parametrize("command", [
    "cat {d}/people.md",
    "grep -ri launch {d}",
    "git -C {d} log --oneline",
    "cd {d} && git status && git diff",
    "cp {d}/people.md /tmp/copy.md",
    "memgit -C {d} remember 'Joe leads design' --topic people",
    "echo hello > /tmp/out.txt",
    "sed 's/a/b/' {d}/people.md > /tmp/out.md",
    "ls {d} 2>/dev/null",
    "echo 'unbalanced",
])
def test_reads_and_memgit_commands_are_allowed(command: str, drive: Path, paths: DrivePaths,
                                               tmp_path: Path) -> None:
    assert command_reason(command.format(d=drive), tmp_path, paths) is None


def test_other_tools_and_odd_input_are_allowed(paths: DrivePaths) -> None:
    assert guard_reason({"tool_name": "Read", "tool_input": {"file_path": "/x"}}, paths) is None
    assert guard_reason({"tool_name": "Write", "tool_input": "nonsense"}, paths) is None
    assert guard_reason({}, paths) is None


def test_turn_text_reads_the_event_or_the_transcript(tmp_path: Path) -> None:
    assert turn_text(sample("stop", CWD=".", TRANSCRIPT="/none")).startswith("The payments")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(json.dumps(x) for x in [
        {"type": "user", "message": {"role": "user", "content": "hi"}},
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "Launch moved to March."}]}},
        {"type": "user", "message": {"role": "user", "content": "ok"}}]) + "\n")
    event = sample("pre-compact", CWD=".", TRANSCRIPT=str(transcript))
    assert turn_text(event) == "Launch moved to March."
    assert observe_argv(event, "/d") == ["-C", "/d", "observe", "--session",
                                         "0f3c5a52-8f0e-4d7a-9d31-4b2f7f0d9a11", "--role",
                                         "assistant", "-"]
    assert "--session" not in observe_argv({"session_id": "bad id; rm -rf /"}, None)


# --- the hook script, as Claude Code runs it ---------------------------------------------------


def run_hook(event: str, payload: dict | str, *args: str, drive: Path | None = None,
             path: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"),
               PATH=path if path is not None else
               f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    env.pop("MEMGIT_DRIVE", None)
    if drive is not None:
        env["MEMGIT_DRIVE"] = str(drive)
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run([str(SCRIPT), event, *args], input=data.encode(), env=env,
                          capture_output=True, timeout=120)


def test_session_start_adds_the_context_packet(drive: Path, tmp_path: Path) -> None:
    proc = run_hook("session-start", sample("session-start", CWD=str(tmp_path),
                                            TRANSCRIPT="/none"),
                    "--format", "claude-code", "--budget", "400", drive=drive)
    assert proc.returncode == 0, proc.stderr.decode()
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart"
    assert "m-01jd3xk8q7c9v2n4r6t8w0y1z3" in out["additionalContext"]
    assert "[[people]]" in out["additionalContext"]


def test_prompt_adds_recall_hits_and_nothing_without_a_match(drive: Path) -> None:
    event = sample("user-prompt-submit", CWD=str(drive), TRANSCRIPT="/none")
    proc = run_hook("prompt", event, "--format", "claude-code")  # the drive from cwd
    assert proc.returncode == 0, proc.stderr.decode()
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    assert "m-01jd3xk8q7c9v2n4r6t8w0y1z4" in out["additionalContext"]
    event["prompt"] = "zebra quantum"
    proc = run_hook("prompt", event, "--format", "claude-code")
    assert proc.returncode == 0 and proc.stdout == b""
    assert proc.stderr == b""  # no match, not a hook that failed quietly (MG002 and the like)
    text = run_hook("prompt", "who leads the product team", "--format", "text", drive=drive)
    assert text.returncode == 0 and b"Joe leads the product team" in text.stdout


def test_guard_denies_in_claude_codes_format_and_allows_elsewhere(drive: Path,
                                                                  tmp_path: Path) -> None:
    write = sample("pre-tool-use-write", CWD=str(tmp_path), FILE=str(drive / "people.md"))
    proc = run_hook("guard", write, "--format", "claude-code", drive=drive)
    assert proc.returncode == 0, proc.stderr.decode()
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and "memgit" in out["permissionDecisionReason"]
    bash = sample("pre-tool-use-bash", CWD=str(tmp_path),
                  COMMAND=f"echo hi >> {drive}/people.md")
    denied = run_hook("guard", bash, "--format", "claude-code", drive=drive)
    assert denied.returncode == 0, denied.stderr.decode()
    assert json.loads(denied.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    text = run_hook("guard", bash, "--format", "text", drive=drive)
    assert text.returncode == 2 and b"memory drive" in text.stderr
    elsewhere = sample("pre-tool-use-write", CWD=str(tmp_path), FILE=str(tmp_path / "a.md"))
    proc = run_hook("guard", elsewhere, "--format", "claude-code", drive=drive)
    assert proc.returncode == 0 and proc.stdout == b""
    assert proc.stderr == b""  # allowed, not a guard that could not run
    assert (drive / "people.md").read_text() == FACTS["people.md"]


def test_record_keeps_the_turn_with_memgit_observe_outside_the_tree(drive: Path) -> None:
    from memgit import state
    from memgit.state import observations

    stop = sample("stop", CWD=str(drive), TRANSCRIPT="/none")
    head = git("rev-parse", "HEAD", cwd=drive).stdout
    dry = run_hook("record", stop, "--dry-run", drive=drive)
    assert dry.returncode == 0, dry.stderr.decode()
    plan = json.loads(dry.stdout)
    assert plan["argv"][-3:] == ["--role", "assistant", "-"]
    with state.opened(drive / ".git") as conn:
        assert observations.count(conn) == 0  # a dry run records nothing
    proc = run_hook("record", stop, "--format", "claude-code", drive=drive)
    assert proc.returncode == 0 and proc.stdout == b""
    assert git("rev-parse", "HEAD", cwd=drive).stdout == head  # nothing committed
    with state.opened(drive / ".git") as conn:
        assert observations.count(conn) == 1


def test_hooks_never_fail_the_session(tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    git("init", "-q", cwd=code)
    event = sample("session-start", CWD=str(code), TRANSCRIPT="/none")
    proc = run_hook("session-start", event, "--format", "claude-code", drive=code)
    assert proc.returncode == 0 and proc.stdout == b""  # MEMGIT_DRIVE names no drive
    assert b"MG002" in proc.stderr
    no_memgit = run_hook("session-start", event, path="/nonexistent")
    assert no_memgit.returncode == 0 and no_memgit.stdout == b""
    garbage = run_hook("guard", "{{{", "--format", "claude-code")
    assert garbage.returncode == 0 and garbage.stdout == b""
