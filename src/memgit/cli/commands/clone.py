"""memgit clone: a drive checkout of a server drive, with the pre-commit hook and sync refs."""

from __future__ import annotations

from pathlib import Path

import click

from memgit.cli.common import ctx_directory
from memgit.drives.create import clone_drive, default_clone_path
from memgit.safe_text import display_url


@click.command("clone")
@click.argument("url")
@click.argument("path", required=False)
@click.pass_context
def command(ctx: click.Context, url: str, path: str | None) -> int:
    """Clone the drive at URL into PATH, ready for memgit sync."""
    base = Path(ctx_directory(ctx) or ".")
    target = (base / (path or default_clone_path(url))).absolute()
    clone_drive(url, target)
    click.echo(f"Cloned {display_url(url)} into {target} (pre-commit hook installed; memgit sync "
               f"pushes your commits)")
    return 0
