"""memgit import: read other tools' memory into a plan, then apply it to a drive."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from memgit.cli.common import drive_from_ctx, policy_for, policy_option
from memgit.errors import UsageError
from memgit.importing.apply import apply_plan
from memgit.importing.plan import build_plan, load_plan
from memgit.importing.readers import TOOLS


def _progress_on(as_json: bool) -> bool:
    """Progress goes to a terminal only, and never with --json."""
    return not as_json and sys.stderr.isatty()


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
def plan_command(source: Path, tool: str, output: Path | None, as_json: bool) -> int:
    """Read SOURCE (a folder, or a mem0 JSON export) without changing it and write a plan
    saying what becomes of every line."""
    show = _progress_on(as_json)

    def progress(done: int, total: int, path: str) -> None:
        if show:
            click.echo(f"\rreading {done}/{total} files", nl=done == total, err=True)

    plan = build_plan(source, tool, progress=progress)
    counts = plan.counts()
    if output is None:
        click.echo(plan.to_json(), nl=False)
        return 0
    try:
        output.write_text(plan.to_json(), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write the plan to {output}: {exc.strerror or exc}",
                         "choose a writable path for -o") from exc
    if as_json:
        click.echo(json.dumps({"plan": str(output), "tool": plan.tool, "counts": counts}))
    else:
        click.echo(f"Plan for {plan.tool} memory {plan.name} written to {output}: "
                   + ", ".join(f"{n} {k}" for k, n in counts.items()))
        click.echo(f"apply it with: memgit import apply {output}")
    return 0


@command.command("apply")
@click.argument("plan_file", metavar="PLAN", type=click.Path(path_type=Path))
@click.option("--dry-run", is_flag=True, help="Say what would be written; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@policy_option
@click.pass_context
def apply_command(ctx: click.Context, plan_file: Path, dry_run: bool, as_json: bool,
                  policy_file: str | None) -> int:
    """Write PLAN's entries into the drive as one commit, with a receipt under imports/."""
    drive = drive_from_ctx(ctx)
    policy = policy_for(drive, policy_file)
    plan = load_plan(plan_file)
    show = _progress_on(as_json)

    def progress(message: str) -> None:
        if show:
            click.echo(f"memgit import: {message}", err=True)

    result = apply_plan(drive, plan, dry_run=dry_run, policy=policy, progress=progress)
    if as_json:
        click.echo(json.dumps(result.as_dict(), indent=2, ensure_ascii=False))
    else:
        verb = "would create" if dry_run else "created"
        head = (f"Committed {(result.commit or '')[:12]}: " if result.status == "committed"
                else "Dry run: " if dry_run else f"{result.status.capitalize()}: ")
        click.echo(f"{head}{verb} {len(result.created)} entries, {result.present} already in "
                   f"the drive" + (f"; receipt {result.receipt}" if result.receipt else ""))
        if result.kept:
            click.echo(f"  verbatim blocks kept in {', '.join(result.kept)}")
        for item in result.left_out:
            click.echo(f"  left out {item['item']}: {item['reason']} ({item['detail']})")
        for item in result.skipped:
            click.echo(f"  skipped {item['item']}: {item['reason']} ({item['detail']})")
        for warning in result.warnings:
            click.echo(f"  warning: {warning}")
    return 0
