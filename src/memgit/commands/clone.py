"""memgit clone: a drive checkout of a server drive, with the pre-commit hook and sync refs."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import click

from .. import format as fmt
from ..errors import NotADriveError, UsageError
from ..repo import clone_repository, hooks_dir, is_empty_dir, open_drive, ref_target, set_ref
from ..sync import BRANCH, LAST_SYNCED, network_error, remote_head_ref

PRE_COMMIT = """#!/bin/sh
# memgit pre-commit hook (written by memgit clone): refuse a commit the drive
# policy does not allow, judging what is staged. Bypass once: git commit --no-verify.
exec {python} -m memgit lint --cached
"""


def _default_path(url: str) -> str:
    name = url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    return name.removesuffix(".git") or "drive"


def install_pre_commit(git_dir: Path) -> Path:
    """Write ``hooks/pre-commit`` running this Python's memgit (an existing hook is kept)."""
    hook = hooks_dir(git_dir) / "pre-commit"
    if hook.exists():
        return hook
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(PRE_COMMIT.format(python=sys.executable))
    os.chmod(hook, 0o755)
    return hook


def clone_drive(url: str, target: Path) -> Path:
    """Clone ``url`` into ``target``; on any failure nothing is left behind."""
    if target.exists() and not is_empty_dir(target):
        raise UsageError(f"{target} exists and is not empty", "choose a new or empty folder")
    existed = target.exists()
    proc = clone_repository(url, target, BRANCH)
    try:
        if proc.returncode != 0:
            err = proc.stderr.decode(errors="replace")
            if f"Remote branch {BRANCH} not found" in err:
                raise NotADriveError(f"{url} has no {BRANCH} branch (not a drive)",
                                     "check the URL; memgit init --bare creates a server drive")
            raise network_error(url, err, "clone")
        drive = open_drive(target)
        if not (target / fmt.MEMORY_FILE).is_file():
            raise NotADriveError(f"{url} is not a drive (no {fmt.MEMORY_FILE} on {BRANCH})",
                                 "check the URL")
        head = ref_target(drive, f"refs/heads/{BRANCH}")
        assert head is not None
        set_ref(drive, LAST_SYNCED, head, "memgit clone")
        set_ref(drive, remote_head_ref("origin"), head, "memgit clone")
        install_pre_commit(drive.git_dir)
    except BaseException:
        if existed:
            for child in target.iterdir():
                shutil.rmtree(child) if child.is_dir() and not child.is_symlink() \
                    else child.unlink()
        else:
            shutil.rmtree(target, ignore_errors=True)
        raise
    return target


@click.command("clone")
@click.argument("url")
@click.argument("path", required=False)
@click.pass_context
def command(ctx: click.Context, url: str, path: str | None) -> int:
    """Clone the drive at URL into PATH, ready for memgit sync."""
    base = Path((ctx.find_root().obj or {}).get("directory") or ".")
    target = (base / (path or _default_path(url))).absolute()
    clone_drive(url, target)
    click.echo(f"Cloned {url} into {target} (pre-commit hook installed; memgit sync "
               f"pushes your commits)")
    return 0
