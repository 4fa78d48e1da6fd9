"""memgit metrics: event counters of one or more drives in Prometheus text format."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import click

from .. import events, state
from ..policy import MODE_EXEC, MODE_FILE
from ..repo import commit_tree_id, open_drive, ref_target, tree_files
from ._common import ctx_directory, policy_for


def _drive_metrics(path: str | None) -> tuple[str, dict[str, int], dict[str, float]]:
    drive = open_drive(path)
    policy = policy_for(drive, None)
    with state.opened(drive.git_dir) as conn:
        counts = events.counts_with(conn)
        pending = state.pending_count(conn)
        entries = int(conn.execute("SELECT count(*) FROM facts WHERE indexed = 1 "
                                   "AND valid_until IS NULL").fetchone()[0])
    head = ref_target(drive, policy.branch_ref)
    files = tree_files(drive, commit_tree_id(drive, head)) if head else []
    size = sum(f.size for f in files if f.mode in (MODE_FILE, MODE_EXEC))
    gauges: dict[str, float] = {"pending_writes": pending, "entries": entries,
                                "drive_bytes": size, "files": len(files)}
    return str(drive.git_dir), counts, gauges


def write_atomically(target: Path, text: str) -> None:
    """Write via a temporary file and rename, as the textfile collector requires."""
    fd, tmp = tempfile.mkstemp(prefix=".memgit-metrics-", dir=str(target.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@click.command("metrics")
@click.argument("drives", nargs=-1, type=click.Path(exists=True, file_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Write to FILE atomically (for node_exporter's textfile collector).")
@click.pass_context
def command(ctx: click.Context, drives: tuple[str, ...], output: str | None) -> int:
    """Print the event counters of the drive (or of each DRIVE) in Prometheus text format."""
    paths: list[str | None] = list(drives) or [ctx_directory(ctx)]
    text = events.prometheus(_drive_metrics(p) for p in paths)
    if output:
        write_atomically(Path(output).absolute(), text)
    else:
        click.echo(text, nl=False)
    return 0
