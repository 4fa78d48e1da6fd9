"""memgit forget: retire entries by id (one commit; history keeps them, see memgit purge)."""

from __future__ import annotations

import click

from memgit.cli.common import drive_from_ctx, policy_for, policy_option, report_write
from memgit.write.writer import commit_facts


@click.command("forget")
@click.argument("ids", nargs=-1, required=True, metavar="ID...")
@click.option("-m", "--message", default="", help="Commit subject.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@policy_option
@click.pass_context
def command(ctx: click.Context, ids: tuple[str, ...], message: str, as_json: bool,
            policy_file: str | None) -> int:
    """Remove the entries with these ids from the drive (git history keeps them:
    use memgit purge to delete a text forever)."""
    drive = drive_from_ctx(ctx)
    policy = policy_for(drive, policy_file)
    result = commit_facts(drive, (), list(ids), message or f"Forget {len(ids)} "
                          f"entr{'y' if len(ids) == 1 else 'ies'}", policy=policy)
    return report_write(result, as_json)
