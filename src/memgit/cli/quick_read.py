"""The read path without pygit2: recall, the context packet and the sync status from the ref
files, SQLite and a few ``git`` commands.

:func:`open_current` answers only when the recall index is at the branch head and no write
is queued; otherwise, or when the ref files do not settle it (git.files.Unsure), it raises
:class:`NotQuick` for the full read path, which defines every answer (the same functions
compute them here). Nothing is written but a recall's retrieval counts, as on the full path.
"""

from __future__ import annotations

import os

from memgit import state
from memgit.git import DEFAULT_BRANCH
from memgit.git.files import (
    Location,
    NoRepository,
    Unsure,
    config_texts,
    discover,
    object_type,
    ref_commit,
)
from memgit.index.search import Hit, search
from memgit.state import pending

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads it so)
if TYPE_CHECKING:
    from typing import Any

    from memgit.drives.choose import Chosen
    from memgit.policy.settings import Policy
    from memgit.recall.context import Packet

POLICY_FILE = "memgit.yaml"  # in the git dir, as policy.find_policy looks for it
POLICY_CONFIG = "memgit.policy"
# Config text that may set core.bare to true, or core.worktree or
# extensions.worktreeConfig (then the work tree may not be the .git folder's parent).
_WORK_TREE_KEYS = (rb"\bbare\b[ \t]*(?:$|[;#]|=(?![ \t]*(?:false|no|off|0)[ \t]*(?:$|[;#])))"
                   rb"|worktree")


class NotQuick(Exception):
    """The quick path cannot answer for sure: run the full read path."""


class Current:
    """A drive whose recall index is at its branch head, with nothing queued."""

    __slots__ = ("location", "branch", "head", "conn", "policy")

    def __init__(self, location: Location, branch: str, head: str,
                 conn: state.Connection, policy: Policy | None = None) -> None:
        self.location = location
        self.branch = branch
        self.head = head
        self.conn = conn
        self.policy = policy  # None: no memgit.yaml or memgit.policy config key, the defaults

    @property
    def key(self) -> tuple[str, str]:
        """The drive and head that name the search's cached word counts (as read_path's)."""
        return self.location.git_dir, self.head


def locate(directory: str | None) -> Location:
    try:
        return discover(directory)
    except Unsure as exc:
        raise NotQuick(str(exc)) from None


def policy_of(location: Location) -> Policy | None:
    """The drive's policy as policy.find_policy gives it: memgit.yaml in the git dir,
    else the file the ``memgit.policy`` config key names; None when neither exists (the
    defaults). The policy module (and pyyaml) is loaded only when one of them exists,
    and git is asked for the key only when a config file may set it."""
    value: str | None = None
    if not os.path.exists(os.path.join(location.git_dir, POLICY_FILE)):
        texts = config_texts(location)
        if texts is not None and not any(b"policy" in t for t in texts):
            return None
        value = _config_value(location, POLICY_CONFIG)
        if not value:
            return None
    from pathlib import Path

    from memgit.policy.settings import find_policy

    return find_policy(None, Path(location.git_dir), value)


def branch_of(location: Location, policy: Policy | None = None) -> str:
    """The drive's branch (``policy``: policy_of's answer, when already read)."""
    policy = policy if policy is not None else policy_of(location)
    return policy.branch if policy is not None else DEFAULT_BRANCH


def _config_value(location: Location, key: str) -> str | None:
    """``git config --get KEY`` for the repository (as pygit2 reads its config files)."""
    from pathlib import Path

    from memgit.git.plumbing import config_get

    return config_get(Path(location.git_dir), key)


def ref(location: Location, name: str) -> str | None:
    try:
        return ref_commit(location, name)
    except Unsure as exc:
        raise NotQuick(str(exc)) from None


def repository_verdict(folder: str) -> bool | None:
    """drives.choose.repository_verdict from the ref files and one ``git cat-file``: True
    in a drive, False in a git repository that is not one, None outside any (NotQuick
    when the files do not settle it)."""
    try:
        location = discover(folder)
    except NoRepository:
        return None
    except Unsure as exc:
        raise NotQuick(str(exc)) from None
    head = ref(location, f"refs/heads/{branch_of(location)}")
    return head is not None and _has_memory(location, head)


