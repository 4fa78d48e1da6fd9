"""Where a drive's mounts are: ``<git dir>/memgit/mounts/NAME.git`` (memgit.sync.mounts).

The shell's quick path (memgit.cli.quick_read) loads it too, so it imports nothing but the
standard library's os (no re, no pathlib: their imports would cost more than a recall).
"""

from __future__ import annotations

import os

MOUNTS_DIR = os.path.join("memgit", "mounts")  # under the personal drive's git directory
SELF = "self"  # the label of the personal drive's hits
_FIRST = "abcdefghijklmnopqrstuvwxyz0123456789"
_REST = _FIRST + "-_"


def is_mount_name(name: str) -> bool:
    """``[a-z0-9][a-z0-9_-]*``, at most 63 characters, not ``self``: never a path."""
    return 0 < len(name) <= 63 and name[0] in _FIRST and all(c in _REST for c in name) \
        and name != SELF


def mounted(git_dir: str) -> list[tuple[str, str]]:
    """(name, git directory) of each mount of the drive whose git directory is
    ``git_dir``, by name; links and folders that are not repositories are skipped."""
    folder = os.path.join(git_dir, MOUNTS_DIR)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    out = []
    for entry in names:
        path = os.path.join(folder, entry)
        name = entry[:-4]
        if entry.endswith(".git") and is_mount_name(name) and not os.path.islink(path) \
                and os.path.isfile(os.path.join(path, "HEAD")):
            out.append((name, path))
    return out
