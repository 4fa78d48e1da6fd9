"""A drive's repository through pygit2: opening and creating it, trees and blobs, commits,
compare-and-swap ref moves, and what replay and sync need of a history.

pygit2 is imported inside the functions that need it (its import is costly:
docs/performance.md), and never by the hook-safe modules of this package;
:func:`open_bare_drive` opens a bare drive without it, for a command that works through
git plumbing (memgit purge).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from memgit.errors import NotADriveError, RepoError
from memgit.git import DEFAULT_BRANCH
from memgit.git.modes import MODE_COMMIT, MODE_EXEC, MODE_FILE, MODE_TREE

if TYPE_CHECKING:
    import pygit2

DEFAULT_NAME = "memgit"
DEFAULT_EMAIL = "memgit@localhost"


@dataclass
class Drive:
    """A drive: a checkout (``workdir`` set) or a bare repository."""

    repo: pygit2.Repository
    git_dir: Path
    workdir: Path | None

    @property
    def root(self) -> Path:
        return self.workdir if self.workdir is not None else self.git_dir

    def head_commit(self, branch: str = DEFAULT_BRANCH) -> pygit2.Commit | None:
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
        raise NotADriveError.missing(start)
    found = pygit2.discover_repository(start)
    if found is None:
        raise NotADriveError.not_git(start)
    repo = pygit2.Repository(found)
    workdir = Path(repo.workdir).resolve() if repo.workdir else None
    return Drive(repo, Path(repo.path).resolve(), workdir)


class PlainBareDrive(Drive):
    """A bare drive opened without pygit2 (:func:`open_bare_drive`): what the purge of a
    server drive needs goes through git plumbing, and pygit2 (tens of milliseconds to
    import) is only loaded if something asks for :attr:`repo`."""

    def __init__(self, git_dir: Path) -> None:
        self._repo: pygit2.Repository | None = None
        self._config: dict[str, str] | None = None
        self.git_dir = git_dir
        self.workdir = None

    @property  # type: ignore[override]
    def repo(self) -> pygit2.Repository:
        if self._repo is None:
            import pygit2

            self._repo = pygit2.Repository(str(self.git_dir))
        return self._repo

    @repo.setter
    def repo(self, value: pygit2.Repository) -> None:
        self._repo = value

    def config_value(self, key: str) -> str | None:
        """The key's value as git reads it for this repository, from one ``git config
        --list`` read on first use (a command reads several keys; git's last value of a
        key wins, as for ``git config --get``)."""
        if self._config is None:
            from memgit.git.plumbing import git_plumbing

            proc = git_plumbing(self.git_dir, "config", "-z", "--list")
            self._config = {}
            # -z: each entry is "name\nvalue\0" ("name\0" for a key with no value); names
            # come with section and variable lowercased, the subsection as written
            for item in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
                name, sep, value = item.partition("\n")
                if name:
                    self._config[name] = value  # "" for a key with no value
        section, _dot, rest = key.partition(".")
        middle, _dot2, variable = rest.rpartition(".")
        name = section.lower() + "." + (middle + "." if middle else "") + variable.lower()
        return self._config.get(name)


def open_bare_drive(path: str | Path | None = None) -> Drive:
    """:func:`open_drive` for a command that reads and writes through git plumbing only
    (memgit purge): a bare repository is opened without pygit2 (a :class:`PlainBareDrive`);
    anything else (a checkout, an unusual layout, no repository: its error) goes through
    open_drive. The repository is found from the files as pygit2 finds it
    (git.files.discover), and it is bare when its config says ``core.bare = true``,
    which ``git init --bare`` and ``git clone --bare`` write."""
    from memgit.git import files

    start = Path(path or ".").resolve()
    if not start.exists():
        raise NotADriveError.missing(str(start))
    try:
        location = files.discover(str(start))
    except files.Unsure:
        return open_drive(path)
    if location.workdir is not None or location.git_dir != location.common_dir:
        return open_drive(path)  # a checkout, or a linked worktree
    plain = PlainBareDrive(Path(location.git_dir))
    if (plain.config_value("core.bare") or "").lower() != "true":
        return open_drive(path)
    return plain


def signature(drive: Drive) -> pygit2.Signature:
    """The user's identity from git config, else memgit's own."""
    import pygit2

    try:
        return drive.repo.default_signature
    except (KeyError, pygit2.GitError):
        return pygit2.Signature(DEFAULT_NAME, DEFAULT_EMAIL)


# --- trees and blobs ---------------------------------------------------------------


@dataclass(frozen=True)
class FileEntry:
    """One non-tree entry of a tree: path, git mode, size in bytes, blob id (hex)."""

    path: str
    mode: int
    size: int
    oid: str


def resolve_tree(drive: Drive, rev: str) -> pygit2.Tree:
    import pygit2

    try:
        obj = drive.repo.revparse_single(rev)
        return obj.peel(pygit2.Tree)
    except (KeyError, ValueError, pygit2.GitError) as exc:
        raise RepoError(f"unknown revision {rev!r}", "name a commit, branch or tag") from exc


def read_blob(drive: Drive, oid: str) -> bytes:
    return drive.repo[oid].data  # type: ignore[attr-defined]


# --- creating repositories -----------------------------------------------------------


def init_bare(path: Path, files: Mapping[str, bytes] | None, message: str) -> Drive:
    """A new bare repository whose main holds ``files`` (None: no commit, no ref)."""
    import pygit2

    repo = pygit2.init_repository(str(path), bare=True, initial_head=DEFAULT_BRANCH)
    drive = Drive(repo, Path(repo.path).resolve(), None)
    if files is None:
        return drive
    builder = repo.TreeBuilder()
    for name, data in files.items():
        if "/" in name:
            raise RepoError("init_bare takes top-level files only", "")
        builder.insert(name, repo.create_blob(data), pygit2.enums.FileMode.BLOB)
    sig = signature(drive)
    repo.create_commit("refs/heads/main", sig, sig, message, builder.write(), [])
    return drive


# --- the writer: trees and commits without a checkout, compare-and-swap ref moves -----


class RefLockedError(RepoError):
    """The ref's ``.lock`` file is held (another git process, or a crashed one)."""


