"""``memgit fleet forget``: the right-to-be-forgotten workflow across a root.

1. The plan (:func:`plan`): the index brought current, then every drive of this root
   whose head holds a matching entry (its ids are forgotten), and with ``--purge``
   also every drive whose history holds one (the ids of every matching version are
   purged). Nothing changes.
2. Each drive in turn (:func:`carry_out`): the head's entries retired through the
   writer (``memgit forget``: one commit), then with ``purge`` the ids deleted from
   all of history through ``memgit purge`` (memgit.purge.rewrite), which records each text in
   the drive's registry so that pre-receive, lint and the writer refuse it from then
   on. A drive a running purge locks is tried again at the end of the run; a drive
   that still cannot be processed is listed with the reason.
3. One receipt per request under ``ROOT/.memgit-fleet/receipts/``: what was removed
   where (entry ids, commits, counts), when and by whom, never a removed text and
   never the query. The request's name is a keyed digest (HMAC-SHA256, the key private
   to the root) of the query, so the same request run again finds and completes its
   receipt: drives already done find nothing left to do (idempotent).
"""

from __future__ import annotations

import datetime as _dt
import getpass
import hashlib
import hmac
import json
import os
import secrets
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memgit.errors import ConflictError, MemgitError
from memgit.fleet.find import judge
from memgit.fleet.index import FleetIndex
from memgit.fleet.match import Query
from memgit.git.roots import fleet_dir

RECEIPTS_DIR = "receipts"
KEY_FILE = "receipt.key"
BROAD_SHARE = 0.5  # a query matching this share of a root's entries asks first
BROAD_MIN = 5


@dataclass
class DrivePlan:
    """One drive's part: ids to forget at its head and ids to purge from history."""

    name: str
    path: str
    forget: list[str] = field(default_factory=list)
    purge: list[str] = field(default_factory=list)
    working: list[str] = field(default_factory=list)  # working-memory values that match

    def as_dict(self) -> dict[str, Any]:
        return {"drive": self.name, "forget": self.forget, "purge": self.purge,
                "working": self.working}


@dataclass
class Plan:
    """The whole request: the drives, the counts, and how broad it is."""

    request: str
    query: Query
    purge: bool
    drives: list[DrivePlan]
    entries_total: int
    drives_total: int
    elsewhere: dict[str, int] = field(default_factory=dict)  # origin -> matching entries

    @property
    def entries(self) -> int:
        return sum(len(d.forget) for d in self.drives)

    @property
    def broad(self) -> bool:
        """Matches nearly everything: confirm first."""
        return self.entries >= BROAD_MIN and self.entries >= BROAD_SHARE * self.entries_total

    def summary(self) -> str:
        purged = sum(len(d.purge) for d in self.drives)
        share = f" ({self.entries / self.entries_total:.0%} of them)" \
            if self.entries_total else ""
        text = (f"{self.entries} entr{'y' if self.entries == 1 else 'ies'} at the heads of "
                f"{sum(1 for d in self.drives if d.forget)} drive(s) of {self.drives_total}, "
                f"of {self.entries_total} entries in all{share}")
        if self.purge:
            text += f"; {purged} id(s) to purge from the history of " \
                    f"{sum(1 for d in self.drives if d.purge)} drive(s)"
        values = sum(len(d.working) for d in self.drives)
        if values:
            text += f"; {values} working-memory value(s) match" + (
                " (purged with the entries)" if self.purge else
                ": a value is removed only by a purge, run again with --purge")
        return text

    def as_dict(self) -> dict[str, Any]:
        return {"request": self.request, "query": self.query.describe(), "purge": self.purge,
                "entries": self.entries, "entries_total": self.entries_total,
                "drives_total": self.drives_total, "broad": self.broad,
                "drives": [d.as_dict() for d in self.drives], "elsewhere": self.elsewhere}


def request_name(root: Path, query: Query) -> str:
    """The request's name: HMAC-SHA256 of the query under the root's private key."""
    path = fleet_dir(root, create=True) / KEY_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(32))
    except FileExistsError:
        pass
    key = path.read_bytes()
    message = json.dumps([query.kind, sorted(query.words) if query.kind == "words"
                          else list(query.words), query.pattern]).encode()
    return "rtbf-" + hmac.new(key, message, hashlib.sha256).hexdigest()[:24]


