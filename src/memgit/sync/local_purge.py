"""A checkout purged entries its server drive still holds (docs/sync.md, "Purged history").

``memgit purge ID --repo CHECKOUT`` rewrites the checkout's history, ``last-synced``
among it, so the next sync finds the server's branch no longer descending from
``last-synced``, as after a purge on the server. It is not one: the server never purged
those entries, and taking its branch would bring them back (the work tree, and every
object of its history). Sync tells the two apart with the purge registries: ids this
checkout's ``memgit-purged`` lists and the server's ``refs/memgit/purged`` does not, that
an entry of the server's branch still carries (at its head, or in a commit since the two
histories parted), were purged here only. Then sync refuses, and forgets what the fetch
brought, so the purge holds in the checkout until the server drive is purged too.
"""

from __future__ import annotations

import re

from memgit.errors import RefusedError
from memgit.git.plumbing import git
from memgit.git.repository import (
    Drive,
    commit_tree_id,
    delete_ref,
    merge_base,
    set_ref,
    tree_texts,
)
from memgit.git.rewrite import expire_reflogs_and_prune
from memgit.policy.registry import PurgeRegistry
from memgit.sync.replay import entry_map


class LocallyPurgedError(RefusedError):
    """The checkout purged entries its server drive still holds; sync changed nothing."""

    def __init__(self, remote: str, ids: list[str]) -> None:
        shown = " ".join(ids[:5]) + (" ..." if len(ids) > 5 else "")
        super().__init__(
            f"this checkout's history was purged (memgit purge) of entries that {remote} "
            f"still holds ({shown}): taking the server's history would bring them back, "
            "so nothing was synced",
            hint=f"purge the server drive too: memgit purge {shown} --repo SERVER_DRIVE "
                 "--yes (docs/purge.md), then run memgit sync again; your local commits "
                 "are kept")
        self.ids = ids


def locally_purged(drive: Drive, server_ids: set[str], local_head: str,
                   server_head: str) -> list[str]:
    """Ids purged in this checkout (its registry), not on the server (``server_ids``,
    its published purged ids), that an entry on the server's branch still carries."""
    mine = PurgeRegistry.load(drive.git_dir).ids - server_ids
    if not mine:
        return []
    found = set(mine) & set(entry_map(_tree(drive, server_head)))
    explicit = sorted(i for i in mine - found if not i.startswith("entry-"))
    if explicit:  # an id written out in a line: git's pickaxe finds the commits adding it
        base = merge_base(drive, local_head, server_head)
        found |= _in_history(drive, explicit, server_head, base)
    return sorted(found)


def _tree(drive: Drive, commit: str) -> dict[str, str]:
    return tree_texts(drive, commit_tree_id(drive, commit))


def _in_history(drive: Drive, ids: list[str], head: str, base: str | None) -> set[str]:
    """Which of ``ids`` an entry carries in a commit of ``base..head`` that changed it."""
    pattern = "|".join(re.escape(i) for i in ids)
    span = f"{base}..{head}" if base else head
    proc = git("log", "--format=%H", "--pickaxe-regex", "-S", pattern, span, "--",
               cwd=drive.git_dir, check=False)
    found: set[str] = set()
    for commit in proc.stdout.decode().split():
        found |= set(ids) & set(entry_map(_tree(drive, commit)))
    return found


def forget_fetch(drive: Drive, before: dict[str, str | None]) -> None:
    """Put the refs the fetch moved back where they were (``before``: ref -> commit, None
    for none: the private remote-tracking ref, and git's own ``refs/remotes/REMOTE/BRANCH``,
    which a fetch from a configured remote updates too) and prune what the fetch brought:
    no object of the checkout holds the purged text again."""
    for ref, commit in before.items():
        if commit is None:
            delete_ref(drive, ref)
        else:
            set_ref(drive, ref, commit, "memgit sync: the server still holds purged entries")
    (drive.git_dir / "FETCH_HEAD").unlink(missing_ok=True)
    expire_reflogs_and_prune(drive.git_dir)
