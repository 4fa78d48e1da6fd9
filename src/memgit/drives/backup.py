"""memgit backup and memgit restore: a whole drive in one file, complete or absent.

The bundle and the state database are copied under the drive's write lock, so no memgit
writer commits in between (a push may still land: the restored drive's first read repairs
the index); a purge in progress is refused (MG041). Everything is written under a
temporary name, flushed, then renamed into place; ``restore`` checks every checksum and
member before it creates anything and never overwrites a target (docs/shared.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memgit import state
from memgit.drives.create import install_pre_commit, is_empty_dir
from memgit.errors import BackupError, MemgitError, UsageError
from memgit.git.plumbing import config_set, git, git_plumbing
from memgit.git.repository import Drive, open_drive, ref_target
from memgit.policy.registry import PURGE_LOCK_FILE, REGISTRY_FILE, PurgeRegistry
from memgit.policy.settings import drive_policy, load_policy_file
from memgit.purge.text import Progress, no_progress
from memgit.recall.read_path import catch_up
from memgit.safe_text import display_url
from memgit.state import facts
from memgit.sync.mounts import list_mounts
from memgit.write.writer import write_lock

FORMAT = "memgit-backup"
VERSION = 1
MANIFEST = "manifest.json"
BUNDLE = "drive.bundle"
STATE = "state.sqlite"
POLICY_FILE = "memgit.yaml"
OPTIONAL = (REGISTRY_FILE, POLICY_FILE)
MEMBERS = (BUNDLE, STATE, *OPTIONAL)
_OID_RE = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_BRANCH_RE = re.compile(r"[A-Za-z0-9._/-]+")
_CONFIG_KEY_RE = re.compile(r"memgit\.[A-Za-z0-9.-]+")
_REMOTE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
LOCK_TIMEOUT = 60.0  # seconds to wait for the drive's writers


@dataclass
class BackupResult:
    path: Path
    manifest: dict[str, Any]
    bytes: int
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "bytes": self.bytes, "seconds": round(self.seconds, 3),
                "head": self.manifest["head"], "indexed_revision":
                self.manifest["indexed_revision"], "refs": len(self.manifest["refs"]),
                "files": {k: v["sha256"] for k, v in self.manifest["files"].items()}}


@dataclass
class RestoreResult:
    path: Path
    bare: bool
    head: str
    entries: int
    index_repaired: bool
    seconds: float
    mounts: list[dict[str, str]] = field(default_factory=list)  # to add again by hand

    def as_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "bare": self.bare, "head": self.head,
                "entries": self.entries, "index_repaired": self.index_repaired,
                "seconds": round(self.seconds, 3), "mounts": self.mounts}


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# --- backup ---------------------------------------------------------------------------------


def _refs_of_bundle(git_dir: Path, bundle: Path) -> dict[str, str]:
    proc = git_plumbing(git_dir, "bundle", "list-heads", str(bundle))
    if proc.returncode != 0:
        raise BackupError(f"git bundle list-heads failed: {proc.stderr.decode().strip()}", "")
    out = {}
    for line in proc.stdout.decode().splitlines():
        oid, _sp, name = line.partition(" ")
        out[name] = oid
    return out


def _config_of(drive: Drive) -> tuple[dict[str, str], dict[str, str]]:
    """(memgit.* config values, remote name -> URL without credentials)."""
    proc = git_plumbing(drive.git_dir, "config", "--local", "--null", "--list")
    memgit: dict[str, str] = {}
    remotes: dict[str, str] = {}
    for item in proc.stdout.decode("utf-8", "replace").split("\0"):
        key, _nl, value = item.partition("\n")
        if key.startswith("memgit."):
            memgit[key] = value
        elif key.startswith("remote.") and key.endswith(".url"):
            remotes[key[len("remote."):-len(".url")]] = display_url(value)
    return memgit, remotes


def _hooks_of(drive: Drive) -> str:
    from memgit.git.plumbing import hooks_dir
    from memgit.githooks.install import is_memgit_hook

    folder = hooks_dir(drive.git_dir)
    if drive.workdir is None and is_memgit_hook(folder / "pre-receive"):
        return "server"
    return "pre-commit" if (folder / "pre-commit").is_file() else ""


def create_backup(drive: Drive, dest: Path, *, folder: bool = False,
                  progress: Progress = no_progress) -> BackupResult:
    """Write the backup of ``drive`` to ``dest`` (a new file, or a new folder)."""
    import time

    started = time.perf_counter()
    dest = Path(dest).absolute()
    if dest.exists() or dest.is_symlink():
        raise UsageError(f"{dest} exists", "give a new file name (a backup never overwrites)")
    if not dest.parent.is_dir():
        raise UsageError(f"{dest.parent} is not a folder", "create it first")
    if (drive.git_dir / PURGE_LOCK_FILE).exists():
        raise BackupError("a purge is rewriting this drive's history",
                          "back up when it is done (a half-pruned history is no backup)")
    policy = drive_policy(drive)
    work = Path(tempfile.mkdtemp(prefix=f".{dest.name}.tmp-", dir=dest.parent))
    try:
        progress("waiting for writers", 0, 1)
        with write_lock(drive, timeout=LOCK_TIMEOUT):
            progress("state database", 0, 1)
            state.backup_to(drive.git_dir, work / STATE)
            progress("state database", 1, 1)
            progress("git bundle", 0, 1)
            proc = git_plumbing(drive.git_dir, "bundle", "create", "--quiet",
                                str(work / BUNDLE), "--all")
            if proc.returncode != 0:
                raise BackupError(f"git bundle create failed: "
                                  f"{proc.stderr.decode(errors='replace').strip()}", "")
            progress("git bundle", 1, 1)
            for name in OPTIONAL:
                if (drive.git_dir / name).is_file():
                    shutil.copyfile(drive.git_dir / name, work / name)
        refs = _refs_of_bundle(drive.git_dir, work / BUNDLE)
        manifest = _manifest(drive, policy.branch, refs, work)
        (work / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        progress("writing", 0, 1)
        for member in work.iterdir():
            _fsync_file(member)
        if folder:
            _fsync_dir(work)
            os.rename(work, dest)
            size = sum(p.stat().st_size for p in dest.iterdir())
        else:
            size = _write_tar(work, dest)
        _fsync_dir(dest.parent)
        progress("writing", 1, 1)
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    return BackupResult(dest, manifest, size, time.perf_counter() - started)


def _manifest(drive: Drive, branch: str, refs: dict[str, str], work: Path) -> dict[str, Any]:
    from importlib.metadata import version

    head = refs.get(f"refs/heads/{branch}")
    if head is None:
        raise BackupError(f"the drive has no branch {branch}", "back up a drive")
    answer, _schema = state.check_copy(work / STATE)
    if answer != "ok":
        raise BackupError(f"the copy of the state database is not sound: {answer}",
                          "run memgit index --rebuild, then back up again")
    memgit_config, remotes = _config_of(drive)
    indexed = state.meta_of_copy(work / STATE, "indexed_rev")
    return {
        "format": FORMAT, "version": VERSION, "memgit": version("memgit"),
        "created": state.utc_now(), "bare": drive.workdir is None, "branch": branch,
        "head": head, "indexed_revision": indexed, "refs": refs,
        "config": memgit_config, "remotes": remotes, "hooks": _hooks_of(drive),
        "mounts": [{"name": m.name, "url": m.url, "branch": m.branch}
                   for m in list_mounts(drive)],
        "files": {p.name: {"sha256": sha256_file(p), "bytes": p.stat().st_size}
                  for p in sorted(work.iterdir()) if p.name in MEMBERS},
    }


def _write_tar(work: Path, dest: Path) -> int:
    tmp = dest.with_name(f".{dest.name}.tmp-{os.getpid()}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        os.close(fd)  # private like the state database it holds
        with tarfile.open(tmp, "w", format=tarfile.PAX_FORMAT) as tar:
            for name in (MANIFEST, *MEMBERS):
                path = work / name
                if not path.is_file():
                    continue
                info = tarfile.TarInfo(name)
                info.size = path.stat().st_size
                info.mode = 0o600
                info.mtime = int(path.stat().st_mtime)
                with open(path, "rb") as fh:
                    tar.addfile(info, fh)
        _fsync_file(tmp)
        os.rename(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return dest.stat().st_size


# --- reading a backup -------------------------------------------------------------------------


def _damaged(what: str) -> BackupError:
    return BackupError(f"the backup is damaged or was changed: {what}",
                       "restore from another backup; this one cannot be trusted")


@contextmanager
def opened_backup(backup: Path) -> Iterator[tuple[dict[str, Any], Path]]:
    """(manifest, folder holding the members) of a backup file or folder, every member
    checked against the manifest's sha256 and size; BackupError otherwise."""
    backup = Path(backup)
    if not backup.exists():
        raise UsageError(f"{backup} does not exist", "give the backup's file or folder")
    with tempfile.TemporaryDirectory(prefix="memgit-restore-") as tmp:
        folder = Path(tmp)
        if backup.is_dir():
            names = {p.name for p in backup.iterdir()}
            for name in names:
                source = backup / name
                if name not in (MANIFEST, *MEMBERS) or source.is_symlink() or \
                        not source.is_file():
                    raise _damaged(f"unexpected member {name[:80]!r}")
                shutil.copyfile(source, folder / name)
        else:
            _read_tar(backup, folder)
        manifest = _check_manifest(folder)
        yield manifest, folder


