"""The network: fetch, push and clone with the user's ``git``.

The user's git on purpose: their credential helpers, ssh config and proxies apply. No
prompt may block a headless agent, so git fails instead of asking for a user name, a
password or an ssh host key. Nothing here raises on a failed network operation: callers
read the exit status and git's message.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from memgit.git.plumbing import git
from memgit.git.repository import Drive


def _network_env() -> dict[str, str]:
    return dict(os.environ, GIT_TERMINAL_PROMPT="0",
                GIT_SSH_COMMAND=os.environ.get("GIT_SSH_COMMAND", "ssh -o BatchMode=yes"))


def remote_url(drive: Drive, remote: str) -> str | None:
    return remote_url_at(drive.root, remote)


def remote_url_at(root: Path, remote: str) -> str | None:
    """The URL git uses for ``remote`` of the repository at ``root`` (insteadOf applied)."""
    proc = git("remote", "get-url", remote, cwd=root, check=False)
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


def fetch_branch(drive: Drive, remote: str, branch: str, into: str,
                 also: Sequence[str] = ()) -> subprocess.CompletedProcess:
    """``git fetch REMOTE +refs/heads/BRANCH:INTO [ALSO...]`` with the user's git; not
    checked. ``also``: more refspecs, fetched in the same round trip.

    The ``+`` lets ``into`` (a private tracking ref) follow a rewritten server
    history; nothing else of the checkout changes.
    """
    return git("fetch", "--no-tags", "--no-write-fetch-head", "--quiet", remote,
               f"+refs/heads/{branch}:{into}", *also, cwd=drive.root, env=_network_env(),
               check=False)


def fetch_refs(drive: Drive, remote: str, *specs: str) -> subprocess.CompletedProcess:
    """``git fetch REMOTE SPEC...`` with the user's git, prompts disabled; not checked."""
    return git("fetch", "--no-tags", "--no-write-fetch-head", "--quiet", remote, *specs,
               cwd=drive.root, env=_network_env(), check=False)


NO_PUSH_OPTIONS = "does not support push options"  # git's words for such a server


def push_commit(drive: Drive, remote: str, oid: str, branch: str,
                options: Sequence[str] = ()) -> subprocess.CompletedProcess:
    """``git push --porcelain [--push-option=OPTION...] REMOTE OID:refs/heads/BRANCH``
    (never forced); not checked.

    Without ``+`` or ``--force`` git refuses locally or the server refuses any
    update that is not a fast-forward. A server that does not advertise push options
    (``receive.advertisePushOptions``) makes git stop before sending anything, saying
    NO_PUSH_OPTIONS: the push is then made again without them.
    """
    return push_ref(drive, remote, oid, f"refs/heads/{branch}", options)


def push_ref(drive: Drive, remote: str, oid: str, ref: str,
             options: Sequence[str] = ()) -> subprocess.CompletedProcess:
    """``git push --porcelain [--push-option=OPTION...] REMOTE OID:REF`` (never forced);
    not checked; made again without the options when the server takes none."""
    argv = ["push", "--porcelain", "--no-verify", *(f"--push-option={o}" for o in options),
            remote, f"{oid}:{ref}"]
    proc = git(*argv, cwd=drive.root, env=_network_env(), check=False)
    if options and proc.returncode != 0 and NO_PUSH_OPTIONS.encode() in proc.stderr:
        return push_ref(drive, remote, oid, ref)
    return proc


def clone_repository(url: str, path: Path, branch: str, *, bare: bool = False,
                     copy: bool = False) -> subprocess.CompletedProcess:
    """``git clone --branch BRANCH URL PATH`` with the user's git; not checked.

    ``bare``: a bare clone of that branch alone, without tags (a mount); ``copy``: that
    branch alone, and a local source's objects copied rather than hard-linked (a fork
    owns its history: nothing the parent prunes or repacks later touches it).
    """
    extra = ["--bare"] if bare else []
    if bare or copy:
        extra += ["--single-branch", "--no-tags"]
    if copy:
        extra.append("--no-hardlinks")
    return git("clone", "--quiet", *extra, "--branch", branch, "--", url, str(path),
               env=_network_env(), check=False)