def enable_fsync() -> None:
    """Make libgit2 fsync objects and refs it writes (git's core.fsync equivalent).

    Without it a power loss after an acknowledged write could lose the loose
    objects the branch points at (its cost: docs/performance.md).
    """
    import pygit2

    pygit2.option(pygit2.enums.Option.ENABLE_FSYNC_GITDIR, True)


def ref_target(drive: Drive, ref: str) -> str | None:
    found = drive.repo.references.get(ref)
    if found is None:
        return None
    return str(found.resolve().target)


def commit_tree_id(drive: Drive, commit: str) -> str:
    return str(drive.repo[commit].tree_id)  # type: ignore[attr-defined]


def file_at(drive: Drive, tree_id: str, path: str) -> FileEntry | None:
    """The blob at ``path`` in a tree (None if absent or not a file)."""
    tree = drive.repo[tree_id]
    try:
        item = tree[path]  # type: ignore[index]
    except KeyError:
        return None
    if item.filemode in (MODE_TREE, MODE_COMMIT):
        return None
    return FileEntry(path, item.filemode, item.size, str(item.id))


def path_blocked(drive: Drive, tree_id: str, path: str) -> bool:
    """True when a file cannot be created at ``path``: a folder is there, or one of
    its parent folders is a file (or a submodule) in the tree."""
    tree = drive.repo[tree_id]
    parts = path.split("/")
    for depth in range(1, len(parts) + 1):
        try:
            item = tree["/".join(parts[:depth])]  # type: ignore[index]
        except KeyError:
            return False
        last = depth == len(parts)
        if last and item.filemode in (MODE_TREE, MODE_COMMIT):
            return True
        if not last and item.filemode != MODE_TREE:
            return True
    return False


