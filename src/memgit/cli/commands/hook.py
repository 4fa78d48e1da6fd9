"""memgit hook: run a server hook by hand or from a hook script (pre-receive, post-receive).

The installed scripts call memgit.githooks.entry.hook_main without click; this command is
the same code for people and other hook managers: ``memgit hook pre-receive < updates``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from memgit.cli.common import ctx_directory, policy_option
from memgit.githooks.entry import HOOK_NAMES, run_hook
from memgit.githooks.hook_io import hook_git_dir


@click.command("hook")
@click.argument("name", type=click.Choice(HOOK_NAMES))
@click.option("--chain", metavar="PATH", default=None,
              help="A hook to run after memgit's own check, with the same stdin.")
@policy_option
@click.pass_context
def command(ctx: click.Context, name: str, chain: str | None, policy_file: str | None) -> int:
    """Run server hook NAME for the repository git runs it in (or -C PATH).

    Reads git's 'OLD NEW REF' lines on stdin. pre-receive exits non-zero and prints
    every violation when the push must be refused.
    """
    directory = ctx_directory(ctx)
    git_dir = Path(directory).absolute() if directory else hook_git_dir()
    stdin = sys.stdin.buffer.read()
    return run_hook(name, stdin, git_dir, policy_file=policy_file, chain=chain)
