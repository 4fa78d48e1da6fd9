"""memgit status: how many commits wait for a sync, and when the last sync was."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import click

from ..errors import UsageError
from ..repo import Drive, ref_target, remote_url
from ..sync import LAST_SYNC_CONFIG, LAST_SYNCED, drive_branch, waiting_commits
from ._common import drive_from_ctx


def sync_status(drive: Drive, remote: str) -> dict[str, Any]:
    """What `memgit status` shows (no network: as of the last fetch)."""
    if drive.workdir is None:
        raise UsageError("memgit status describes a checkout, not a bare repository",
                         "use memgit info on a server drive")
    raw = drive.config_value(LAST_SYNC_CONFIG)
    last = dt.datetime.fromtimestamp(int(raw), dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ") \
        if raw and raw.isdigit() else None
    return {
        "branch": drive_branch(drive),
        "head": ref_target(drive, f"refs/heads/{drive_branch(drive)}"),
        "remote": remote,
        "remote_url": remote_url(drive, remote),
        "waiting_commits": len(waiting_commits(drive, remote)),
        "last_synced_commit": ref_target(drive, LAST_SYNCED),
        "last_sync": last,
    }


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
