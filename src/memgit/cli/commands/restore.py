"""memgit restore: recreate a working drive from a backup, after verifying it."""

from __future__ import annotations

import json
from pathlib import Path

import click

from memgit.cli.common import ProgressBar
from memgit.drives.backup import read_manifest, restore_backup
from memgit.errors import UsageError


@click.command("restore")
@click.argument("backup", type=click.Path(path_type=Path))
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--bare/--checkout", "bare", default=None,
              help="Restore as a bare server drive or as a checkout (default: as it was).")
@click.option("--check", is_flag=True, help="Only verify the backup; create nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def command(backup: Path, path: Path | None, bare: bool | None, check: bool,
            as_json: bool) -> int:
    """Recreate the drive saved in BACKUP at PATH (a new folder): every checksum is
    verified first, git fsck and the state database's integrity check must pass, and an
    existing PATH or a changed backup is refused."""
    if check:
        manifest = read_manifest(backup)
        if as_json:
            click.echo(json.dumps(manifest, indent=2, sort_keys=True))
        else:
            click.echo(f"{backup}: a complete memgit backup of {manifest['branch']} at "
                       f"{manifest['head'][:12]} taken {manifest.get('created', '?')}; "
                       f"{len(manifest['files'])} members match their checksums")
        return 0
    if path is None:
        raise UsageError("no PATH to restore into", "memgit restore BACKUP PATH "
                         "(or --check to verify only)")
    bar = ProgressBar(quiet=as_json)
    result = restore_backup(backup, path, bare=bare, progress=bar)
    bar.end()
    if as_json:
        click.echo(json.dumps(result.as_dict(), indent=2))
        return 0
    click.echo(f"Restored {'a bare drive' if result.bare else 'a checkout'} at {result.path}: "
               f"head {result.head[:12]}, {result.entries} entries indexed"
               + (" (index brought to the head)" if result.index_repaired else "")
               + f", {result.seconds:.2f} s")
    for mount in result.mounts:
        click.echo(f"  mount it had: memgit -C {result.path} mount add {mount['name']} "
                   f"{mount['url']} --branch {mount['branch']}")
    return 0
