"""memgit installed the way each agent tool installs things, checked with the tool's own CLI
(from npm, pinned by .ci/install-npm-deps.sh) in a clean home folder: Claude Code's
marketplace and plugin, Gemini CLI's extension, Codex's plugin and project config. None of
these commands needs an API key. The hooks each tool would run are run with the JSON the
tool sends on stdin (Gemini CLI: docs/hooks/reference.md of google-gemini/gemini-cli at
5411f113; Codex: codex-rs/hooks/schema/generated/*.input.schema.json of openai/codex).

Skipped only where npm itself is missing; with npm, a missing tool is a failure that says
how to install it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, git

pytestmark = pytest.mark.slow

TOOLS = Path(os.environ.get("MEMGIT_NPM_TOOLS") or ROOT / ".npm-tools") / "node_modules" / ".bin"


def tool(name: str) -> str:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed (bash .ci/install-npm-deps.sh installs it)")
    exe = TOOLS / name
    assert exe.is_file(), f"{exe} is missing: run bash .ci/install-npm-deps.sh"
    return str(exe)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clean home folder: HOME and the XDG folders in it, memgit first on PATH."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var, sub in (("XDG_DATA_HOME", ".local/share"), ("XDG_CONFIG_HOME", ".config"),
                     ("XDG_CACHE_HOME", ".cache"), ("XDG_STATE_HOME", ".local/state")):
        monkeypatch.setenv(var, str(home / sub))
    for var in ("MEMGIT_DRIVE", "CODEX_HOME", "GEMINI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A code project: a git repository that is not a drive."""
    code = tmp_path / "project"
    code.mkdir()
    git("init", "-q", cwd=code)
    (code / "app.py").write_text("print('hi')\n")
    return code


def run(*argv: str, cwd: Path, stdin: str = "", timeout: int = 240) -> str:
    """Run a tool's CLI; it must exit 0. Its stdout and stderr together."""
    proc = subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True, text=True,
                          timeout=timeout)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, (argv, out[-3000:])
    return out


def personal(home: Path) -> Path:
    return home / ".local" / "share" / "memgit" / "drive"


