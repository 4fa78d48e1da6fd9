"""Finishing what a killed memgit left half done in a checkout (docs/writer.md, "Crashes").

Before memgit moves a checked-out branch it writes a journal, ``<git dir>/memgit-checkout.json``
(the ref, the commit it moves from and to, and the process doing it), and removes it once
git's index and the work tree match the new commit. A journal whose process is gone means
a write or a sync was killed in between. The branch is the truth: :func:`recover` brings
the index and the work tree of the paths that changed to the branch's head, never the
branch back to the checkout, keeping a user's own uncommitted edits on top (a three-way
merge with ``git merge-file``), and removes what the killed process left behind: its
``.NAME.memgit-tmp`` files, libgit2's half-written loose objects and git's ``index.lock``.
"""

from __future__ import annotations

import json
import os
import socket
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from memgit.errors import RepoError
from memgit.git import TMP_SUFFIX  # the suffix of memgit's temporary files
from memgit.git.plumbing import git
from memgit.git.repository import (
    Drive,
    RefLockedError,
    cas_ref,
    changed_files,
    commit_tree_id,
    file_at,
    first_parent_chain,
    has_commit,
    head_branch,
    read_blob,
    ref_target,
    waiting_on_ref_lock,
)
from memgit.git.worktree import (
    checkout_state,
    move_checkout,
    read_worktree_file,
    update_checkout,
    write_worktree_file,
)

JOURNAL = "memgit-checkout.json"
KEPT_DIR = "memgit/kept"  # under the git dir: a user's edit that could not be merged
LAG_DEPTH = 50  # commits searched for the version a lagging checkout still holds
# libgit2 (pygit2) writes a loose object to ``objects/tmp_object_git2_XXXXXX`` and renames it
# into its fan-out folder; a process killed in between leaves the file, which git itself
# only removes with ``git prune`` after two weeks. A second is far longer than one write.
LIBGIT2_TMP_PREFIX = "tmp_object_git2_"
YOUNG = 1.0  # seconds: a younger leftover may belong to a process still finishing


@dataclass
class Journal:
    """A checkout move in progress: ``ref`` goes from ``old`` to ``new``."""

    ref: str
    old: str
    new: str
    pid: int
    host: str
    started: float

    def alive(self) -> bool:
        """Whether the process that wrote it may still be running. On another host (a
        shared file system) memgit cannot tell; such a journal counts as alive for
        an hour, far longer than any checkout update."""
        if self.host != socket.gethostname():
            return time.time() - self.started < 3600
        if self.pid == os.getpid():
            return True
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True  # some other user's live process has that number
        return True