def chosen_drive(directory: str | None, cwd: str | None, *, made: bool = True) -> Chosen:
    """The drive drives.choose picks for ``-C directory`` in ``cwd``; NotQuick when it is
    the personal drive and (``made``) not created yet: the full path creates it and says
    so."""
    from memgit.drives.choose import choose

    chosen = choose(directory, cwd, repository_verdict)
    if made and chosen.personal and not os.path.exists(chosen.path):
        raise NotQuick("the personal drive is not created yet")
    return chosen


def chosen_path(directory: str | None, cwd: str | None, *, made: bool = True) -> str:
    """:func:`chosen_drive`'s path."""
    return chosen_drive(directory, cwd, made=made).path


def open_current(directory: str | None) -> Current:
    """The drive at ``directory`` when its recall index is current and no write waits
    (the read path would have nothing to do); NotQuick otherwise."""
    location = locate(directory)
    policy = policy_of(location)
    branch = branch_of(location, policy)
    head = ref(location, f"refs/heads/{branch}")
    if head is None:
        raise NotQuick("the branch has no commit yet")
    if not os.path.isfile(state.state_file(location.git_dir)):
        raise NotQuick("no state database yet")  # the full path creates and fills it
    conn = state.connection(location.git_dir)
    if state.get_meta(conn, "indexed_rev") != head or pending.count(conn):
        raise NotQuick("the recall index is behind the branch, or writes are queued")
    return Current(location, branch, head, conn, policy)


MEMORY_FILE = "MEMORY.md"  # format.MEMORY_FILE without loading format (about 20 ms; tested)


def require_memory(current: Current) -> None:
    """NotQuick unless the head has a MEMORY.md file: agent.AgentDrive serves only a
    drive (a code repository is not one) and the full path names the problem. ``git
    cat-file -t`` says ``blob`` for a file or a symbolic link (which pygit2's file_at
    accepts too), ``tree`` for a folder and ``commit`` for a submodule."""
    if not _has_memory(current.location, current.head):
        raise NotQuick("no MEMORY.md at the head: the full path explains")


def _has_memory(location: Location, head: str) -> bool:
    try:
        return object_type(location, f"{head}:{MEMORY_FILE}") == "blob"
    except Unsure as exc:
        raise NotQuick(str(exc)) from None


def recall(current: Current, query: str, limit: int, *, count: bool = True) -> list[Hit]:
    """read_path.recall on a current index."""
    return search(current.conn, query, limit, count=count, key=current.key)


def recall_in_mode(current: Current, query: str, limit: int, *, count: bool = True,
                   mode: str | None = None) -> tuple[list[Hit], list[str]]:
    """read_path.recall_in_mode on a current index: (hits, warnings). memgit.recall.hybrid is
    loaded only for a drive with an ``embeddings:`` section (then NumPy and the model
    too, which cost more than the quick path saves, but it still saves loading click
    and pygit2: docs/embeddings.md); a mode it cannot run goes to the full path, whose
    error says why."""
    config = current.policy.setting("embeddings") if current.policy is not None else None
    if mode == "lexical" or (mode is None and config is None):
        return recall(current, query, limit, count=count), []
    if config is None:
        raise NotQuick("a recall by meaning without an embeddings: section")
    from memgit.recall.hybrid import search as search_in_mode

    found = search_in_mode(current.conn, current.key, query, limit, mode=mode or "hybrid",
                           config=config, count=count)
    return found.hits, found.warnings


def recall_mounts(current: Current, query: str, limit: int, *,
                  count: bool = True) -> list[tuple[str, Hit]]:
    """mounts.recall_with_mounts when the drive's and every mount's recall index are
    current (NotQuick otherwise: the full path repairs them, or names a broken mount):
    the same searches, merged by the same recall_search.merge_drives."""
    from memgit.index.search import merge_drives
    from memgit.sync.mount_dirs import SELF, mounted

    found = [(SELF, current.conn, search(current.conn, query, limit, count=False,
                                         key=current.key))]
    for name, path in mounted(current.location.git_dir):
        mount = open_current(path)
        found.append((name, mount.conn, search(mount.conn, query, limit, count=False,
                                               key=mount.key)))
    return merge_drives(found, query, limit, count=count)


