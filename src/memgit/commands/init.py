"""memgit init: create a drive checkout, or a bare server drive with --bare."""

from __future__ import annotations

from pathlib import Path

import click

from .. import format as fmt
from ..errors import UsageError
from ..repo import init_bare, init_checkout, is_empty_dir


def _target(ctx: click.Context, path: str | None) -> Path:
    base = Path((ctx.find_root().obj or {}).get("directory") or ".")
    return (base / path).absolute() if path else base.absolute()


def create_drive(target: Path, *, bare: bool, title: str = "Memory") -> Path:
    """Create a drive at ``target``; refuse a non-empty folder."""
    if target.exists() and not target.is_dir():
        raise UsageError(f"{target} exists and is not a folder", "choose another path")
    if target.exists() and not is_empty_dir(target):
        if (target / fmt.MEMORY_FILE).exists() and ((target / ".git").exists() or bare):
            raise UsageError(f"{target} is already a drive", "nothing to do")
        raise UsageError(f"{target} is not empty and is not a drive",
                         "choose an empty or new folder")
    files = {fmt.MEMORY_FILE: fmt.initial_memory(title).encode()}
    message = "Create drive"
    if bare:
        drive = init_bare(target, files, message)
        from ..hooks import configure_server, install_server_hooks

        configure_server(drive)
        install_server_hooks(drive, chain=False)
    else:
        init_checkout(target, files, message)
    return target


@click.command("init")
@click.argument("path", required=False)
@click.option("--bare", is_flag=True, help="Create a bare server drive with the hooks installed.")
@click.option("--title", default="Memory", show_default=True, help="The MEMORY.md heading.")
@click.pass_context
def command(ctx: click.Context, path: str | None, bare: bool, title: str) -> int:
    """Create a drive in PATH (default: the current folder)."""
    target = create_drive(_target(ctx, path), bare=bare, title=title)
    kind = "bare server drive" if bare else "drive checkout"
    click.echo(f"Created {kind} in {target} (branch main, MEMORY.md with ## Index)")
    return 0
