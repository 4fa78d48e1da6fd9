"""memgit observe: keep one turn of a conversation for the next dream (never in the tree)."""

from __future__ import annotations

import json
import sys

import click

from memgit.cli.common import drive_from_ctx, policy_for, policy_option
from memgit.dream.observations import MAX_CHARS, ROLES, observe


@click.command("observe")
@click.argument("text", metavar="TEXT|-")
@click.option("--session", default="", metavar="ID", help="The agent's session id.")
@click.option("--role", type=click.Choice(ROLES), default="user", show_default=True,
              help="Who said it.")
@click.option("--incognito", is_flag=True, help="Store nothing (the turn is dropped).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@policy_option
@click.pass_context
def command(ctx: click.Context, text: str, session: str, role: str, incognito: bool,
            as_json: bool, policy_file: str | None) -> int:
    """Keep TEXT (or stdin with -) as one turn: at most 600 characters, refused when
    it holds a possible credential, stored in the git directory for memgit dream."""
    if text == "-":
        text = sys.stdin.read()
    drive = drive_from_ctx(ctx)
    policy = policy_for(drive, policy_file)
    result = observe(drive, text, session=session, role=role, incognito=incognito,
                     policy=policy)
    if as_json:
        click.echo(json.dumps(result.as_dict()))
    elif not result.stored:
        click.echo("incognito: nothing stored")
    else:
        click.echo(result.id)
        if result.truncated:
            click.echo(f"memgit: the turn was cut to {MAX_CHARS} characters", err=True)
    return 0
