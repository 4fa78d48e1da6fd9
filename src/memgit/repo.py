"""All git plumbing in one place: pygit2 object access and the ``git`` executable.

Nothing else in memgit imports pygit2 or runs ``git``; the rest of the code
sees drives, paths, modes, sizes and bytes.
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import NotADriveError, RepoError
from .policy import MODE_COMMIT, MODE_EXEC, MODE_FILE, MODE_LINK, MODE_TREE

if TYPE_CHECKING:
    import pygit2

DEFAULT_NAME = "memgit"
DEFAULT_EMAIL = "memgit@localhost"


def git(*args: str, cwd: str | Path | None = None, input: bytes | None = None,
        env: Mapping[str, str] | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """Run the user's ``git`` (credentials, ssh config and hooks honoured)."""
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True,
                              env=dict(env) if env is not None else None)
    except FileNotFoundError as exc:
        raise RepoError("git is not installed or not on PATH",
                        "install git (2.30 or newer)") from exc
    if check and proc.returncode != 0:
        msg = proc.stderr.decode(errors="replace").strip() or f"git {args[0]} failed"
        raise RepoError(f"git {args[0]}: {msg}", "")
    return proc


@dataclass
class Drive:
    """A drive: a checkout (``workdir`` set) or a bare repository."""

    repo: pygit2.Repository
    git_dir: Path
    workdir: Path | None

    @property
    def root(self) -> Path:
        return self.workdir if self.workdir is not None else self.git_dir

    def head_commit(self, branch: str = "main") -> pygit2.Commit | None:
        ref = self.repo.references.get("refs/heads/" + branch)
        if ref is None:
            return None
        return self.repo.get(ref.target)  # type: ignore[return-value]

    def config_value(self, key: str) -> str | None:
        try:
            value = self.repo.config[key]
        except KeyError:
            return None
        return str(value)


def open_drive(path: str | Path | None = None) -> Drive:
    """Find the repository containing ``path`` the way git does."""
    import pygit2

    start = str(Path(path or ".").resolve())
    if not os.path.exists(start):
        raise NotADriveError(f"{start} does not exist", "pass an existing drive with -C PATH")
    found = pygit2.discover_repository(start)
    if found is None:
        raise NotADriveError(f"{start} is not a git repository (not a drive)",
                             "run memgit init to create a drive, or pass -C PATH")
    repo = pygit2.Repository(found)
    workdir = Path(repo.workdir).resolve() if repo.workdir else None
    return Drive(repo, Path(repo.path).resolve(), workdir)


def signature(drive: Drive) -> pygit2.Signature:
    """The user's identity from git config, else memgit's own."""
    import pygit2

    try:
        return drive.repo.default_signature
    except (KeyError, pygit2.GitError):
        return pygit2.Signature(DEFAULT_NAME, DEFAULT_EMAIL)


# --- trees -----------------------------------------------------------------------


@dataclass(frozen=True)
class FileEntry:
    """One non-tree entry of a tree: path, git mode, size in bytes, blob id (hex)."""

    path: str
    mode: int
    size: int
    oid: str


def walk_tree(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str = "") -> Iterator[FileEntry]:
    """Every blob, symlink and gitlink of a tree, depth first."""
    for item in tree:
        name = item.name or ""
        path = prefix + name
        mode = item.filemode
        if mode == MODE_TREE:
            yield from walk_tree(repo, repo.get(item.id), path + "/")  # type: ignore[arg-type]
        elif mode == MODE_COMMIT:
            yield FileEntry(path, mode, 0, str(item.id))
        else:
            yield FileEntry(path, mode, item.size, str(item.id))  # type: ignore[attr-defined]


def resolve_tree(drive: Drive, rev: str) -> pygit2.Tree:
    import pygit2

    try:
        obj = drive.repo.revparse_single(rev)
        return obj.peel(pygit2.Tree)
    except (KeyError, ValueError, pygit2.GitError) as exc:
        raise RepoError(f"unknown revision {rev!r}", "name a commit, branch or tag") from exc


