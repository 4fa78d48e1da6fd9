"""memgit compact: remove the entries over the drive's caps as one revertable commit."""

from __future__ import annotations

import json

import click

from memgit.cli.common import drive_from_ctx, policy_for, policy_option
from memgit.drives.compact import compact
from memgit.write.ops import result_lines


@click.command("compact")
@click.option("--dry-run", is_flag=True, help="List what would be removed; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the plan (and commit) as JSON.")
@policy_option
@click.pass_context
def command(ctx: click.Context, dry_run: bool, as_json: bool, policy_file: str | None) -> int:
    """Remove the entries that exceed limits.max_entries and limits.max_age_days:
    oldest never-retrieved first, never one recall returned in the last 30 days; one
    commit through the writer (undo it with git revert)."""
    drive = drive_from_ctx(ctx)
    policy = policy_for(drive, policy_file)
    plan = compact(drive, policy, dry_run=dry_run)
    if as_json:
        click.echo(json.dumps(plan.as_dict(), indent=2, ensure_ascii=False))
        return 0
    if not plan.max_entries and not plan.max_age_days:
        click.echo("the drive sets no caps (limits.max_entries, limits.max_age_days): "
                   "nothing to compact")
        return 0
    caps = ", ".join(part for part in (
        f"max_entries {plan.max_entries}" if plan.max_entries else "",
        f"max_age_days {plan.max_age_days}" if plan.max_age_days else "") if part)
    click.echo(f"{plan.entries} entries in topic files; caps: {caps}")
    for r in plan.removals:
        click.echo(f"  {'would remove' if dry_run else 'remove'} {r.entry_id} {r.path} "
                   f"(added {r.added or '-'}, {r.retrievals} retrievals; {r.reason})")
    if plan.protected:
        click.echo(f"  kept {plan.protected} entries over a cap: recall returned them in the "
                   "last 30 days")
    if plan.result is not None:
        for line in result_lines(plan.result):
            click.echo(line)
    elif not plan.removals:
        click.echo("nothing to remove")
    click.echo(f"{plan.after} entries {'would remain' if dry_run else 'remain'}")
    return 0
