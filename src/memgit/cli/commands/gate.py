"""memgit gate: what a forge's CI runs to land agents' incoming branches on main."""

from __future__ import annotations

import json

import click

from memgit.cli.common import drive_from_ctx, policy_for, policy_option
from memgit.forges.gate import report_lines, run_gate
from memgit.githooks.verdict import SHORT


@click.command("gate")
@click.option("--remote", default="origin", show_default=True,
              help="The forge's remote (its URL carries the gate's token in CI).")
@click.option("--agent", "agents", multiple=True, metavar="NAME",
              help="Only this agent's incoming branch (repeatable; default: every one).")
@click.option("--format", "kind", type=click.Choice(("text", "json", "github")),
              default="text", show_default=True,
              help="github adds an ::error workflow command per refused commit.")
@policy_option
@click.pass_context
def command(ctx: click.Context, remote: str, agents: tuple[str, ...], kind: str,
            policy_file: str | None) -> int:
    """Judge every memgit/incoming/* branch, land what passes on main, delete the branch.

    Exit 0 when every commit landed, 1 when the gate refused some (they never reach
    main; the job log and refs/memgit/gate/AGENT name them by commit and rule code).
    """
    drive = drive_from_ctx(ctx)
    policy = policy_for(drive, policy_file)
    report = run_gate(drive, remote, policy, list(agents) or None)
    if kind == "json":
        click.echo(json.dumps(report.as_dict(), indent=2))
    else:
        for line in report_lines(report):
            click.echo(line)
    if kind == "github":
        for branch in report.branches:
            for refusal in branch.refused:
                click.echo(f"::error title=memgit gate::{branch.agent}: commit "
                           f"{refusal.commit[:SHORT]} refused ({' '.join(refusal.codes())})")
    return 1 if report.refused else 0
