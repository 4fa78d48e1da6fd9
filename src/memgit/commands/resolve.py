"""memgit resolve: mark a question of the drive's board resolved."""

from __future__ import annotations

import json

import click

from ..questions import resolve
from ..writer import exit_status, result_lines
from ._common import drive_from_ctx, policy_for, policy_option


@click.command("resolve")
@click.argument("question_id", metavar="QID")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@policy_option
@click.pass_context
def command(ctx: click.Context, question_id: str, as_json: bool, policy_file: str | None) -> int:
    """Set status: resolved on question QID."""
    drive = drive_from_ctx(ctx)
    result = resolve(drive, question_id, policy=policy_for(drive, policy_file))
    if as_json:
        click.echo(json.dumps(result.as_dict(), indent=2, ensure_ascii=False))
    else:
        for line in result_lines(result):
            click.echo(line)
    return exit_status(result)
