"""memgit init: create a drive checkout, or a bare server drive with --bare."""

from __future__ import annotations

from pathlib import Path

import click

from ..drives import create_drive
from ._common import ctx_directory


@click.command("init")
@click.argument("path", required=False)
@click.option("--bare", is_flag=True, help="Create a bare server drive with the hooks installed.")
@click.option("--title", default="Memory", show_default=True, help="The MEMORY.md heading.")
@click.pass_context
def command(ctx: click.Context, path: str | None, bare: bool, title: str) -> int:
    """Create a drive in PATH (default: the current folder)."""
    base = Path(ctx_directory(ctx) or ".")
    target = create_drive((base / path).absolute() if path else base.absolute(), bare=bare,
                          title=title)
    kind = "bare server drive" if bare else "drive checkout"
    click.echo(f"Created {kind} in {target} (branch main, MEMORY.md with ## Index)")
    return 0
