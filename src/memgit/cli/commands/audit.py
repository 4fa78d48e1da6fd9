"""memgit audit: a drive's health report, each finding with the command that fixes it."""

from __future__ import annotations

import json

import click

from memgit.cli.common import drive_from_ctx, policy_for, policy_option
from memgit.review.audit import audit


@click.command("audit")
@click.option("--no-history", is_flag=True,
              help="Skip the scan of history for credentials (the slowest check).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@policy_option
@click.pass_context
def command(ctx: click.Context, no_history: bool, as_json: bool,
            policy_file: str | None) -> int:
    """Report duplicates, likely contradictions, stale entries, entries without a source,
    limits, waiting proposals and credentials in history; changes nothing. Exit 1 when a
    finding is an error."""
    drive = drive_from_ctx(ctx)
    policy = policy_for(drive, policy_file)
    report = audit(drive, policy, history=not no_history)
    if as_json:
        click.echo(json.dumps(report.as_dict(), indent=2, ensure_ascii=False))
        return report.status
    for f in report.findings:
        click.echo(f"{f.level}: {f.check}: {f.message}")
        click.echo(f"    fix: {f.fix}")
    errors = sum(f.level == "error" for f in report.findings)
    click.echo(f"{len(report.findings)} finding(s), {errors} error(s); {report.entries} "
               f"entries in {report.files} files; {report.seconds:.2f} s")
    return report.status
