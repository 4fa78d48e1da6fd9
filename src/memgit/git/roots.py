"""The repositories under a fleet's root, and the fleet's own folder there.

A root is any folder holding bare repositories at any depth: ``/srv/git/*.git``,
gitolite's ``~git/repositories`` (``gitolite-admin.git`` and ``testing.git`` are
repositories but not drives), Gitea's ``repositories/<owner>/<name>.git``. The walk
never follows a symbolic link (a link could lead out of the root) and never descends
into a repository. Whether a repository is a drive is decided when it is described
(memgit.fleet.index), not here: the walk only looks at names, so it costs a few
``stat`` calls per repository.

The fleet keeps its files in ``ROOT/.memgit-fleet/``: the embedded index, the
PostgreSQL setting, the receipts of forget requests and their key.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memgit.errors import UsageError

FLEET_DIR = ".memgit-fleet"


@dataclass(frozen=True)
class Repo:
    """A repository found under the root: ``name`` is its path relative to the root."""

    name: str
    path: Path
    checkout: bool = False  # a work tree's .git: listed, never treated as a drive


def check_root(root: str | os.PathLike[str]) -> Path:
    """The root as an absolute path; a usage error when it is not a folder, or when it is
    a drive itself (a root holds drives: given one, a fleet command would find nothing in
    it and leave its own files inside the repository)."""
    path = Path(root).absolute()
    if not path.is_dir():
        raise UsageError(f"{path} is not a folder", "name the folder that holds the drives "
                         "(the bare repositories), e.g. /srv/git")
    if is_bare_repository(str(path)) or (path / ".git").exists():
        raise UsageError(f"{path} is a git repository, not a folder of drives",
                         f"name the folder that holds it and the other drives, e.g. "
                         f"{path.parent}")
    return path


def fleet_dir(root: Path, create: bool = False) -> Path:
    """``ROOT/.memgit-fleet`` (made private when ``create``)."""
    folder = root / FLEET_DIR
    if create:
        folder.mkdir(mode=0o700, exist_ok=True)
    return folder


def is_bare_repository(path: str) -> bool:
    """A folder laid out as a bare repository: ``HEAD``, ``objects/`` and ``refs/``.
    (Paths joined with "/" by hand: a walk of 10,000 drives calls this 10,000 times.)"""
    return (os.path.isdir(path + "/objects") and os.path.isfile(path + "/HEAD")
            and os.path.isdir(path + "/refs"))


def walk(root: Path) -> Iterator[Repo]:
    """Every repository under ``root``, in name order (folder by folder; symbolic links
    not followed)."""
    top = str(root)
    yield from _walk(top, len(os.path.join(top, "")), top)


def _walk(top: str, cut: int, folder: str) -> Iterator[Repo]:
    """``cut``: the length of the root's path with its "/", so a repository's name is
    its path after it (no pathlib per repository: a root may hold 10,000)."""
    try:
        with os.scandir(folder) as it:
            children = sorted((e for e in it if e.is_dir(follow_symlinks=False)),
                              key=lambda e: e.name)
    except OSError:
        return  # unreadable: nothing under it can be served either
    if folder != top and any(c.name == ".git" for c in children):
        yield Repo(folder[cut:], Path(folder), checkout=True)
        return
    for child in children:
        if child.name == FLEET_DIR and folder == top:
            continue
        if is_bare_repository(child.path):
            yield Repo(child.path[cut:], Path(child.path))
        else:
            yield from _walk(top, cut, child.path)


def root_of(git_dir: str | os.PathLike[str]) -> Path | None:
    """The fleet root a drive belongs to: the nearest folder above it holding
    ``.memgit-fleet`` (post-receive's way to find the index: a few ``stat`` calls,
    however many drives the root holds); None outside any fleet."""
    here = Path(os.path.abspath(git_dir)).parent
    for folder in (here, *here.parents):
        if os.path.isdir(os.path.join(folder, FLEET_DIR)):
            return folder
    return None
