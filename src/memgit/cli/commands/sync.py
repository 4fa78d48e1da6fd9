"""memgit sync: replay the checkout's offline commits onto its server, then take the server's."""

from __future__ import annotations

import json

import click

from memgit.cli.common import drive_from_ctx
from memgit.safe_text import printable
from memgit.sync.client import MAX_BATCH, SyncReport, sync
from memgit.sync.replay import CONFLICT_CHOICES
from memgit.working.sync import describe_working, sync_working


def _describe(report: SyncReport) -> list[str]:
    lines = []
    replayed = sum(1 for local, server in report.pushed if local != server)
    lines.append(f"pushed {len(report.pushed)} commit{'s' if len(report.pushed) != 1 else ''} "
                 f"to {report.remote} ({replayed} replayed on a newer server head)")
    if report.skipped:
        lines.append(f"skipped {len(report.skipped)} commit(s) already on the server")
    for refused, landed, names in report.held:
        lines.append(printable(f"the server had refused {refused[:10]}: its changes to "
                               f"{', '.join(names)} landed with {landed[:10]}, which fixed "
                               "them"))
    for c in report.conflicts:
        lines.append(f"conflict on {c.key} in {c.path} ({c.kind}): kept the {c.winner} version")
    if report.dropped:
        lines.append("dropped changes to purged entries: " + ", ".join(sorted(set(report.dropped))))
    if report.rewritten:
        lines.append("the server's history was rewritten: old history pruned from this checkout")
    if report.pulled:
        lines.append("took the server's new commits")
    if report.head:
        lines.append(f"now at {report.head[:10]}")
    return lines


@click.command("sync")
@click.option("--remote", default="origin", show_default=True, help="The remote to sync with.")
@click.option("--on-conflict", type=click.Choice(CONFLICT_CHOICES), default="local",
              show_default=True,
              help="Two edits of one entry: keep the local one, the server's, the newest, "
                   "or stop (fail).")
@click.option("--batch", type=click.IntRange(1, MAX_BATCH), default=1, show_default=True,
              metavar="N", help="Push up to N replayed commits per round trip (still one "
                                "server commit per local commit).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def command(ctx: click.Context, remote: str, on_conflict: str, batch: int, as_json: bool) -> int:
    """Replay local commits made since the last sync onto the server, never forcing."""
    drive = drive_from_ctx(ctx)
    from memgit.forges.incoming import describe, incoming_agent, sync_incoming

    agent = incoming_agent(drive)
    if agent is not None:  # the forge's gate lands the commits (docs/forges.md)
        gated = sync_incoming(drive, agent, remote=remote, on_conflict=on_conflict)
        click.echo(json.dumps(gated.as_dict(), indent=2) if as_json
                   else "\n".join(describe(gated)))
        return 0
    progress = None if as_json else (lambda msg: click.echo(msg, err=True))
    report = sync(drive, remote=remote, on_conflict=on_conflict, progress=progress, batch=batch)
    for note in report.repaired:  # on stderr under --json too: JSON readers have the field
        click.echo(f"memgit: repaired: {printable(note, 400)}", err=True)
    working = sync_working(drive, remote)  # after the branch: its fetch brought the ref
    if as_json:
        click.echo(json.dumps({**report.as_dict(), "working": working.as_dict()}, indent=2))
    else:
        for line in _describe(report) + describe_working(working):
            click.echo(line)
    return 0
