"""The agent bundles of plugins/ against the formats their tools document, and
memgit install-agent (real drives, real files, the real command line)."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import jsonschema
import pytest

from memgit import plugins
from memgit.agents import install as agents
from tests.conftest import ROOT, memgit

PLUGINS = ROOT / "plugins"
SCHEMAS = ROOT / "tests" / "data" / "agents" / "schemas"


def schema(name: str) -> dict:
    return json.loads((SCHEMAS / name).read_text())


def validate(data: object, name: str) -> None:
    jsonschema.validate(data, schema(name), format_checker=jsonschema.FormatChecker())


def load(path: Path) -> dict:
    return json.loads(path.read_text())


# --- the bundles as shipped --------------------------------------------------------------


def test_claude_code_manifest_follows_the_documented_format() -> None:
    manifest = load(PLUGINS / "claude-code" / ".claude-plugin" / "plugin.json")
    validate(manifest, "claude-plugin-manifest.schema.json")
    assert manifest["name"] == "memgit"


def test_the_manifest_schema_refuses_what_the_docs_forbid() -> None:
    manifest = load(PLUGINS / "claude-code" / ".claude-plugin" / "plugin.json")
    for broken in ({**manifest, "name": "Memgit Tools"}, {**manifest, "version": "one"},
                   {**manifest, "hooks": "../hooks.json"}, {"version": "1.0.0"}):
        with pytest.raises(jsonschema.ValidationError):
            validate(broken, "claude-plugin-manifest.schema.json")


def test_claude_code_hooks_and_mcp_follow_the_documented_formats() -> None:
    hooks = load(PLUGINS / "claude-code" / "hooks" / "hooks.json")
    validate(hooks, "claude-hooks.schema.json")
    assert set(hooks["hooks"]) == {"SessionStart", "UserPromptSubmit", "PreToolUse", "Stop",
                                   "PreCompact"}
    guard = hooks["hooks"]["PreToolUse"][0]
    assert set(guard["matcher"].split("|")) >= {"Write", "Edit", "MultiEdit", "Bash"}
    mcp = load(PLUGINS / "claude-code" / ".mcp.json")
    validate(mcp, "claude-mcp.schema.json")
    assert mcp["mcpServers"]["memgit"]["command"] == "memgit"
    assert mcp["mcpServers"]["memgit"]["args"][-1] == "mcp"


def test_every_hook_command_runs_a_script_of_the_plugin() -> None:
    hooks = load(PLUGINS / "claude-code" / "hooks" / "hooks.json")["hooks"]
    events = set()
    for groups in hooks.values():
        for group in groups:
            for hook in group["hooks"]:
                assert hook["command"].startswith(agents.PLUGIN_ROOT_SCRIPT + " ")
                events.add(hook["command"].split()[1])
    assert events == {"session-start", "prompt", "guard", "record"}
    script = PLUGINS / "claude-code" / "hooks" / agents.HOOK_SCRIPT
    assert os.access(script, os.X_OK)


def test_the_claude_code_and_shell_scripts_are_the_same_file() -> None:
    claude = PLUGINS / "claude-code" / "hooks" / agents.HOOK_SCRIPT
    shell = PLUGINS / "shell" / agents.HOOK_SCRIPT
    assert claude.read_bytes() == shell.read_bytes()
    gemini = PLUGINS / "gemini" / "hooks" / agents.HOOK_SCRIPT
    assert gemini.read_bytes() == shell.read_bytes()
    assert os.access(shell, os.X_OK)


def test_codex_config_is_valid_toml_of_the_documented_shape() -> None:
    config = tomllib.loads((PLUGINS / "codex" / "config.toml").read_text())
    validate(config, "codex-mcp-servers.schema.json")
    assert config["mcp_servers"]["memgit"]["args"][-1] == "mcp"
    snippet = (PLUGINS / "codex" / "AGENTS.md").read_text()
    assert snippet.startswith(agents.AGENTS_BEGIN)
    assert snippet.rstrip().endswith(agents.AGENTS_END)


def test_every_bundle_has_a_readme() -> None:
    for name in ("claude-code", "codex", "gemini", "shell"):
        readme = PLUGINS / name / "README.md"
        assert readme.is_file() and "memgit" in readme.read_text()


def test_the_package_ships_the_bundles() -> None:
    for name in ("claude-code", "codex", "gemini", "shell"):
        assert agents.bundle_dir(name).resolve() == (PLUGINS / name).resolve()


# --- the built-in agent plugins ----------------------------------------------------------


def test_agent_integrations_load_through_the_plugin_seam() -> None:
    assert {"claude-code", "codex", "gemini", "shell"} <= set(plugins.available("agent"))
    for name in ("claude-code", "codex", "gemini", "shell"):
        integration = plugins.load("agent", name)
        assert isinstance(integration, plugins.AgentIntegration)
        assert integration.name == name


def test_install_claude_code_merges_with_what_the_project_has(new_drive, tmp_path: Path) -> None:
    drive = new_drive({"people.md": "# People\n"})
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    (project / ".mcp.json").write_text(json.dumps(
        {"mcpServers": {"other": {"command": "other-server"}}}))
    user_hook = {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}
    (project / ".claude" / "settings.json").write_text(json.dumps(
        {"model": "opus", "hooks": {"PreToolUse": [user_hook]}}))
    for _ in range(2):  # installing twice changes nothing the second time
        proc = memgit("-C", str(drive), "install-agent", "claude-code", "--project",
                      str(project))
        assert proc.returncode == 0, proc.stderr.decode()
    mcp = load(project / ".mcp.json")
    validate(mcp, "claude-mcp.schema.json")
    assert mcp["mcpServers"]["other"] == {"command": "other-server"}
    assert mcp["mcpServers"]["memgit"] == {"command": "memgit",
                                           "args": ["-C", str(drive), "mcp"]}
    settings = load(project / ".claude" / "settings.json")
    validate({"hooks": settings["hooks"]}, "claude-hooks.schema.json")
    assert settings["model"] == "opus"
    assert settings["hooks"]["PreToolUse"][0] == user_hook
    assert len(settings["hooks"]["PreToolUse"]) == 2
    assert len(settings["hooks"]["SessionStart"]) == 1
    command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert command.startswith(f"MEMGIT_DRIVE={drive} ")
    assert os.access(project / ".claude" / "hooks" / agents.HOOK_SCRIPT, os.X_OK)


def test_install_codex_replaces_only_its_own_table_and_block(new_drive, tmp_path: Path) -> None:
    drive = new_drive({"people.md": "# People\n"})
    project = tmp_path / "project"
    (project / ".codex").mkdir(parents=True)
    (project / ".codex" / "config.toml").write_text(
        'model = "o3"\n\n[mcp_servers.memgit]\ncommand = "old"\n\n'
        '[mcp_servers.docs]\ncommand = "docs-server"\n')
    (project / "AGENTS.md").write_text("# Project rules\n\nRun the tests.\n")
    for _ in range(2):
        proc = memgit("-C", str(drive), "install-agent", "codex", "--project", str(project))
        assert proc.returncode == 0, proc.stderr.decode()
    config = tomllib.loads((project / ".codex" / "config.toml").read_text())
    validate(config, "codex-mcp-servers.schema.json")
    assert config["model"] == "o3"
    assert config["mcp_servers"]["docs"] == {"command": "docs-server"}
    assert config["mcp_servers"]["memgit"]["args"] == ["-C", str(drive), "mcp"]
    text = (project / "AGENTS.md").read_text()
    assert text.startswith("# Project rules\n\nRun the tests.\n")
    assert text.count(agents.AGENTS_BEGIN) == 1 and "`remember`" in text


def test_install_shell_copies_the_script(new_drive, tmp_path: Path) -> None:
    drive = new_drive({"people.md": "# People\n"})
    mistyped = tmp_path / "p"
    proc = memgit("-C", str(drive), "install-agent", "shell", "--project", str(mistyped))
    assert proc.returncode == 2 and b"does not exist" in proc.stderr and not mistyped.exists()
    mistyped.mkdir()
    proc = memgit("-C", str(drive), "install-agent", "shell", "--project", str(tmp_path / "p"))
    assert proc.returncode == 0, proc.stderr.decode()
    script = tmp_path / "p" / ".memgit" / "hooks" / agents.HOOK_SCRIPT
    assert script.read_bytes() == (PLUGINS / "shell" / agents.HOOK_SCRIPT).read_bytes()
    assert os.access(script, os.X_OK)


def test_install_refuses_an_unknown_agent_and_a_broken_settings_file(new_drive,
                                                                     tmp_path: Path) -> None:
    drive = new_drive({"people.md": "# People\n"})
    proc = memgit("-C", str(drive), "install-agent", "cursorx", "--project", str(tmp_path))
    assert proc.returncode == 2
    assert b"MG012" in proc.stderr and b"claude-code" in proc.stderr
    assert b"memgit: error MG012: " in proc.stderr
    (tmp_path / ".mcp.json").write_text("{not json")
    proc = memgit("-C", str(drive), "install-agent", "claude-code", "--project", str(tmp_path))
    assert proc.returncode == 2 and b"not valid JSON" in proc.stderr
    assert b"memgit: error MG001: " in proc.stderr, proc.stderr
    assert (tmp_path / ".mcp.json").read_text() == "{not json"


def test_toml_table_replacement_keeps_the_rest() -> None:
    table = '[mcp_servers.memgit]\ncommand = "memgit"\n'
    assert agents.replace_toml_table("", "[mcp_servers.memgit]", table) == table
    text = 'a = 1\n[mcp_servers.memgit]\ncommand = "x"\nargs = []\n[b]\nc = 2\n'
    out = agents.replace_toml_table(text, "[mcp_servers.memgit]", table)
    assert tomllib.loads(out) == {"a": 1, "mcp_servers": {"memgit": {"command": "memgit"}},
                                  "b": {"c": 2}}