def _read_tar(backup: Path, folder: Path) -> None:
    try:
        tar = tarfile.open(backup, "r:")
    except (tarfile.TarError, OSError) as exc:
        raise _damaged(f"not a backup file ({exc})") from exc
    with tar:
        seen: set[str] = set()
        try:
            for info in tar:
                if info.name not in (MANIFEST, *MEMBERS) or not info.isreg() \
                        or info.name in seen:
                    raise _damaged(f"unexpected member {info.name[:80]!r}")
                seen.add(info.name)
                source = tar.extractfile(info)
                assert source is not None
                with open(folder / info.name, "wb") as out:
                    shutil.copyfileobj(source, out)
        except (tarfile.TarError, EOFError, OSError) as exc:
            raise _damaged(f"the file is truncated or not a tar ({exc})") from exc


def _check_manifest(folder: Path) -> dict[str, Any]:
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _damaged(f"no readable {MANIFEST}") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise _damaged(f"{MANIFEST} is not a memgit backup manifest")
    if manifest.get("version") != VERSION:
        raise BackupError(f"backup format version {manifest.get('version')!r} is not "
                          f"{VERSION}", "restore it with the memgit version that wrote it")
    files = manifest.get("files")
    if not isinstance(files, dict) or BUNDLE not in files or STATE not in files:
        raise _damaged(f"{MANIFEST} does not list the bundle and the state database")
    present = {p.name for p in folder.iterdir()} - {MANIFEST}
    if present != set(files):
        raise _damaged(f"members {sorted(present)} but the manifest lists {sorted(files)}")
    for name, expected in files.items():
        path = folder / name
        if not isinstance(expected, dict) or path.stat().st_size != expected.get("bytes") \
                or sha256_file(path) != expected.get("sha256"):
            raise _damaged(f"{name} does not match its checksum")
    if not isinstance(manifest.get("head"), str) or not _OID_RE.fullmatch(manifest["head"]):
        raise _damaged(f"{MANIFEST} has no head")
    if not isinstance(manifest.get("branch"), str) or not _BRANCH_RE.fullmatch(
            manifest["branch"]) or manifest["branch"].startswith(("-", "refs/")):
        raise _damaged(f"{MANIFEST} names no branch")
    # what the restore hands to git: no option-like names or values, memgit's keys only
    config, remotes = manifest.get("config", {}), manifest.get("remotes", {})
    if not isinstance(config, dict) or not all(
            isinstance(k, str) and _CONFIG_KEY_RE.fullmatch(k) and isinstance(v, str)
            and not v.startswith("-") for k, v in config.items()):
        raise _damaged(f"{MANIFEST} has config values memgit does not write")
    if not isinstance(remotes, dict) or not all(
            isinstance(k, str) and _REMOTE_RE.fullmatch(k) and isinstance(v, str)
            and v and not v.startswith("-") for k, v in remotes.items()):
        raise _damaged(f"{MANIFEST} has remotes memgit does not write")
    return manifest


