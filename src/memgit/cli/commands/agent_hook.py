"""memgit agent-hook: run an agent tool's session hook (session-start, prompt, guard, record)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import click

from memgit.agents.hook_io import (
    EVENTS,
    context_output,
    deny_output,
    hook_cwd,
    prompt_context,
    prompt_query,
    read_event,
)
from memgit.agents.hooks import guard_decision, observe_argv, turn_text
from memgit.cli.common import ctx_directory, shared_options
from memgit.drives.choose import choose, created_line, ensure_personal, repository_verdict
from memgit.errors import MemgitError


@click.command("agent-hook")
@click.argument("event", type=click.Choice(EVENTS))
@shared_options("agent-hook")
@click.option("--path", "paths", multiple=True, metavar="FILE",
              help="guard: judge a write to FILE (instead of a tool call on stdin).")
@click.option("--command", "shell", default=None, metavar="CMD",
              help="guard: judge the shell command CMD (instead of a tool call on stdin).")
@click.option("--dry-run", is_flag=True,
              help="record: print the memgit observe call instead of running it.")
@click.pass_context
def command(ctx: click.Context, event: str, form: str, budget: int, limit: int,
            paths: tuple[str, ...], shell: str | None, dry_run: bool) -> int:
    """Read the hook's JSON on stdin (text form: a prompt may be plain text) and print
    what the agent tool expects. Never fails the session: problems go to stderr."""
    raw = "" if (event == "guard" and (paths or shell)) else sys.stdin.read()
    data = read_event(raw)
    try:
        chosen = choose(ctx_directory(ctx), hook_cwd(data), repository_verdict)
        if event == "guard":
            return _guard(data, chosen.path, form, paths, shell)
        if ensure_personal(chosen):
            click.echo(created_line(chosen.path), err=True)
        if event == "record":
            return _record(data, chosen.path, dry_run)
        text = _context_text(event, data, raw, chosen.path, budget, limit)
    except MemgitError as err:
        click.echo(f"memgit agent-hook {event}: {err.code} {err.message}", err=True)
        return 0
    click.echo(context_output(event, text, form), nl=False)
    return 0


def _context_text(event: str, data: dict[str, Any], raw: str, where: str | None,
                  budget: int, limit: int) -> str:
    from memgit.agents.operations import AgentDrive

    agent = AgentDrive(where)
    if event == "session-start":
        return str(agent.context(budget)["text"])
    query = prompt_query(data, raw)
    if query is None:
        return ""
    found = agent.recall(query, limit, count=False)
    return prompt_context(found["hits"])


def _guard(data: dict[str, Any], where: str | None, form: str, paths: tuple[str, ...],
           shell: str | None) -> int:
    reason = guard_decision(data, where, paths, shell)
    if reason is None:
        return 0
    text, on_stderr, code = deny_output(reason, form)
    click.echo(text, nl=False, err=on_stderr)
    return code


def _record(data: dict[str, Any], drive: str | None, dry_run: bool) -> int:
    text = turn_text(data)
    if not text:
        return 0
    argv = observe_argv(data, drive)
    if dry_run:
        click.echo(json.dumps({"argv": ["memgit", *argv], "text_chars": len(text)}))
        return 0
    proc = subprocess.run([sys.executable, "-m", "memgit", *argv], input=text.encode(),
                          capture_output=True, check=False)
    if proc.returncode != 0:
        click.echo(f"memgit agent-hook record: observe exited {proc.returncode}", err=True)
    return 0
