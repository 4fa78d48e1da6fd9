"""memgit install-agent: install an agent integration (a bundle of plugins/) into a project."""

from __future__ import annotations

from pathlib import Path

import click

from memgit import plugins
from memgit.cli.common import drive_from_ctx


@click.command("install-agent")
@click.argument("name", required=False)
@click.option("--project", "project", default=".", show_default=True, metavar="DIR",
              type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="The project the agent works in (its configuration is written there; "
                   "the folder must exist: a mistyped path makes no new tree).")
@click.option("--list", "list_them", is_flag=True, help="List the agent integrations.")
@click.pass_context
def command(ctx: click.Context, name: str | None, project: Path, list_them: bool) -> int:
    """Configure agent NAME (claude-code, codex, gemini, shell) in the project to use the
    drive (-C PATH, else the one memgit chooses: memgit info says which): its MCP server
    and hooks."""
    if list_them or not name:
        for found in sorted(plugins.available("agent")):
            click.echo(f"{found:12} {plugins.load('agent', found).description}")
        return 0
    integration = plugins.load("agent", name)
    drive = drive_from_ctx(ctx)
    for path in integration.install(project.resolve(), drive.root):
        click.echo(f"wrote {path}")
    return 0
