"""What a proposer sees: at most MAX_ENTRIES active entries and the recent turns.

Entries come from the branch head, with retrieval counts from the index; only what the
index would make searchable counts. A larger drive is shown a different slice each night,
so every entry is seen within ``ceil(N / MAX_ENTRIES)`` nights.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any

from memgit import state
from memgit.format import entries as fmt
from memgit.git.repository import Drive, commit_tree_id, ref_target, tree_texts
from memgit.index.reindex import is_indexable
from memgit.policy.settings import Policy
from memgit.state import facts, observations

MAX_ENTRIES = 300
MAX_TURNS = 80
TURN_HOURS = 24


@dataclass(frozen=True)
class SnapEntry:
    id: str
    path: str
    text: str
    added: str
    age_days: int | None  # None: no valid added date
    retrievals: int

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "path": self.path, "text": self.text, "added": self.added,
                "age_days": self.age_days, "retrievals": self.retrievals}


@dataclass
class Snapshot:
    day: str  # the drive-local date of the run
    head: str
    entries: list[SnapEntry]
    turns: list[observations.Turn]
    total_entries: int
    by_id: dict[str, SnapEntry] = field(init=False)
    turn_ids: set[str] = field(init=False)

    def __post_init__(self) -> None:
        self.by_id = {e.id: e for e in self.entries}
        self.turn_ids = {t.id for t in self.turns}

    def as_mapping(self) -> dict[str, Any]:
        """The snapshot a model plugin gets (plugins.ConsolidationModel.propose)."""
        return {"day": self.day, "entries": [e.as_dict() for e in self.entries],
                "turns": [t.as_dict() for t in self.turns],
                "entries_in_drive": self.total_entries}


def local_now(policy: Policy, now: _dt.datetime | None = None) -> _dt.datetime:
    import zoneinfo

    return (now or _dt.datetime.now(_dt.UTC)).astimezone(zoneinfo.ZoneInfo(policy.timezone))


def age_days(added: str, today: _dt.date) -> int | None:
    if not fmt.is_valid_date(added):
        return None
    return (today - _dt.date.fromisoformat(added)).days


def drive_entries(drive: Drive, head: str) -> list[tuple[str, fmt.Entry]]:
    """(path, entry) of every memory entry at ``head``, in path and line order; an id
    seen twice (a lint error) counts once."""
    out: list[tuple[str, fmt.Entry]] = []
    seen: set[str] = set()
    for path, text in sorted(tree_texts(drive, commit_tree_id(drive, head)).items()):
        if not path.endswith(".md") or fmt.is_reserved(path):
            continue
        for _line, entry in fmt.parse_document(path, text).entries():
            if entry.id in seen or not is_indexable(path, entry.meta):
                continue
            seen.add(entry.id)
            out.append((path, entry))
    return out


def rotation(items: list[Any], day: _dt.date, size: int) -> list[Any]:
    """``size`` consecutive items (wrapping), starting at a place that moves each day."""
    if len(items) <= size:
        return list(items)
    start = (day.toordinal() * size) % len(items)
    return (items + items)[start:start + size]


def take(drive: Drive, policy: Policy, *, now: _dt.datetime | None = None,
         max_entries: int = MAX_ENTRIES, max_turns: int = MAX_TURNS) -> Snapshot:
    """The snapshot of the drive now (reads only: the index as it is, no repair)."""
    from memgit.errors import UsageError

    local = local_now(policy, now)
    head = ref_target(drive, policy.branch_ref)
    if head is None:
        raise UsageError(f"the drive has no branch {policy.branch_ref}",
                         "create it with memgit init")
    everything = drive_entries(drive, head)
    chosen = rotation(everything, local.date(), max_entries)
    conn = state.connection(drive.git_dir)
    counts = facts.retrievals(conn, [e.id for _p, e in chosen])
    entries = [SnapEntry(e.id, path, e.text, e.get("added"), age_days(e.get("added"),
                                                                       local.date()),
                         counts.get(e.id, 0)) for path, e in chosen]
    since = (now or _dt.datetime.now(_dt.UTC)) - _dt.timedelta(hours=TURN_HOURS)
    turns = observations.recent(conn, since, max_turns)
    return Snapshot(local.date().isoformat(), head, entries, turns, len(everything))