# --- restore ------------------------------------------------------------------------------------


def restore_backup(backup: Path, target: Path, *, bare: bool | None = None,
                   progress: Progress = no_progress) -> RestoreResult:
    """Recreate a working drive at ``target`` from ``backup`` (bare or a checkout: as it
    was, unless ``bare`` says); refuses an existing target and a backup that does not
    verify. Nothing is left at ``target`` when anything fails."""
    import time

    started = time.perf_counter()
    target = Path(target).absolute()
    if target.exists() and not is_empty_dir(target) or target.is_symlink():
        raise UsageError(f"{target} exists", "restore into a new folder (a restore never "
                         "writes over a drive)")
    progress("verifying", 0, 1)
    with opened_backup(backup) as (manifest, folder):
        progress("verifying", 1, 1)
        make_bare = bool(manifest.get("bare")) if bare is None else bare
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.restore-", dir=target.parent))
        try:
            _restore_into(tmp / "d", manifest, folder, make_bare, progress)
            if target.exists():
                target.rmdir()
            os.rename(tmp / "d", target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    progress("indexing", 0, 1)
    drive = open_drive(target)
    repaired = catch_up(drive)
    progress("indexing", 1, 1)
    entries = facts.stats(state.connection(drive.git_dir)).entries
    return RestoreResult(target, make_bare, manifest["head"], entries,
                         repaired.mode not in ("current", "empty"),
                         time.perf_counter() - started, list(manifest.get("mounts", [])))


def _restore_into(path: Path, manifest: dict[str, Any], folder: Path, bare: bool,
                  progress: Progress) -> None:
    branch = manifest["branch"]
    progress("git objects", 0, 1)
    git("init", "--quiet", *(["--bare"] if bare else []), "-b", branch, str(path))
    git_dir = path if bare else path / ".git"
    proc = git_plumbing(git_dir, "bundle", "verify", "--quiet", str(folder / BUNDLE))
    if proc.returncode != 0:
        raise _damaged(f"git bundle verify: {proc.stderr.decode(errors='replace').strip()}")
    fetch = ["fetch", "--quiet", "--no-tags", *(["--update-head-ok"] if not bare else []),
             str(folder / BUNDLE), "+refs/*:refs/*"]
    proc = git(*fetch, cwd=path, check=False)
    if proc.returncode != 0:
        raise _damaged(f"the bundle cannot be fetched: "
                       f"{proc.stderr.decode(errors='replace').strip()}")
    fsck = git_plumbing(git_dir, "fsck", "--no-dangling", "--no-progress")
    if fsck.returncode != 0:
        raise _damaged(f"git fsck: {fsck.stderr.decode(errors='replace').strip()[:300]}")
    head = git_plumbing(git_dir, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}")
    if head.stdout.decode().strip() != manifest["head"]:
        raise _damaged(f"the bundle's {branch} is not the manifest's head")
    if not bare:
        git("read-tree", "-u", "--reset", "HEAD", cwd=path)
    progress("git objects", 1, 1)
    for name in OPTIONAL:
        if (folder / name).is_file():
            _check_optional(folder, name)
            shutil.copyfile(folder / name, git_dir / name)
    for key, value in sorted(manifest.get("config", {}).items()):  # checked: memgit.* only
        config_set(git_dir, key, value)
    if not bare:
        for remote, url in sorted(manifest.get("remotes", {}).items()):
            git_plumbing(git_dir, "remote", "add", remote, url)
    _restore_state(folder / STATE, git_dir)
    drive = open_drive(path)
    if bare:
        from memgit.githooks.install import configure_server, install_server_hooks

        configure_server(drive)
        install_server_hooks(drive, chain=False)
    elif manifest.get("hooks") == "pre-commit":
        install_pre_commit(git_dir)
    if ref_target(drive, f"refs/heads/{branch}") is None:
        raise _damaged(f"no branch {branch} after the restore")


def _check_optional(folder: Path, name: str) -> None:
    try:
        if name == REGISTRY_FILE:
            PurgeRegistry.load(folder)
        else:
            load_policy_file(folder / name)
    except MemgitError as exc:
        raise _damaged(f"{name}: {exc.message}") from exc


def _restore_state(copy: Path, git_dir: Path) -> None:
    answer, schema = state.check_copy(copy)
    if answer != "ok":
        raise _damaged(f"the state database: {answer[:200]}")
    if schema > len(state.MIGRATIONS):
        raise BackupError("the state database is newer than this memgit",
                          "restore with the memgit version that wrote the backup")
    folder = state.state_dir(git_dir)
    folder.mkdir(mode=0o700, exist_ok=True)
    target = state.state_path(git_dir)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as out, open(copy, "rb") as source:
        shutil.copyfileobj(source, out)
        out.flush()
        os.fsync(out.fileno())


def read_manifest(backup: Path) -> dict[str, Any]:
    """The verified manifest of a backup (for ``memgit restore --check``)."""
    with opened_backup(backup) as (manifest, _folder):
        return manifest

