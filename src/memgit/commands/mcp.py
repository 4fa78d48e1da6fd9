"""memgit mcp: serve the drive to an agent over the Model Context Protocol (stdio)."""

from __future__ import annotations

import os

import click

from ._common import ctx_directory

DRIVE_ENV = "MEMGIT_DRIVE"


@click.command("mcp")
@click.pass_context
def command(ctx: click.Context) -> int:
    """Run an MCP server on stdin/stdout for the drive (-C PATH, else $MEMGIT_DRIVE,
    else the current folder). Needs pip install 'memgit[mcp]'."""
    from ..mcp_server import serve

    serve(ctx_directory(ctx) or os.environ.get(DRIVE_ENV) or None)
    return 0
