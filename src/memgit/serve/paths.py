"""Where the drives of a served root are, and the one way from a name to a folder.

A served root holds drives at ``ROOT/<owner>/<drive>.git`` (bare repositories made by
``memgit init --bare`` or ``memgit serve --create``). Owner and drive names are
``[A-Za-z0-9][A-Za-z0-9._-]{0,63}`` (a drive name without its ``.git``): never empty,
never ``.`` or ``..``, never starting with a dot (so ``ROOT/.memgit-serve``, the token
database, is never a drive or an owner), no slash, no control character, no space. Every
request names a drive through :func:`parse_name`, and :func:`drive_dir` is the only way
to its folder: neither the owner's folder nor the drive's may be a symbolic link, and the
resolved folder must be inside the resolved root, so nothing outside ROOT is ever read or
written through serve.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from memgit.errors import UsageError
from memgit.git import roots

NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")
SUFFIX = ".git"


class DriveName(str):
    """``owner/drive`` (without ``.git``), checked by :func:`parse_name`."""

    @property
    def owner(self) -> str:
        return self.split("/", 1)[0]

    @property
    def drive(self) -> str:
        return self.split("/", 1)[1]


def valid_part(part: str) -> bool:
    """An owner or drive name as :data:`NAME_RE` allows it (``..`` never is: no leading
    dot) and not ending in ``.git`` (the suffix is added, never part of the name)."""
    return bool(NAME_RE.match(part)) and not part.endswith((SUFFIX, ".lock"))


def parse_name(text: str) -> DriveName | None:
    """``owner/drive`` or ``owner/drive.git`` as a :class:`DriveName`; None when either
    part is not a valid name (``..``, a control character, a slash too many, ...)."""
    parts = text.split("/")
    if len(parts) != 2:
        return None
    owner, drive = parts
    drive = drive.removesuffix(SUFFIX)
    if not (valid_part(owner) and valid_part(drive)):
        return None
    return DriveName(f"{owner}/{drive}")


def require_name(text: str) -> DriveName:
    """:func:`parse_name` for a command line: a UsageError naming what is wrong."""
    name = parse_name(text)
    if name is None:
        raise UsageError(f"{text!r} is not a drive name of the form OWNER/DRIVE",
                         "owner and drive are 1-64 letters, digits, '.', '_' or '-', "
                         "starting with a letter or digit (e.g. joe/notes)")
    return name


def check_root(root: Path) -> Path:
    """The root as an absolute, resolved folder (git.roots.check_root's checks)."""
    return roots.check_root(root).resolve()


def _inside(root: Path, path: str) -> bool:
    real = os.path.realpath(path)
    return real == str(root) or real.startswith(str(root) + os.sep)


def drive_dir(root: Path, name: DriveName) -> Path | None:
    """The folder of drive ``name`` under ``root`` (resolved), or None when there is no
    such drive: missing, not a bare repository, a symbolic link at the owner's or the
    drive's place, or anything that resolves outside the root."""
    owner = os.path.join(root, name.owner)
    path = os.path.join(owner, name.drive + SUFFIX)
    try:
        for place in (owner, path):
            if os.path.islink(place) or not os.path.isdir(place):
                return None
    except OSError:
        return None
    if not _inside(root, path):
        return None
    if not (os.path.isfile(os.path.join(path, "HEAD"))
            and os.path.isdir(os.path.join(path, "objects"))):
        return None
    return Path(path)


def new_drive_dir(root: Path, name: DriveName) -> Path:
    """Where ``memgit serve --create`` makes drive ``name``: the owner's folder is made
    when missing, and refused when it is a symbolic link or resolves outside the root."""
    owner = root / name.owner
    if owner.is_symlink() or (owner.exists() and not owner.is_dir()):
        raise UsageError(f"{owner} is not a plain folder", "owners are folders of the root "
                         "(a symbolic link is never followed)")
    owner.mkdir(mode=0o755, exist_ok=True)
    if not _inside(root, str(owner)):
        raise UsageError(f"{owner} is outside {root}", "remove the link")
    return owner / (name.drive + SUFFIX)


def list_drives(root: Path) -> list[DriveName]:
    """Every drive under ``root``, sorted by name (what :func:`drive_dir` would serve)."""
    found: list[DriveName] = []
    try:
        owners = sorted(os.listdir(root))
    except OSError:
        return []
    for owner in owners:
        if not valid_part(owner):
            continue
        try:
            names = sorted(os.listdir(root / owner))
        except OSError:
            continue
        for entry in names:
            name = parse_name(f"{owner}/{entry}") if entry.endswith(SUFFIX) else None
            if name is not None and drive_dir(root, name) is not None:
                found.append(name)
    return found
