"""memgit mcp: serve the drive to an agent over the Model Context Protocol (stdio)."""

from __future__ import annotations

import click

from memgit.cli.common import choose_drive


@click.command("mcp")
@click.option("--agent", "agent_name", metavar="NAME", envvar="MEMGIT_AGENT", default="",
              help="The agent's name, for the drive's autonomy rules and its proposals "
                   "(default: $MEMGIT_AGENT, else the name in each source label).")
@click.pass_context
def command(ctx: click.Context, agent_name: str) -> int:
    """Run an MCP server on stdin/stdout for the drive (-C PATH, else $MEMGIT_DRIVE, else
    the current folder's drive, else the project's .memgit/drive, else your personal
    drive, created on first use). Needs the mcp extra (pip install '.[mcp]' in memgit's folder)."""
    from memgit.agents.mcp import serve

    serve(choose_drive(ctx).path, agent_name)
    return 0