def tree_files(drive: Drive, tree_id: str) -> list[FileEntry]:
    """Every blob, symlink and gitlink of a tree, depth first, memoised per tree id:
    git objects never change, so a subtree seen before (every unchanged folder of the
    next commit) costs a dict lookup. A blob's size needs a read of its object header,
    which is most of a first walk's cost."""
    return [FileEntry(p, m, s, o) for p, m, s, o in _tree_listing(drive.repo, tree_id)]


_TREE_MEMO: dict[str, tuple[tuple[str, int, int, str], ...]] = {}
_TREE_MEMO_LIMIT = 20_000


def _tree_listing(repo: pygit2.Repository, tree_id: str) -> tuple[tuple[str, int, int, str], ...]:
    cached = _TREE_MEMO.get(tree_id)
    if cached is not None:
        return cached
    out: list[tuple[str, int, int, str]] = []
    for item in repo[tree_id]:  # type: ignore[attr-defined]
        name = item.name or ""
        mode = item.filemode
        if mode == MODE_TREE:
            out.extend((name + "/" + p, m, s, o) for p, m, s, o in
                       _tree_listing(repo, str(item.id)))
        elif mode == MODE_COMMIT:
            out.append((name, mode, 0, str(item.id)))
        else:
            out.append((name, mode, item.size, str(item.id)))
    if len(_TREE_MEMO) > _TREE_MEMO_LIMIT:
        _TREE_MEMO.clear()
    listing = tuple(out)
    _TREE_MEMO[tree_id] = listing
    return listing


def build_tree(drive: Drive, base_tree: str | None, changes: Mapping[str, bytes | None]) -> str:
    """A new tree: ``base_tree`` with each path set to the bytes given (mode 100644),
    or removed for ``None``. Only the trees on the changed paths are rewritten;
    a folder left empty disappears (git stores no empty trees)."""
    repo = drive.repo
    base = repo[base_tree] if base_tree else None
    return _build_tree(repo, base, dict(changes))


def _build_tree(repo: pygit2.Repository, tree: pygit2.Object | None,
                changes: dict[str, bytes | None]) -> str:
    builder = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()  # type: ignore[arg-type]
    nested: dict[str, dict[str, bytes | None]] = {}
    for path, data in changes.items():
        head, _, rest = path.partition("/")
        if rest:
            nested.setdefault(head, {})[rest] = data
        elif data is None:
            if builder.get(head) is not None:
                builder.remove(head)
        else:
            found = builder.get(head)
            if found is not None and found.filemode in (MODE_TREE, MODE_COMMIT):
                raise RepoError(f"{head} is a folder, not a file", "choose another path")
            builder.insert(head, repo.create_blob(data), MODE_FILE)
    for name, sub_changes in nested.items():
        existing = builder.get(name)
        if existing is not None and existing.filemode != MODE_TREE:
            raise RepoError(f"{name} is a file, not a folder", "choose another path")
        sub = repo[existing.id] if existing is not None else None
        sub_id = _build_tree(repo, sub, sub_changes)
        if len(repo[sub_id]) == 0:  # type: ignore[arg-type]
            if existing is not None:
                builder.remove(name)
        else:
            builder.insert(name, sub_id, MODE_TREE)
    return str(builder.write())


def create_commit(drive: Drive, tree: str, parents: list[str], message: str) -> str:
    """A commit object (no ref moves): author and committer from git config."""
    sig = signature(drive)
    return str(drive.repo.create_commit(None, sig, sig, message, tree, parents))


def cas_ref(drive: Drive, ref: str, old: str | None, new: str, message: str) -> bool:
    """Move ``ref`` from ``old`` to ``new`` only if it still points at ``old``.

    Returns False when the ref moved (the caller re-reads and retries); raises
    RefLockedError when its lock file is held.
    """
    import pygit2

    repo = drive.repo
    with _lock_errors(ref):
        try:
            if old is None:
                # create(force=False) fails if the ref appeared meanwhile.
                repo.references.create(ref, new, force=False)
                return True
            current = repo.references.get(ref)
            if current is None or str(current.target) != old:
                return False
            # libgit2's git_reference_set_target passes the target it loaded as the
            # expected old value and compares it again under refs/heads/<b>.lock
            # (GIT_EMODIFIED otherwise), for loose and packed refs alike: a real
            # compare-and-swap. Measured 1.1 ms against 3.7 ms for spawning
            # `git update-ref REF NEW OLD` (same semantics), so we stay in process.
            current.set_target(new, message)
            return True
        except pygit2.AlreadyExistsError:
            return False
        except pygit2.GitError as exc:
            if "does not match" in str(exc) or "exists" in str(exc):
                return False
            raise RepoError(f"cannot move {ref}: {exc}", "check the repository with git fsck") \
                from exc


