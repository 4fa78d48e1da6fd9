"""memgit recall: search the drive's entries by words (FTS5, BM25), by meaning, or both."""

from __future__ import annotations

import json

import click

from memgit.cli.common import drive_from_ctx, policy_for, policy_option, shared_options
from memgit.errors import UsageError
from memgit.git.repository import Drive
from memgit.index.search import hit_json, hit_line, labelled_line
from memgit.policy.settings import Policy
from memgit.recall.hybrid import check_mounts_mode
from memgit.recall.read_path import recall_in_mode
from memgit.safe_text import printable


@click.command("recall")
@click.argument("query", nargs=-1, required=True)
@shared_options("recall")
@policy_option
@click.pass_context
def command(ctx: click.Context, query: tuple[str, ...], limit: int, mode: str | None,
            as_json: bool, no_count: bool, with_mounts: bool, policy_file: str | None) -> int:
    """Find the entries that best match QUERY. Exit 0 with results, 1 without.

    Without its embedder (extra not installed, endpoint down) recall answers by words
    and says so in one line on stderr. With --mounts every drive is searched by words."""
    text = " ".join(query).strip()
    if not text:
        raise UsageError("the query is empty", "say what to look for")
    drive = drive_from_ctx(ctx)
    policy = policy_for(drive, policy_file)
    if with_mounts:
        check_mounts_mode(mode)
        return _with_mounts(drive, text, limit, as_json, not no_count, policy)
    found = recall_in_mode(drive, text, limit, mode=mode, count=not no_count, policy=policy)
    for warning in found.warnings:
        click.echo(f"memgit: warning: {printable(warning, 400)}", err=True)
    hits = found.hits
    if as_json:
        click.echo(json.dumps([hit_json(h) for h in hits], indent=2, ensure_ascii=False))
    else:
        for hit in hits:
            click.echo(hit_line(hit))
        if not hits:
            click.echo("no matching entries", err=True)
    return 0 if hits else 1


def _with_mounts(drive: Drive, text: str, limit: int, as_json: bool, count: bool,
                 policy: Policy) -> int:
    from memgit.sync.mounts import recall_with_mounts  # loaded only for --mounts

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