def index_files(drive: Drive) -> list[FileEntry]:
    """The entries of git's index (what the next commit will hold), with blob sizes."""
    repo = drive.repo
    repo.index.read()
    out = []
    for entry in repo.index:
        oid = str(entry.id)
        size = 0 if entry.mode == MODE_COMMIT else repo.odb.read_header(entry.id)[1]
        out.append(FileEntry(entry.path, entry.mode, size, oid))
    return out


def read_blob(drive: Drive, oid: str) -> bytes:
    return drive.repo[oid].data  # type: ignore[attr-defined]


def worktree_files(drive: Drive) -> list[FileEntry]:
    """Files of the work tree git would see: tracked and untracked-not-ignored.

    Symlinks are reported with mode 120000 and never followed; a folder that
    is a gitlink (submodule) is reported with mode 160000.
    """
    assert drive.workdir is not None
    proc = git("ls-files", "-z", "--cached", "--others", "--exclude-standard",
               cwd=drive.workdir)
    seen: set[str] = set()
    out: list[FileEntry] = []
    for raw in proc.stdout.split(b"\0"):
        if not raw:
            continue
        path = os.fsdecode(raw)
        if path in seen:
            continue
        seen.add(path)
        full = drive.workdir / path
        try:
            st = os.lstat(full)
        except FileNotFoundError:
            continue  # deleted in the work tree, not yet staged
        if stat.S_ISLNK(st.st_mode):
            out.append(FileEntry(path, MODE_LINK, st.st_size, ""))
        elif stat.S_ISDIR(st.st_mode):
            out.append(FileEntry(path, MODE_COMMIT, 0, ""))
        else:
            mode = MODE_EXEC if st.st_mode & 0o111 else MODE_FILE
            out.append(FileEntry(path, mode, st.st_size, ""))
    return out


def read_worktree_file(drive: Drive, path: str) -> bytes:
    """Read a work-tree file without following a symlink anywhere on the way."""
    assert drive.workdir is not None
    full = drive.workdir / path
    # O_NOFOLLOW refuses a symlink as the last component; the parents were
    # listed by git, which never descends through a symlinked folder.
    try:
        fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        raise RepoError(f"cannot read {path}: {exc.strerror}",
                        "check the file's permissions") from exc
    try:
        with os.fdopen(fd, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise RepoError(f"cannot read {path}: {exc.strerror}",
                        "check the file's permissions") from exc


def write_worktree_file(drive: Drive, path: str, data: bytes) -> None:
    """Replace a work-tree file atomically (never through a symlink)."""
    assert drive.workdir is not None
    full = drive.workdir / path
    if full.is_symlink():
        raise RepoError(f"refusing to write through the symlink {path}", "replace the symlink")
    full.parent.mkdir(parents=True, exist_ok=True)
    tmp = full.with_name(f".{full.name}.memgit-tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, full)


# --- creating drives ------------------------------------------------------------------


def init_checkout(path: Path, files: Mapping[str, bytes], message: str) -> Drive:
    """A new checkout on branch main with ``files`` as its first commit."""
    import pygit2

    repo = pygit2.init_repository(str(path), initial_head="main")
    drive = Drive(repo, Path(repo.path).resolve(), Path(repo.workdir).resolve())
    for name, data in files.items():
        write_worktree_file(drive, name, data)
        repo.index.add(name)
    repo.index.write()
    tree = repo.index.write_tree()
    sig = signature(drive)
    repo.create_commit("refs/heads/main", sig, sig, message, tree, [])
    return drive


def init_bare(path: Path, files: Mapping[str, bytes], message: str) -> Drive:
    """A new bare repository whose main holds ``files``."""
    import pygit2

    repo = pygit2.init_repository(str(path), bare=True, initial_head="main")
    drive = Drive(repo, Path(repo.path).resolve(), None)
    builder = repo.TreeBuilder()
    for name, data in files.items():
        if "/" in name:
            raise RepoError("init_bare takes top-level files only", "")
        builder.insert(name, repo.create_blob(data), pygit2.enums.FileMode.BLOB)
    sig = signature(drive)
    repo.create_commit("refs/heads/main", sig, sig, message, builder.write(), [])
    return drive


def is_empty_dir(path: Path) -> bool:
    return path.is_dir() and not any(path.iterdir())
