"""A drive checkout: its work tree and git's staging area ("staged files").

Work-tree files are read and written without following a symlink anywhere on the way; the
writer and sync keep the checkout matching the commits they make (``git status`` stays
clean).
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from memgit.errors import RepoError
from memgit.git import DEFAULT_BRANCH
from memgit.git.modes import MODE_COMMIT, MODE_EXEC, MODE_FILE, MODE_LINK
from memgit.git.plumbing import git
from memgit.git.repository import Drive, FileEntry, hash_blob, signature


def staged_files(git_dir: Path, workdir: Path) -> list[FileEntry]:
    """The staged files: the entries of git's staging area (its "index" file, what the
    next commit will hold), with blob sizes. Hook-safe: ``git ls-files --stage`` and
    one ``cat-file --batch-check``, no pygit2.

    ``git commit -a`` and ``git commit PATH`` stage into a temporary index and tell
    hooks its path in GIT_INDEX_FILE (relative to the work tree's top); git honours
    that variable, so ``ls-files`` run from the top reads the right one.
    """
    from memgit.git.raw import ObjectReader

    proc = git("ls-files", "--stage", "-z", cwd=workdir)
    staged: list[tuple[str, int, str]] = []
    for record in proc.stdout.split(b"\0"):
        if not record:
            continue
        info, _, raw_path = record.partition(b"\t")
        mode, oid, stage = info.split(b" ")
        if stage == b"0":  # an unresolved merge has stages 1-3 and cannot be committed
            staged.append((os.fsdecode(raw_path), int(mode, 8), oid.decode()))
    with ObjectReader(git_dir) as reader:
        sizes = reader.info_many([oid for _p, mode, oid in staged if mode != MODE_COMMIT])
    return [FileEntry(path, mode, 0 if mode == MODE_COMMIT else _size(sizes.get(oid), path),
                      oid) for path, mode, oid in staged]


def _size(found: tuple[str, int] | None, path: str) -> int:
    if found is None:
        raise RepoError(f"the staged blob of {path} is missing", "run git fsck")
    return found[1]


def worktree_files(workdir: Path) -> list[FileEntry]:
    """Files of the work tree git would see: tracked and untracked-not-ignored.

    Symlinks are reported with mode 120000 and never followed; a folder that
    is a gitlink (submodule) is reported with mode 160000.
    """
    proc = git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=workdir)
    seen: set[str] = set()
    out: list[FileEntry] = []
    for raw in proc.stdout.split(b"\0"):
        if not raw:
            continue
        path = os.fsdecode(raw)
        if path in seen:
            continue
        seen.add(path)
        full = workdir / path
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


def read_worktree_file(workdir: Path, path: str) -> bytes:
    """Read a work-tree file without following a symlink anywhere on the way."""
    full = workdir / path
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


def write_worktree_file(workdir: Path, path: str, data: bytes) -> None:
    """Replace a work-tree file atomically (never through a symlink)."""
    full = workdir / path
    if full.is_symlink():
        raise RepoError(f"refusing to write through the symlink {path}", "replace the symlink")
    full.parent.mkdir(parents=True, exist_ok=True)
    tmp = full.with_name(f".{full.name}.memgit-tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, full)


def init_checkout(path: Path, files: Mapping[str, bytes], message: str) -> Drive:
    """A new checkout on branch main with ``files`` as its first commit."""
    import pygit2

    repo = pygit2.init_repository(str(path), initial_head=DEFAULT_BRANCH)
    drive = Drive(repo, Path(repo.path).resolve(), Path(repo.workdir).resolve())
    for name, data in files.items():
        write_worktree_file(drive.root, name, data)
        repo.index.add(name)
    repo.index.write()
    tree = repo.index.write_tree()
    sig = signature(drive)
    repo.create_commit("refs/heads/main", sig, sig, message, tree, [])
    return drive


def commit_everything(path: Path, message: str) -> None:
    """Make ``path`` a repository on branch main if it is none, and commit what it holds
    (``git add -A``: .gitignore honoured) when its branch has no commit yet. The user's
    git does it, so their identity and settings apply; hooks are skipped (the folder is
    not a drive until adopted)."""
    if not (path / ".git").exists():
        git("init", "-q", "-b", "main", cwd=path)
    if git("rev-parse", "-q", "--verify", "HEAD", cwd=path, check=False).returncode == 0:
        return
    git("add", "-A", cwd=path)
    git("commit", "-q", "--no-verify", "--allow-empty", "-m", message, cwd=path)


def checkout_state(drive: Drive, path: str) -> tuple[str | None, str | None]:
    """(blob id staged in git's index, blob id of the work-tree file) of one path.

    A symlink or unreadable file counts as a change (its id is ``"?"``).
    """
    assert drive.workdir is not None
    repo = drive.repo
    repo.index.read()
    staged = repo.index[path].id if path in repo.index else None
    full = drive.workdir / path
    if not full.exists() and not full.is_symlink():
        work = None
    elif full.is_symlink() or not full.is_file():
        work = "?"
    else:
        work = hash_blob(read_worktree_file(drive.workdir, path))
    return (str(staged) if staged is not None else None), work


INDEX_LOCK_WAIT = 10.0  # seconds: far longer than any git command holds the index


def wait_for_index(drive: Drive, seconds: float = INDEX_LOCK_WAIT) -> None:
    """Wait until no ``index.lock`` is held, and raise a clear error when one stays.

    git writes the index through ``index.lock`` and refuses to start while it exists. A
    memgit killed while its ``git read-tree`` ran leaves that child running for a few
    milliseconds more, holding the lock: the next command waits for it instead of failing
    (pygit2's "the index is locked"). A lock that outlives the wait was left by a git
    process that died (memgit's own are removed by memgit.git.recovery)."""
    assert drive.workdir is not None
    lock = drive.git_dir / "index.lock"
    deadline = time.monotonic() + seconds
    while lock.exists():
        if time.monotonic() > deadline:
            raise RepoError(f"{lock} has been held for more than {seconds:.0f} s",
                            "if no git command is running in this checkout, remove it "
                            f"(rm {lock}) and run the command again")
        time.sleep(0.02)


def update_checkout(drive: Drive, files: Mapping[str, bytes | None]) -> None:
    """Write (or delete) work-tree files and stage them, so the checkout matches
    a commit the branch already points at (``git status`` stays clean)."""
    assert drive.workdir is not None
    repo = drive.repo
    for path, data in files.items():
        if data is None:
            (drive.workdir / path).unlink(missing_ok=True)
        else:
            write_worktree_file(drive.workdir, path, data)
    wait_for_index(drive)
    repo.index.read()
    for path, data in files.items():
        if data is None:
            if path in repo.index:
                repo.index.remove(path)
        else:
            # add(path) hashes the work-tree file and records its stat data.
            repo.index.add(path)
    repo.index.write()


def move_checkout(drive: Drive, old_tree: str, new_tree: str) -> None:
    """Bring git's index and the work tree from ``old_tree`` to ``new_tree``.

    A two-tree ``read-tree -m -u`` touches only the paths that differ and keeps
    any other staged change.
    """
    assert drive.workdir is not None
    wait_for_index(drive)
    git("read-tree", "-m", "-u", old_tree, new_tree, cwd=drive.workdir)


def worktree_changes(drive: Drive, paths: Sequence[str] = (), *,
                     untracked: bool = True) -> list[str]:
    """Paths (all, or those of ``paths``) with staged, unstaged or, with
    ``untracked``, untracked (not ignored) changes; none in a bare repository."""
    if drive.workdir is None:
        return []
    mode = "--untracked-files=normal" if untracked else "--untracked-files=no"
    proc = git("status", "--porcelain=v1", "-z", mode, "--", *paths, cwd=drive.workdir)
    return [os.fsdecode(item[3:]) for item in proc.stdout.split(b"\x00") if len(item) > 3]
