"""memgit get: print a value of the agent's working memory."""

from __future__ import annotations

import json

import click

from memgit.cli.common import drive_from_ctx, policy_for, policy_option, scope_options
from memgit.policy.working import encode_value
from memgit.safe_text import printable
from memgit.working.store import get_value, resolve_scope


@click.command("get")
@click.argument("key")
@click.option("--json", "as_json", is_flag=True,
              help="Print key, value, id, set time and scope as JSON.")
@scope_options
@policy_option
@click.pass_context
def command(ctx: click.Context, key: str, as_json: bool, agent: str | None, team: str | None,
            policy_file: str | None) -> int:
    """Print KEY's value (a string as it is, anything else as JSON); exit 1 (MG016) when
    working memory has no such key."""
    drive = drive_from_ctx(ctx)
    scope = resolve_scope(drive, agent, team)
    found = get_value(drive, scope, key, policy_for(drive, policy_file))
    if as_json:
        click.echo(json.dumps({"key": key, "value": found.value, "id": found.id,
                               "set": found.set_at, "agent": scope.agent,
                               "team": scope.team}, ensure_ascii=False))
    else:
        shown = found.value if isinstance(found.value, str) else encode_value(found.value)
        # each line through the terminal sanitiser: line breaks stay, escapes do not
        click.echo("\n".join(printable(line) for line in shown.split("\n")))
    return 0
