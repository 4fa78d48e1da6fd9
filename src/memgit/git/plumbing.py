"""Running the ``git`` executable: hook-safe (no pygit2, no click).

:func:`git` runs the user's ``git`` in a folder as a person would (their config,
credentials and hooks apply); :func:`git_plumbing` and friends name the git directory and
read objects exactly as stored (no replace refs). Inside pre-receive every git child
inherits the quarantine environment (GIT_OBJECT_DIRECTORY the quarantine,
GIT_ALTERNATE_OBJECT_DIRECTORIES the repository's objects), so it sees exactly what git
keeps if the hook accepts. No command here writes an object; only :func:`config_set` and
:func:`git` write at all.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from memgit.errors import RepoError


def git(*args: str, cwd: str | Path | None = None, input: bytes | None = None,
        env: Mapping[str, str] | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """Run the user's ``git`` (credentials, ssh config and hooks honoured)."""
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True,
                              env=dict(env) if env is not None else None)
    except FileNotFoundError as exc:
        raise RepoError("git is not installed or not on PATH",
                        "install git (2.30 or newer)") from exc
    if check and proc.returncode != 0:
        msg = proc.stderr.decode(errors="replace").strip() or f"git {args[0]} failed"
        raise RepoError(f"git {args[0]}: {msg}", "")
    return proc


def git_executable() -> str:
    """The ``git`` to run from a hook: PATH first (git prepends its exec-path to PATH
    for the hooks it runs), then the usual install locations. The search is shutil.which's
    on POSIX (an executable file, not a folder) without importing shutil, which brings
    bz2, lzma and fnmatch into every push."""
    folders = os.environ.get("PATH", os.defpath).split(os.pathsep)
    for folder in (*folders, os.environ.get("GIT_EXEC_PATH", ""), "/usr/bin", "/usr/local/bin"):
        exe = os.path.join(folder, "git") if folder else ""
        if exe and os.path.isfile(exe) and os.access(exe, os.X_OK):
            return exe
    raise RepoError("git is not on the hook's PATH", "install git, or put it on PATH")


def plumbing_argv(git_dir: Path, *args: str) -> list[str]:
    """``git --no-replace-objects --git-dir=GIT_DIR ARGS``: refs/replace/* must not
    change what the objects of a push or of a history rewrite say."""
    return [git_executable(), "--no-replace-objects", f"--git-dir={git_dir}", *args]


def git_plumbing(git_dir: Path, *args: str,
                 input: bytes | None = None) -> subprocess.CompletedProcess:
    """Run :func:`plumbing_argv`; output captured, never raises for a non-zero exit
    (callers read ``returncode``)."""
    argv = plumbing_argv(git_dir, *args)
    return subprocess.run(argv, input=input, capture_output=True,
                          stdin=None if input is not None else subprocess.DEVNULL)


_IDENTITY_ENV = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE",
                 "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE")


def one_file_commit(git_dir: Path, name: str, data: bytes, message: str,
                    identity: tuple[str, str]) -> str:
    """A new parentless commit whose tree holds one file, ``name`` (mode 100644) holding
    ``data``, by ``identity`` (name, email) as author and committer, dated now: its id
    (RepoError with git's words when git cannot write it). memgit's own records on refs
    (the purge registry's refs, refs/memgit/purged) are written so; moving the ref is the
    caller's (with or without compare-and-swap)."""
    blob = git_plumbing(git_dir, "hash-object", "-w", "--stdin", input=data)
    tree = git_plumbing(git_dir, "mktree", input=f"100644 blob {blob.stdout.decode().strip()}"
                        f"\t{name}\n".encode()) if blob.returncode == 0 else blob
    # commit-tree takes the identity from these variables before git config, and the
    # time now in the local time zone when no *_DATE variable is set
    env = {k: v for k, v in os.environ.items() if k not in _IDENTITY_ENV}
    env.update(GIT_AUTHOR_NAME=identity[0], GIT_AUTHOR_EMAIL=identity[1],
               GIT_COMMITTER_NAME=identity[0], GIT_COMMITTER_EMAIL=identity[1])
    commit = subprocess.run(plumbing_argv(git_dir, "commit-tree", tree.stdout.decode().strip(),
                                          "-m", message),
                            capture_output=True, env=env, stdin=subprocess.DEVNULL) \
        if tree.returncode == 0 else tree
    if commit.returncode != 0:
        raise RepoError(f"git cannot write a commit of {name} in {git_dir}",
                        commit.stderr.decode("utf-8", "replace").strip())
    return commit.stdout.decode().strip()


