"""memgit approve: make proposals active entries (one commit, the same ids)."""

from __future__ import annotations

import click

from memgit.cli.common import drive_from_ctx, policy_for, policy_option, report_write
from memgit.review.proposals import approve


@click.command("approve")
@click.argument("ids", nargs=-1, required=True, metavar="ID...")
@click.option("--text", default=None, help="Approve one proposal with this text instead.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@policy_option
@click.pass_context
def command(ctx: click.Context, ids: tuple[str, ...], text: str | None, as_json: bool,
            policy_file: str | None) -> int:
    """Approve the proposals with these ids: each becomes an active entry (a proposed edit
    retires the entry it replaces; a proposed forget retires the entry)."""
    drive = drive_from_ctx(ctx)
    policy = policy_for(drive, policy_file)
    return report_write(approve(drive, list(ids), text=text, policy=policy), as_json)
