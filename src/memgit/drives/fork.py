"""Forks: a drive copied with its history into a new drive, and what it inherits later.

A fork gets copied objects (not hard links), a new drive id, its parent's policy and purge
registry, and no remote, so no sync pushes a child's writes into its parent. The parent is
recorded in git config (``memgit.parent*``), not in a ref: a ref would pin the parent's
commit, be rewritten by a purge, be refused by pre-receive and travel in bundles
(docs/shared.md, "Forks"). :func:`adopt_registry` applies a parent's later purges.
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memgit.drives.create import install_pre_commit, is_empty_dir
from memgit.errors import NotADriveError, RepoError, UsageError
from memgit.format import entries as fmt
from memgit.git.plumbing import config_set, find_repository, git_plumbing
from memgit.git.remote import clone_repository
from memgit.git.repository import Drive, open_drive, ref_target
from memgit.index import reindex as recall_index
from memgit.policy.registry import REGISTRY_FILE, PurgeRegistry, RegistryKey
from memgit.policy.settings import drive_policy
from memgit.purge.rewrite import PurgeResult, apply_purge, plan_purge
from memgit.purge.text import Progress, no_progress

DRIVE_ID_KEY = recall_index.DRIVE_ID_KEY
PARENT_DRIVE = "memgit.parentdrive"
PARENT_COMMIT = "memgit.parentcommit"
PARENT_PATH = "memgit.parentpath"
COPIED = ("memgit.yaml", REGISTRY_FILE)  # from the parent's git directory


@dataclass
class ForkResult:
    path: Path
    bare: bool
    drive_id: str
    parent_drive: str
    parent_commit: str
    entries: int

    def as_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "bare": self.bare, "drive_id": self.drive_id,
                "parent_drive": self.parent_drive, "parent_commit": self.parent_commit,
                "entries": self.entries}


def new_drive_id() -> str:
    """A fork's drive id: ``d-`` and a lowercase ULID (a first drive's id is its root
    commit's, which a fork shares with its parent, so a fork needs one of its own)."""
    return "d-" + fmt.new_id()[2:]


def parent_of(drive: Drive) -> dict[str, str] | None:
    """The recorded parent of a fork (drive id, commit, path), None for a drive that is
    not a fork."""
    parent = drive.config_value(PARENT_DRIVE)
    if not parent:
        return None
    return {"drive_id": parent, "commit": drive.config_value(PARENT_COMMIT) or "",
            "path": drive.config_value(PARENT_PATH) or ""}


def fork_drive(source: str | Path, target: Path, *, bare: bool = False,
               progress: Progress = no_progress) -> ForkResult:
    """Copy drive ``source`` (a local checkout or bare drive) into ``target``; nothing is
    left at ``target`` when anything fails."""
    src = open_drive(source)
    policy = drive_policy(src)
    if ref_target(src, policy.branch_ref) is None:
        raise NotADriveError(f"{src.root} has no branch {policy.branch}",
                             "fork a drive (memgit init creates one)")
    target = Path(target).absolute()
    if target.exists() and not is_empty_dir(target):
        raise UsageError(f"{target} exists and is not empty", "choose a new or empty folder")
    parent_id = recall_index.drive_id(src)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.fork-", dir=target.parent)) / "d"
    progress("copying history", 0, 1)
    try:
        proc = clone_repository(str(src.git_dir), tmp, policy.branch, bare=bare, copy=True)
        if proc.returncode != 0:
            raise RepoError(f"git clone of {src.root} failed: "
                            f"{proc.stderr.decode(errors='replace').strip()}", "")
        fork = open_drive(tmp)
        head = ref_target(fork, policy.branch_ref)
        assert head is not None
        for name in COPIED:
            if (src.git_dir / name).is_file():
                shutil.copyfile(src.git_dir / name, fork.git_dir / name)
        git_plumbing(fork.git_dir, "remote", "remove", "origin")
        for key, value in ((DRIVE_ID_KEY, new_drive_id()), (PARENT_DRIVE, parent_id),
                           (PARENT_COMMIT, head), (PARENT_PATH, str(src.git_dir))):
            config_set(fork.git_dir, key, value)
        if bare:
            from memgit.githooks.install import configure_server, install_server_hooks

            configure_server(fork)
            install_server_hooks(fork, chain=False)
        else:
            install_pre_commit(fork.git_dir)
        if target.exists():
            target.rmdir()
        os.rename(tmp, target)
    finally:
        shutil.rmtree(tmp.parent, ignore_errors=True)
    progress("copying history", 1, 1)
    progress("indexing", 0, 1)
    fork = open_drive(target)
    recall_index.reindex(fork)
    progress("indexing", 1, 1)
    from memgit.state import connection, facts

    return ForkResult(target, bare, fork.config_value(DRIVE_ID_KEY) or "", parent_id, head,
                      facts.stats(connection(fork.git_dir)).entries)


