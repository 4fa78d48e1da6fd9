"""memgit context: the context packet an agent loads at session start."""

from __future__ import annotations

import json

import click

from memgit.cli.common import drive_from_ctx, policy_for, policy_option
from memgit.recall.context import DEFAULT_BUDGET, build_packet


@click.command("context")
@click.option("--budget", default=DEFAULT_BUDGET, show_default=True,
              type=click.IntRange(0, 1_000_000), metavar="TOKENS",
              help="Most tokens the packet may take (conservative estimate, docs/agents.md).")
@click.option("--query", "-q", default=None, metavar="Q",
              help="What the session is about: its matching entries come first.")
@click.option("--json", "as_json", is_flag=True, help="Print the packet and its parts as JSON.")
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
