"""memgit mcp under real MCP clients, with ``-C DRIVE`` after and before the command:
the SDK's own client, Claude Code's CLI (``claude mcp add`` / ``claude mcp list``) and the
MCP Inspector's CLI. The npm packages are installed by .ci/install-npm-deps.sh (pinned)
into .npm-tools/ (or MEMGIT_NPM_TOOLS); without npm the npm clients are skipped."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402

from memgit.recall.context import estimate_tokens  # noqa: E402
from tests.conftest import ROOT  # noqa: E402

FACT = "The payments launch moved to 2026-04-01"


def argv(form: str, drive: Path) -> list[str]:
    """memgit's arguments for ``memgit mcp -C DRIVE`` or ``memgit -C DRIVE mcp``."""
    return ["mcp", "-C", str(drive)] if form == "after" else ["-C", str(drive), "mcp"]


@pytest.fixture
def drive(new_drive) -> Path:
    made: Path = new_drive({"projects.md": f"# Projects\n\n- {FACT} "
                                           "[source: imported:unknown; id: m-launch]\n"})
    return made


def tools_dir() -> Path:
    """Where .ci/install-npm-deps.sh put the npm clients; skips only without npm."""
    folder = Path(os.environ.get("MEMGIT_NPM_TOOLS", ROOT / ".npm-tools"))
    if shutil.which("npm") is None and not os.environ.get("CI"):
        pytest.skip("npm is not installed: the npm MCP clients cannot run "
                    "(bash .ci/install-npm-deps.sh installs npm and them)")
    if not (folder / "node_modules" / ".bin" / "claude").exists():
        pytest.fail(f"the npm MCP clients are not in {folder}: run bash .ci/install-npm-deps.sh")
    return folder / "node_modules" / ".bin"


def client_env(home: Path) -> dict[str, str]:
    """A fresh HOME (no user config), ``memgit`` of this Python first on PATH, no traffic
    beyond the servers the clients start."""
    home.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, HOME=str(home), PYTHONPATH=str(ROOT / "src"),
               PATH=os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]]),
               DISABLE_TELEMETRY="1", DISABLE_AUTOUPDATER="1", DISABLE_ERROR_REPORTING="1",
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    env.pop("ANTHROPIC_API_KEY", None)
    return env


@pytest.mark.parametrize("form", ["after", "before"])
def test_the_sdk_client_with_either_form(drive: Path, form: str) -> None:
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "memgit", *argv(form, drive)],
                                   env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))

    async def go() -> tuple[set[str], Any]:
        async with Client(params, read_timeout_seconds=120) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            return tools, await client.call_tool("recall", {"query": "payments launch"})

    tools, result = anyio.run(go)
    assert {"recall", "context", "remember"} <= tools
    assert not result.is_error and result.structured_content is None
    assert result.content[0].text.startswith(  # type: ignore[union-attr]
        f"1 entry (lexical)\nprojects.md:3: {FACT}  [m-launch; score")


@pytest.mark.slow
def test_claude_code_lists_both_forms_connected(drive: Path, tmp_path: Path) -> None:
    """``claude mcp add memgit -- memgit mcp -C DRIVE`` as docs/agents.md writes it, the
    other form, and a server that cannot start: ``claude mcp list`` (no API key needed)
    says Connected for the two and fails the third, so the check can tell them apart."""
    claude = str(tools_dir() / "claude")
    env = client_env(tmp_path / "home")
    servers = {"memgit": argv("after", drive), "memgit-before": argv("before", drive),
               "broken": ["mcp", "--no-such-option"]}
    for name, args in servers.items():
        added = subprocess.run([claude, "mcp", "add", name, "--", "memgit", *args],
                               cwd=tmp_path, env=env, capture_output=True, text=True,
                               timeout=120)
        assert added.returncode == 0, added.stderr
    listed = subprocess.run([claude, "mcp", "list"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=300)
    lines = {line.split(":", 1)[0]: line for line in listed.stdout.splitlines() if ":" in line}
    assert "Connected" in lines["memgit"], listed.stdout + listed.stderr
    assert f"memgit mcp -C {drive}" in lines["memgit"]
    assert "Connected" in lines["memgit-before"], listed.stdout
    assert "Connected" not in lines["broken"] and "Failed" in lines["broken"], listed.stdout


@pytest.mark.slow
@pytest.mark.parametrize("form", ["after", "before"])
def test_the_inspector_cli_lists_and_calls(drive: Path, tmp_path: Path, form: str) -> None:
    inspector = str(tools_dir() / "mcp-inspector")
    env = client_env(tmp_path / "home")

    def run(*method: str) -> dict[str, Any]:
        proc = subprocess.run([inspector, "--cli", "memgit", *argv(form, drive), *method],
                              cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        answer: dict[str, Any] = json.loads(proc.stdout)
        return answer

    listed = run("--method", "tools/list")
    assert {"recall", "context", "remember"} <= {t["name"] for t in listed["tools"]}
    called = run("--method", "tools/call", "--tool-name", "recall",
                 "--tool-arg", "query=payments launch", "--tool-arg", "limit=5")
    assert called["isError"] is False and "structuredContent" not in called
    assert [c["type"] for c in called["content"]] == ["text"]
    assert f"{FACT}  [m-launch; score" in called["content"][0]["text"]
    packet = run("--method", "tools/call", "--tool-name", "context",
                 "--tool-arg", "budget_tokens=200")
    text = packet["content"][0]["text"]
    assert len(packet["content"]) == 1 and "structuredContent" not in packet
    assert text.startswith("# Memory") and "[id: m-launch;" in text
    assert estimate_tokens(text) <= 200
