"""Judge a revision range exactly as pre-receive would judge its push.

pre-receive judges a push against the repository as it was before the push: its refs
hold their old values and ``git rev-list NEW --not --all`` lists the pushed commits.
:func:`judge_range` rebuilds that situation for ``BASE..HEAD`` of any repository (a CI
checkout, a gate's clone) and calls the very same judge (``receive.judge_push``):

* a *stand-in receiving repository*, a temporary bare git directory whose only ref is
  the policy's branch at ``BASE`` (none when there is no base: a first push), and whose
  objects are the source repository's, borrowed through ``objects/info/alternates``
  (git follows alternates transitively, so a source that borrows objects works too);
* the update ``BASE HEAD refs/heads/<branch>`` on it, as git would feed it to the hook.

Nothing is written to the source repository; the stand-in is removed afterwards.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from memgit.errors import UsageError
from memgit.git.plumbing import git_plumbing
from memgit.githooks.hook_io import RefUpdate
from memgit.githooks.receive import judge_push
from memgit.githooks.verdict import Verdict
from memgit.policy.registry import PurgeRegistry
from memgit.policy.settings import Policy

ZERO = "0" * 40


@dataclass(frozen=True)
class RangeVerdict:
    """What :func:`judge_range` found: the range judged and pre-receive's verdict."""

    base: str | None  # None: judged as a first push to an empty drive
    head: str
    verdict: Verdict


def resolve_commit(git_dir: Path, rev: str) -> str:
    """The full id of the commit ``rev`` names; a UsageError naming ``rev`` otherwise."""
    proc = git_plumbing(git_dir, "rev-parse", "--verify", "--quiet", "--end-of-options",
                        f"{rev}^{{commit}}")
    if proc.returncode != 0:
        raise UsageError(f"{rev!r} is not a commit of this repository",
                         "fetch it first (a CI checkout needs the base commit too: "
                         "fetch-depth: 0, or git fetch origin BASE)")
    return proc.stdout.decode().strip()


def merge_base(git_dir: Path, a: str, b: str) -> str | None:
    proc = git_plumbing(git_dir, "merge-base", a, b)
    return proc.stdout.decode().strip() or None if proc.returncode == 0 else None


def _objects_dir(git_dir: Path) -> Path:
    """The object directory git uses for ``git_dir`` (``git rev-parse --git-path``)."""
    proc = git_plumbing(git_dir, "rev-parse", "--git-path", "objects")
    path = Path(proc.stdout.decode().strip())
    return path if path.is_absolute() else (git_dir / path).resolve()


@contextmanager
def stand_in(git_dir: Path, branch_ref: str, base: str | None) -> Iterator[Path]:
    """A temporary bare repository that shares ``git_dir``'s objects and whose one ref is
    ``branch_ref`` at ``base``: the receiving side of a push of that branch."""
    folder = Path(tempfile.mkdtemp(prefix="memgit-check-"))
    try:
        proc = git_plumbing(folder, "init", "--bare", "--quiet", str(folder))
        if proc.returncode != 0:
            raise UsageError("cannot make a temporary git repository",
                             proc.stderr.decode(errors="replace").strip())
        alternates = folder / "objects" / "info" / "alternates"
        alternates.write_text(f"{_objects_dir(git_dir)}\n", encoding="utf-8")
        shallow = git_dir / "shallow"
        if shallow.exists():  # a shallow CI checkout: git must not walk past its edge
            shutil.copyfile(shallow, folder / "shallow")
        if base is not None:
            set_ref = git_plumbing(folder, "update-ref", branch_ref, base)
            if set_ref.returncode != 0:
                raise UsageError(f"cannot use {base[:12]} as the base",
                                 set_ref.stderr.decode(errors="replace").strip())
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def judge_range(git_dir: Path, base: str | None, head: str, policy: Policy,
                registry: PurgeRegistry) -> RangeVerdict:
    """pre-receive's verdict on pushing ``head`` onto the policy's branch at ``base``.

    ``base`` must be an ancestor of ``head`` for the push to be a fast-forward (callers
    pass a merge base); ``None`` judges ``head`` as the first push to an empty drive.
    """
    update = RefUpdate(base or ZERO, head, policy.branch_ref)
    with stand_in(git_dir, policy.branch_ref, base) as receiving:
        verdict = judge_push(receiving, [update], policy, registry)
    return RangeVerdict(base, head, verdict)
