"""Mounts: shared drives kept read-only next to a personal drive, and recall across them.

A mount is a bare clone at ``<git dir>/memgit/mounts/NAME.git``, never in the personal
drive's tree or index, with its own state database. It is read-only: its push URL names
no repository, the writer refuses it, and ``memgit mount sync`` only fetches (a shared
drive is written through a checkout, so its server judges the write). After the server's
history is rewritten, the vanished entries are deleted from its index and its reflogs
expired and unreachable objects pruned, so a purged text survives nowhere in the mount.
Names are never paths; a URL's credentials are never printed.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memgit import state
from memgit.errors import MemgitError, MountError, NotADriveError
from memgit.format import entries as fmt
from memgit.git.plumbing import config_set
from memgit.git.remote import clone_repository
from memgit.git.repository import (
    Drive,
    commit_tree_id,
    open_drive,
    ref_target,
    set_ref,
    tree_texts,
)
from memgit.git.rewrite import expire_reflogs_and_prune
from memgit.index import reindex as recall_index
from memgit.index.search import Hit, hit_json, merge_drives
from memgit.policy.settings import Policy, find_policy
from memgit.purge.text import Progress, no_progress
from memgit.recall.read_path import recall
from memgit.safe_text import display_url, scrub_url
from memgit.state import facts
from memgit.sync.client import fetch, learn_purged, purged_since
from memgit.sync.mount_dirs import MOUNTS_DIR, SELF, is_mount_name, mounted
from memgit.sync.status import LAST_SYNC_CONFIG
from memgit.write.writer import MOUNT_CONFIG

READ_ONLY_PUSH_URL = "memgit-mount-is-read-only"  # a push URL that names no repository


@dataclass
class Mount:
    name: str
    path: Path  # the mount's git directory
    url: str  # display form: credentials masked
    branch: str
    head: str | None
    last_sync: int | None  # seconds since the epoch
    entries: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "path": str(self.path), "url": self.url,
                "branch": self.branch, "head": self.head, "last_sync": self.last_sync,
                "entries": self.entries}


@dataclass
class MountSync:
    name: str
    old_head: str | None
    head: str | None
    rewritten: bool = False
    forgotten: int = 0  # recall-index rows deleted for entries the server purged
    entries: int = 0
    error: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "old_head": self.old_head, "head": self.head,
                "history_rewritten": self.rewritten, "forgotten": self.forgotten,
                "entries": self.entries, "error": self.error}


# --- names, places and URLs -----------------------------------------------------------------


def check_name(name: str) -> str:
    if not is_mount_name(name):
        raise MountError(f"{name[:80]!r} is not a mount name",
                         "use lowercase letters, digits, '-' and '_' (not 'self'), "
                         "starting with a letter or digit")
    return name


def mounts_dir(drive: Drive) -> Path:
    return drive.git_dir / MOUNTS_DIR


def mount_path(drive: Drive, name: str) -> Path:
    return mounts_dir(drive) / f"{check_name(name)}.git"


# --- add, list, remove ------------------------------------------------------------------------


def open_mount(drive: Drive, name: str) -> Drive:
    path = mount_path(drive, name)
    if path.is_symlink() or not (path / "HEAD").is_file():
        raise MountError(f"no mount named {name}", "memgit mount list shows the mounts")
    return open_drive(path)


def add_mount(drive: Drive, name: str, url: str, branch: str = "main", *,
              progress: Progress = no_progress) -> Mount:
    """Clone ``url``'s ``branch`` as mount ``name`` and index it; on any failure nothing
    is left behind."""
    target = mount_path(drive, name)
    if target.exists() or target.is_symlink():
        raise MountError(f"a mount named {name} exists", "pick another name, or memgit mount "
                         f"remove {name} first")
    if url.startswith("-") or not url.strip():
        raise MountError("the URL is empty or starts with '-'", "give the drive's git URL")
    if not re.fullmatch(r"[A-Za-z0-9._/-]+", branch) or branch.startswith(("-", "refs/")):
        raise MountError(f"{branch[:60]!r} is not a branch name", "for example --branch main")
    folder = mounts_dir(drive)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = folder / f".{name}.git.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    progress(f"cloning {name}", 0, 1)
    try:
        proc = clone_repository(url, tmp, branch, bare=True)
        if proc.returncode != 0:
            err = scrub_url(proc.stderr.decode(errors="replace"), url).strip()
            raise MountError(f"cannot mount {display_url(url)}: "
                             f"{err.splitlines()[-1] if err else 'git clone failed'}",
                             "check the URL, the branch and your access to the drive")
        mount = open_drive(tmp)
        head = ref_target(mount, f"refs/heads/{branch}")
        if head is None or fmt.MEMORY_FILE not in tree_texts(mount, commit_tree_id(mount, head)):
            raise NotADriveError.no_memory(display_url(url), branch, remote=True)
        if branch != "main":
            (tmp / "memgit.yaml").write_text(f"branch: '{branch}'\n", encoding="utf-8")
        config_set(tmp, MOUNT_CONFIG, name)
        config_set(tmp, "remote.origin.pushurl", READ_ONLY_PUSH_URL)
        os.rename(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    progress(f"cloning {name}", 1, 1)
    progress(f"indexing {name}", 0, 1)
    mounted = open_drive(target)
    recall_index.reindex(mounted)
    config_set(target, LAST_SYNC_CONFIG, str(int(time.time())))
    progress(f"indexing {name}", 1, 1)
    return describe(drive, name)


def describe(drive: Drive, name: str) -> Mount:
    mount = open_mount(drive, name)
    policy = _policy(mount)
    url = mount.config_value("remote.origin.url") or ""
    raw = mount.config_value(LAST_SYNC_CONFIG)
    entries = facts.stats(state.connection(mount.git_dir)).entries
    return Mount(name, mount.git_dir, display_url(url), policy.branch,
                 ref_target(mount, policy.branch_ref), int(raw) if raw and raw.isdigit() else
                 None, entries)


def mount_names(drive: Drive) -> list[str]:
    return [name for name, _path in mounted(str(drive.git_dir))]


def list_mounts(drive: Drive) -> list[Mount]:
    return [describe(drive, name) for name in mount_names(drive)]


def remove_mount(drive: Drive, name: str) -> Path:
    """Delete mount ``name`` (its clone and its state database); returns where it was."""
    path = mount_path(drive, name)
    if path.is_symlink() or not path.is_dir():
        raise MountError(f"no mount named {name}", "memgit mount list shows the mounts")
    state.close_connections()  # no cached connection may outlive the file
    shutil.rmtree(path)
    return path


def _policy(mount: Drive) -> Policy:
    return find_policy(None, mount.git_dir, None)


# --- sync -------------------------------------------------------------------------------------


def sync_mount(drive: Drive, name: str, *, progress: Progress = no_progress) -> MountSync:
    """Fetch the mount's branch (never push), prune what the server purged, reindex."""
    mount = open_mount(drive, name)
    policy = _policy(mount)
    url = mount.config_value("remote.origin.url") or ""
    old = ref_target(mount, policy.branch_ref)
    progress(f"fetching {name}", 0, 1)
    try:
        new = fetch(mount, "origin")
    except MemgitError as exc:
        raise type(exc)(scrub_url(exc.message, url), exc.hint) from None
    progress(f"fetching {name}", 1, 1)
    report = MountSync(name, old, new)
    if new is None:
        raise MountError(f"mount {name}: the server has no {policy.branch} any more",
                         "ask the drive's admin; the mount keeps what it had")
    report.forgotten = learn_purged(mount, "origin")  # the ids the server published
    gone = purged_since(mount, old, new)
    set_ref(mount, policy.branch_ref, new, "memgit mount sync")
    conn = state.connection(mount.git_dir)
    if gone is not None:
        report.rewritten = True
        report.forgotten += recall_index.forget_entries(mount, gone) if gone else 0
        expire_reflogs_and_prune(mount.git_dir)
    progress(f"indexing {name}", 0, 1)
    recall_index.reindex(mount, policy=policy, conn=conn)
    config_set(mount.git_dir, LAST_SYNC_CONFIG, str(int(time.time())))
    progress(f"indexing {name}", 1, 1)
    report.entries = facts.stats(conn).entries
    return report


