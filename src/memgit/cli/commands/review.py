"""memgit review: the proposals waiting for a person (docs/review.md)."""

from __future__ import annotations

import json

import click

from memgit.cli.common import drive_from_ctx, policy_for, policy_option
from memgit.policy.judge import quote
from memgit.review.proposals import listing


@click.command("review")
@click.option("--rejected", is_flag=True, help="List the rejected entries instead.")
@click.option("--by", metavar="NAME", default=None, help="Only those proposed by NAME.")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
@policy_option
@click.pass_context
def command(ctx: click.Context, rejected: bool, by: str | None, as_json: bool,
            policy_file: str | None) -> int:
    """List the pending proposals (approve with memgit approve ID, reject with
    memgit reject ID --reason R)."""
    drive = drive_from_ctx(ctx)
    policy = policy_for(drive, policy_file)
    found = listing(drive, policy, rejected=rejected, by=by)
    if as_json:
        click.echo(json.dumps({"proposals": [p.as_dict() for p in found]}, indent=2,
                              ensure_ascii=False))
        return 0
    if not found:
        click.echo("No rejected entries" if rejected else "No proposals waiting")
        return 0
    for p in found:
        what = f"{p.kind} replacing {' '.join(p.replaces)}" if p.replaces else p.kind
        click.echo(f"{p.id}  {quote(p.path, policy)}  {what}  by {quote(p.proposed_by, policy)}"
                   f"  {p.added}")
        click.echo(f"    {quote(p.text, policy)}")
        if p.why:
            click.echo(f"    why: {quote(p.why, policy)}")
        if p.reason:
            click.echo(f"    rejected {p.rejected_on}: {quote(p.reason, policy)}")
    if not rejected:
        click.echo(f"{len(found)} waiting: memgit approve ID... | memgit reject ID... "
                   "--reason R")
    return 0