def context(current: Current, budget: int, query: str | None) -> Packet:
    """context.build_packet on a current index; MEMORY.md at the head comes from one
    ``git cat-file`` (which, like pygit2, prints a symbolic link's target and refuses a
    folder or a submodule, which count as no MEMORY.md)."""
    from pathlib import Path

    from memgit.format.entries import MEMORY_FILE
    from memgit.git.plumbing import git_plumbing
    from memgit.recall.context import assemble_packet

    proc = git_plumbing(Path(current.location.git_dir), "cat-file", "blob",
                        f"{current.head}:{MEMORY_FILE}")
    memory = proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else ""
    return assemble_packet(current.conn, current.head, memory, budget, query,
                           current.location.git_dir)


# --- memgit status -------------------------------------------------------------------------


class FileHistory:
    """A repository's refs from the ref files and its commit graph from ``git`` (one
    command per question), as sync_state.History; answers what pygit2 would."""

    def __init__(self, location: Location) -> None:
        self.location = location

    def ref_target(self, ref_name: str) -> str | None:
        return ref(self.location, ref_name)

    def _git(self, *args: str) -> tuple[int, str]:
        from pathlib import Path

        from memgit.git.plumbing import git_plumbing

        proc = git_plumbing(Path(self.location.git_dir), *args)
        return proc.returncode, proc.stdout.decode("ascii", "replace")

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        if ancestor == descendant:
            return True
        code, _out = self._git("merge-base", "--is-ancestor", ancestor, descendant)
        if code not in (0, 1):
            raise NotQuick("git merge-base --is-ancestor failed")
        return code == 0

    def merge_base(self, a: str, b: str) -> str | None:
        code, out = self._git("merge-base", "--all", a, b)
        bases = out.split()
        if code == 1 and not bases:
            return None
        if code != 0 or len(bases) != 1:
            raise NotQuick("no single merge base")  # pygit2 picks one of several its own way
        return bases[0]

    def first_parent_chain(self, head: str, stop: str | None) -> list[str]:
        if head == stop:
            return []
        # With --first-parent and one tip, rev-list walks exactly the first-parent chain,
        # newest first (a single line of commits leaves it no order to choose).
        code, out = self._git("rev-list", "--first-parent", head)
        if code != 0:
            raise NotQuick("git rev-list failed")
        chain: list[str] = []
        for oid in out.split():
            if oid == stop:
                break
            chain.append(oid)
        chain.reverse()
        return chain


def status(directory: str | None, remote: str) -> dict[str, Any]:
    """sync.sync_status for a checkout, without pygit2 (NotQuick for a bare repository
    or one whose work tree git may place elsewhere)."""
    import re
    from pathlib import Path

    from memgit.git.plumbing import config_get, start_plumbing
    from memgit.git.remote import remote_url_at
    from memgit.sync.status import LAST_SYNC_CONFIG
    from memgit.sync.status import status as sync_status

    location = locate(directory)
    workdir = location.workdir
    texts = config_texts(location)
    if workdir is None or texts is None or any(re.search(_WORK_TREE_KEYS, t, re.M)
                                               for t in texts):
        raise NotQuick("a bare repository, or a work tree the config may place elsewhere")
    policy = policy_of(location)
    branch = DEFAULT_BRANCH if policy is None else policy.branch
    if ref(location, f"refs/heads/{branch}") is None:
        raise NotQuick("the branch is missing (the full path names it and the fix)")
    git_dir = Path(location.git_dir)
    started = start_plumbing(git_dir, "config", "--get", LAST_SYNC_CONFIG)
    url = remote_url_at(Path(workdir), remote)
    last = config_get(git_dir, LAST_SYNC_CONFIG, started)
    return sync_status(FileHistory(location), branch, remote, url, last,
                       kind="personal" if policy is None else policy.kind)