def plan(index: FleetIndex, query: Query, *, purge: bool, jobs: int = 1) -> Plan:
    """What the request would do in this root (the index refreshed first)."""
    index.refresh(jobs=jobs)
    store = index.embedded
    found = judge(query, store.search(query, history=purge, origin=index.origin), purge)
    records = store.drives(index.origin)
    drives: dict[str, DrivePlan] = {}
    for hit in found.hits + found.history:
        record = records[(hit.origin, hit.drive)]
        part = drives.setdefault(hit.drive, DrivePlan(hit.drive, record.path))
        if hit.at_head and hit.entry_id not in part.forget:
            part.forget.append(hit.entry_id)
        if purge and hit.entry_id not in part.purge:
            part.purge.append(hit.entry_id)
    for record in records.values():
        if record.origin == index.origin and record.status == "drive":
            _add_working(drives, record.name, record.path, query, purge)
    drives_total, entries_total = store.totals(index.origin)
    result = Plan(request_name(index.root, query), query, purge,
                  [drives[n] for n in sorted(drives)], entries_total, drives_total)
    shared = index.shared()
    if shared is not None:
        for hit in judge(query, shared.search(query), False).hits:
            if hit.origin != index.origin:
                result.elsewhere[hit.origin] = result.elsewhere.get(hit.origin, 0) + 1
    return result


def _add_working(drives: dict[str, DrivePlan], name: str, path: str, query: Query,
                 purge: bool) -> None:
    """The drive's working-memory values that match (memgit.working.search): in every
    version when purging, else at the tip. Read only for a drive that has the ref (from
    the ref files: no repository opened for the others)."""
    from memgit.git.files import Unsure, discover, ref_commit
    from memgit.git.repository import open_drive
    from memgit.policy.working import WORKING_REF
    from memgit.working.search import matching_ids

    try:
        if ref_commit(discover(path), WORKING_REF) is None:
            return
    except Unsure:
        pass  # an unusual layout: let pygit2 read it
    ids = matching_ids(open_drive(path), query.matches, history=purge)
    if ids:
        part = drives.setdefault(name, DrivePlan(name, path))
        part.working = ids
        if purge:
            part.purge.extend(i for i in ids if i not in part.purge)


# --- carrying it out ---------------------------------------------------------------------


class Locked(Exception):
    """The drive is locked by a running purge: try again later."""


@dataclass
class Outcome:
    """What happened in one drive: status done, pending (try again) or failed."""

    status: str
    reason: str = ""
    forgotten: list[str] = field(default_factory=list)
    forget_commit: str = ""
    purged: list[str] = field(default_factory=list)
    purge: dict[str, Any] = field(default_factory=dict)


def _process(part: DrivePlan, request: str, purge: bool) -> Outcome:
    from memgit.git.repository import open_drive
    from memgit.policy.registry import LEASE_CONFIG, PurgeLock, PurgeRegistry, lease_seconds
    from memgit.policy.settings import drive_policy
    from memgit.purge.rewrite import apply_purge, plan_purge
    from memgit.write.writer import commit_facts

    drive = open_drive(part.path)
    lock = PurgeLock.read(drive.git_dir)
    if lock is not None and not lock.stale(lease_seconds(drive.config_value(LEASE_CONFIG))):
        raise Locked(f"locked: a purge is running ({lock.describe()})")
    policy = drive_policy(drive)
    out = Outcome("done")
    if part.forget:
        result = commit_facts(drive, (), part.forget, f"Forget {len(part.forget)} entr"
                              f"{'y' if len(part.forget) == 1 else 'ies'} (fleet request "
                              f"{request})", policy=policy)
        if result.status == "queued":
            return Outcome("pending", f"the forget commit was queued: {result.error}")
        out.forgotten, out.forget_commit = list(result.retired), result.commit or ""
    if purge:
        registry = PurgeRegistry.load(drive.git_dir)
        ids = [i for i in part.purge if i not in registry.ids]
        if ids:
            planned = plan_purge(drive, ids, missing_ok=True)
            if planned.ids:
                done = apply_purge(drive, planned)
                out.purged = list(planned.ids)
                out.purge = {key: done.summary()[key] for key in
                             ("old_head", "new_head", "commits_rewritten") if key in
                             done.summary()}
    return out


