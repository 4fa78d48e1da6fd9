"""memgit fork: copy a drive with its history into a new drive that records its parent."""

from __future__ import annotations

import json
from pathlib import Path

import click

from memgit.cli.common import ProgressBar, ctx_directory
from memgit.drives.fork import fork_drive


@click.command("fork")
@click.argument("source", metavar="SRC")
@click.argument("dest", metavar="DEST", type=click.Path(path_type=Path))
@click.option("--bare", is_flag=True, help="Make the fork a bare server drive (with hooks).")
@click.option("--json", "as_json", is_flag=True, help="Print the fork as JSON.")
@click.pass_context
def command(ctx: click.Context, source: str, dest: Path, bare: bool, as_json: bool) -> int:
    """Copy drive SRC (history included) into DEST: a new drive id, the parent's drive id
    and commit recorded (memgit info shows them), no remote; from then on they diverge."""
    base = Path(ctx_directory(ctx) or ".")
    bar = ProgressBar(quiet=as_json)
    result = fork_drive(base / source, base / dest, bare=bare, progress=bar)
    bar.end()
    if as_json:
        click.echo(json.dumps(result.as_dict(), indent=2))
    else:
        click.echo(f"Forked {source} into {result.path} ({'bare' if bare else 'checkout'}): "
                   f"drive id {result.drive_id}, parent {result.parent_drive} at "
                   f"{result.parent_commit[:12]}, {result.entries} entries indexed")
    return 0
