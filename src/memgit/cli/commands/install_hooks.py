"""memgit install-hooks: put memgit's pre-receive and post-receive into bare repositories."""

from __future__ import annotations

from pathlib import Path

import click

from memgit.cli.common import ctx_directory
from memgit.errors import UsageError
from memgit.git.repository import open_drive
from memgit.githooks.install import (
    LAYOUTS,
    bare_repository,
    configure_server,
    install_gitea_hooks,
    install_server_hooks,
    server_status,
)


@click.command("install-hooks")
@click.argument("repos", nargs=-1, metavar="REPO...")
@click.option("--server", is_flag=True, help="Install the server hooks (pre-receive, "
              "post-receive) and set git's receive checks and ref lock timeouts "
              "(docs/server.md).")
@click.option("--chain", is_flag=True, help="Keep a hook memgit did not write: run it after "
              "memgit's check instead of refusing to install.")
@click.option("--layout", type=click.Choice(LAYOUTS), default="plain", show_default=True,
              help="gitea (also Forgejo): write hooks/pre-receive.d/memgit and "
              "hooks/post-receive.d/memgit beside the forge's own hooks.")
@click.option("--check", is_flag=True, help="Only report whether the hooks are installed "
              "and current (exit 1 if not).")
@click.pass_context
def command(ctx: click.Context, repos: tuple[str, ...], server: bool, chain: bool,
            layout: str, check: bool) -> int:
    """Install memgit's server hooks into bare repositories REPO... (default: -C PATH)."""
    if not server and not check:
        raise UsageError("say what to do: --server installs, --check reports",
                         "memgit install-hooks --server REPO...")
    if check and chain:
        raise UsageError("--check changes nothing, so --chain has no meaning with it",
                         "drop --chain")
    if chain and layout == "gitea":
        raise UsageError("--chain has no meaning with --layout gitea",
                         "Gitea runs every hook of hooks/<name>.d/ itself; drop --chain")
    base = Path(ctx_directory(ctx) or ".")
    git_dirs = [bare_repository((base / r).absolute()) for r in (repos or (".",))]
    if check:
        failed = 0
        for git_dir in git_dirs:
            status = server_status(git_dir, layout=layout)
            if status.ok:
                click.echo(f"{git_dir}: ok (hooks current, git's settings on)")
                continue
            failed += 1
            click.echo(f"{git_dir}: needs `memgit install-hooks --server`")
            for problem in status.problems:
                click.echo(f"  {problem}")
        return 1 if failed else 0
    for git_dir in git_dirs:
        drive = open_drive(git_dir)
        written = install_gitea_hooks(git_dir) if layout == "gitea" else \
            install_server_hooks(drive, chain=chain)
        configure_server(drive)
        names = ", ".join(str(p.relative_to(git_dir / "hooks")) if layout == "gitea"
                          else p.name for p in written)
        chained = [p for p in written if Path(str(p) + ".memgit-chained").exists()]
        extra = f"; chained: {', '.join(p.name for p in chained)}" if chained else ""
        click.echo(f"{git_dir}: installed {names}{extra}")
    return 0
