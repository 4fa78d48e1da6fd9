"""memgit backup: the whole drive (history, state database, registry, policy) in one file."""

from __future__ import annotations

import json
from pathlib import Path

import click

from memgit.cli.common import ProgressBar, drive_from_ctx
from memgit.drives.backup import create_backup


@click.command("backup")
@click.argument("dest", type=click.Path(path_type=Path))
@click.option("--folder", is_flag=True, help="Write a folder instead of one tar file.")
@click.option("--json", "as_json", is_flag=True, help="Print what was written as JSON.")
@click.pass_context
def command(ctx: click.Context, dest: Path, folder: bool, as_json: bool) -> int:
    """Write a backup of the drive to DEST (a new file): a git bundle of every ref, a
    consistent copy of the state database, the purge registry, the policy and a manifest
    with checksums; complete or absent (written under a temporary name, then renamed)."""
    bar = ProgressBar(quiet=as_json)
    result = create_backup(drive_from_ctx(ctx), dest, folder=folder, progress=bar)
    bar.end()
    if as_json:
        click.echo(json.dumps(result.as_dict(), indent=2))
    else:
        m = result.manifest
        click.echo(f"Backed up {m['branch']} at {m['head'][:12]} ({len(m['refs'])} refs, "
                   f"index at {(m['indexed_revision'] or '-')[:12]}) to {result.path}: "
                   f"{result.bytes} bytes in {result.seconds:.2f} s")
    return 0
