"""memgit metrics: event counters of one or more drives in Prometheus text format."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import click

from memgit.cli.common import ctx_directory
from memgit.drives.info import drive_metrics
from memgit.state import events


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
    text = events.prometheus(drive_metrics(p) for p in paths)
    if output:
        write_atomically(Path(output).absolute(), text)
    else:
        click.echo(text, nl=False)
    return 0
