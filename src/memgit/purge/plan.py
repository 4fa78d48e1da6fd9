"""What a purge will do (:class:`PurgePlan`, computed by ``rewrite.plan_purge`` without
writing anything) and what it did (:class:`PurgeResult`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from memgit.git.pack_process import PackProcess
from memgit.policy.registry import RegistryKey


@dataclass(frozen=True)
class Change:
    """A commit brought a version of ``path`` that holds the entry (dry-run listing)."""

    entry_id: str
    commit: str
    path: str


@dataclass
class PurgePlan:
    """Everything a purge will do, computed without writing anything."""

    ids: list[str]
    git_dir: str
    branch_ref: str
    commits_total: int = 0
    commits_rewritten: int = 0
    ref_updates: list[tuple[str, str, str]] = field(default_factory=list)  # (ref, new, old)
    objects: list[tuple[str, str, bytes]] = field(default_factory=list)  # (kind, id, raw)
    commit_map: dict[str, str] = field(default_factory=dict)
    digests: dict[str, list[str]] = field(default_factory=dict)  # id -> text digests
    keys: dict[str, list[RegistryKey]] = field(default_factory=dict)  # id -> registry lines
    texts: list[str] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    needles: list[str] = field(default_factory=list)  # what each purged line contains
    bases: dict[str, str] = field(default_factory=dict)  # new object -> delta base
    all_commits: list[str] = field(default_factory=list)
    # for the verification: old objects this run read and checked (id -> still clean;
    # False for those that held purged data), and the kept blobs still to search for
    # purged texts (the scan learned the texts as it went)
    checked: dict[str, bool] = field(default_factory=dict)
    kept_blobs: list[str] = field(default_factory=list)
    lines_removed: int = 0
    blobs_rewritten: int = 0
    signatures_dropped: int = 0
    messages_scrubbed: int = 0
    old_head: str = ""
    new_head: str = ""
    checkout_trees: tuple[str, str] | None = None  # (old, new) tree of a checked-out branch
    checkout_paths: list[str] = field(default_factory=list)  # files that change there
    phases: dict[str, float] = field(default_factory=dict)
    pack_job: PackProcess | None = None  # the pack of ``objects``, built on the other core

    def summary(self) -> dict:
        return {
            "ids": self.ids,
            "commits_total": self.commits_total,
            "commits_rewritten": self.commits_rewritten,
            "blobs_rewritten": self.blobs_rewritten,
            "lines_removed": self.lines_removed,
            "refs": [{"ref": r, "old": o, "new": n} for r, n, o in self.ref_updates],
            "old_head": self.old_head,
            "new_head": self.new_head,
            "signatures_dropped": self.signatures_dropped,
            "messages_scrubbed": self.messages_scrubbed,
            "digests": self.digests,
            "changes": [{"id": c.entry_id, "commit": c.commit, "path": c.path}
                        for c in self.changes],
        }


@dataclass
class PurgeResult:
    plan: PurgePlan
    objects_written: int = 0
    objects_pruned: int = 0
    seconds: float = 0.0
    verified_objects: int = 0
    notes: list[str] = field(default_factory=list)

    def summary(self) -> dict:
        out = self.plan.summary()
        out.update(objects_written=self.objects_written, objects_pruned=self.objects_pruned,
                   verified_objects=self.verified_objects, seconds=round(self.seconds, 3),
                   notes=self.notes,
                   phases={k: round(v, 3) for k, v in self.plan.phases.items()})
        return out
