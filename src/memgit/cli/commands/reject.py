"""memgit reject: mark proposals rejected, with a reason (never recalled; maintain removes
them after review.keep_rejected_days)."""

from __future__ import annotations

import click

from memgit.cli.common import drive_from_ctx, policy_for, policy_option, report_write
from memgit.review.proposals import reject


@click.command("reject")
@click.argument("ids", nargs=-1, required=True, metavar="ID...")
@click.option("--reason", required=True, help="Why (kept with the entry).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@policy_option
@click.pass_context
def command(ctx: click.Context, ids: tuple[str, ...], reason: str, as_json: bool,
            policy_file: str | None) -> int:
    """Reject the proposals with these ids (a proposed forget is withdrawn instead)."""
    drive = drive_from_ctx(ctx)
    policy = policy_for(drive, policy_file)
    return report_write(reject(drive, list(ids), reason=reason, policy=policy), as_json)