# A ref's .lock older than this was left by a killed process: git and libgit2 hold a ref
# lock only while they write the ref (milliseconds, even during a push).
STALE_REF_LOCK_SECONDS = 5.0

T = TypeVar("T")


def ref_lock_age(drive: Drive, ref: str) -> float | None:
    """Seconds since the ref's ``.lock`` file was last touched; None without one."""
    import time

    lock = drive.git_dir / (ref + ".lock")
    try:
        return time.time() - lock.stat().st_mtime
    except FileNotFoundError:
        return None


def break_ref_lock(drive: Drive, ref: str) -> None:
    """Remove the ref's ``.lock`` file (call only once it is known to be stale)."""
    try:
        (drive.git_dir / (ref + ".lock")).unlink()
    except FileNotFoundError:
        pass


def waiting_on_ref_lock(drive: Drive, ref: str, attempt: Callable[[], T]) -> T:
    """``attempt()`` (a write of ``ref`` that raises RefLockedError when the ref's lock file
    is held), again after a short wait while it is held; a lock older than
    STALE_REF_LOCK_SECONDS is a killed memgit's (a write or a sync killed while it moved
    the ref): it is removed, so the next command repairs what the killed one left."""
    import time

    delay = 0.005
    started = time.monotonic()
    while True:
        try:
            return attempt()
        except RefLockedError:
            age = ref_lock_age(drive, ref)
            if age is not None and age > STALE_REF_LOCK_SECONDS:
                break_ref_lock(drive, ref)
                continue
            if time.monotonic() - started > STALE_REF_LOCK_SECONDS + 1:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.25)


def changed_files(drive: Drive, old_tree: str, new_tree: str) -> list[tuple[str, str | None]]:
    """Paths whose blob differs between two trees: (path, new blob id or None if gone)."""
    repo = drive.repo
    diff = repo[old_tree].diff_to_tree(repo[new_tree])  # type: ignore[attr-defined]
    out: list[tuple[str, str | None]] = []
    for delta in diff.deltas:
        # Without find_similar() libgit2 reports no renames: a move is a delete
        # of the old path plus an add of the new one.
        old_path, new_path = delta.old_file.path, delta.new_file.path
        if delta.status_char() == "D":
            out.append((old_path, None))
        else:
            out.append((new_path, str(delta.new_file.id)))
    return out


def has_commit(drive: Drive, oid: str) -> bool:
    try:
        obj = drive.repo.get(oid)
    except (ValueError, KeyError):
        return False
    return obj is not None and obj.type_str == "commit"


def is_ancestor(drive: Drive, ancestor: str, descendant: str) -> bool:
    """True when ``ancestor`` is reachable from ``descendant`` (or equal to it)."""
    return ancestor == descendant or bool(drive.repo.descendant_of(descendant, ancestor))


def root_commit(drive: Drive, head: str) -> str:
    """The first-parent root of ``head``: the drive's first commit."""
    commit = drive.repo[head]
    while commit.parent_ids:  # type: ignore[attr-defined]
        commit = drive.repo[commit.parent_ids[0]]  # type: ignore[attr-defined]
    return str(commit.id)


def hash_blob(data: bytes) -> str:
    import pygit2

    return str(pygit2.hash(data))


