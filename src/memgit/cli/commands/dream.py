"""memgit dream: nightly consolidation a model proposes and code checks; undo; status."""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Any

import click

from memgit.cli.common import drive_from_ctx, policy_for, policy_option
from memgit.dream.run import Outcome, dream, status
from memgit.dream.undo import undo
from memgit.errors import MemgitError, UsageError, error_lines
from memgit.policy.judge import quote
from memgit.policy.settings import Policy
from memgit.safe_text import printable


def _progress(as_json: bool):  # type: ignore[no-untyped-def]
    def show(message: str) -> None:
        if not as_json and sys.stderr.isatty():
            click.echo(message, err=True)
    return show


def _say(text: str, policy: Policy | None = None, **options: Any) -> None:
    """One line or more for the terminal: control characters escaped line by line (the
    report shows entry texts and what a model proposed); with ``policy``, possible
    credentials redacted as well."""
    if policy is not None:
        text = quote(text, policy)
    click.echo("\n".join(printable(line) for line in text.split("\n")), **options)


def _print_report(report: dict[str, Any], policy: Policy) -> None:
    counts = report.get("counts", {})
    _say(f"proposer {report.get('proposer')}: {len(report.get('applied', []))} applied "
         f"({', '.join(f'{n} {k}' for k, n in counts.items() if n) or 'nothing'}), "
         f"{len(report.get('rejected', []))} rejected; shown "
         f"{report.get('entries_shown')} of {report.get('entries_in_drive')} entries, "
         f"{report.get('turns_shown')} turns")
    for item in report.get("applied", []):
        _say(f"  applied {item['kind']} #{item['index'] + 1}"
             f"{' (' + item['reason'] + ')' if item.get('reason') else ''}")
        for change in item.get("changes", []):
            before, after = change.get("before"), change.get("after")
            _say(f"    {change['id']} {change['path']}")
            if before is not None and before != after:
                _say(f"      - {before}")
            if after is not None and after != before:
                _say(f"      + {after}")
            if after is None:
                _say("      (retired)")
    for item in report.get("rejected", []):
        ids = f" [{', '.join(item['ids'])}]" if item.get("ids") else ""
        _say(f"  rejected {item['kind']} #{item['index'] + 1}{ids}: {item['check']}: "
             f"{item['reason']}", policy)
    for key in report.get("ignored_keys", []):
        _say(f"  ignored key {key}", policy)


def _print(outcome: Outcome, as_json: bool, dry_run: bool, policy: Policy) -> None:
    if as_json:
        click.echo(json.dumps(outcome.as_dict(), indent=2, ensure_ascii=False))
        return
    if outcome.status == "dry_run":
        _say(outcome.diff or "(no changes)", nl=not outcome.diff)
        _say(f"Dream {outcome.day} (dry run: nothing was changed)")
        _print_report(outcome.report, policy)
        return
    if outcome.error is not None:  # a failed run: reported as every memgit error is
        failed = MemgitError(f"dream {outcome.day} failed: {outcome.reason}",
                             outcome.error.hint or "the drive was not changed")
        failed.code = outcome.error.code
        _say("\n".join(error_lines(failed)), policy, err=True)
        return
    if outcome.status == "skipped":
        _say(f"Dream {outcome.day} not run: {outcome.reason}")
        return
    commit = f" as {outcome.commit[:12]}" if outcome.commit else ""
    _say(f"Dream {outcome.day}: {outcome.status.replace('_', ' ')}{commit}"
         f"{' (' + outcome.reason + ')' if outcome.reason else ''}")
    if outcome.report.get("applied") is not None:
        _print_report(outcome.report, policy)


@click.group("dream", invoke_without_command=True)
@click.option("--due", is_flag=True, help="Run only if due: inside the window, once a day.")
@click.option("--dry-run", is_flag=True, help="Print the diff and the report; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
@click.option("--no-model", is_flag=True, help="Use the rule-based proposer.")
@click.option("--model", "model", default=None, metavar="PLUGIN",
              help="The model plugin to ask (overrides dream.model; openai ships).")
@click.option("--base-url", default=None, metavar="URL",
              help="OpenAI-compatible endpoint (overrides dream.base_url).")
@click.option("--model-name", default=None, metavar="NAME",
              help="Model name (overrides dream.model_name).")
@policy_option
@click.pass_context
def command(ctx: click.Context, due: bool, dry_run: bool, as_json: bool, no_model: bool,
            model: str | None, base_url: str | None, model_name: str | None,
            policy_file: str | None) -> int:
    """Consolidate the drive: merges, contradictions, lessons, prunes, checked in code
    and applied as one commit "Dream YYYY-MM-DD" (docs/dream.md)."""
    ctx.ensure_object(dict)
    ctx.obj["policy_file"] = policy_file
    if ctx.invoked_subcommand is not None:
        return 0
    drive = drive_from_ctx(ctx)
    policy = policy_for(drive, policy_file)
    config = policy.dream()
    if model is not None:
        if no_model:
            raise UsageError("--model and --no-model say opposite things",
                             "give --model PLUGIN to ask a model, --no-model for the rules")
        config = dataclasses.replace(config, model=model)
    outcome = dream(drive, policy, config, due=due, dry_run=dry_run, no_model=no_model,
                    base_url=base_url, model_name=model_name, progress=_progress(as_json))
    _print(outcome, as_json, dry_run, policy)
    if outcome.status == "failed":
        return 2
    if outcome.status == "skipped" and not due:
        return 1
    return 0


@command.command("undo")
@click.argument("day", metavar="YYYY-MM-DD")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@policy_option
@click.pass_context
def undo_command(ctx: click.Context, day: str, as_json: bool, policy_file: str | None) -> int:
    """Take back the dream of DAY as a new commit (refused when its lines changed since)."""
    drive = drive_from_ctx(ctx)
    policy = policy_for(drive, policy_file or ctx.obj.get("policy_file"))
    done = undo(drive, policy, day)
    if as_json:
        click.echo(json.dumps(done.as_dict(), indent=2))
    else:
        _say(f"Undid the dream of {day} ({done.dream_commit[:12]}) as "
             f"{done.commit[:12] or 'a queued write'}: {', '.join(done.files)}")
    return 0


@command.command("status")
@click.option("-n", "--limit", default=10, show_default=True, type=click.IntRange(1, 1000))
@click.option("--json", "as_json", is_flag=True, help="Print the runs as JSON.")
@click.pass_context
def status_command(ctx: click.Context, limit: int, as_json: bool) -> int:
    """Show the last dream runs."""
    runs = status(drive_from_ctx(ctx), limit)
    if as_json:
        click.echo(json.dumps([r.as_dict() for r in runs], indent=2, ensure_ascii=False))
        return 0
    if not runs:
        click.echo("no dream has run on this drive")
    for r in runs:
        counts = r.report.get("counts", {})
        summary = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
        rejected = len(r.report.get("rejected", []))
        detail = r.error or (f"{summary or 'nothing applied'}; {rejected} rejected"
                             if r.report.get("applied") is not None else "")
        _say(f"{r.day} #{r.id} {r.status:<10} {r.trigger:<6} {r.proposer or '-':<20} "
             f"{r.commit[:12] or '-':<12} {detail}")
    return 0
