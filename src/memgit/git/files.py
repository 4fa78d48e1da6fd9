"""A repository's files read directly: its git directory, a ref's commit, whether its config
may set a key. No pygit2, no subprocess, only ``os``: the quick path loads it.

Everything here answers only what it is sure of, else raises :class:`Unsure` (or says "the
config may set it"); the caller then takes the full path through pygit2, which defines
the answer. The git behaviours relied on are named where they are used.
"""

from __future__ import annotations

import os

_HEX = "0123456789abcdef"
_REF_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/")


class Unsure(Exception):
    """The files do not answer for sure: take the full path (pygit2)."""


class NoRepository(Unsure):
    """Certain: there is no git repository at or above the folder."""


class Location:
    """Where a repository's files are (paths resolved, as strings)."""

    __slots__ = ("git_dir", "common_dir", "workdir")

    def __init__(self, git_dir: str, common_dir: str, workdir: str | None) -> None:
        self.git_dir = git_dir  # as Drive.git_dir: a linked worktree's own folder
        self.common_dir = common_dir  # refs, objects, config: git_dir but for worktrees
        self.workdir = workdir  # the folder holding .git; None: found itself, or not known

    def __repr__(self) -> str:
        return f"Location({self.git_dir!r}, {self.common_dir!r}, {self.workdir!r})"


def is_oid(text: str) -> bool:
    """A full object id as git writes it in ref files: 40 (SHA-1) or 64 (SHA-256)
    lower-case hex digits."""
    return len(text) in (40, 64) and not text.strip(_HEX)


def _common_dir(git_dir: str) -> str | None:
    """The folder a git dir shares its refs and objects with, None when it is no repository.

    A linked worktree's git dir holds a ``commondir`` file naming the main repository's
    folder (relative to the git dir); git and libgit2 keep branches, packed-refs, objects
    and config there. The repository checks are libgit2's: a ``HEAD`` file, and
    ``objects`` and ``refs`` folders in the common dir.
    """
    common = git_dir
    pointer = os.path.join(git_dir, "commondir")
    if os.path.isfile(pointer):
        try:
            with open(pointer, encoding="utf-8") as f:
                named = f.read(4097).strip()
        except (OSError, UnicodeDecodeError):
            return None
        common = os.path.realpath(os.path.join(git_dir, named))
    if os.path.isfile(os.path.join(git_dir, "HEAD")) \
            and os.path.isdir(os.path.join(common, "objects")) \
            and os.path.isdir(os.path.join(common, "refs")):
        return common
    return None


def _gitfile_target(dotgit: str) -> str | None:
    """The folder a ``.git`` file points at: its one line is ``gitdir: PATH``, PATH
    relative to the file's folder (how git links a worktree or a separate git dir)."""
    try:
        with open(dotgit, encoding="utf-8") as f:
            line = f.read(4097)
    except (OSError, UnicodeDecodeError):
        return None
    if not line.startswith("gitdir: ") or len(line) > 4096:
        return None
    return os.path.realpath(os.path.join(os.path.dirname(dotgit),
                                         line[len("gitdir: "):].strip()))


def _found(git_dir: str, workdir: str | None) -> Location:
    common = _common_dir(git_dir)
    if common is None:
        raise Unsure(f"{git_dir}: not a repository memgit reads directly")
    # libgit2 refuses a repository another user owns (safe.directory): leave it to the
    # full path, which then says so.
    if os.stat(git_dir).st_uid != os.geteuid():
        raise Unsure(f"{git_dir} belongs to another user")
    return Location(git_dir, common, workdir)


def discover(start: str | None) -> Location:
    """The repository containing ``start`` (default: the current folder), found the way
    pygit2.discover_repository finds it: in each folder from ``start`` up, first its
    ``.git`` (a folder, or a file pointing at one), then the folder itself (a bare
    repository); never across a file-system boundary. Like pygit2, and unlike git,
    it ignores GIT_DIR and the other GIT_* variables, so both paths of memgit find
    the same drive. Unsure when nothing was found or the layout is unusual."""
    here = os.path.realpath(start or ".")
    try:
        device = os.stat(here).st_dev
    except OSError as exc:
        raise Unsure(str(exc)) from None
    if not os.path.isdir(here):
        raise Unsure(f"{here} is not a folder")
    while True:
        dotgit = os.path.join(here, ".git")
        if os.path.isdir(dotgit):
            if _common_dir(dotgit) is not None:
                return _found(os.path.realpath(dotgit), here)
        elif os.path.isfile(dotgit):
            target = _gitfile_target(dotgit)
            if target is None:
                raise Unsure(f"{dotgit}: not a gitdir file memgit reads")
            # pygit2 opens the folder the file names: a linked worktree's own folder
            # leads it back to this work tree; any other (git init --separate-git-dir)
            # gets the folder's parent as its work tree, so leave that one unknown.
            linked = os.path.isfile(os.path.join(target, "commondir"))
            return _found(target, here if linked else None)
        elif os.path.lexists(dotgit):
            raise Unsure(f"{dotgit}: a dangling link or a special file")
        if _common_dir(here) is not None:
            return _found(here, None)
        parent = os.path.dirname(here)
        try:
            if parent == here or os.stat(parent).st_dev != device:
                raise NoRepository(f"no repository at or above {start or '.'}")
        except OSError as exc:
            raise Unsure(str(exc)) from None
        here = parent


