"""Which drive a command works on: the one named, the one the folder is in, the project's,
else the user's personal drive (docs/agents.md, "Which drive").

The order, first match wins:

1. ``-C PATH``;
2. ``$MEMGIT_DRIVE``;
3. the drive the folder is in (a git repository whose branch head has a MEMORY.md);
4. the project's setting: the first ``.memgit/drive`` file in the folder or above it,
   whose first line is the drive's path (``~`` expanded, relative to the project folder);
5. the personal drive at :func:`personal_drive`, created on first use.

A named drive (1, 2, 4) is used as named: if it is not a drive, the command says so. The
fallback to the personal drive (5) is for reads and agent tools everywhere, and for every
command outside a git repository; a command that writes, run inside a git repository that
is not a drive, refuses instead (:func:`refuse_write`), so nothing meant for that
repository lands elsewhere unnoticed.

Both paths of the ``memgit`` entry point choose with :func:`choose`: the full path with
:func:`repository_verdict` (pygit2), the quick path with its own reading of the ref files,
which follows the same rule. This module imports only ``os`` and ``sys`` at the top, so
the quick path can load it.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads it so)
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

DRIVE_ENV = "MEMGIT_DRIVE"
PROJECT_SETTING = (".memgit", "drive")  # the per-project file, under the project folder
PERSONAL = ("memgit", "drive")  # under the user's data folder


class Chosen:
    """The drive a command works on: ``path`` (a folder in or of the drive), ``why`` (one
    phrase for ``memgit info``), ``personal`` when it is the fallback to the personal
    drive, and ``passed_over``: the git repository of the folder, when there is one and it
    is not a drive (a write there refuses instead of falling back)."""

    __slots__ = ("path", "why", "personal", "passed_over")

    def __init__(self, path: str, why: str, *, personal: bool = False,
                 passed_over: str | None = None) -> None:
        self.path = path
        self.why = why
        self.personal = personal
        self.passed_over = passed_over

    def as_dict(self) -> dict[str, object]:
        return {"path": self.path, "why": self.why, "personal": self.personal}


def personal_drive() -> str:
    """The user's personal drive: ``$XDG_DATA_HOME/memgit/drive`` when XDG_DATA_HOME is an
    absolute path (the XDG base directory rule: a relative one is ignored), else the
    platform's data folder: ``~/.local/share`` (Linux and other Unix),
    ``~/Library/Application Support`` (macOS), ``%LOCALAPPDATA%`` (Windows)."""
    xdg = os.environ.get("XDG_DATA_HOME", "")
    if xdg and os.path.isabs(xdg):
        base = xdg
    elif sys.platform == "darwin":
        base = os.path.join(os.path.expanduser("~"), "Library", "Application Support")
    elif os.name == "nt":
        base = os.environ.get("LOCALAPPDATA") or os.path.join(os.path.expanduser("~"),
                                                              "AppData", "Local")
    else:
        base = os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, *PERSONAL)


def project_drive(start: str) -> tuple[str, str] | None:
    """(the drive's path, the setting file) from the first ``.memgit/drive`` at or above
    ``start``; None when there is none. Blank lines and ``#`` comments are skipped; a
    setting file that names nothing is ignored."""
    here = os.path.realpath(start)
    while True:
        setting = os.path.join(here, *PROJECT_SETTING)
        if os.path.isfile(setting):
            named = _first_line(setting)
            if named:
                named = os.path.expanduser(named)
                return os.path.normpath(os.path.join(here, named)), setting
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _first_line(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                text = line.strip()
                if text and not text.startswith("#"):
                    return text
    except (OSError, UnicodeDecodeError):
        return ""
    return ""


def choose(directory: str | None, cwd: str | None,
           verdict: Callable[[str], bool | None]) -> Chosen:
    """The drive for ``-C directory`` (None: not given) run in ``cwd`` (None: the process's
    folder). ``verdict(folder)`` says whether the folder is in a drive: True, False for a
    git repository that is not a drive, None outside any git repository."""
    if directory:
        return Chosen(directory, "named with -C")
    named = os.environ.get(DRIVE_ENV)
    if named:
        return Chosen(named, f"named by ${DRIVE_ENV}")
    here = cwd or os.getcwd()
    inside = verdict(here)
    if inside:
        return Chosen(here, "the current folder is in it")
    project = project_drive(here)
    if project is not None:
        return Chosen(project[0], f"named by {project[1]}")
    if inside is False:
        why = f"the default: {here} is in a git repository that is not a drive"
    else:
        why = "the default: no drive named and the current folder is not in a git repository"
    return Chosen(personal_drive(), why, personal=True,
                  passed_over=here if inside is False else None)


# --- the full path (pygit2) ------------------------------------------------------------


def repository_verdict(folder: str) -> bool | None:
    """:func:`choose`'s verdict by pygit2 and the drive's policy: True when ``folder`` is
    in a drive, False in a git repository that is not one, None outside any."""
    from memgit.errors import NotADriveError
    from memgit.git.repository import open_drive, require_drive
    from memgit.policy.settings import drive_policy

    try:
        drive = open_drive(folder)
    except NotADriveError:
        return None
    try:
        require_drive(drive, drive_policy(drive).branch_ref)
    except NotADriveError:
        return False
    return True


def fallback_note(chosen: Chosen) -> str:
    """The line a report on "the drive" (status, audit) prints first when it fell back to
    the personal drive inside a repository that is not one; "" otherwise."""
    if not (chosen.personal and chosen.passed_over):
        return ""
    return (f"memgit: {chosen.passed_over} is not a drive; this is your personal drive at "
            f"{chosen.path}")


def refuse_write(chosen: Chosen) -> None:
    """Raise for a command that writes when the drive is the fallback but the folder is in
    a git repository that is not a drive: the user may have meant that repository."""
    if not (chosen.personal and chosen.passed_over):
        return
    from memgit.errors import NotADriveError

    why = _why_not(chosen.passed_over)
    raise NotADriveError(
        f"{chosen.passed_over} is in a git repository that is not a drive"
        f"{f' ({why})' if why else ''}; nothing was written",
        f"name the drive: -C PATH, ${DRIVE_ENV}, or a {'/'.join(PROJECT_SETTING)} file "
        f"in the project; your personal drive is {chosen.path} "
        f"(memgit -C {chosen.path} ...); memgit init --adopt PATH makes a drive of a "
        "memory repository")


def _why_not(folder: str) -> str:
    """What require_drive says of the repository at ``folder`` ("" when it says nothing):
    the refusal names the precise reason (no MEMORY.md, the policy's branch missing)."""
    from memgit.errors import NotADriveError
    from memgit.git.repository import open_drive, require_drive
    from memgit.policy.settings import drive_policy

    try:
        drive = open_drive(folder)
        require_drive(drive, drive_policy(drive).branch_ref)
    except NotADriveError as exc:
        return exc.message
    return ""


def ensure_personal(chosen: Chosen) -> bool:
    """Create the personal drive if ``chosen`` is it and it does not exist yet; True when
    this call created it. It is built in a temporary folder beside it and renamed into
    place, so a process killed half-way leaves no half-made drive, and two processes
    creating it at once both end with the same one."""
    if not chosen.personal or os.path.exists(chosen.path):
        return False
    import shutil
    import tempfile
    from pathlib import Path

    from memgit.drives.create import create_drive

    parent = os.path.dirname(chosen.path)
    os.makedirs(parent, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix=".drive-", dir=parent)
    try:
        create_drive(Path(scratch), bare=False, title="Memory")
        try:
            os.rename(scratch, chosen.path)  # atomic; fails if another process won the race
        except OSError:
            if not os.path.isdir(chosen.path):
                raise
            return False
    finally:
        if os.path.exists(scratch):
            shutil.rmtree(scratch, ignore_errors=True)
    return True


def created_line(path: str | Path) -> str:
    """The one line printed (on stderr) when the personal drive is created."""
    return f"memgit: created your personal drive at {path}"
