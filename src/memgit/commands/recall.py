"""memgit recall: full-text search (FTS5, BM25) over the drive's entries."""

from __future__ import annotations

import json

import click

from ..errors import UsageError
from ..read_path import recall
from ..recall_search import hit_line
from ._common import drive_from_ctx, policy_for, policy_option


@click.command("recall")
@click.argument("query", nargs=-1, required=True)
@click.option("-n", "--limit", default=5, show_default=True, type=click.IntRange(1, 1000),
              help="How many entries to return.")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@click.option("--no-count", is_flag=True, help="Do not count these retrievals.")
@policy_option
@click.pass_context
def command(ctx: click.Context, query: tuple[str, ...], limit: int, as_json: bool,
            no_count: bool, policy_file: str | None) -> int:
    """Find the entries that best match QUERY. Exit 0 with results, 1 without."""
    text = " ".join(query).strip()
    if not text:
        raise UsageError("the query is empty", "say what to look for")
    drive = drive_from_ctx(ctx)
    policy = policy_for(drive, policy_file)
    hits = recall(drive, text, limit, count=not no_count, policy=policy)
    if as_json:
        click.echo(json.dumps([h.as_dict() for h in hits], indent=2, ensure_ascii=False))
    else:
        for hit in hits:
            click.echo(hit_line(hit))
        if not hits:
            click.echo("no matching entries", err=True)
    return 0 if hits else 1