def _plain_ref_name(ref: str) -> bool:
    """``refs/...`` made of characters git stores in a file name as they are."""
    parts = ref.split("/")
    return (len(parts) >= 2 and parts[0] == "refs" and set(ref) <= _REF_CHARS
            and all(p and not p.startswith(".") and not p.endswith(".lock") for p in parts)
            and ".." not in ref)


def ref_commit(location: Location, ref: str) -> str | None:
    """The object ``ref`` (``refs/...``, shared by all worktrees, such as a branch) points
    at, from the ref files; None when it does not exist. Unsure for a symbolic ref, a
    name git would not store in a file as it is, or the reftable format."""
    if not _plain_ref_name(ref):
        raise Unsure(f"{ref}: not a ref name memgit reads directly")
    common = location.common_dir
    # A repository in the reftable format (extensions.refStorage) keeps no loose refs.
    if os.path.exists(os.path.join(common, "reftable")):
        raise Unsure("the refs are in the reftable format")
    # git writes a loose ref by renaming a lock file over it, so a reader sees the old or
    # the new id, never half a file; a loose ref overrides packed-refs.
    text: str | None
    try:
        # bytes decoded here: a text file's ascii codec would load encodings.ascii
        with open(os.path.join(common, ref), "rb") as f:
            text = f.read(80).decode("ascii").strip()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        text = None
    except (OSError, UnicodeDecodeError) as exc:
        raise Unsure(f"{ref}: {exc}") from None
    if text is not None:
        if not is_oid(text):
            raise Unsure(f"{ref} is not a plain ref")  # "ref: ..." is a symbolic ref
        return text
    # git pack-refs writes packed-refs before it deletes the loose files, so a ref
    # missing from the loose files just now is in packed-refs ("OID REF" lines; "#" a
    # header, "^" the peeled target of the tag above).
    try:
        with open(os.path.join(common, "packed-refs"), encoding="utf-8") as f:
            for line in f:
                oid, _sep, name = line.rstrip("\n").partition(" ")
                if name == ref and not oid.startswith(("#", "^")):
                    if not is_oid(oid):
                        raise Unsure(f"packed-refs: {ref} is not a plain ref")
                    return oid
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise Unsure(f"packed-refs: {exc}") from None
    return None


def config_files(location: Location) -> list[str]:
    """The config files git or libgit2 may read for this repository: system, global
    (both places, and GIT_CONFIG_SYSTEM / GIT_CONFIG_GLOBAL), the repository's, and a
    worktree's own."""
    home = os.environ.get("HOME", "")
    xdg = os.environ.get("XDG_CONFIG_HOME") or (os.path.join(home, ".config") if home else "")
    names = ["/etc/gitconfig", os.environ.get("GIT_CONFIG_SYSTEM", ""),
             os.environ.get("GIT_CONFIG_GLOBAL", ""),
             os.path.join(home, ".gitconfig") if home else "",
             os.path.join(xdg, "git", "config") if xdg else "",
             os.path.join(location.common_dir, "config"),
             os.path.join(location.git_dir, "config.worktree")]
    return [n for n in names if n]


def config_texts(location: Location) -> list[bytes] | None:
    """The lower-cased bytes of every config file of the repository, or None when the
    files alone may not say (a file includes another, or config comes from the
    environment: GIT_CONFIG_PARAMETERS and friends): then ask git."""
    if any(k in os.environ for k in ("GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
                                      "GIT_CONFIG")):
        return None
    texts: list[bytes] = []
    for path in config_files(location):
        try:
            with open(path, "rb") as f:
                data = f.read().lower()
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError:
            return None
        if b"include" in data:
            return None
        texts.append(data)
    return texts


def object_type(location: Location, spec: str) -> str | None:
    """``git cat-file -t SPEC`` (``blob``, ``tree``, ``commit``; None when there is no such
    object), started with ``os.posix_spawnp``: the quick path does not load subprocess,
    whose threading, signal, contextlib and typing cost more than a recall. Unsure when
    git cannot be started."""
    argv = ["git", "--no-replace-objects", f"--git-dir={location.git_dir}", "cat-file", "-t",
            spec]
    read_end, write_end = os.pipe()
    null = os.open(os.devnull, os.O_RDWR)
    try:
        pid = os.posix_spawnp("git", argv, os.environ, file_actions=[
            (os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, write_end, 1),
            (os.POSIX_SPAWN_DUP2, null, 2)])
    except OSError as exc:
        os.close(read_end)
        raise Unsure(f"git could not be started: {exc.strerror}") from None
    finally:
        os.close(write_end)
        os.close(null)
    out = b""
    try:
        while chunk := os.read(read_end, 4096):
            out += chunk
    finally:
        os.close(read_end)
    status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    return out.strip().decode("ascii", "replace") if status == 0 else None
