"""memgit maintain: housekeeping that needs no model (observation retention)."""

from __future__ import annotations

import json

import click

from ..dream import config as dream_config
from ..dream.observations import apply_retention
from ._common import drive_from_ctx, policy_for, policy_option


@click.command("maintain")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@policy_option
@click.pass_context
def command(ctx: click.Context, as_json: bool, policy_file: str | None) -> int:
    """Delete observed turns older than dream.observations_days (default 7)."""
    drive = drive_from_ctx(ctx)
    policy_for(drive, policy_file)  # validates the file, dream: section included
    config = dream_config.load(drive.git_dir, policy_file, drive.config_value("memgit.policy"))
    deleted = apply_retention(drive, config.observations_days)
    if as_json:
        click.echo(json.dumps({"observations_deleted": deleted,
                               "observations_days": config.observations_days}))
    else:
        click.echo(f"observations: deleted {deleted} turn(s) older than "
                   f"{config.observations_days} day(s)")
    return 0
