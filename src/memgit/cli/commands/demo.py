"""memgit demo: a newcomer's tour on an embedded default drive (memgit.demo.tour runs it)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from memgit.demo.tour import run_demo
from memgit.errors import UsageError


@click.command("demo")
@click.argument("directory", required=False, type=click.Path(file_okay=False))
def command(directory: str | None) -> int:
    """Make a demo drive in DIRECTORY (default: a new temporary folder) and show memgit at work."""
    if directory is None:
        target = Path(tempfile.mkdtemp(prefix="memgit-demo-"))
    else:
        target = Path(directory).absolute()
        if target.exists() and any(target.iterdir()):
            raise UsageError(f"{target} is not empty", "give a new or empty folder")
    return run_demo(target)
