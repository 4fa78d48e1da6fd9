"""memgit unset: remove a key from the agent's working memory (history keeps it)."""

from __future__ import annotations

import click

from memgit.cli.common import drive_from_ctx, policy_for, policy_option, scope_options
from memgit.working.store import UNSET, resolve_scope, write_values


@click.command("unset")
@click.argument("key")
@scope_options
@policy_option
@click.pass_context
def command(ctx: click.Context, key: str, agent: str | None, team: str | None,
            policy_file: str | None) -> int:
    """Remove KEY from working memory (exit 1, MG016, when there is none); the ref's
    history keeps the old value: memgit purge ID deletes it forever."""
    drive = drive_from_ctx(ctx)
    write_values(drive, resolve_scope(drive, agent, team), {key: UNSET},
                 policy_for(drive, policy_file))
    return 0
