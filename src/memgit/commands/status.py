"""memgit status: how many commits wait for a sync, and when the last sync was."""

from __future__ import annotations

import json

import click

from ..sync import sync_status
from ._common import drive_from_ctx


@click.command("status")
@click.option("--remote", default="origin", show_default=True, help="The remote synced with.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def command(ctx: click.Context, remote: str, as_json: bool) -> int:
    """Commits waiting for memgit sync and the time of the last sync."""
    info = sync_status(drive_from_ctx(ctx), remote)
    if as_json:
        click.echo(json.dumps(info, indent=2))
        return 0
    waiting = info["waiting_commits"]
    click.echo(f"{waiting} commit{'s' if waiting != 1 else ''} waiting for memgit sync")
    if info["remote_url"] is None:
        click.echo(f"no remote {remote!r}: working offline (git remote add {remote} URL)")
    click.echo(f"last sync: {info['last_sync'] or 'never'}")
    return 0
