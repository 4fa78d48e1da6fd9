"""memgit recall: full-text search (FTS5, BM25) over the drive's entries."""

from __future__ import annotations

import json

import click

from ..errors import UsageError
from ..git.repository import Drive
from ..policy import Policy
from ..read_path import recall
from ..recall_search import hit_line, labelled_line
from ._common import drive_from_ctx, policy_for, policy_option


@click.command("recall")
@click.argument("query", nargs=-1, required=True)
@click.option("-n", "--limit", default=5, show_default=True, type=click.IntRange(1, 1000),
              help="How many entries to return.")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@click.option("--no-count", is_flag=True, help="Do not count these retrievals.")
@click.option("--mounts", "with_mounts", is_flag=True,
              help="Search every mounted shared drive too; each hit names its drive.")
@policy_option
@click.pass_context
def command(ctx: click.Context, query: tuple[str, ...], limit: int, as_json: bool,
            no_count: bool, with_mounts: bool, policy_file: str | None) -> int:
    """Find the entries that best match QUERY. Exit 0 with results, 1 without."""
    text = " ".join(query).strip()
    if not text:
        raise UsageError("the query is empty", "say what to look for")
    drive = drive_from_ctx(ctx)
    policy = policy_for(drive, policy_file)
    if with_mounts:
        return _with_mounts(drive, text, limit, as_json, not no_count, policy)
    hits = recall(drive, text, limit, count=not no_count, policy=policy)
    if as_json:
        click.echo(json.dumps([h.as_dict() for h in hits], indent=2, ensure_ascii=False))
    else:
        for hit in hits:
            click.echo(hit_line(hit))
        if not hits:
            click.echo("no matching entries", err=True)
    return 0 if hits else 1


def _with_mounts(drive: Drive, text: str, limit: int, as_json: bool, count: bool,
                 policy: Policy) -> int:
    from ..mounts import recall_with_mounts  # loaded only for --mounts

    found = recall_with_mounts(drive, text, limit, count=count, policy=policy)
    for problem in found.skipped:
        click.echo(f"memgit: warning: mount {problem} (not searched)", err=True)
    if as_json:
        click.echo(json.dumps([h.as_dict() for h in found.hits], indent=2, ensure_ascii=False))
    else:
        for dh in found.hits:
            click.echo(labelled_line(dh.drive, dh.hit))
        if not found.hits:
            click.echo("no matching entries", err=True)
    return 0 if found.hits else 1
