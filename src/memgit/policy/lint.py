"""Judging a drive's working tree, its staged files or a commit with the policy, and the text
a report of violations prints.

The working tree, the staged files and the Index section fix need no pygit2 (git's
plumbing and the file system), so the pre-commit entry imports this module without it;
only ``lint_rev`` reads objects through pygit2.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from memgit.errors import RepoError, UsageError
from memgit.format import entries as fmt
from memgit.git.modes import MODE_EXEC, MODE_FILE
from memgit.git.raw import ObjectReader
from memgit.git.repository import Drive, read_blob, resolve_tree, tree_files
from memgit.git.worktree import read_worktree_file, staged_files, worktree_files
from memgit.policy.judge import ERROR, TreeItem, Violation, judge
from memgit.policy.registry import PurgeRegistry
from memgit.policy.settings import Policy


def lint_worktree(git_dir: Path, workdir: Path | None, policy: Policy, *,
                  strict: bool = False) -> list[Violation]:
    """Judge the files of a checkout's work tree (tracked and untracked, not ignored)."""
    if workdir is None:
        raise UsageError("this drive is a bare repository and has no working tree",
                         "lint a commit instead: memgit lint --rev main")
    files = worktree_files(workdir)
    items = [TreeItem(f.path, f.mode, f.size) for f in files]
    registry = PurgeRegistry.load(git_dir)
    return judge(items, lambda p: read_worktree_file(workdir, p), policy, strict=strict,
                 registry=registry)


def lint_rev(drive: Drive, rev: str, policy: Policy, *, strict: bool = False) -> list[Violation]:
    tree = resolve_tree(drive, rev)
    files = tree_files(drive, str(tree.id))
    oids = {f.path: f.oid for f in files}
    items = [TreeItem(f.path, f.mode, f.size) for f in files]
    registry = PurgeRegistry.load(drive.git_dir)
    return judge(items, lambda p: read_blob(drive, oids[p]), policy, strict=strict,
                 registry=registry)


def lint_staged(git_dir: Path, workdir: Path, policy: Policy, *,
                strict: bool = False) -> list[Violation]:
    """Judge the staged files (git's staging area): what the next commit will hold. The
    blobs are read in one batch from ``git cat-file`` (no pygit2)."""
    files = staged_files(git_dir, workdir)
    oids = {f.path: f.oid for f in files}
    items = [TreeItem(f.path, f.mode, f.size) for f in files]
    registry = PurgeRegistry.load(git_dir)
    with ObjectReader(git_dir) as reader:
        found = reader.read_many(f.oid for f in files if f.mode in (MODE_FILE, MODE_EXEC))

    def read(path: str) -> bytes:
        blob = found.get(oids[path])
        if blob is None:
            raise RepoError(f"the staged blob of {path} is missing", "run git fsck")
        return blob[1]

    return judge(items, read, policy, strict=strict, registry=registry)


def fix_index_section(workdir: Path | None) -> bool:
    """Regenerate the Index section (``## Index``) of MEMORY.md in the work tree; True if
    it changed."""
    if workdir is None:
        raise UsageError("--fix needs a working tree", "run it in a drive checkout")
    memory = workdir / fmt.MEMORY_FILE
    if not memory.exists():
        raise RepoError("MEMORY.md is missing, so there is no Index to fix",
                        "make this folder a drive with memgit init --adopt (it creates "
                        "MEMORY.md and keeps everything else), restore MEMORY.md from git, or "
                        "bring the memory into a new drive with memgit import")
    data = read_worktree_file(workdir, fmt.MEMORY_FILE)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RepoError("MEMORY.md is not valid UTF-8; --fix will not rewrite it",
                        "save MEMORY.md as UTF-8 and run again") from exc
    paths = [f.path for f in worktree_files(workdir) if f.mode in (MODE_FILE, MODE_EXEC)]
    new = fmt.regenerate_index_section(text, paths)
    if new == text:
        return False
    from memgit.git.worktree import write_worktree_file

    write_worktree_file(workdir, fmt.MEMORY_FILE, new.encode("utf-8"))
    return True


def relative_paths(workdir: Path, paths: tuple[str, ...], cwd: Path) -> set[str]:
    """Drive-relative forms of PATH arguments (pre-commit passes them relative to the root)."""
    out: set[str] = set()
    for p in paths:
        full = (cwd / p).absolute()
        try:
            rel = full.relative_to(workdir)
        except ValueError as exc:
            raise UsageError(f"{p} is outside the drive {workdir}",
                             "pass paths inside the drive") from exc
        if not full.exists() and not full.is_symlink():
            raise UsageError(f"{p} does not exist", "pass existing files")
        out.add(rel.as_posix())
    return out


# --- the report ---------------------------------------------------------------------------


def report_lines(violations: Iterable[Violation], policy: Policy | None = None) -> list[str]:
    """The text lines of a report: each violation with its hint, a blank line between files
    (paths and messages quoted with ``policy``'s secret rules: Violation.format)."""
    lines: list[str] = []
    current: str | None = None
    for v in violations:
        if v.path != current:
            if current is not None:
                lines.append("")
            current = v.path
        tag = "" if v.severity == ERROR else " (warning)"
        lines.append(v.format(policy).replace(f" {v.name}:", f" {v.name}{tag}:", 1))
        lines.append(f"  hint: {v.hint}")
    return lines


def summary(violations: Iterable[Violation]) -> str:
    items = list(violations)
    errors = sum(1 for v in items if v.severity == ERROR)
    warnings = len(items) - errors
    files = len({v.path for v in items})
    return (f"{errors} error{'s' if errors != 1 else ''}, "
            f"{warnings} warning{'s' if warnings != 1 else ''} in {files} "
            f"file{'s' if files != 1 else ''}")
