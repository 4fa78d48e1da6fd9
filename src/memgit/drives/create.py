"""Creating drives: a new checkout or bare server drive (``memgit init``), an existing
memory repository made a drive in place (``memgit init --adopt``), and a checkout of a
server drive ready for ``memgit sync`` (``memgit clone``)."""

from __future__ import annotations

import os
import secrets
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from memgit.errors import NotADriveError, UsageError
from memgit.format import entries as fmt
from memgit.git.plumbing import find_repository, hooks_dir
from memgit.git.remote import clone_repository
from memgit.git.repository import (
    Drive,
    build_tree,
    cas_ref,
    commit_tree_id,
    create_commit,
    file_at,
    head_branch,
    init_bare,
    open_drive,
    read_blob,
    ref_target,
    set_ref,
    tree_files,
)
from memgit.git.worktree import checkout_state, commit_everything, init_checkout, update_checkout
from memgit.policy.settings import POLICY_KEY, drive_policy
from memgit.safe_text import display_url
from memgit.sync.client import BRANCH, network_error
from memgit.sync.status import LAST_SYNCED, remote_head_ref

PRE_COMMIT = """#!/bin/sh
# memgit pre-commit hook (written by memgit clone): refuse a commit the drive
# policy does not allow, judging what is staged. Bypass once: git commit --no-verify.
exec {python} -m memgit.githooks.precommit
"""


def is_empty_dir(path: Path) -> bool:
    return path.is_dir() and not any(path.iterdir())


def create_drive(target: Path, *, bare: bool, title: str = "Memory",
                 empty: bool = False) -> Path:
    """Create a drive at ``target`` (branch main, a MEMORY.md with ``# TITLE`` and
    ``## Index``, a first commit); ``bare``: a server drive with memgit's hooks and
    git's receive checks; ``empty`` (with ``bare``): no commit at all, so that the first
    push may bring an existing history (receive judges its tip by every rule, its
    older commits by the history rules). Refuses a folder that is not empty."""
    if target.exists() and not target.is_dir():
        raise UsageError(f"{target} exists and is not a folder", "choose another path")
    if target.exists() and not is_empty_dir(target):
        if (target / fmt.MEMORY_FILE).exists() and ((target / ".git").exists() or bare):
            raise UsageError(f"{target} is already a drive", "nothing to do")
        raise UsageError(f"{target} is not empty and is not a drive",
                         f"choose an empty or new folder, or make a drive of it in place: "
                         f"memgit init --adopt {target}")
    files = {fmt.MEMORY_FILE: fmt.initial_memory(title).encode()}
    message = first_commit_message()
    if bare:
        drive = init_bare(target, None if empty else files, message)
        from memgit.githooks.install import configure_server, install_server_hooks

        configure_server(drive)
        install_server_hooks(drive, chain=False)
    else:
        init_checkout(target, files, message)
    return target


def first_commit_message() -> str:
    """The message of a new drive's first commit: "Create drive" and a random
    ``Drive-Nonce`` trailer. The drive id is that commit's id (``index.reindex.drive_id``),
    and a commit's id is a hash of its tree, author, committer, dates and message, so
    without the nonce two drives made by one identity in the same second (dates have
    one-second resolution) would be one commit, hence one drive id."""
    return f"Create drive\n\nDrive-Nonce: {secrets.token_hex(8)}\n"


@dataclass
class Adopted:
    """What ``memgit init --adopt`` did: the drive, its branch, the commit it made (None
    when MEMORY.md and its Index were right already), and what it says about the branch."""

    drive: Drive
    branch: str
    commit: str | None
    created_memory: bool
    branch_note: str


def adopt_drive(target: Path) -> Adopted:
    """Make the memory repository at ``target`` a drive in place, keeping its history:
    a folder that is no repository yet becomes one (branch main, its files committed);
    MEMORY.md with ``# Memory`` and ``## Index`` is created when missing and its Index
    regenerated, as one commit on the current branch; the policy follows that branch
    (``branch:`` written to memgit.yaml in the git directory, or a note saying how to
    rename); a checkout gets memgit's pre-commit hook. What still fails the policy is
    for the caller to judge and print."""
    if not target.is_dir():
        raise UsageError(f"{target} is not a folder", "give the folder of the memory to adopt")
    found = find_repository(target)
    root = target.resolve()
    if found is not None and root not in (found[0], found[0].parent):
        raise UsageError(f"{target} is inside the repository {found[0].parent}, not one of "
                         "its own", "adopt works on a repository's root: copy the folder "
                         "out first, or bring its memory into a drive with memgit import")
    if found is None:
        if is_empty_dir(target):
            raise UsageError(f"{target} is empty: there is no memory to adopt",
                             f"create a new drive instead: memgit init {target}")
        commit_everything(target, "Memory folder as it was (memgit init --adopt)")
    drive = open_drive(target)
    ref = head_branch(drive)
    if ref is None:
        raise UsageError("HEAD is detached", "check out the branch that holds the memory, "
                         "then run memgit init --adopt again")
    head = ref_target(drive, ref)
    if head is None:
        raise NotADriveError(f"{target} has no commit on {ref.removeprefix('refs/heads/')}",
                             "commit the memory files first (a bare repository cannot be "
                             "adopted empty; memgit init --bare makes a new one)")
    commit, created = _memory_commit(drive, ref, head)
    note = _follow_branch(drive, ref.removeprefix("refs/heads/"))
    if drive.workdir is not None:
        install_pre_commit(drive.git_dir)
    return Adopted(drive, ref.removeprefix("refs/heads/"), commit, created, note)


