"""memgit resolve: mark a question of the drive's board resolved."""

from __future__ import annotations

import click

from memgit.cli.common import drive_from_ctx, policy_for, policy_option, report_write
from memgit.write.board import resolve


@click.command("resolve")
@click.argument("question_id", metavar="QID")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@policy_option
@click.pass_context
def command(ctx: click.Context, question_id: str, as_json: bool, policy_file: str | None) -> int:
    """Set status: resolved on question QID."""
    drive = drive_from_ctx(ctx)
    result = resolve(drive, question_id, policy=policy_for(drive, policy_file))
    return report_write(result, as_json)
