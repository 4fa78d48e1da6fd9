"""memgit's own agent integrations: install a bundle of plugins/ into a project.

Each is an ``agent`` plugin whose ``install(project, drive)`` writes the tool's
configuration to run ``memgit mcp`` (and memgit's hooks) and returns the paths written.
Files shared with the user (``.mcp.json``, ``.claude/settings.json``, ...) are merged:
memgit's part replaced, everything else kept. The bundles are ``memgit.bundles``, the
repository's ``plugins/`` mapped by pyproject.toml.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from importlib.resources import files
from pathlib import Path
from typing import Any

from memgit.errors import UsageError

SERVER = "memgit"
HOOK_SCRIPT = "memgit-hook.sh"
PLUGIN_ROOT_SCRIPT = '"${CLAUDE_PLUGIN_ROOT}/hooks/memgit-hook.sh"'
GEMINI_ROOT_SCRIPT = '"${extensionPath}/hooks/memgit-hook.sh"'
AGENTS_BEGIN = "<!-- memgit:begin -->"
AGENTS_END = "<!-- memgit:end -->"


def bundle_dir(name: str) -> Path:
    """The folder of bundle ``name`` (claude-code, codex, shell)."""
    path = Path(str(files("memgit.bundles") / name))
    if not path.is_dir():
        raise UsageError(f"the {name} bundle is missing from this memgit installation",
                         "reinstall memgit; the bundles are in the repository's plugins/")
    return path


def _read_json(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path} is not valid JSON ({exc.msg} at line {exc.lineno})",
                         "fix or move the file, then install again") from exc
    if not isinstance(data, dict):
        raise UsageError(f"{path} does not hold a JSON object", "fix or move the file")
    return data


def _write_json(path: Path, data: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def mcp_entry(drive: Path) -> dict[str, Any]:
    """The MCP server entry of Claude Code's .mcp.json for ``drive``."""
    return {"command": "memgit", "args": ["-C", str(drive), "mcp"]}


def _is_memgit_hook(group: Any) -> bool:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(hooks, list) and any(
        isinstance(h, dict) and HOOK_SCRIPT in str(h.get("command", "")) for h in hooks)


def project_hooks(drive: Path, bundle: str = "claude-code",
                  script: str = '"$CLAUDE_PROJECT_DIR/.claude/hooks/' + HOOK_SCRIPT + '"',
                  ) -> dict[str, list[dict[str, Any]]]:
    """A bundle's hooks/hooks.json rewritten for a project's settings: the script copied
    into the project (``script``, as the shell names it), the drive named in MEMGIT_DRIVE."""
    plugin = _read_json(bundle_dir(bundle) / "hooks" / "hooks.json")["hooks"]
    placeholder = GEMINI_ROOT_SCRIPT if bundle == "gemini" else PLUGIN_ROOT_SCRIPT
    command = f"MEMGIT_DRIVE={shlex.quote(str(drive))} {script}"
    text = json.dumps(plugin).replace(json.dumps(placeholder)[1:-1],
                                      json.dumps(command)[1:-1])
    out: dict[str, list[dict[str, Any]]] = json.loads(text)
    return out


def merge_hooks(settings: dict[str, Any], path: Path,
                groups: dict[str, list[dict[str, Any]]]) -> None:
    """Put memgit's hook groups into ``settings["hooks"]``, replacing only memgit's own."""
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise UsageError(f"{path}: hooks is not an object", "fix the file")
    for event, added in groups.items():
        kept = [g for g in hooks.get(event, []) if not _is_memgit_hook(g)]
        hooks[event] = kept + added


