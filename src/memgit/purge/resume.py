"""An interrupted purge is finished or rolled back (docs/purge.md, "A purge killed midway").

A purge moves every rewritten ref in one ``git update-ref --stdin`` transaction, then
records the purged ids in the registry (which refuses them from then on) and publishes
them. Before the refs move it writes ``<git dir>/memgit-purge.json`` (the registry lines,
the ref updates, fsynced) and removes it once the registry holds the ids. A journal
whose purge is gone (its purge lock is stale, or missing) is resumed by the next purge:
if the refs moved, the registry lines are appended, the ids published, the checkout
brought to the branch and the old objects pruned (finished); if they did not, nothing
had changed and the journal is dropped (rolled back). Until then pre-receive refuses
pushes (policy.judge.check_not_purging), so no purged text can come back meanwhile.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from memgit.errors import RepoError
from memgit.git import TMP_SUFFIX
from memgit.git.plumbing import config_get, git_plumbing, one_file_commit
from memgit.git.repository import (
    DEFAULT_EMAIL,
    DEFAULT_NAME,
    Drive,
    PlainBareDrive,
    build_tree,
    create_commit,
    head_branch,
    ref_target,
    set_ref,
)
from memgit.git.rewrite import expire_reflogs_and_prune
from memgit.policy import registry_refs
from memgit.policy.registry import (
    LEASE_CONFIG,
    PURGE_JOURNAL,
    PURGED_IDS_FILE,
    PURGED_REF,
    REGISTRY_FILE,
    PurgeLock,
    PurgeRegistry,
    lease_seconds,
    take_over,
)

TMP_PACK_PREFIX = "tmp_pack_memgit_"  # git.rewrite.write_pack's temporary pack files


def begin(git_dir: Path, ids: list[str], lines: str, updates: list[tuple[str, str, str]]
          ) -> None:
    """Record, durably, what the purge is about to do: its registry lines and ref moves."""
    path = git_dir / PURGE_JOURNAL
    tmp = path.with_name(f".{PURGE_JOURNAL}{TMP_SUFFIX}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump({"ids": ids, "lines": lines, "updates": updates}, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def end(git_dir: Path) -> None:
    (git_dir / PURGE_JOURNAL).unlink(missing_ok=True)


def resume(drive: Drive, *, stale_lock: bool = False) -> list[str]:
    """Finish or roll back a purge whose process died; returns what was done. A purge
    still running (its lock holds) is left alone. The dead purge's lock is removed when
    it left a journal, or with ``stale_lock`` (``purge --resume``); else the next purge
    takes it over (registry.hold_lock, which says so)."""
    git_dir = drive.git_dir
    lock = PurgeLock.read(git_dir)
    if lock is not None and not lock.stale(lease_seconds(config_get(git_dir, LEASE_CONFIG))):
        return []
    journal = git_dir / PURGE_JOURNAL
    if not journal.exists() and not stale_lock:
        return []
    notes = _remove_tmp_packs(git_dir)
    (git_dir / f".{PURGE_JOURNAL}{TMP_SUFFIX}").unlink(missing_ok=True)
    if lock is not None and take_over(git_dir, lock):
        notes.append(f"removed the lock of a purge that was killed ({lock.describe()})")
    try:
        data = json.loads(journal.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return notes
    updates = [(str(r), str(n), str(o)) for r, n, o in data.get("updates", [])]
    moved = bool(updates) and all(ref_target(drive, ref) == new for ref, new, _old in updates)
    ids = [str(i) for i in data.get("ids", [])]
    if not moved:
        end(git_dir)
        return [*notes, f"rolled back a purge of {', '.join(ids)} that was killed before it "
                        "moved any ref (nothing had changed)"]
    known = PurgeRegistry.load(git_dir).ids
    lines = "".join(line + "\n" for line in str(data.get("lines", "")).splitlines()
                    if line.split(" ", 1)[0] not in known)
    if lines:
        PurgeRegistry.append_lines(git_dir, lines)
    publish_ids(drive)
    registry_refs.publish(git_dir, git_dir / REGISTRY_FILE)
    branch = head_branch(drive)
    for ref, new, old in updates:
        if drive.workdir is not None and ref == branch:
            from memgit.git import recovery  # a checkout's update only

            recovery.begin(drive, ref, old, new)
            notes.extend(recovery.complete(drive))
    end(git_dir)
    expire_reflogs_and_prune(git_dir)
    return [*notes, f"finished a purge of {', '.join(ids)} that was killed after it moved "
                    "the refs: the registry records the ids, the old objects are pruned"]


def publish_ids(drive: Drive) -> None:
    """Point ``refs/memgit/purged`` at a commit whose one file lists every purged id, so
    that sync clients learn them and delete those entries from their own recall index.
    Ids only: the registry's digests of purged texts stay in the git directory."""
    ids = sorted(PurgeRegistry.load(drive.git_dir).ids)
    data = "".join(i + "\n" for i in ids).encode()
    if isinstance(drive, PlainBareDrive):  # a bare drive opened without pygit2
        _publish_ids_plumbing(drive, data)
        return
    tree = build_tree(drive, None, {PURGED_IDS_FILE: data})
    commit = create_commit(drive, tree, [], "memgit: purged entry ids\n")
    set_ref(drive, PURGED_REF, commit, "memgit purge: publish purged ids")


def _publish_ids_plumbing(drive: PlainBareDrive, data: bytes) -> None:
    """publish_ids through git: the same file, tree, message and identity (the user's
    from git config, else memgit's, as repository.signature), the ref set as set_ref does
    (no compare-and-swap)."""
    name, email = drive.config_value("user.name"), drive.config_value("user.email")
    if not name or not email:  # pygit2's default_signature needs both
        name, email = DEFAULT_NAME, DEFAULT_EMAIL
    hint = "check the repository's permissions, then run memgit purge --resume"
    try:
        commit = one_file_commit(drive.git_dir, PURGED_IDS_FILE, data,
                                 "memgit: purged entry ids", (name, email))
    except RepoError as err:
        raise RepoError(f"cannot publish {PURGED_REF}: {err}", hint) from err
    moved = git_plumbing(drive.git_dir, "update-ref", "-m", "memgit purge: publish purged ids",
                         PURGED_REF, commit)
    if moved.returncode != 0:
        raise RepoError(f"cannot publish {PURGED_REF}: "
                        + moved.stderr.decode("utf-8", "replace").strip(), hint)


def _remove_tmp_packs(git_dir: Path) -> list[str]:
    """Half-written packs of a killed purge (no live purge writes any: its lock is stale)."""
    folder = git_dir / "objects" / "pack"
    try:
        found = [p for p in folder.iterdir() if p.name.startswith(TMP_PACK_PREFIX)]
    except FileNotFoundError:
        return []
    for path in found:
        path.unlink(missing_ok=True)
    return [f"removed {len(found)} temporary pack file(s) a killed purge left"] if found else []
