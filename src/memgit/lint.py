"""Judging a drive's working tree or a commit with the policy (used by lint and the hooks)."""

from __future__ import annotations

from pathlib import Path

from . import format as fmt
from .errors import RepoError, UsageError
from .git.modes import MODE_EXEC, MODE_FILE
from .git.repository import Drive, read_blob, resolve_tree, tree_files
from .git.worktree import read_worktree_file, staged_files, worktree_files
from .policy import Policy, PurgeRegistry, TreeItem, Violation, judge


def lint_worktree(drive: Drive, policy: Policy, *, strict: bool = False) -> list[Violation]:
    if drive.workdir is None:
        raise UsageError("this drive is a bare repository and has no working tree",
                         "lint a commit instead: memgit lint --rev main")
    files = worktree_files(drive)
    items = [TreeItem(f.path, f.mode, f.size) for f in files]
    registry = PurgeRegistry.load(drive.git_dir)
    return judge(items, lambda p: read_worktree_file(drive, p), policy, strict=strict,
                 registry=registry)


def lint_rev(drive: Drive, rev: str, policy: Policy, *, strict: bool = False) -> list[Violation]:
    tree = resolve_tree(drive, rev)
    files = tree_files(drive, str(tree.id))
    oids = {f.path: f.oid for f in files}
    items = [TreeItem(f.path, f.mode, f.size) for f in files]
    registry = PurgeRegistry.load(drive.git_dir)
    return judge(items, lambda p: read_blob(drive, oids[p]), policy, strict=strict,
                 registry=registry)


def lint_staged(drive: Drive, policy: Policy, *, strict: bool = False) -> list[Violation]:
    """Judge the staged files (git's staging area): what the next commit will hold."""
    files = staged_files(drive)
    oids = {f.path: f.oid for f in files}
    items = [TreeItem(f.path, f.mode, f.size) for f in files]
    registry = PurgeRegistry.load(drive.git_dir)
    return judge(items, lambda p: read_blob(drive, oids[p]), policy, strict=strict,
                 registry=registry)


def fix_index_section(drive: Drive) -> bool:
    """Regenerate the Index section (``## Index``) of MEMORY.md in the work tree; True if
    it changed."""
    if drive.workdir is None:
        raise UsageError("--fix needs a working tree", "run it in a drive checkout")
    memory = drive.workdir / fmt.MEMORY_FILE
    if not memory.exists():
        raise RepoError("MEMORY.md is missing, so there is no Index to fix",
                        "create it with memgit init, or restore it from git")
    data = read_worktree_file(drive, fmt.MEMORY_FILE)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RepoError("MEMORY.md is not valid UTF-8; --fix will not rewrite it",
                        "save MEMORY.md as UTF-8 and run again") from exc
    paths = [f.path for f in worktree_files(drive) if f.mode in (MODE_FILE, MODE_EXEC)]
    new = fmt.regenerate_index_section(text, paths)
    if new == text:
        return False
    from .git.worktree import write_worktree_file

    write_worktree_file(drive, fmt.MEMORY_FILE, new.encode("utf-8"))
    return True


def relative_paths(drive: Drive, paths: tuple[str, ...], cwd: Path) -> set[str]:
    """Drive-relative forms of PATH arguments (pre-commit passes them relative to the root)."""
    assert drive.workdir is not None
    out: set[str] = set()
    for p in paths:
        full = (cwd / p).absolute()
        try:
            rel = full.relative_to(drive.workdir)
        except ValueError as exc:
            raise UsageError(f"{p} is outside the drive {drive.workdir}",
                             "pass paths inside the drive") from exc
        if not full.exists() and not full.is_symlink():
            raise UsageError(f"{p} does not exist", "pass existing files")
        out.add(rel.as_posix())
    return out