def head_branch(drive: Drive) -> str | None:
    """The branch ref HEAD names (``refs/heads/main``), None when detached."""
    try:
        head = drive.repo.references.get("HEAD")
    except Exception:  # noqa: BLE001 - an unreadable HEAD counts as detached
        return None
    if head is None:
        return None
    target = head.target  # a str for a symbolic ref, an Oid when detached
    return target if isinstance(target, str) else None


def local_branches(drive: Drive) -> list[str]:
    """The names of the repository's branches (``main``, ``master``, ...), sorted."""
    return sorted(drive.repo.branches.local)


def require_drive(drive: Drive, ref: str) -> str:
    """The head commit of the drive's branch ``ref``: the one check that a repository is
    a drive (the branch exists and its head has a MEMORY.md file)."""
    from memgit.format.entries import MEMORY_FILE

    if isinstance(drive, PlainBareDrive):
        return _require_plain(drive, ref, MEMORY_FILE)
    head = ref_target(drive, ref)
    if head is None:
        raise missing_branch(drive, ref)
    if file_at(drive, commit_tree_id(drive, head), MEMORY_FILE) is None:
        raise NotADriveError.no_memory(str(drive.root), ref.removeprefix("refs/heads/"))
    return head


def _require_plain(drive: PlainBareDrive, ref: str, memory_file: str) -> str:
    """require_drive through one ``git cat-file --batch-check``: the commit the ref
    names, and what its tree holds at MEMORY.md (a file is a blob: a folder is a tree,
    a submodule a commit, both "not a file" as for file_at)."""
    from memgit.git.plumbing import git_plumbing

    if not ref.startswith("refs/") or any(c in ref for c in " \t\n:^~?*[\\@"):
        return require_drive(Drive(drive.repo, drive.git_dir, None), ref)  # odd names: pygit2
    # a full ref name is looked up as exactly that ref (git's first rule for refs/...);
    # ^{commit} peels a tag as ref_target's caller, commit_tree_id, needs a commit
    asked = f"{ref}^{{commit}}\n{ref}^{{commit}}:{memory_file}\n".encode()
    proc = git_plumbing(drive.git_dir, "cat-file", "--batch-check=%(objectname) %(objecttype)",
                        input=asked)
    answers = proc.stdout.decode("utf-8", "replace").splitlines()
    if proc.returncode != 0 or len(answers) != 2:
        raise RepoError(f"git cat-file failed in {drive.git_dir}",
                        proc.stderr.decode("utf-8", "replace").strip())
    head, _sep, kind = answers[0].partition(" ")
    if kind != "commit":
        raise missing_branch(drive, ref)
    if answers[1].partition(" ")[2] != "blob":
        raise NotADriveError.no_memory(str(drive.root), ref.removeprefix("refs/heads/"))
    return head


def missing_branch(drive: Drive, ref: str) -> NotADriveError:
    """The error for a drive whose policy names a branch it does not have: which branch
    is missing, which ones exist, and the two fixes (follow the branch, or rename it)."""
    wanted = ref.removeprefix("refs/heads/")
    current = (head_branch(drive) or "").removeprefix("refs/heads/")
    others = local_branches(drive)
    if not others:
        return NotADriveError(f"the drive has no branch {wanted} (the repository has no "
                              "commit yet)", "memgit init --adopt makes a drive of it")
    have = current if current in others else others[0]
    where = f"HEAD is {have}" if have == current else f"its branches: {', '.join(others)}"
    config = drive.git_dir / "memgit.yaml"
    return NotADriveError(
        f"the drive has no branch {wanted} ({where}); nothing was read or changed",
        f"follow the branch: write 'branch: {have}' to {config} (memgit init --adopt does "
        f"it), or rename it: git branch -m {have} {wanted}")


# --- replay and sync: trees as text mappings, replayed commits, refs ---------------------


