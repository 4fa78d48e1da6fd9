"""What the dashboard shows, read through memgit's own functions (no SQL, no rules here).

* a drive's health: memgit.drives.info.drive_info (``memgit info``: the read path first),
  the time of its last accepted push (its counter's stamp), its last dream run and whether
  its server hooks are installed and current (memgit.githooks.install.server_status);
* the Index and the topics: MEMORY.md's ``## Index`` (memgit.format.entries) and each file's
  entries at the branch head, with their retrievals from the recall index;
* search: memgit.recall.read_path.recall_in_mode in the drive's own mode (hybrid with an
  embedder, else lexical), counting no retrieval (a person browsing is not an agent
  recalling);
* an entry's history: memgit.serve.history; the board: memgit.write.board.board; dream
  runs and their reports: memgit.state.dream; mounts: memgit.sync.mounts.list_mounts.

Values come back as they are stored; memgit.serve.views escapes and redacts them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memgit import state
from memgit.format import entries as fmt
from memgit.git.repository import Drive, commit_tree_id, file_at, read_blob, ref_target
from memgit.git.repository import open_drive as _open_drive
from memgit.policy.settings import Policy, drive_policy
from memgit.state import counters, facts
from memgit.state import dream as dream_runs

SEARCH_LIMIT = 20


@dataclass
class Opened:
    drive: Drive
    policy: Policy


def open_drive(folder: Path) -> Opened:
    """The drive and its policy, after the read path (memgit.recall.read_path.catch_up: queued
    writes retried, the recall index brought to the head), as every memgit read does."""
    from memgit.recall.read_path import catch_up

    drive = _open_drive(folder)
    opened = Opened(drive, drive_policy(drive))
    catch_up(drive, policy=opened.policy)
    return opened


def health(opened: Opened, *, hooks: bool = True) -> dict[str, Any]:
    """``memgit info`` of the drive, plus its last push, last dream and hook state."""
    from memgit.drives.info import drive_info

    info = drive_info(opened.drive, opened.policy)
    conn = state.connection(opened.drive.git_dir)
    last = dream_runs.runs(conn, limit=1)
    info["last_push"] = counters.updated(conn, "push_accepted")
    info["last_dream"] = last[0].as_dict() if last else None
    if hooks:
        info["hook_problems"] = hook_problems(opened.drive.git_dir)
    return info


HOOKS_TTL = 30.0  # seconds a drive's hook check is kept (it runs four git commands)
_hooks_seen: dict[str, tuple[float, list[str]]] = {}


def hook_problems(git_dir: Path) -> list[str]:
    """memgit.githooks.install.server_status's problems for the drive, checked at most every
    :data:`HOOKS_TTL` seconds per process."""
    import time

    from memgit.githooks.install import server_status

    now = time.monotonic()
    seen = _hooks_seen.get(str(git_dir))
    if seen is None or now - seen[0] > HOOKS_TTL:
        seen = _hooks_seen[str(git_dir)] = (now, server_status(git_dir).problems)
    return seen[1]


def _head_tree(opened: Opened) -> str | None:
    head = ref_target(opened.drive, opened.policy.branch_ref)
    return commit_tree_id(opened.drive, head) if head else None


def read_file(opened: Opened, path: str) -> str | None:
    """A file's text at the branch head; None when the head has no such file."""
    tree = _head_tree(opened)
    found = file_at(opened.drive, tree, path) if tree else None
    if found is None:
        return None
    return read_blob(opened.drive, found.oid).decode("utf-8", "replace")


def index_listing(opened: Opened) -> dict[str, Any]:
    """MEMORY.md's heading, its own entries and its Index: each topic with its
    description (the text after the link) and how many entries it holds now."""
    text = read_file(opened, fmt.MEMORY_FILE) or ""
    conn = state.connection(opened.drive.git_dir)
    counts = {path: n for path, n, _oldest in facts.cap_summary(conn, oldest=False)}
    topics = []
    for line in fmt.index_section_lines(text):
        targets = list(fmt.iter_links(line))
        if not targets:
            continue
        path = fmt.link_target_path(targets[0])
        description = line.split("]]", 1)[1].strip() if "]]" in line else ""
        topics.append({"path": path, "description": description,
                       "entries": counts.get(path, 0)})
    heading = next((ln[2:].strip() for ln in text.splitlines() if ln.startswith("# ")), "")
    return {"heading": heading, "topics": topics,
            "memory_entries": counts.get(fmt.MEMORY_FILE, 0)}