# --- the parent's purges ------------------------------------------------------------------------


@dataclass
class Adoption:
    """What ``memgit purge --from-registry`` did: ids purged from this drive's history
    (the purge records them in the registry), and the ids whose registry lines were taken
    over as they are (ids the drive does not hold)."""

    listed: int  # ids in the given registry
    purged: list[str] = field(default_factory=list)
    adopted: list[str] = field(default_factory=list)
    result: PurgeResult | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"listed": self.listed, "purged": self.purged,
                               "adopted": self.adopted}
        if self.result is not None:
            out["purge"] = self.result.summary()
        return out


def registry_lines(path: str | Path) -> list[tuple[str, RegistryKey | str, str]]:
    """(id, key, date) of every line of a purge registry, the key as the registry records
    it (a version 1 digest, or a RegistryKey), so :meth:`PurgeRegistry.append` writes the
    same line again. ``path`` is the registry file itself or a drive (its git directory's
    ``memgit-purged``; none: no lines). The one registry parser validates the file first
    (PurgeRegistry.load raises RegistryError naming a malformed line)."""
    given = Path(path)
    if given.is_dir():
        found = find_repository(given)
        if found is None:
            raise NotADriveError(f"{given} is neither a purge registry file nor a drive",
                                 "pass the parent's memgit-purged or the parent drive")
        given = found[0] / REGISTRY_FILE
        if not given.is_file():
            return []
    elif not given.is_file():
        raise UsageError(f"{given} does not exist", "pass the parent's memgit-purged file "
                         "or the parent drive")
    with tempfile.TemporaryDirectory() as folder:
        shutil.copyfile(given, Path(folder) / REGISTRY_FILE)
        PurgeRegistry.load(Path(folder))
    out: list[tuple[str, RegistryKey | str, str]] = []
    for line in given.read_text(encoding="utf-8").split("\n"):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split(" ")
        key: RegistryKey | str = parts[1]
        if parts[3:4] == ["2"]:
            key = RegistryKey(parts[1], 2, int(parts[4]), int(parts[5]))
        out.append((parts[0], key, parts[2] if len(parts) > 2 else ""))
    return out


def adopt_registry(drive: Drive, path: str | Path, *, dry_run: bool = False,
                   progress: Progress = no_progress) -> Adoption:
    """Apply a parent's purge registry to this drive (see the module docstring)."""
    lines = registry_lines(path)
    own = PurgeRegistry.load(drive.git_dir)
    ids = list(dict.fromkeys(i for i, _k, _t in lines if i not in own.ids))
    adoption = Adoption(len({i for i, _k, _t in lines}))
    if ids:
        plan = plan_purge(drive, ids, progress=progress, missing_ok=True)
        adoption.purged = list(plan.ids)
        if plan.ids and not dry_run:
            adoption.result = apply_purge(drive, plan, progress=progress)
    if dry_run:  # the purge records the ids it purges itself: the rest would be added
        adoption.adopted = [i for i in ids if i not in adoption.purged]
        return adoption
    own = PurgeRegistry.load(drive.git_dir)
    today = _dt.date.today().isoformat()
    by_date: dict[str, list[tuple[str, RegistryKey | str]]] = {}
    for entry_id, key, date in lines:
        digest = key if isinstance(key, str) else key.digest
        if entry_id not in own.ids or digest not in own.digests | own.legacy:
            by_date.setdefault(date or today, []).append((entry_id, key))
    for date, rows in sorted(by_date.items()):
        PurgeRegistry.append(drive.git_dir, rows, date)
    adoption.adopted = list(dict.fromkeys(i for rows in by_date.values() for i, _k in rows))
    return adoption
