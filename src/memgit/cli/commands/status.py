"""memgit status: how many commits wait for a sync, and when the last sync was."""

from __future__ import annotations

import json

import click

from memgit.cli.common import drive_from_ctx, shared_options
from memgit.sync.client import sync_status
from memgit.sync.status import status_lines


@click.command("status")
@shared_options("status")
@click.pass_context
def command(ctx: click.Context, remote: str, as_json: bool) -> int:
    """Commits waiting for memgit sync and the time of the last sync."""
    info = sync_status(drive_from_ctx(ctx), remote)
    if as_json:
        click.echo(json.dumps(info, indent=2))
        return 0
    for line in status_lines(info):
        click.echo(line)
    return 0
