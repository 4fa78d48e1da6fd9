"""memgit import: read other tools' memory into a plan, then apply it to a drive."""

from __future__ import annotations

import json
from pathlib import Path

import click

from memgit.cli.common import (
    ProgressBar,
    ctx_directory,
    drive_from_ctx,
    policy_for,
    policy_option,
    write_output,
)
from memgit.importing import report
from memgit.importing.apply import apply_plan
from memgit.importing.plan import build_plan, load_plan
from memgit.importing.readers import TOOLS
from memgit.policy.settings import find_policy

_VERBOSE = click.option("-v", "--verbose", is_flag=True,
                        help="List every item (file, lines, verdict, reason, topic file).")


@click.group("import")
def command() -> None:
    """Adopt memory kept by other tools: plan first, then apply the plan to a drive."""


@command.command("plan")
@click.argument("source", type=click.Path(path_type=Path))
@click.option("--from", "tool", type=click.Choice(("auto", *TOOLS)), default="auto",
              show_default=True, help="The tool that wrote SOURCE.")
@click.option("-o", "output", type=click.Path(path_type=Path), default=None,
              help="Write the plan to this file (default: print it).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@_VERBOSE
@policy_option
@click.pass_context
def plan_command(ctx: click.Context, source: Path, tool: str, output: Path | None,
                 as_json: bool, verbose: bool, policy_file: str | None) -> int:
    """Read SOURCE (a folder, or a mem0 JSON export) without changing it and write a plan
    saying what becomes of every line, judged as apply will judge it: against the drive
    given with -C, else against an empty drive with the policy (--policy, or the
    defaults)."""
    drive = drive_from_ctx(ctx) if ctx_directory(ctx) is not None else None
    policy = policy_for(drive, policy_file) if drive is not None \
        else find_policy(policy_file, None)
    bar = ProgressBar(as_json)
    plan = build_plan(source, tool, progress=bar, policy=policy, drive=drive)
    bar.end()
    if output is None:
        click.echo(plan.to_json(), nl=False)
        return 0
    write_output(output, plan.to_json(), "-o")
    if as_json:
        click.echo(json.dumps({"plan": str(output), **report.summary(plan)},
                              ensure_ascii=False))
        return 0
    against = f"the drive {plan.judged['drive']}" if plan.judged.get("drive") \
        else "an empty drive with " + ("the policy given" if policy_file else "the default "
                                       "policy")
    click.echo(f"Plan for {plan.tool} memory {plan.name} ({len(plan.files)} files), judged "
               f"against {against}:")
    for line in report.lines(plan, verbose=verbose):
        click.echo(line)
    click.echo(f"Plan written to {output}; apply it with: memgit -C DRIVE import apply "
               f"{output}")
    return 0


@command.command("apply")
@click.argument("plan_file", metavar="PLAN", type=click.Path(path_type=Path))
@click.option("--dry-run", is_flag=True, help="Say what would be written; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@_VERBOSE
@policy_option
@click.pass_context
def apply_command(ctx: click.Context, plan_file: Path, dry_run: bool, as_json: bool,
                  verbose: bool, policy_file: str | None) -> int:
    """Write PLAN's entries into the drive as one commit, with a receipt under imports/."""
    drive = drive_from_ctx(ctx)
    policy = policy_for(drive, policy_file)
    plan = load_plan(plan_file)
    bar = ProgressBar(as_json)
    result = apply_plan(drive, plan, dry_run=dry_run, policy=policy, progress=bar)
    bar.end()
    if as_json:
        out = result.as_dict()
        if result.plan is not None:
            out["summary"] = report.summary(result.plan)
        click.echo(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    verb = "would create" if dry_run else "created"
    head = (f"Committed {(result.commit or '')[:12]}: " if result.status == "committed"
            else "Dry run: " if dry_run else f"{result.status.capitalize()}: ")
    click.echo(f"{head}{verb} {len(result.created)} entries, {result.present} already in "
               f"the drive" + (f"; receipt {result.receipt}" if result.receipt else ""))
    if result.proposed:
        click.echo(f"{len(result.proposed)} of them are proposals (the drive's autonomy rules): "
                   "a person approves them, memgit review")
    if result.plan is not None:
        label = "entries it would create" if dry_run else "entries created"
        for line in report.lines(result.plan, verbose=verbose, created=label):
            click.echo(line)
    for line in report.changed_lines(result.changed, verbose=verbose):
        click.echo(line)
    if result.kept:
        shown = ", ".join(result.kept[:5]) + (f" and {len(result.kept) - 5} more"
                                              if len(result.kept) > 5 else "")
        click.echo(f"Verbatim blocks {'would be ' if dry_run else ''}kept in {shown}")
    for warning in result.warnings[:20 if not verbose else None]:
        click.echo(f"  warning: {warning}")
    if len(result.warnings) > 20 and not verbose:
        click.echo(f"  ... and {len(result.warnings) - 20} more warnings (--verbose)")
    return 0
