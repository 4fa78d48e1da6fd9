"""memgit index: bring the index up to the branch head, or rebuild it."""

from __future__ import annotations

import json
import time
from dataclasses import asdict

import click

from ..read_path import catch_up
from ..recall_index import reindex
from ._common import drive_from_ctx, policy_for, policy_option


@click.command("index")
@click.option("--rebuild", is_flag=True, help="Re-read every file instead of the changed ones.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@policy_option
@click.pass_context
def command(ctx: click.Context, rebuild: bool, as_json: bool, policy_file: str | None) -> int:
    """Update the index (SQLite in the git directory) from the drive."""
    drive = drive_from_ctx(ctx)
    policy = policy_for(drive, policy_file)
    started = time.perf_counter()
    # a read like any other: retries pending writes and repairs first
    result = catch_up(drive, policy=policy)
    if rebuild:
        result = reindex(drive, full=True, policy=policy)
    elapsed = time.perf_counter() - started
    if as_json:
        data = asdict(result)
        data["seconds"] = round(elapsed, 4)
        click.echo(json.dumps(data, indent=2))
        return 0
    if result.mode == "current":
        click.echo(f"index is current at {(result.head or '')[:12]}")
    elif result.mode == "empty":
        click.echo(f"the drive has no commit yet (branch {policy.branch}); nothing to index")
    else:
        click.echo(f"{result.mode} reindex to {(result.head or '')[:12]} in "
                   f"{elapsed * 1000:.0f} ms: {result.files} files read, {result.inserted} "
                   f"new, {result.updated} updated, {result.retired} retired")
    return 0
