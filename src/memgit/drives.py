"""Creating drives: a new checkout or bare server drive (``memgit init``), and a checkout
of a server drive ready for ``memgit sync`` (``memgit clone``)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from . import format as fmt
from .errors import NotADriveError, UsageError
from .git.plumbing import hooks_dir
from .git.remote import clone_repository
from .git.repository import init_bare, open_drive, ref_target, set_ref
from .git.worktree import init_checkout
from .sync import BRANCH, network_error
from .sync_state import LAST_SYNCED, remote_head_ref

PRE_COMMIT = """#!/bin/sh
# memgit pre-commit hook (written by memgit clone): refuse a commit the drive
# policy does not allow, judging what is staged. Bypass once: git commit --no-verify.
exec {python} -m memgit.precommit
"""


def is_empty_dir(path: Path) -> bool:
    return path.is_dir() and not any(path.iterdir())


def create_drive(target: Path, *, bare: bool, title: str = "Memory") -> Path:
    """Create a drive at ``target`` (branch main, a MEMORY.md with ``# TITLE`` and
    ``## Index``, a first commit); ``bare``: a server drive with memgit's hooks and
    git's receive checks. Refuses a folder that is not empty."""
    if target.exists() and not target.is_dir():
        raise UsageError(f"{target} exists and is not a folder", "choose another path")
    if target.exists() and not is_empty_dir(target):
        if (target / fmt.MEMORY_FILE).exists() and ((target / ".git").exists() or bare):
            raise UsageError(f"{target} is already a drive", "nothing to do")
        raise UsageError(f"{target} is not empty and is not a drive",
                         "choose an empty or new folder")
    files = {fmt.MEMORY_FILE: fmt.initial_memory(title).encode()}
    message = "Create drive"
    if bare:
        drive = init_bare(target, files, message)
        from .hooks import configure_server, install_server_hooks

        configure_server(drive)
        install_server_hooks(drive, chain=False)
    else:
        init_checkout(target, files, message)
    return target


def default_clone_path(url: str) -> str:
    """The folder ``memgit clone URL`` makes: the URL's last part without ``.git``."""
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
    """Clone ``url`` into ``target`` with the pre-commit hook and the sync refs set;
    on any failure nothing is left behind."""
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
