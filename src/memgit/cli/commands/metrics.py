"""memgit metrics: event counters of one or more drives in Prometheus text format."""

from __future__ import annotations

import click

from memgit.cli.common import ctx_directory, write_output
from memgit.drives.info import drive_metrics
from memgit.state import events


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
        # the textfile collector reads *.prom files as they are: never half of one
        write_output(output, text, "-o", mode=0o644)
    else:
        click.echo(text, nl=False)
    return 0