def carry_out(index: FleetIndex, planned: Plan, *, by: str = "",
              now: _dt.datetime | None = None,
              progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Process every drive of the plan, write the receipt, return it."""
    now = now or _dt.datetime.now(_dt.UTC)
    outcomes: dict[str, Outcome] = {}
    locked: list[DrivePlan] = []
    for number, part in enumerate(planned.drives):
        outcomes[part.name] = _try(part, planned, locked)
        if progress is not None:
            progress(number + 1, len(planned.drives))
    for part in locked:  # once more, after the others: a short purge may be done by now
        outcomes[part.name] = _try(part, planned, [])
    index.redescribe(outcomes)
    if planned.purge and any(o.purged for o in outcomes.values()):
        for store in (index.embedded, index.shared()):
            if store is not None:
                store.compact()
    return write_receipt(index.root, planned, outcomes, by or default_by(), now)


def _try(part: DrivePlan, planned: Plan, locked: list[DrivePlan]) -> Outcome:
    try:
        return _process(part, planned.request, planned.purge)
    except Locked as exc:
        locked.append(part)
        return Outcome("pending", str(exc))
    except ConflictError as exc:
        locked.append(part)
        return Outcome("pending", exc.message)
    except MemgitError as exc:
        return Outcome("failed", exc.message)
    except Exception as exc:  # noqa: BLE001 - a damaged drive: listed, the others go on
        return Outcome("failed", f"{type(exc).__name__}: {exc}")


def default_by() -> str:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid())
    return f"{user}@{socket.gethostname()}"


def receipt_path(root: Path, request: str) -> Path:
    return fleet_dir(root, create=True) / RECEIPTS_DIR / f"{request}.json"


def write_receipt(root: Path, planned: Plan, outcomes: dict[str, Outcome], by: str,
                  now: _dt.datetime) -> dict[str, Any]:
    """Merge this run into the request's receipt (ids, commits, counts; no text)."""
    path = receipt_path(root, planned.request)
    try:
        receipt = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        receipt = {"request": planned.request, "created": _stamp(now), "query":
                   planned.query.describe(), "purge": False, "runs": [], "drives": {}}
    receipt["purge"] = receipt["purge"] or planned.purge
    drives = receipt["drives"]
    for name, out in outcomes.items():
        old = drives.get(name, {"forgotten": [], "purged": [], "commits": []})
        drives[name] = {
            "status": out.status, "reason": out.reason, "updated": _stamp(now),
            "forgotten": sorted(set(old["forgotten"]) | set(out.forgotten)),
            "purged": sorted(set(old["purged"]) | set(out.purged)),
            "commits": old["commits"] + ([{"forget": out.forget_commit}]
                                         if out.forget_commit else [])
            + ([{"purge": out.purge}] if out.purge else [])}
    for name, entry in drives.items():
        if name not in outcomes and entry["status"] != "done":
            entry.update(status="done", reason="nothing left to remove", updated=_stamp(now))
    receipt["runs"].append({"at": _stamp(now), "by": by, "drives": len(outcomes),
                            "pending": sorted(n for n, o in outcomes.items()
                                              if o.status != "done")})
    receipt["updated"] = _stamp(now)
    receipt["totals"] = {
        "drives": len(drives),
        "done": sum(1 for d in drives.values() if d["status"] == "done"),
        "pending": sum(1 for d in drives.values() if d["status"] != "done"),
        "forgotten": sum(len(d["forgotten"]) for d in drives.values()),
        "purged": sum(len(d["purged"]) for d in drives.values())}
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(receipt, fh, indent=2, sort_keys=True)
    os.replace(tmp, path)
    receipt["path"] = str(path)
    return receipt


def _stamp(when: _dt.datetime) -> str:
    return when.astimezone(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