def topic(opened: Opened, path: str) -> dict[str, Any] | None:
    """The file's headings and entries in file order, each entry with its id, source,
    date, retrievals and other metadata; None when the head has no such file."""
    text = read_file(opened, path)
    if text is None or not path.endswith(".md"):
        return None
    doc = fmt.parse_document(path, text)
    items: list[dict[str, Any]] = []
    ids = []
    for line in doc.lines:
        if line.in_code or line.in_front_matter or line.in_index_section:
            continue
        entry = line.entry
        if entry is not None:
            ids.append(entry.id)
            items.append({"kind": "entry", "line": line.number, "text": entry.text,
                          "id": entry.id, "source": entry.get("source"),
                          "added": entry.get("added"),
                          "meta": {k: v for k, v in entry.meta.items()
                                   if k not in ("id", "source", "added")}})
        elif line.content.startswith("#"):
            items.append({"kind": "heading", "text": line.content.lstrip("#").strip(),
                          "level": min(6, len(line.content) - len(line.content.lstrip("#")))})
    counts = facts.retrievals(state.connection(opened.drive.git_dir), ids)
    for item in items:
        if item["kind"] == "entry":
            item["retrievals"] = counts.get(item["id"], 0)
    return {"path": path, "items": items, "entries": len(ids)}


def search(opened: Opened, query: str) -> dict[str, Any]:
    """The best entries for ``query`` in the drive's recall mode (no retrieval counted)."""
    from memgit.index.search import hit_json
    from memgit.recall.read_path import recall_in_mode

    found = recall_in_mode(opened.drive, query, SEARCH_LIMIT, count=False,
                           policy=opened.policy)
    return {"mode": found.mode, "warnings": found.warnings,
            "hits": [hit_json(h) for h in found.hits]}


def find_entry(opened: Opened, entry_id: str) -> dict[str, Any] | None:
    """Where entry ``entry_id`` is now (path, line, text, source, date), or None."""
    conn = state.connection(opened.drive.git_dir)
    path = facts.locate(conn, [entry_id]).get(entry_id)
    if path is None:
        return None
    text = read_file(opened, path) or ""
    for line, entry in fmt.parse_document(path, text).entries():
        if entry.id == entry_id:
            return {"path": path, "line": line.number, "text": entry.text,
                    "source": entry.get("source"), "added": entry.get("added"),
                    "retrievals": facts.retrievals(conn, [entry_id]).get(entry_id, 0)}
    return None


def history(opened: Opened, entry_id: str) -> dict[str, Any]:
    from memgit.serve.history import entry_history

    now = find_entry(opened, entry_id)
    versions = entry_history(str(opened.drive.git_dir), opened.policy.branch_ref, entry_id,
                             text=now["text"] if now else None,
                             path=now["path"] if now else None)
    return {"id": entry_id, "now": now, "versions": [v.__dict__ for v in versions]}


def board(opened: Opened) -> list[dict[str, Any]]:
    from memgit.write.board import board as read_board

    return [{"id": q.id, "text": q.text, "status": q.status, "line": q.line,
             "answers": [{"id": a, "text": t} for a, t in q.answers]}
            for q in read_board(opened.drive, opened.policy)]


def dreams(opened: Opened, limit: int = 20) -> list[dict[str, Any]]:
    """The newest dream runs with their reports; an applied one carries the command that
    takes it back."""
    runs = dream_runs.runs(state.connection(opened.drive.git_dir), limit=limit)
    out = []
    for run in runs:
        item = run.as_dict()
        item["undo"] = (f"memgit -C {opened.drive.git_dir} dream undo {run.day}"
                        if run.status in ("applied", "queued") and run.commit else None)
        out.append(item)
    return out


def mounts(opened: Opened) -> list[dict[str, Any]]:
    from memgit.sync.mounts import list_mounts

    return [m.as_dict() for m in list_mounts(opened.drive)]