def start_plumbing(git_dir: Path, *args: str) -> subprocess.Popen[bytes]:
    """Start ``git --git-dir=GIT_DIR ARGS`` and return at once (collect with
    :func:`finish_plumbing`), so several git commands start side by side."""
    return subprocess.Popen(plumbing_argv(git_dir, *args), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finish_plumbing(proc: subprocess.Popen[bytes]) -> subprocess.CompletedProcess:
    out, err = proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


# --- config and layout --------------------------------------------------------------------


def config_get(git_dir: Path, key: str,
               started: subprocess.Popen[bytes] | None = None) -> str | None:
    """``git config --get KEY`` as git itself would read it for this repository
    (``started``: the same command begun earlier with :func:`start_plumbing`)."""
    proc = finish_plumbing(started or start_plumbing(git_dir, "config", "--get", key))
    if proc.returncode != 0:
        return None
    return proc.stdout.decode("utf-8", "replace").rstrip("\n")


def config_set(git_dir: Path, key: str, value: str) -> None:
    proc = git_plumbing(git_dir, "config", key, value)
    if proc.returncode != 0:
        raise RepoError(f"git config {key} failed: "
                        f"{proc.stderr.decode('utf-8', 'replace').strip()}", "")


def hooks_dir(git_dir: Path) -> Path:
    """Where git looks for this repository's hooks (honours core.hooksPath)."""
    proc = git_plumbing(git_dir, "rev-parse", "--git-path", "hooks")
    if proc.returncode != 0:
        raise RepoError(f"{git_dir} is not a git repository",
                        proc.stderr.decode("utf-8", "replace").strip())
    path = Path(os.fsdecode(proc.stdout.rstrip(b"\n")))
    # a relative core.hooksPath is relative to where hooks run: the git dir of a bare repo
    return path if path.is_absolute() else git_dir / path


def find_repository(path: Path) -> tuple[Path, bool] | None:
    """(git directory, is bare) of the repository containing ``path``, like git finds it;
    None when there is none."""
    proc = subprocess.run([git_executable(), "-C", str(path), "rev-parse", "--absolute-git-dir",
                           "--is-bare-repository"], capture_output=True,
                          stdin=subprocess.DEVNULL)
    lines = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
    if proc.returncode != 0 or len(lines) != 2:
        return None
    return Path(lines[0]), lines[1] == "true"


# --- the commits of a push (pre-receive) ----------------------------------------------------


class PushCommit(NamedTuple):
    """A commit of a push as ``git rev-list`` lists it."""

    oid: str
    parents: tuple[str, ...]
    tree: str
    subject: str


class ObjectMissingError(RepoError):
    """An object the push names is neither in the push nor in the repository."""


def start_new_commits(git_dir: Path, tip: str) -> subprocess.Popen[bytes]:
    """Start listing the commits of a push; :func:`push_new_commits` has the details."""
    fmt_arg = "--format=%x00%H%x00%P%x00%T%x00%s"
    return start_plumbing(git_dir, "rev-list", "--topo-order", "--reverse", fmt_arg, tip,
                          "--not", "--all")


def push_new_commits(git_dir: Path, tip: str,
                     started: subprocess.Popen[bytes] | None = None) -> list[PushCommit]:
    """Commits reachable from ``tip`` and from no ref, parents before children.

    Inside pre-receive the refs still hold their pre-push values, so ``--not --all``
    leaves exactly the commits this push brings.
    """
    proc = finish_plumbing(started or start_new_commits(git_dir, tip))
    if proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ObjectMissingError(f"git rev-list {tip[:12]} failed: "
                                 f"{msg[-1] if msg else proc.returncode}", "")
    out: list[PushCommit] = []
    # rev-list --format prints a "commit <oid>" line before each formatted line; only
    # the formatted lines start with the NUL put first in the format.
    for line in proc.stdout.split(b"\n"):
        if not line.startswith(b"\x00"):
            continue
        _, oid, parents, tree, subject = line.split(b"\x00", 4)
        out.append(PushCommit(oid.decode(), tuple(parents.decode().split()), tree.decode(),
                              subject.decode("utf-8", "replace")))
    return out


def push_is_ancestor(git_dir: Path, ancestor: str, descendant: str) -> bool:
    """``git merge-base --is-ancestor``: exit 0 yes, 1 no, anything else an error."""
    proc = git_plumbing(git_dir, "merge-base", "--is-ancestor", ancestor, descendant)
    if proc.returncode in (0, 1):
        return proc.returncode == 0
    raise ObjectMissingError(f"cannot tell whether {ancestor[:12]} is an ancestor of "
                             f"{descendant[:12]}", "")


# --- the whole history (purge) --------------------------------------------------------------


def has_refs(git_dir: Path) -> bool:
    """Whether the repository has any ref at all (an empty server drive has none)."""
    proc = git_plumbing(git_dir, "for-each-ref", "--count=1", "--format=%(refname)")
    if proc.returncode != 0:
        raise RepoError("git for-each-ref failed", proc.stderr.decode("utf-8", "replace"))
    return bool(proc.stdout.strip())


def refs_snapshot(git_dir: Path) -> list[tuple[str, str, str]]:
    """(ref name, object id, object type) of every ref, plus HEAD when it is detached.

    Symbolic refs are left out: they follow the ref they name.
    """
    proc = git_plumbing(git_dir, "for-each-ref",
                        "--format=%(objectname) %(objecttype) %(refname) %(symref)")
    if proc.returncode != 0:
        raise RepoError("git for-each-ref failed", proc.stderr.decode("utf-8", "replace"))
    out: list[tuple[str, str, str]] = []
    for line in proc.stdout.decode().splitlines():
        parts = line.split(" ")
        if len(parts) >= 4 and parts[3]:
            continue
        out.append((parts[2], parts[0], parts[1]))
    head = git_plumbing(git_dir, "symbolic-ref", "-q", "HEAD")
    if head.returncode != 0:  # detached (or unborn): HEAD itself names a commit
        oid = git_plumbing(git_dir, "rev-parse", "-q", "--verify", "HEAD^{object}")
        if oid.returncode == 0:
            value = oid.stdout.decode().strip()
            kind = git_plumbing(git_dir, "cat-file", "-t", value).stdout.decode().strip()
            out.append(("HEAD", value, kind))
    return out


def all_object_names(git_dir: Path) -> list[str]:
    """The id of every object in the repository, loose and packed, reachable or not,
    in pack order (``cat-file --batch-all-objects --unordered``). No types: git then
    reads only the pack indexes and the loose object folders, not each packed
    object's header and delta chain."""
    proc = git_plumbing(git_dir, "cat-file", "--batch-all-objects", "--unordered",
                        "--batch-check=%(objectname)")
    if proc.returncode != 0:
        raise RepoError("git cat-file --batch-all-objects failed: "
                        + proc.stderr.decode("utf-8", "replace").strip(), "run git fsck")
    return proc.stdout.decode().split()


def object_count(git_dir: Path) -> int:
    """Objects in the repository, loose and packed (``git count-objects -v``)."""
    proc = git_plumbing(git_dir, "count-objects", "-v")
    counts = dict(line.split(": ", 1) for line in proc.stdout.decode().splitlines()
                  if ": " in line)
    return int(counts.get("count", 0)) + int(counts.get("in-pack", 0))
