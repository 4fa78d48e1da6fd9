"""memgit install-hooks: put memgit's pre-receive and post-receive into bare repositories."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import UsageError
from ..hooks import configure_server, install_server_hooks, server_status
from ..repo import find_repository, open_drive
from ._common import ctx_directory


def _git_dir(base: Path, repo: str) -> Path:
    path = (base / repo).absolute()
    found = find_repository(path) if path.is_dir() else None
    if found is None:
        raise UsageError(f"{path} is not a git repository", "name a bare repository")
    git_dir, bare = found
    if not bare:
        raise UsageError(f"{path} is not a bare repository",
                         "server hooks belong in the bare repository people push to; "
                         "a checkout uses the pre-commit hooks (.pre-commit-hooks.yaml)")
    if git_dir.resolve() != path.resolve():
        raise UsageError(f"{path} is not a git repository (it is inside {git_dir})",
                         "name the bare repository itself")
    return git_dir


@click.command("install-hooks")
@click.argument("repos", nargs=-1, metavar="REPO...")
@click.option("--server", is_flag=True, help="Install the server hooks (pre-receive, "
              "post-receive) and set receive.fsckObjects, receive.denyNonFastForwards, "
              "receive.denyDeletes.")
@click.option("--chain", is_flag=True, help="Keep a hook memgit did not write: run it after "
              "memgit's check instead of refusing to install.")
@click.option("--check", is_flag=True, help="Only report whether the hooks are installed "
              "and current (exit 1 if not).")
@click.pass_context
def command(ctx: click.Context, repos: tuple[str, ...], server: bool, chain: bool,
            check: bool) -> int:
    """Install memgit's server hooks into bare repositories REPO... (default: -C PATH)."""
    if not server and not check:
        raise UsageError("say what to do: --server installs, --check reports",
                         "memgit install-hooks --server REPO...")
    if check and chain:
        raise UsageError("--check changes nothing, so --chain has no meaning with it",
                         "drop --chain")
    base = Path(ctx_directory(ctx) or ".")
    git_dirs = [_git_dir(base, r) for r in (repos or (".",))]
    if check:
        failed = 0
        for git_dir in git_dirs:
            status = server_status(git_dir)
            if status.ok:
                click.echo(f"{git_dir}: ok (hooks current, git's receive checks on)")
                continue
            failed += 1
            click.echo(f"{git_dir}: needs `memgit install-hooks --server`")
            for problem in status.problems:
                click.echo(f"  {problem}")
        return 1 if failed else 0
    for git_dir in git_dirs:
        drive = open_drive(git_dir)
        written = install_server_hooks(drive, chain=chain)
        configure_server(drive)
        names = ", ".join(p.name for p in written)
        chained = [p for p in written if Path(str(p) + ".memgit-chained").exists()]
        extra = f"; chained: {', '.join(p.name for p in chained)}" if chained else ""
        click.echo(f"{git_dir}: installed {names}{extra}")
    return 0
