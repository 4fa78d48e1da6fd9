"""memgit maintain: housekeeping that needs no model, as a list of steps (retention, upkeep)."""

from __future__ import annotations

import json

import click

from memgit.cli.common import drive_from_ctx, policy_for, policy_option
from memgit.drives.maintain import STEPS, maintain


@click.command("maintain")
@click.option("--step", "only", multiple=True, metavar="NAME",
              type=click.Choice([name for name, _step in STEPS]),
              help="Run only this step (repeatable); default: every step.")
@click.option("--json", "as_json", is_flag=True, help="Print what each step did as JSON.")
@policy_option
@click.pass_context
def command(ctx: click.Context, only: tuple[str, ...], as_json: bool,
            policy_file: str | None) -> int:
    """Run the housekeeping steps in order and say what each did: observations (turns
    older than dream.observations_days), pending (retry queued writes), dream_runs and
    retired (old records and recall-index rows, 90 days), sqlite (optimize, VACUUM when
    worthwhile), git (gc when worthwhile). Cron- and timer-friendly; exit 1 when a step
    failed."""
    drive = drive_from_ctx(ctx)
    reports = maintain(drive, policy_for(drive, policy_file), only=only)
    if as_json:
        click.echo(json.dumps({"steps": [r.as_dict() for r in reports]}, ensure_ascii=False))
    else:
        for r in reports:
            click.echo(f"{r.step}: {r.did}", err=not r.ok)
    return 0 if all(r.ok for r in reports) else 1
