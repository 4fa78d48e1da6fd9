"""Working memory to and from a server: ``memgit sync`` and ``memgit clone`` call this.

``memgit sync``'s fetch brings the server's ``refs/memgit/working`` to
``refs/memgit/working-from/REMOTE`` in the same round trip as the branch. Then, per file
(one file per scope and key), a three-way merge against the last agreed commit
(``refs/memgit/working-synced``): a key changed on one side only takes that side; a key
changed on both takes the value set last (its ``set`` time; a tie goes to the server), a
set beats an unset. The result is a merge commit whose parents are both sides, so the
losing value stays in history, pushed without force (a lost race fetches and merges
again). docs/working-memory.md has the details.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any

from memgit.errors import RefusedError
from memgit.git.remote import fetch_refs, push_ref, remote_url
from memgit.git.repository import Drive, cas_ref, create_commit, is_ancestor, ref_target, set_ref
from memgit.git.rewrite import expire_reflogs_and_prune
from memgit.policy.working import WORKING_REF, name_key, parse_value, value_line
from memgit.sync.client import WORKING_FROM, network_error, parse_push, race_budget
from memgit.sync.retry import RaceClock, local_server_path
from memgit.working.layout import canonical_root
from memgit.working.store import fresh_id, known_purged_ids

WORKING_SYNCED = "refs/memgit/working-synced"


def fetch_spec(remote: str) -> str:
    """The refspec that brings the server's working ref along with a fetch (a pattern, so a
    server without working memory is no error)."""
    return f"+{WORKING_REF}*:{WORKING_FROM}{remote}*"


@dataclass
class WorkingReport:
    """What a working memory sync did (``working`` in ``memgit sync --json``)."""

    pushed: bool = False
    pulled: bool = False
    conflicts: list[dict[str, str]] = field(default_factory=list)
    head: str | None = None
    history_rewritten: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"pushed": self.pushed, "pulled": self.pulled, "conflicts": self.conflicts,
                "head": self.head, "history_rewritten": self.history_rewritten}


def _refetch(drive: Drive, remote: str) -> None:
    """Fetch only the working ref (after a lost race)."""
    proc = fetch_refs(drive, remote, fetch_spec(remote))
    if proc.returncode != 0:
        raise network_error(remote, proc.stderr.decode(errors="replace"), "fetch from")


def _files(drive: Drive, commit: str | None) -> dict[str, str]:
    """path -> blob id of every file of a working commit, the bucket left out of the path
    (``SCOPE/KEYHEX``: the same key is the same path whatever the buckets)."""
    if commit is None:
        return {}
    out: dict[str, str] = {}
    stack: list[tuple[str, Any]] = [("", drive.repo[commit].tree)]  # type: ignore[attr-defined]
    while stack:
        prefix, tree = stack.pop()
        for entry in tree:
            path = prefix + str(entry.name)
            if entry.type_str == "tree":
                stack.append((path + "/", drive.repo[entry.id]))
            else:
                scope_path = prefix.rstrip("/").rpartition("/")[0]
                out[f"{scope_path}/{entry.name}"] = str(entry.id)
    return out


def _set_time(drive: Drive, blob: str) -> str:
    found = parse_value(drive.repo[blob].data)  # type: ignore[attr-defined]
    return found.set_at if found is not None else ""


def merge_files(drive: Drive, base: dict[str, str], local: dict[str, str],
                theirs: dict[str, str], conflicts: list[dict[str, str]]) -> dict[str, str]:
    """The merged path -> blob map (see the module docstring); both-sided changes are
    appended to ``conflicts`` with the winner."""
    out: dict[str, str] = {}
    for path in sorted(set(base) | set(local) | set(theirs)):
        b, mine, other = base.get(path), local.get(path), theirs.get(path)
        if mine == other or mine == b:
            chosen = other
        elif other == b:
            chosen = mine
        else:
            if mine is None or other is None:
                chosen, winner = (other, "server") if mine is None else (mine, "local")
            else:
                local_time, server_time = _set_time(drive, mine), _set_time(drive, other)
                chosen, winner = (mine, "local") if local_time > server_time \
                    else (other, "server")
            scope_path, name = path.rsplit("/", 1)
            conflicts.append({"scope": scope_path, "key": name_key(name) or name,
                              "winner": winner})
        if chosen is not None:
            out[path] = chosen
    return out


def _tree_of(drive: Drive, files: dict[str, str]) -> str:
    """The tree holding exactly ``files`` (path -> blob id), bucketed afresh: the two
    sides may have split their buckets differently (working.layout)."""
    import pygit2

    scopes: dict[str, dict[str, pygit2.Oid]] = {}
    for path, blob in files.items():
        scope_path, name = path.rsplit("/", 1)
        scopes.setdefault(scope_path, {})[name] = pygit2.Oid(hex=blob)
    return str(canonical_root(drive.repo, scopes))


def sync_working(drive: Drive, remote: str, *, fetched: bool = True) -> WorkingReport:
    """Bring the local and the server's working memory together (after ``memgit sync``'s
    fetch when ``fetched``); raises what ``memgit sync`` raises for a refusal or a race."""
    report = WorkingReport()
    tracking = WORKING_FROM + remote
    url = remote_url(drive, remote) or ""
    clock = RaceClock(race_budget(drive), "working memory", server=local_server_path(url),
                      url=url)  # raises once the sync's race budget is spent
    for attempt in itertools.count():
        if attempt or not fetched:
            _refetch(drive, remote)
        local, theirs = ref_target(drive, WORKING_REF), ref_target(drive, tracking)
        base = ref_target(drive, WORKING_SYNCED)
        if local is None and theirs is None:
            return report
        rewritten = base is not None and theirs is not None and \
            not is_ancestor(drive, base, theirs)
        report.history_rewritten = report.history_rewritten or rewritten
        result = _combine(drive, local, theirs, base, rewritten, report)
        if result != theirs:
            proc = push_ref(drive, remote, result, WORKING_REF)
            outcome = parse_push(proc.returncode, proc.stdout.decode(errors="replace"),
                                 proc.stderr.decode(errors="replace"))
            if outcome.status == "race":
                time.sleep(clock.lost(f"{outcome.summary}\n{outcome.message}"))
                continue
            if outcome.status == "refused":
                said = "; ".join(line.strip() for line in outcome.message.splitlines()
                                 if line.strip())
                raise RefusedError(f"the server refused working memory commit {result[:10]}: "
                                   f"{said}",
                                   hint="unset or change the refused key (memgit keys, "
                                        "memgit unset) and run memgit sync again")
            if outcome.status != "ok":
                raise network_error(remote, outcome.message, "push to")
            report.pushed = True
        if local != result and not _move_local(drive, local, result):
            continue  # a set landed meanwhile: merge it too
        report.pulled = report.pulled or (theirs is not None and local != theirs
                                          and result != local)
        set_ref(drive, WORKING_SYNCED, result, "memgit sync: working memory")
        set_ref(drive, tracking, result, "memgit sync: working memory")
        report.head = result
        if rewritten:  # the old history held purged values: nothing may keep them
            expire_reflogs_and_prune(drive.git_dir)
        return report
    raise AssertionError("unreachable: the loop returns or the clock raises")


def _combine(drive: Drive, local: str | None, theirs: str | None, base: str | None,
             rewritten: bool, report: WorkingReport) -> str:
    """The commit both sides should have next."""
    if theirs is None:
        assert local is not None
        return local
    if local is None or is_ancestor(drive, local, theirs):
        return theirs
    mine, other = _files(drive, local), _files(drive, theirs)
    purged = known_purged_ids(drive)
    stale = {path for path, blob in mine.items() if blob != other.get(path)
             and _value_id(drive, blob) in purged}
    if not rewritten and not stale and is_ancestor(drive, theirs, local):
        return local
    merged = merge_files(drive, _files(drive, base), mine, other, report.conflicts)
    for path in stale & {p for p, blob in merged.items() if blob == mine.get(p)}:
        # set locally under an id the server purged since: a fresh id (the server refuses
        # a purged id for ever); the value is judged as any other
        found = parse_value(drive.repo[merged[path]].data)  # type: ignore[attr-defined]
        assert found is not None
        merged[path] = str(drive.repo.create_blob(value_line(found.value, fresh_id(),
                                                             found.set_at)))
    tree = _tree_of(drive, merged)
    # after a purge the local history still holds purged values or ids: only the merged
    # state goes on top of the server's history
    parents = [theirs] if rewritten or stale else [local, theirs]
    return create_commit(drive, tree, parents, "Merge working memory\n")


def _value_id(drive: Drive, blob: str) -> str | None:
    found = parse_value(drive.repo[blob].data)  # type: ignore[attr-defined]
    return found.id if found is not None else None


def _move_local(drive: Drive, old: str | None, new: str) -> bool:
    return cas_ref(drive, WORKING_REF, old, new, "memgit sync: working memory")


def describe_working(report: WorkingReport) -> list[str]:
    """The lines ``memgit sync`` prints about working memory (keys, never values)."""
    lines = []
    for c in report.conflicts:
        lines.append(f"working memory: {c['key']!r} of {c['scope']} set on both sides: "
                     f"kept the {c['winner']} value (the other is in history)")
    if report.pushed or report.pulled:
        lines.append("working memory: " + " and ".join(
            w for w, done in (("pushed", report.pushed), ("took the server's", report.pulled))
            if done))
    return lines