def sync_mounts(drive: Drive, names: Sequence[str] = (), *,
                progress: Progress = no_progress) -> list[MountSync]:
    """:func:`sync_mount` for each named mount (default: all); a failing mount is reported
    in its result's ``error`` and the others still sync."""
    out = []
    for name in names or mount_names(drive):
        try:
            out.append(sync_mount(drive, name, progress=progress))
        except MemgitError as exc:
            if names and isinstance(exc, MountError) and "no mount named" in exc.message:
                raise
            out.append(MountSync(name, None, None, error=f"{exc.code} {exc.message}"))
    return out


# --- recall across the personal drive and its mounts ------------------------------------------


@dataclass(frozen=True)
class DriveHit:
    """A recall hit and the drive it came from (``self`` or a mount's name)."""

    drive: str
    hit: Hit

    def as_dict(self) -> dict[str, Any]:
        return hit_json(self.hit, self.drive)


@dataclass
class MountRecall:
    hits: list[DriveHit] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "NAME: why" for mounts not searched


def recall_with_mounts(drive: Drive, query: str, limit: int = 5, *, count: bool = True,
                       policy: Policy | None = None) -> MountRecall:
    """The ``limit`` best entries for ``query`` in the personal drive and every mount:
    each drive searched in its own recall index after its own read path, the hits merged
    by recall_search.merge_drives (matched words first: BM25 scores of different drives
    do not compare), only the hits returned counted, each in its own drive's index."""
    out = MountRecall()
    drives: list[tuple[str, Drive, Policy | None]] = [(SELF, drive, policy)]
    for name in mount_names(drive):
        try:
            drives.append((name, open_mount(drive, name), None))
        except MemgitError as exc:
            out.skipped.append(f"{name}: {exc.message}")
    found: list[tuple[str, state.Connection, list[Hit]]] = []
    for label, each, each_policy in drives:
        try:
            hits = recall(each, query, limit, count=False, policy=each_policy)
            found.append((label, state.connection(each.git_dir), hits))
        except (MemgitError, state.Error) as exc:
            if label == SELF:
                raise
            out.skipped.append(f"{label}: {getattr(exc, 'message', exc)}")
    out.hits = [DriveHit(label, hit)
                for label, hit in merge_drives(found, query, limit, count=count)]
    return out


def is_mount(drive: Drive) -> bool:
    """True for a mount's repository (read-only: the writer refuses it)."""
    return drive.config_value(MOUNT_CONFIG) is not None