def remember(text: str, cwd: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "memgit", "remember", text], cwd=cwd,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def hook(command: str, event: dict, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    """Run a hook command line as the tools do (``sh -c``) with the event on stdin."""
    return subprocess.run(["sh", "-c", command], input=json.dumps(event), cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def commands(hooks_file: Path) -> dict[str, str]:
    data = json.loads(hooks_file.read_text())["hooks"]
    return {event: groups[0]["hooks"][0]["command"] for event, groups in data.items()}


# --- Claude Code --------------------------------------------------------------------------


def test_claude_code_installs_from_the_marketplace_and_serves_the_default_drive(
        home: Path, project: Path) -> None:
    claude = tool("claude")
    assert "Validation passed" in run(claude, "plugin", "validate", str(ROOT), cwd=project)
    assert "memgit" in run(claude, "plugin", "marketplace", "add", str(ROOT), cwd=project)
    out = run(claude, "plugin", "install", "memgit@memgit", cwd=project)
    assert "Successfully installed plugin: memgit@memgit" in out
    assert "memgit@memgit" in run(claude, "plugin", "list", cwd=project)
    details = run(claude, "plugin", "details", "memgit@memgit", cwd=project)
    assert "Hooks (5)" in details and "MCP servers (1)" in details
    for event in ("SessionStart", "UserPromptSubmit", "PreToolUse", "Stop", "PreCompact"):
        assert event in details
    listed = run(claude, "mcp", "list", cwd=project)
    line = next(x for x in listed.splitlines() if "memgit" in x)
    assert "Connected" in line, listed
    assert (personal(home) / "MEMORY.md").is_file()  # the server made the personal drive


# --- Gemini CLI ---------------------------------------------------------------------------


def test_gemini_extension_installs_and_its_hooks_use_the_default_drive(
        home: Path, project: Path) -> None:
    gemini = tool("gemini")
    extension = ROOT / "plugins" / "gemini"
    assert "successfully validated" in run(gemini, "extensions", "validate", str(extension),
                                           cwd=project)
    # the folder-trust question is answered on stdin, the extension's consent by --consent
    out = run(gemini, "extensions", "install", str(extension), "--consent", cwd=project,
              stdin="y\n")
    assert 'Extension "memgit" installed successfully' in out
    installed = home / ".gemini" / "extensions" / "memgit"
    listed = run(gemini, "extensions", "list", cwd=project)
    assert "memgit (0.1.0)" in listed and str(installed / "GEMINI.md") in listed
    servers = run(gemini, "mcp", "list", cwd=project)
    line = next(x for x in servers.splitlines() if "memgit" in x)
    assert "Connected" in line, servers
    assert (personal(home) / "MEMORY.md").is_file()

    remember("The payments launch is on 2026-03-01", project.parent)  # outside git
    hooks = {e: c.replace("${extensionPath}", str(installed))
             for e, c in commands(installed / "hooks" / "hooks.json").items()}
    env = dict(os.environ, GEMINI_PROJECT_DIR=str(project), GEMINI_CWD=str(project))
    base = {"session_id": "s-1", "transcript_path": str(home / "t.json"),
            "cwd": str(project), "timestamp": "2026-12-04T05:00:00.000Z"}
    start = hook(hooks["SessionStart"], {**base, "hook_event_name": "SessionStart",
                                         "source": "startup"}, env, project)
    added = json.loads(start.stdout)["hookSpecificOutput"]
    assert added["hookEventName"] == "SessionStart" and "payments launch" in added[
        "additionalContext"]
    prompt = hook(hooks["BeforeAgent"], {**base, "hook_event_name": "BeforeAgent",
                                         "prompt": "when is the payments launch?"}, env, project)
    assert "2026-03-01" in json.loads(prompt.stdout)["hookSpecificOutput"]["additionalContext"]
    target = personal(home) / "notes.md"
    denied = hook(hooks["BeforeTool"], {**base, "hook_event_name": "BeforeTool",
                                        "tool_name": "write_file",
                                        "tool_input": {"file_path": str(target),
                                                       "content": "x"}}, env, project)
    verdict = json.loads(denied.stdout)
    assert denied.returncode == 0 and verdict["decision"] == "deny"
    assert "memgit" in verdict["reason"]
    allowed = hook(hooks["BeforeTool"], {**base, "hook_event_name": "BeforeTool",
                                         "tool_name": "run_shell_command",
                                         "tool_input": {"command": "echo hi > app.txt"}},
                   env, project)
    assert allowed.returncode == 0 and allowed.stdout == ""
    after = hook(hooks["AfterAgent"], {**base, "hook_event_name": "AfterAgent",
                                       "prompt": "p", "prompt_response": "We ship Friday.",
                                       "stop_hook_active": False}, env, project)
    assert after.returncode == 0 and after.stdout == ""
    from memgit.state import observations, opened

    with opened(personal(home) / ".git") as conn:
        assert observations.count(conn) == 1


# --- Codex --------------------------------------------------------------------------------


def test_codex_installs_the_same_plugin_and_runs_its_hooks(home: Path, project: Path) -> None:
    codex = tool("codex")
    assert "memgit" in run(codex, "plugin", "marketplace", "add", str(ROOT), cwd=project)
    assert "Added plugin `memgit`" in run(codex, "plugin", "add", "memgit@memgit", cwd=project)
    listed = run(codex, "mcp", "list", cwd=project)
    line = next(x for x in listed.splitlines() if x.startswith("memgit"))
    assert "enabled" in line and " mcp " in line, listed
    root = next((home / ".codex" / "plugins" / "cache" / "memgit" / "memgit").iterdir())
    env = dict(os.environ, CLAUDE_PLUGIN_ROOT=str(root), PLUGIN_ROOT=str(root))
    remember("Ana owns billing", project.parent)
    hooks = commands(root / "hooks" / "hooks.json")
    base = {"session_id": "c-1", "transcript_path": None, "cwd": str(project),
            "model": "gpt-5", "permission_mode": "default"}
    start = hook(hooks["SessionStart"], {**base, "hook_event_name": "SessionStart",
                                         "source": "startup"}, env, project)
    assert "Ana owns billing" in json.loads(start.stdout)["hookSpecificOutput"][
        "additionalContext"]
    bash = {**base, "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_use_id": "t-1",
            "tool_input": {"command": f"echo x >> {personal(home) / 'notes.md'}"}}
    denied = json.loads(hook(hooks["PreToolUse"], bash, env, project).stdout)
    assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_codex_reads_install_agent_codex_in_a_trusted_project(
        home: Path, project: Path, new_drive) -> None:
    codex = tool("codex")
    drive = new_drive()
    proc = subprocess.run([sys.executable, "-m", "memgit", "-C", str(drive), "install-agent",
                           "codex", "--project", str(project)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[projects.{json.dumps(str(project))}]\ntrust_level = "trusted"\n')
    listed = run(codex, "mcp", "list", cwd=project)
    line = next(x for x in listed.splitlines() if x.startswith("memgit"))
    assert "enabled" in line and str(drive) in line, listed
    hooks = commands(project / ".codex" / "hooks.json")
    event = {"session_id": "c-2", "transcript_path": None, "cwd": str(project),
             "model": "gpt-5", "permission_mode": "default", "hook_event_name": "Stop",
             "stop_hook_active": False, "last_assistant_message": "Done: the tests pass."}
    stop = hook(hooks["Stop"], event, dict(os.environ), project)
    assert stop.returncode == 0 and stop.stdout == ""
    from memgit.state import observations, opened

    with opened(drive / ".git") as conn:
        assert observations.count(conn) == 1
