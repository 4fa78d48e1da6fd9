"""memgit set: store a value in the agent's working memory (refs/memgit/working)."""

from __future__ import annotations

import sys

import click

from memgit.cli.common import drive_from_ctx, policy_for, policy_option, scope_options
from memgit.policy.working import parse_json
from memgit.working.store import raise_first, resolve_scope, write_values


@click.command("set")
@click.argument("key")
@click.argument("value", metavar="VALUE|-")
@click.option("--json", "as_json", is_flag=True,
              help="VALUE is JSON (else it is stored as a JSON string).")
@scope_options
@policy_option
@click.pass_context
def command(ctx: click.Context, key: str, value: str, as_json: bool, agent: str | None,
            team: str | None, policy_file: str | None) -> int:
    """Set KEY to VALUE ('-' reads it from stdin) in working memory: state an agent keeps
    beside its facts, never recalled, synced with memgit sync."""
    drive = drive_from_ctx(ctx)
    policy = policy_for(drive, policy_file)
    scope = resolve_scope(drive, agent, team)
    if value == "-":
        value = sys.stdin.buffer.read().decode("utf-8", errors="surrogateescape")
        if not as_json and value.endswith("\n"):
            value = value[:-1]  # what `$(...)` would drop too
    stored: object = value
    if as_json:
        stored, problems = parse_json(value)
        raise_first(problems)
    write_values(drive, scope, {key: stored}, policy)
    return 0