def _memory_commit(drive: Drive, ref: str, head: str) -> tuple[str | None, bool]:
    """Commit MEMORY.md (created when missing) with its Index regenerated, on top of
    ``head`` with compare-and-swap; (the commit or None, whether MEMORY.md was new)."""
    tree = commit_tree_id(drive, head)
    found = file_at(drive, tree, fmt.MEMORY_FILE)
    if found is not None:
        try:
            text = read_blob(drive, found.oid).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UsageError("MEMORY.md is not UTF-8 text", "save it as UTF-8, commit, and "
                             "run memgit init --adopt again") from exc
    else:
        text = fmt.initial_memory()
    paths = [f.path for f in tree_files(drive, tree)] + [fmt.MEMORY_FILE]
    new = fmt.regenerate_index_section(text, paths)
    if found is not None and new == text:
        return None, False
    if drive.workdir is not None:
        staged, work = checkout_state(drive, fmt.MEMORY_FILE)
        before = found.oid if found is not None else None
        if staged != before or work != before:
            raise UsageError("MEMORY.md has uncommitted changes",
                             "commit or stash them, then run memgit init --adopt again")
    message = ("Adopt as a memgit drive: " + ("create MEMORY.md" if found is None
                                              else "regenerate the ## Index of MEMORY.md"))
    new_tree = build_tree(drive, tree, {fmt.MEMORY_FILE: new.encode("utf-8")})
    commit = create_commit(drive, new_tree, [head], message + "\n")
    if not cas_ref(drive, ref, head, commit, "memgit init --adopt"):
        raise UsageError(f"{ref} moved while adopting", "run memgit init --adopt again")
    if drive.workdir is not None:
        update_checkout(drive, {fmt.MEMORY_FILE: new.encode("utf-8")})
    return commit, found is None


def _follow_branch(drive: Drive, branch: str) -> str:
    """Make the drive's policy name ``branch``; a sentence on what was done or what to do."""
    policy_file = drive.git_dir / "memgit.yaml"
    config = drive.config_value(POLICY_KEY)
    policy = drive_policy(drive)
    if policy.branch == branch:
        return ""
    rename = f"git branch -m {branch} {policy.branch}"
    if not policy_file.exists() and config:
        return (f"the policy ({config}, from git config memgit.policy) names branch "
                f"{policy.branch}: write 'branch: {branch}' there, or rename: {rename}")
    text = policy_file.read_text(encoding="utf-8") if policy_file.exists() else ""
    import yaml

    data = yaml.safe_load(text) if text.strip() else None  # find_policy parsed it already
    if isinstance(data, dict) and "branch" in data:
        return (f"{policy_file} names branch {policy.branch}: change it to 'branch: "
                f"{branch}', or rename: {rename}")
    if text and not text.endswith("\n"):
        text += "\n"
    policy_file.write_text(text + f"branch: {branch}\n", encoding="utf-8")
    return (f"wrote 'branch: {branch}' to {policy_file} (the drive follows {branch}; to "
            f"use {policy.branch} instead: {rename}, then remove that line)")


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
                raise NotADriveError(f"{display_url(url)} has no {BRANCH} branch (not a drive)",
                                     "check the URL; memgit init --bare creates a server drive")
            raise network_error(url, err, "clone")
        drive = open_drive(target)
        if not (target / fmt.MEMORY_FILE).is_file():
            raise NotADriveError(f"{display_url(url)} is not a drive (no {fmt.MEMORY_FILE} "
                                 f"on {BRANCH})",
                                 "check the URL")
        head = ref_target(drive, f"refs/heads/{BRANCH}")
        assert head is not None
        set_ref(drive, LAST_SYNCED, head, "memgit clone")
        set_ref(drive, remote_head_ref("origin"), head, "memgit clone")
        install_pre_commit(drive.git_dir)
        from memgit.working.sync import sync_working

        sync_working(drive, "origin", fetched=False)  # the server's working memory
    except BaseException:
        if existed:
            for child in target.iterdir():
                shutil.rmtree(child) if child.is_dir() and not child.is_symlink() \
                    else child.unlink()
        else:
            shutil.rmtree(target, ignore_errors=True)
        raise
    return target