def begin(drive: Drive, ref: str, old: str, new: str) -> None:
    """Record, durably, that ``ref`` is about to move and the checkout to follow it."""
    data = Journal(ref, old, new, os.getpid(), socket.gethostname(), time.time())
    path = drive.git_dir / JOURNAL
    tmp = path.with_name(f".{JOURNAL}{TMP_SUFFIX}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(asdict(data), fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)  # atomic: a reader sees the old journal or the new one


def end(drive: Drive) -> None:
    """The checkout matches the branch again."""
    (drive.git_dir / JOURNAL).unlink(missing_ok=True)


def read(drive: Drive) -> Journal | None:
    """The journal left in the drive (None without one, or when it cannot be read)."""
    try:
        data = json.loads((drive.git_dir / JOURNAL).read_text(encoding="utf-8"))
        return Journal(str(data["ref"]), str(data["old"]), str(data["new"]), int(data["pid"]),
                       str(data["host"]), float(data["started"]))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        return Journal("", "", "", 0, socket.gethostname(), 0.0)  # unreadable: a dead one


def recover(drive: Drive) -> list[str]:
    """Finish a checkout move whose process died and remove its leftovers; returns one
    line per repair made (none when there was nothing to repair). Call it holding the
    drive's write lock (memgit.write.writer.write_lock)."""
    notes: list[str] = []
    journal = read(drive)
    if journal is not None and journal.alive():
        return notes  # a live writer's move: not ours to touch
    notes.extend(_remove_leftovers(drive, worktree=journal is not None))
    if journal is not None:
        if drive.workdir is not None:
            _remove_index_lock(drive, notes)
        notes.extend(_finish(drive, journal))
        end(drive)
    return notes


def complete(drive: Drive) -> list[str]:
    """Finish this process's own checkout move after its ``git read-tree`` failed (the
    branch has moved already): the same repair a later command would make."""
    journal = read(drive)
    if journal is None:
        return []
    notes = _finish(drive, journal)
    end(drive)
    return notes


def _remove_index_lock(drive: Drive, notes: list[str]) -> None:
    """git's ``index.lock`` left by the killed process (pygit2 and ``read-tree`` write
    the index through it). A lock younger than a second may be the killed process's
    ``git read-tree`` child, still finishing: it is given that second to go."""
    lock = drive.git_dir / "index.lock"
    while True:
        try:
            age = time.time() - lock.stat().st_mtime
        except FileNotFoundError:
            return
        if age > YOUNG:
            lock.unlink(missing_ok=True)
            notes.append("removed the index.lock a killed memgit left")
            return
        time.sleep(min(0.05, YOUNG - age + 0.01))


def _finish(drive: Drive, journal: Journal) -> list[str]:
    """Bring the paths the move touched to the branch's head."""
    if drive.workdir is None or not journal.ref or head_branch(drive) != journal.ref:
        return []
    head = ref_target(drive, journal.ref)
    if head is None:
        return []
    commits = [c for c in (journal.old, journal.new) if c and has_commit(drive, c)]
    head_tree = commit_tree_id(drive, head)
    paths: set[str] = set()
    for commit in commits:
        paths.update(p for p, _b in changed_files(drive, commit_tree_id(drive, commit), head_tree))
    if len(commits) == 2:
        paths.update(p for p, _b in changed_files(drive, commit_tree_id(drive, commits[0]),
                                                  commit_tree_id(drive, commits[1])))
    notes = []
    for path in sorted(paths):
        known = {_blob(drive, commit_tree_id(drive, c), path) for c in commits}
        note = catch_up(drive, path, known, head_tree)
        if note:
            notes.append(note)
    moved = "the branch" if head != journal.old else "its last commit"
    if paths:
        notes.insert(0, f"finished a checkout update a killed memgit left: "
                        f"{', '.join(sorted(paths))} brought to {moved} ({head[:10]})")
    return notes


def _blob(drive: Drive, tree: str, path: str) -> str | None:
    entry = file_at(drive, tree, path)
    return entry.oid if entry is not None else None


def catch_up_lagging(drive: Drive, head: str, paths: list[str]) -> list[str]:
    """Bring to ``head`` each of ``paths`` whose staged version is an older version of the
    branch (a checkout a killed memgit left behind without a journal, as versions before
    the journal did): committing it would undo what the branch holds. Returns a note per
    path brought."""
    head_tree = commit_tree_id(drive, head)
    notes: list[str] = []
    for path in paths:
        staged, _work = checkout_state(drive, path)
        want = _blob(drive, head_tree, path)
        if staged == want:
            continue
        older = {_blob(drive, commit_tree_id(drive, c), path)
                 for c in first_parent_chain(drive, head, None)[-LAG_DEPTH:]}
        if staged in older:
            # under a journal (branch unmoved): killed here, the next command removes
            # the index.lock this process held and finds the path lagging again
            begin(drive, head_branch(drive) or "", head, head)
            note = catch_up(drive, path, {staged}, head_tree)
            end(drive)
            notes.append(note or f"{path} was brought to the branch: its checkout still "
                         "held an older version (a killed memgit's)")
    return notes


def catch_up(drive: Drive, path: str, known: set[str | None], head_tree: str) -> str:
    """Give ``path`` the head's version in the index and the work tree when they hold
    one of the ``known`` older versions; a work-tree file with the user's own edits
    on top of such a version keeps them, merged onto the head's version (or, when
    they conflict, kept under ``<git dir>/memgit/kept/``). Returns a note for the
    user ("" when nothing of theirs was involved)."""
    want = _blob(drive, head_tree, path)
    staged, work = checkout_state(drive, path)
    ours = known | {want}
    if staged not in ours:
        return ""  # staged by the user: theirs
    if work in ours:
        if staged != want or work != want:
            update_checkout(drive, {path: read_blob(drive, want) if want else None})
        return ""
    assert drive.workdir is not None
    mine = read_worktree_file(drive.workdir, path) if work not in (None, "?") else None
    if mine is None or staged is None or want is None:
        return _keep_aside(drive, path, mine, want)
    merged = _merge(drive, mine, read_blob(drive, staged), read_blob(drive, want))
    if merged is None:
        return _keep_aside(drive, path, mine, want)
    update_checkout(drive, {path: read_blob(drive, want)})
    # the index holds the head's version; the work tree the user's edits on top of it
    write_worktree_file(drive.workdir, path, merged)
    return (f"{path}: your uncommitted edits were kept on top of the branch's version "
            f"(see git diff -- {path})")


def _merge(drive: Drive, mine: bytes, base: bytes, theirs: bytes) -> bytes | None:
    """``git merge-file -p``: the user's file with the branch's change from ``base`` applied;
    None on a conflict. Its exit status is the number of conflicts (negative: error)."""
    folder = drive.git_dir / "memgit"
    folder.mkdir(mode=0o700, exist_ok=True)
    names = []
    for label, data in (("mine", mine), ("base", base), ("theirs", theirs)):
        name = folder / f".merge-{os.getpid()}-{label}{TMP_SUFFIX}"
        name.write_bytes(data)
        names.append(name)
    try:
        proc = git("merge-file", "-p", *map(str, names), cwd=drive.git_dir, check=False)
    finally:
        for name in names:
            name.unlink(missing_ok=True)
    return proc.stdout if proc.returncode == 0 else None


def _keep_aside(drive: Drive, path: str, mine: bytes | None, want: str | None) -> str:
    """Save the user's file under ``<git dir>/memgit/kept/`` and give the path the head's
    version; the note names the copy and how to merge it."""
    note = ""
    if mine is not None:
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        kept = drive.git_dir / KEPT_DIR / f"{path}.{stamp}"
        kept.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        kept.write_bytes(mine)
        note = (f"{path}: your uncommitted edits conflict with the branch; they are kept in "
                f"{kept} (merge them by hand, then commit: the branch holds every entry)")
    update_checkout(drive, {path: read_blob(drive, want) if want else None})
    return note


def _remove_leftovers(drive: Drive, *, worktree: bool) -> list[str]:
    """Temporary files of killed memgit processes: in the hooks folder and memgit's own
    folder always, in the work tree when a checkout move was interrupted."""
    found: list[Path] = []
    for folder in (drive.git_dir / "hooks", drive.git_dir / "memgit", drive.git_dir):
        try:
            found.extend(p for p in folder.iterdir()
                         if p.name.endswith(TMP_SUFFIX) and not _live_merge(p)
                         and not p.name.startswith(".memgit-purge"))  # purge.resume's
        except FileNotFoundError:
            continue
    if worktree and drive.workdir is not None:
        proc = git("ls-files", "-z", "--others", "--", f":(glob)**/.*{TMP_SUFFIX}",
                   cwd=drive.workdir, check=False)
        found.extend(drive.workdir / os.fsdecode(raw)
                     for raw in proc.stdout.split(b"\0") if raw)
    found.extend(_half_written_objects(drive))
    for path in found:
        path.unlink(missing_ok=True)
    if not found:
        return []
    return [f"removed {len(found)} temporary file{'s' if len(found) != 1 else ''} "
            "a killed memgit left"]


def _half_written_objects(drive: Drive) -> list[Path]:
    """libgit2's temporary loose objects at least :data:`YOUNG` old. A younger one is
    watched until it is renamed into place (a live write finishing, in milliseconds) or
    reaches that age (a killed one)."""
    objects = drive.git_dir / "objects"
    try:
        names = [p for p in objects.iterdir() if p.name.startswith(LIBGIT2_TMP_PREFIX)]
    except FileNotFoundError:
        return []
    found = []
    for path in names:
        while True:
            try:
                age = time.time() - path.stat().st_mtime
            except FileNotFoundError:
                break  # renamed into place: a live write finished
            if age >= YOUNG:
                found.append(path)
                break
            time.sleep(min(0.02, YOUNG - age + 0.01))
    return found


def _live_merge(path: Path) -> bool:
    """A merge input of a running recovery (``.merge-PID-...``)."""
    if not path.name.startswith(".merge-"):
        return False
    pid = path.name.split("-")[1]
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def switch_branch_to(drive: Drive, ref: str, old: str, new: str, message: str) -> None:
    """Move the checked-out branch from ``old`` to ``new``, work tree and index too.

    The branch moves first (:func:`cas_ref`: only if it still points at ``old``), under a
    checkout journal, then ``read-tree -m -u`` brings the checkout along:
    a process killed in between leaves a journal the next command finishes from the
    branch. Should ``read-tree`` refuse (a path it must touch has local edits, which it
    then leaves alone), the same repair runs at once and keeps those edits on top.

    The branch's ``.lock`` is waited on, and broken once stale, as every other ref write
    does (:func:`waiting_on_ref_lock`): a sync killed while it moved the branch left
    ``refs/heads/main.lock``, and every later sync failed with MG004 ("locked by another
    process") until someone deleted it by hand (bench/crash_sweep.py found it).
    """
    begin(drive, ref, old, new)
    try:
        moved = waiting_on_ref_lock(drive, ref, lambda: cas_ref(drive, ref, old, new, message))
    except RefLockedError:
        end(drive)  # nothing moved: no checkout to bring along
        raise
    if not moved:
        end(drive)
        raise RepoError(f"{ref} moved while memgit was switching it",
                        "run the command again")
    try:
        move_checkout(drive, commit_tree_id(drive, old), commit_tree_id(drive, new))
    except RepoError:
        complete(drive)
        return
    end(drive)
