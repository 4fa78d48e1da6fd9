"""memgit edit: replace an entry's text, keeping its id and metadata."""

from __future__ import annotations

import click

from memgit.cli.common import drive_from_ctx, policy_for, policy_option, report_write
from memgit.write.writer import commit_facts


@click.command("edit")
@click.argument("entry_id", metavar="ID")
@click.argument("text")
@click.option("-m", "--message", default="", help="Commit subject (never put entry text here).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@policy_option
@click.pass_context
def command(ctx: click.Context, entry_id: str, text: str, message: str, as_json: bool,
            policy_file: str | None) -> int:
    """Give entry ID the new TEXT (source, added, id and other metadata are kept)."""
    drive = drive_from_ctx(ctx)
    policy = policy_for(drive, policy_file)
    result = commit_facts(drive, (), (), message or "Edit 1 entry", edits={entry_id: text},
                          policy=policy)
    return report_write(result, as_json)
