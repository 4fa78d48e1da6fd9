"""memgit keys: list the keys of the agent's working memory, a page at a time."""

from __future__ import annotations

import json

import click

from memgit.cli.common import drive_from_ctx, scope_options
from memgit.safe_text import printable
from memgit.working.store import MAX_LIMIT, list_keys, parse_page_args, resolve_scope


@click.command("keys")
@click.option("--prefix", default="", metavar="P", help="Only keys starting with P.")
@click.option("--limit", type=int, default=None, metavar="N",
              help=f"Keys per page (default 100, at most {MAX_LIMIT}).")
@click.option("--after", default=None, metavar="KEY",
              help="Start after KEY (the next cursor of the previous page).")
@click.option("--json", "as_json", is_flag=True,
              help="Print {keys: [{key, bytes}], next} as JSON.")
@scope_options
@click.pass_context
def command(ctx: click.Context, prefix: str, limit: int | None, after: str | None,
            as_json: bool, agent: str | None, team: str | None) -> int:
    """List keys in ascending UTF-8 order; when more follow, the next cursor is printed
    (--json: "next"; else on stderr) for --after."""
    size = parse_page_args(limit)
    drive = drive_from_ctx(ctx)
    page, cursor = list_keys(drive, resolve_scope(drive, agent, team), prefix=prefix,
                             after=after, limit=size)
    if as_json:
        click.echo(json.dumps({"keys": [{"key": k, "bytes": n} for k, n in page],
                               "next": cursor}, ensure_ascii=False))
        return 0
    for key, _size in page:
        click.echo(printable(key))
    if cursor is not None:
        click.echo(f"next: memgit keys --after {json.dumps(cursor, ensure_ascii=False)}",
                   err=True)
    return 0
