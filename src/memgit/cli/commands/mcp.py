"""memgit mcp: serve the drive to an agent over the Model Context Protocol (stdio)."""

from __future__ import annotations

import click

from memgit.cli.common import choose_drive


@click.command("mcp")
@click.pass_context
def command(ctx: click.Context) -> int:
    """Run an MCP server on stdin/stdout for the drive (-C PATH, else $MEMGIT_DRIVE, else
    the current folder's drive, else the project's .memgit/drive, else your personal
    drive, created on first use). Needs pip install 'memgit[mcp]'."""
    from memgit.agents.mcp import serve

    serve(choose_drive(ctx).path)
    return 0
