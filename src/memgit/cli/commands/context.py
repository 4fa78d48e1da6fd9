"""memgit context: the context packet an agent loads at session start."""

from __future__ import annotations

import json

import click

from memgit.cli.common import drive_from_ctx, policy_for, policy_option, shared_options
from memgit.recall.context import build_packet


@click.command("context")
@shared_options("context")
@policy_option
@click.pass_context
def command(ctx: click.Context, budget: int, query: str | None, as_json: bool,
            policy_file: str | None) -> int:
    """Print the drive's title, Index and the entries most likely to matter (with ids),
    never over the budget, and what was left out."""
    drive = drive_from_ctx(ctx)
    packet = build_packet(drive, budget, query, policy=policy_for(drive, policy_file))
    if as_json:
        click.echo(json.dumps(packet.as_dict(), indent=2, ensure_ascii=False))
    else:
        click.echo(packet.text, nl=False)
    return 0
