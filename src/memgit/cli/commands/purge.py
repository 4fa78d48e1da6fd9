"""memgit purge: delete entries forever from every commit of a drive (admin)."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import click

from memgit.cli.common import ProgressBar, ctx_directory
from memgit.errors import UsageError
from memgit.git.repository import Drive, open_bare_drive
from memgit.purge.resume import resume
from memgit.purge.rewrite import PurgePlan, PurgeResult, apply_purge, plan_purge
from memgit.purge.text import check_ids


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
@click.option("--from-registry", "registry", metavar="PATH", default=None,
              help="Apply a parent drive's purge registry (its memgit-purged, or the drive): "
                   "purge the ids it lists that this fork holds, and refuse them from now on.")
@click.option("--resume", "resume_only", is_flag=True,
              help="Only finish (or roll back) a purge that was killed midway.")
@click.pass_context
def command(ctx: click.Context, ids: tuple[str, ...], repo_path: str | None, dry_run: bool,
            yes: bool, as_json: bool, registry: str | None, resume_only: bool) -> int:
    """Delete the entries with these ids from every commit of the drive, forever."""
    if registry is None and not resume_only:
        check_ids(ids)  # no ids, or a malformed one, is said before anything is asked
    # --resume finishes a purge that was confirmed when it started: nothing to ask
    if not dry_run and not yes and not resume_only and not sys.stdin.isatty():
        raise UsageError("memgit purge rewrites history and needs confirmation",
                         "pass --yes (no terminal to ask on), or --dry-run to look first")
    started = time.perf_counter()
    # a bare server drive is purged through git plumbing alone: no pygit2 to import
    drive = open_bare_drive(repo_path or ctx_directory(ctx))
    if registry is not None:
        if ids:
            raise UsageError("give ids or --from-registry, not both",
                             "run memgit purge twice")
        return _from_registry(drive, registry, dry_run, as_json)
    for note in [] if dry_run else _repairs(drive, resume_only):
        click.echo(f"memgit: repaired: {note}", err=True)
    if resume_only:
        return 0
    progress = ProgressBar(quiet=as_json)
    plan = plan_purge(drive, ids, progress=progress, pack_ahead=not dry_run)
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


def _repairs(drive: Drive, stale_lock: bool) -> list[str]:
    """What a killed memgit left, finished first: a checkout update (git.recovery, under
    the write lock), then a purge (purge.resume)."""
    notes = []
    if drive.workdir is not None:
        from memgit.git import recovery  # a checkout only: a bare drive skips both
        from memgit.write.writer import write_lock

        with write_lock(drive):
            notes = recovery.recover(drive)
    return notes + resume(drive, stale_lock=stale_lock)


def _from_registry(drive: Drive, registry: str, dry_run: bool, as_json: bool) -> int:
    # imported here: drives.fork brings the sync client, which a plain purge never needs
    from memgit.drives.fork import adopt_registry

    progress = ProgressBar(quiet=as_json)
    adoption = adopt_registry(drive, registry, dry_run=dry_run, progress=progress)
    progress.end()
    if as_json:
        click.echo(json.dumps({**adoption.as_dict(), "dry_run": dry_run}, indent=2))
        return 0
    verb = "would purge" if dry_run else "purged"
    click.echo(f"{adoption.listed} ids in the registry; {verb} {len(adoption.purged)} from this "
               f"drive's history: {', '.join(adoption.purged) or '-'}")
    click.echo(f"{'would add' if dry_run else 'added'} {len(adoption.adopted)} to this "
               "drive's registry (refused from now on)")
    if adoption.result is not None:
        _print_result(adoption.result)
    return 0