def tree_texts(drive: Drive, tree_id: str | None,
               blobs: dict[str, str] | None = None) -> dict[str, str]:
    """A tree as ``path -> text`` (files only; bytes that are not UTF-8 survive
    the round trip through ``surrogateescape``). ``None``: the empty tree.
    ``blobs`` caches texts by blob id across calls (consecutive trees share most)."""
    if tree_id is None:
        return {}
    repo = drive.repo
    cache: dict[str, str] = {} if blobs is None else blobs
    out: dict[str, str] = {}
    for f in tree_files(drive, tree_id):
        if f.mode not in (MODE_FILE, MODE_EXEC):
            continue
        text = cache.get(f.oid)
        if text is None:
            text = repo[f.oid].data.decode("utf-8", "surrogateescape")  # type: ignore[attr-defined]
            cache[f.oid] = text
        out[f.path] = text
    return out


def tree_from_texts(drive: Drive, base_tree: str | None, before: Mapping[str, str],
                    after: Mapping[str, str]) -> str:
    """``base_tree`` (whose files are ``before``) changed to hold ``after``."""
    changes: dict[str, bytes | None] = {
        p: t.encode("utf-8", "surrogateescape") for p, t in after.items() if before.get(p) != t}
    changes.update({p: None for p in before if p not in after})
    if base_tree is None and not changes:
        return str(drive.repo.TreeBuilder().write())
    return build_tree(drive, base_tree, changes)


@dataclass(frozen=True)
class CommitInfo:
    oid: str
    tree: str
    parents: tuple[str, ...]
    author_time: int


def commit_info(drive: Drive, oid: str) -> CommitInfo:
    c = drive.repo[oid]
    return CommitInfo(str(c.id), str(c.tree_id),  # type: ignore[attr-defined]
                      tuple(str(p) for p in c.parent_ids),  # type: ignore[attr-defined]
                      int(c.author.time))  # type: ignore[attr-defined]


def replay_commit(drive: Drive, source: str, tree: str, parents: list[str]) -> str:
    """A copy of commit ``source`` with another tree and parents: its author
    (name, email, date) and message (with its encoding) kept, the committer
    being whoever replays it (as ``git rebase`` does)."""
    c = drive.repo[source]
    encoding = c.message_encoding  # type: ignore[attr-defined]
    extra = (encoding,) if encoding else ()
    return str(drive.repo.create_commit(
        None, c.author, signature(drive), c.message, tree, parents,  # type: ignore[attr-defined]
        *extra))


def first_parent_chain(drive: Drive, head: str, stop: str | None) -> list[str]:
    """Commits from ``head`` back along first parents to ``stop`` (excluded), oldest first."""
    out: list[str] = []
    current: str | None = head
    while current is not None and current != stop:
        out.append(current)
        parents = drive.repo[current].parent_ids  # type: ignore[attr-defined]
        current = str(parents[0]) if parents else None
    out.reverse()
    return out


def merge_base(drive: Drive, a: str, b: str) -> str | None:
    found = drive.repo.merge_base(a, b)
    return str(found) if found is not None else None


def set_ref(drive: Drive, ref: str, new: str, message: str) -> None:
    """Point ``ref`` at ``new`` whatever it held (memgit's own records, a remote-tracking
    ref), waiting on a held lock and breaking a stale one (:func:`waiting_on_ref_lock`)."""
    import pygit2

    def attempt() -> None:
        with _lock_errors(ref):
            drive.repo.create_reference_direct(ref, pygit2.Oid(hex=new), True, message=message)

    waiting_on_ref_lock(drive, ref, attempt)


def delete_ref(drive: Drive, ref: str) -> None:
    """Delete ``ref`` if it exists, as :func:`set_ref` waits on its lock."""
    def attempt() -> None:
        found = drive.repo.references.get(ref)
        if found is not None:
            with _lock_errors(ref):
                found.delete()

    waiting_on_ref_lock(drive, ref, attempt)


@contextmanager
def _lock_errors(ref: str) -> Iterator[None]:
    """libgit2 reports a held ref lock file as OSError ("failed to lock file"):
    RefLockedError, which :func:`waiting_on_ref_lock` waits on."""
    try:
        yield
    except OSError as exc:
        raise RefLockedError(f"{ref} is locked by another process: {exc}".rstrip(": "),
                             "retry; remove a stale .lock file only if no git is running") \
            from exc