def copy_script(bundle: Path, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(bundle, target)
    return target


class ClaudeCode:
    name = "claude-code"
    description = ("Claude Code: .mcp.json runs memgit mcp; .claude/settings.json hooks add "
                   "the context packet, recall hits and the drive guard")

    def install(self, project: Path, drive: Path) -> list[Path]:
        mcp_path = project / ".mcp.json"
        config = _read_json(mcp_path)
        servers = config.setdefault("mcpServers", {})
        if not isinstance(servers, dict):
            raise UsageError(f"{mcp_path}: mcpServers is not an object", "fix the file")
        servers[SERVER] = mcp_entry(drive)
        written = [_write_json(mcp_path, config)]
        written.append(copy_script(bundle_dir("claude-code") / "hooks" / HOOK_SCRIPT,
                                   project / ".claude" / "hooks" / HOOK_SCRIPT))
        settings_path = project / ".claude" / "settings.json"
        settings = _read_json(settings_path)
        merge_hooks(settings, settings_path, project_hooks(drive))
        written.append(_write_json(settings_path, settings))
        return written


def codex_table(drive: Path) -> str:
    """The [mcp_servers.memgit] table of the bundle's config.toml, for ``drive``."""
    text = (bundle_dir("codex") / "config.toml").read_text(encoding="utf-8")
    table = text[text.index("[mcp_servers.memgit]"):]
    return table.replace(json.dumps("/path/to/drive"), json.dumps(str(drive)))


def replace_toml_table(text: str, header: str, table: str) -> str:
    """``text`` with the table ``header`` (up to the next table) replaced by ``table``,
    or ``table`` appended."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.strip() == header), None)
    if start is None:
        sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n")
                                                           else "\n\n")
        return text + sep + table
    end = next((i for i in range(start + 1, len(lines))
                if re.match(r"\s*\[", lines[i])), len(lines))
    return "".join(lines[:start]) + table + ("\n" if end < len(lines) else "") \
        + "".join(lines[end:])


def replace_block(text: str, block: str) -> str:
    """``text`` with memgit's marked block replaced by ``block``, or ``block`` appended."""
    start, end = text.find(AGENTS_BEGIN), text.find(AGENTS_END)
    if start != -1 and end > start:
        return text[:start] + block.strip() + text[end + len(AGENTS_END):]
    sep = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
    return text + sep + block


class Codex:
    name = "codex"
    description = ("Codex: .codex/config.toml runs memgit mcp; .codex/hooks.json runs "
                   "memgit's session hooks; AGENTS.md tells the agent how to use its memory")

    def install(self, project: Path, drive: Path) -> list[Path]:
        config = project / ".codex" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        old = config.read_text(encoding="utf-8") if config.exists() else ""
        config.write_text(replace_toml_table(old, "[mcp_servers.memgit]", codex_table(drive)),
                          encoding="utf-8")
        agents_md = project / "AGENTS.md"
        snippet = (bundle_dir("codex") / "AGENTS.md").read_text(encoding="utf-8")
        old = agents_md.read_text(encoding="utf-8") if agents_md.exists() else ""
        agents_md.write_text(replace_block(old, snippet), encoding="utf-8")
        # Codex reads Claude Code's hook format from .codex/hooks.json (the same events
        # and JSON, tool Bash), so the Claude Code bundle's hooks run there as they are.
        script = copy_script(bundle_dir("shell") / HOOK_SCRIPT,
                             project / ".codex" / "hooks" / HOOK_SCRIPT)
        hooks_path = project / ".codex" / "hooks.json"
        settings = _read_json(hooks_path)
        merge_hooks(settings, hooks_path,
                    project_hooks(drive, script=shlex.quote(str(script))))
        return [config, agents_md, script, _write_json(hooks_path, settings)]


class Gemini:
    name = "gemini"
    description = ("Gemini CLI: .gemini/settings.json runs memgit mcp and memgit's session "
                   "hooks; GEMINI.md tells the agent how to use its memory")

    def install(self, project: Path, drive: Path) -> list[Path]:
        bundle = bundle_dir("gemini")
        script = copy_script(bundle / "hooks" / HOOK_SCRIPT,
                             project / ".gemini" / "hooks" / HOOK_SCRIPT)
        settings_path = project / ".gemini" / "settings.json"
        settings = _read_json(settings_path)
        servers = settings.setdefault("mcpServers", {})
        if not isinstance(servers, dict):
            raise UsageError(f"{settings_path}: mcpServers is not an object", "fix the file")
        servers[SERVER] = mcp_entry(drive)
        merge_hooks(settings, settings_path, project_hooks(
            drive, "gemini", '"$GEMINI_PROJECT_DIR/.gemini/hooks/' + HOOK_SCRIPT + '"'))
        context = project / "GEMINI.md"
        old = context.read_text(encoding="utf-8") if context.exists() else ""
        context.write_text(replace_block(old, (bundle / "GEMINI.md").read_text(
            encoding="utf-8")), encoding="utf-8")
        return [script, _write_json(settings_path, settings), context]


class Shell:
    name = "shell"
    description = "Any agent: memgit-hook.sh in .memgit/hooks/, to call from the tool's hooks"

    def install(self, project: Path, drive: Path) -> list[Path]:
        target = project / ".memgit" / "hooks" / HOOK_SCRIPT
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(bundle_dir("shell") / HOOK_SCRIPT, target)
        return [target]


def claude_code(settings: dict[str, Any]) -> ClaudeCode:
    return ClaudeCode()


def codex(settings: dict[str, Any]) -> Codex:
    return Codex()


def gemini(settings: dict[str, Any]) -> Gemini:
    return Gemini()


def shell(settings: dict[str, Any]) -> Shell:
    return Shell()
