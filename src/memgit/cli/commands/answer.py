"""memgit answer: answer a question of the drive's board."""

from __future__ import annotations

import click

from memgit.cli.common import drive_from_ctx, policy_for, policy_option, report_write
from memgit.write.board import answer


@click.command("answer")
@click.argument("question_id", metavar="QID")
@click.argument("text")
@click.option("--source", metavar="SRC", default=None, help="Where the answer comes from.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@policy_option
@click.pass_context
def command(ctx: click.Context, question_id: str, text: str, source: str | None, as_json: bool,
            policy_file: str | None) -> int:
    """Answer question QID with TEXT (written right under the question)."""
    drive = drive_from_ctx(ctx)
    result = answer(drive, question_id, text, source=source,
                    policy=policy_for(drive, policy_file))
    return report_write(result, as_json)
