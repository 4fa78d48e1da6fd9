"""memgit purge: delete entries forever from every commit of a drive (admin)."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import click

from ..errors import UsageError
from ..git.repository import open_drive
from ..purge import PurgePlan, PurgeResult, apply_purge, plan_purge
from ._common import ctx_directory


class _Progress:
    """A bar on a terminal (stderr), a plain line per phase step otherwise."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self.phase = ""
        self.last_percent = -1

    def __call__(self, phase: str, done: int, total: int) -> None:
        if self.quiet:
            return
        if phase != self.phase:
            if self.tty and self.phase:
                click.echo("", err=True)
            self.phase, self.last_percent = phase, -1
        if total <= 0:
            if self.tty:
                click.echo(f"\r{phase}: {done}", err=True, nl=False)
            return
        percent = done * 100 // total
        if self.tty:
            filled = percent * 30 // 100
            click.echo(f"\r{phase:<18} [{'#' * filled}{'.' * (30 - filled)}] {done}/{total}",
                       err=True, nl=False)
        elif percent // 25 != self.last_percent // 25 or done == total:
            if percent != self.last_percent:
                click.echo(f"memgit purge: {phase} {done}/{total}", err=True)
        self.last_percent = percent

    def end(self) -> None:
        if self.tty and self.phase and not self.quiet:
            click.echo("", err=True)
        self.phase = ""


def _print_plan(plan: PurgePlan) -> None:
    by_id: dict[str, list[str]] = {}
    for change in plan.changes:
        by_id.setdefault(change.entry_id, []).append(f"{change.commit[:12]} {change.path}")
    for entry_id in plan.ids:
        click.echo(f"{entry_id}:")
        for digest in plan.digests.get(entry_id, []):
            click.echo(f"  text digest {digest}")
        for line in by_id.get(entry_id, []):
            click.echo(f"  changes {line}")
    click.echo(f"{plan.commits_rewritten} of {plan.commits_total} commits would be "
               f"rewritten, {plan.blobs_rewritten} file versions, {plan.lines_removed} lines "
               f"removed, {len(plan.ref_updates)} refs moved")
    if plan.signatures_dropped:
        click.echo(f"{plan.signatures_dropped} signed commits or tags would lose their "
                   "signature")


def _print_result(result: PurgeResult) -> None:
    plan = result.plan
    click.echo(f"Purged {', '.join(plan.ids)}: {plan.commits_rewritten} of "
               f"{plan.commits_total} commits rewritten, {plan.lines_removed} lines removed")
    click.echo(f"  old head {plan.old_head}")
    click.echo(f"  new head {plan.new_head}")
    click.echo(f"  objects written {result.objects_written}, pruned {result.objects_pruned}, "
               f"verified {result.verified_objects}")
    if plan.signatures_dropped:
        click.echo(f"  signatures dropped from {plan.signatures_dropped} rewritten commits or "
                   "tags (a signature cannot survive a rewrite)")
    if plan.messages_scrubbed:
        click.echo(f"  {plan.messages_scrubbed} messages quoted a purged text: it now reads "
                   "[purged]")
    for note in result.notes:
        click.echo(f"  note: {note}")
    click.echo(f"  {result.seconds:.2f} s; clones made before the purge still hold the "
               "entries (see docs/purge.md)")


@click.command("purge")
@click.argument("ids", nargs=-1)
@click.option("--repo", "repo_path", metavar="PATH", default=None,
              help="The drive to purge (a bare server drive or a checkout); default: -C "
                   "or the current folder.")
@click.option("--dry-run", is_flag=True, help="List what would change; change nothing.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation (required without a "
              "terminal).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.pass_context
def command(ctx: click.Context, ids: tuple[str, ...], repo_path: str | None, dry_run: bool,
            yes: bool, as_json: bool) -> int:
    """Delete the entries with these ids from every commit of the drive, forever."""
    if not dry_run and not yes and not sys.stdin.isatty():
        raise UsageError("memgit purge rewrites history and needs confirmation",
                         "pass --yes (no terminal to ask on), or --dry-run to look first")
    started = time.perf_counter()
    drive = open_drive(repo_path or ctx_directory(ctx))
    progress = _Progress(quiet=False)
    plan = plan_purge(drive, ids, progress=progress)
    progress.end()
    if dry_run:
        if as_json:
            out: dict[str, Any] = plan.summary()
            out["dry_run"] = True
            click.echo(json.dumps(out, indent=2))
        else:
            _print_plan(plan)
        return 0
    if not yes:
        _print_plan(plan)
        click.confirm("Rewrite all of history and delete these entries forever?",
                      abort=True, err=True)
    result = apply_purge(drive, plan, progress=progress)
    result.seconds = time.perf_counter() - started
    progress.end()
    if as_json:
        click.echo(json.dumps(result.summary(), indent=2))
    else:
        _print_result(result)
    return 0
