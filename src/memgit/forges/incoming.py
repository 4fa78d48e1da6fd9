"""``memgit sync`` on a drive whose forge runs the gate: push to an incoming branch.

A checkout is in this mode when ``git config memgit.push incoming`` is set (per
checkout: the drive's own files cannot say it, and git config is what every git tool
of the agent already reads); ``git config memgit.agent NAME`` names its incoming
branch ``memgit/incoming/NAME`` (default: the ``user.name`` made safe). Then a sync:

1. fetches main (and the purged ids, as every sync) and the gate's report for this
   agent, ``refs/memgit/gate/NAME``;
2. replays the commits made since the last sync onto main (``sync.replay_chain``); a
   commit whose operations are already on main *reached main*: the gate landed it;
3. if the gate's report refused one of the commits still waiting, reads what it refused
   (memgit.sync.refusal.refused_at, as a direct sync reads the server's refusal): when
   a later local commit changes or deletes it (the fix the hint names), those changes
   are held from the refused commit to that one and sent as their net effect with it
   (memgit.sync.refusal.Hold, applied by the sync client's own replay); otherwise stops
   with the commit, the gate's findings and a hint naming a command that works (exit 1,
   nothing changed);
4. otherwise pushes the waiting chain to ``memgit/incoming/NAME`` (leased on what the
   forge had, so nothing another sync sent is overwritten unseen), and moves the
   local branch onto it: local = main + the waiting commits;
5. with nothing waiting, takes main like a plain sync.

The holds are the sync client's own (``SyncState``, ``replay_pending``, ``last_touching`` of
memgit.sync.client): one implementation of holding refused changes, here fed by the
gate's report instead of the server's answer to a push.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

from memgit.errors import RefusedError, RepoError, UsageError
from memgit.forges.gate import INCOMING, REPORTS, read_report
from memgit.git.plumbing import config_set, git
from memgit.git.recovery import switch_branch_to
from memgit.git.repository import (
    Drive,
    commit_info,
    delete_ref,
    first_parent_chain,
    is_ancestor,
    ref_target,
    set_ref,
)
from memgit.git.rewrite import expire_reflogs_and_prune
from memgit.policy.codes import RULES
from memgit.policy.judge import ID_RE
from memgit.safe_text import printable
from memgit.sync.client import (
    DriveHistory,
    SyncReport,
    SyncState,
    check_checkout,
    drive_branch,
    fetch,
    last_touching,
    learn_purged,
    network_error,
    purged_since,
    replay_chain,
    replay_pending,
    server_purged_ids,
)
from memgit.sync.refusal import RANGE, Hold, Place, Refused, refusal_hint, refused_at
from memgit.sync.status import LAST_SYNC_CONFIG, LAST_SYNCED, since

PUSH_CONFIG = "memgit.push"
AGENT_CONFIG = "memgit.agent"  # git config key (docs/sync.md), not a module
REPORT_COPY = "refs/memgit/gate-report/"  # + remote name


@dataclass
class IncomingReport:
    remote: str
    agent: str
    sent: list[str] = field(default_factory=list)  # commits now on the incoming branch
    reached_main: list[str] = field(default_factory=list)  # local commits the gate landed
    head: str | None = None
    # changes the gate refused, held back and sent with a later local commit that changes
    # them: (the refused commit, the one they were sent with, the ids and paths)
    held: list[tuple[str, str, list[str]]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"remote": self.remote, "mode": "incoming", "agent": self.agent,
                "branch": f"memgit/incoming/{self.agent}", "sent": self.sent,
                "reached_main": self.reached_main, "waiting_for_gate": len(self.sent),
                "head": self.head,
                "held": [{"refused": a, "sent_with": b, "held": names}
                         for a, b, names in self.held]}


class GateRefusedError(RefusedError):
    """The gate refused commits this checkout sent; they stay local."""


def incoming_agent(drive: Drive) -> str | None:
    """The agent name when the checkout syncs through the gate, else None."""
    mode = drive.config_value(PUSH_CONFIG)
    if mode is None or mode == "main":
        return None
    if mode != "incoming":
        raise UsageError(f"git config {PUSH_CONFIG} is {mode!r}",
                         f"set it to incoming (the gate) or main: git config {PUSH_CONFIG} "
                         "incoming")
    name = drive.config_value(AGENT_CONFIG) or drive.config_value("user.name") or ""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")[:64]
    if not name:
        raise UsageError("this checkout syncs through the gate but has no agent name",
                         f"git config {AGENT_CONFIG} NAME")
    return name


def _remote_incoming(drive: Drive, remote: str, agent: str) -> str | None:
    """The incoming branch's value on the forge now (None: there is none), fetching the
    gate's report for ``agent`` on the way."""
    branch, report = INCOMING + agent, REPORTS + agent
    proc = git("ls-remote", remote, branch, report, cwd=drive.root, check=False)
    if proc.returncode != 0:
        raise network_error(remote, proc.stderr.decode(errors="replace"), "list refs of")
    found = dict(reversed(line.split("\t")) for line in proc.stdout.decode().splitlines()
                 if "\t" in line)
    if report in found:
        got = git("fetch", "--no-tags", "--quiet", remote, f"+{report}:{REPORT_COPY}{remote}",
                  cwd=drive.root, check=False)
        if got.returncode != 0:
            raise network_error(remote, got.stderr.decode(errors="replace"), "fetch from")
    return found.get(branch)


_WHERE_RE = re.compile(r"(?P<where>.+?)(?::(?P<line>\d+))?")


def _refusals(drive: Drive, remote: str, waiting: list[str]) -> list[tuple[str, list[Place]]]:
    """The commits of ``waiting`` the gate's report refused, in their order, each with its
    findings' places (``where`` as the report gives it: ``PATH:LINE``, ``PATH``,
    ``(drive)``, ``(push)``, ``(replayed)``; the entry on that line when the gate named it)."""
    data = read_report(drive, REPORT_COPY + remote) or {}
    found: dict[str, list[Place]] = {}
    for item in data.get("refused", []):
        places = []
        for f in item.get("findings", []):
            where = _WHERE_RE.fullmatch(str(f.get("where", "")) or "?")
            assert where is not None  # any text but "" matches
            entry = f.get("entry")
            places.append(Place(where["where"], int(where["line"]) if where["line"] else None,
                                str(f.get("code", "")),
                                entry if isinstance(entry, str) and ID_RE.match(entry) else None))
        found[str(item.get("commit", ""))] = places
    return [(c, found[c]) for c in waiting if c in found]


def _refusal_message(stuck: list[tuple[str, list[Place]]], branch: list[str]) -> str:
    """The gate's findings on each commit as lines, each with its rule's hint (the gate's
    report holds codes and places, never a value); ``branch``: the commits refused with
    the whole branch (``(push)``, ``(replayed)``), shown once."""
    lines: list[str] = []

    def findings(places: list[Place], indent: str) -> None:
        for p in places:
            name, hint = RULES.get(p.code, ("", ""))
            where = p.where + (f":{p.line}" if p.line else "")
            lines.append(f"{indent}{where}: {p.code} {name}".rstrip())
            if hint and p.where not in RANGE:  # "push in smaller batches": see the hint
                lines.append(f"{indent}  hint: {hint}")

    own = [(c, p) for c, p in stuck if c not in branch]
    if branch:
        n = len(branch)
        lines.append(f"the gate refused the whole branch: {n} commit{'s' if n != 1 else ''}"
                     f" ({branch[0][:10]}" + (f" to {branch[-1][:10]})" if n > 1 else ")")
                     + ":")
        findings(list(dict.fromkeys(p for c, ps in stuck if c in branch for p in ps
                                    if p.where in RANGE)), "  ")
    if len(own) == 1 and not branch:
        lines.append(f"the gate refused commit {own[0][0][:10]}:")
        findings(own[0][1], "  ")
    elif own:
        lines.append(f"the gate refused {len(own)} commits:")
        for commit, places in own:
            lines.append(f"  commit {commit[:10]}:")
            findings(places, "    ")
    return "\n".join(lines)


def _branch_hint(first: str, codes: set[str]) -> str:
    """The way past a refusal of the whole branch (too many commits, too many bytes):
    fewer commits sent at once; gate-mode sync sends every waiting commit."""
    hint = (f"the gate refused the whole branch ({', '.join(sorted(codes))}): squash the "
            f"waiting commits into fewer (git rebase -i {first[:10]}~1, mark the later "
            "ones 'squash'), then run memgit sync again")
    if "MG611" in codes:
        hint += "; or ask the drive's admin to raise limits.push_bytes"
    return hint


def _unfixed(state: SyncState, k: int, refused: Refused) -> Refused:
    """What of ``refused`` (in pending commit ``k``) no later pending commit changes."""
    def later(part: Refused) -> bool:
        return last_touching(state, k, part) is not None

    return Refused(frozenset(i for i in refused.ids if not later(Refused(ids=frozenset({i})))),
                   frozenset(p for p in refused.paths
                             if not later(Refused(paths=frozenset({p})))),
                   refused.whole and not later(Refused(whole=True)), refused.commit,
                   refused.push)


def _hold_refused(state: SyncState, refusals: list[tuple[str, list[Place]]]) -> list[Hold]:
    """Holds for the refused commits a later commit fixes (memgit.sync.refusal.Hold, as a
    direct sync makes them); raises the gate's refusal when one is fixed by none."""
    holds: list[Hold] = []
    stuck: list[tuple[str, list[Place], Refused]] = []
    branch: list[str] = []  # commits refused with the whole branch
    for commit, places in refusals:
        k = state.index(commit)
        refused = refused_at(places, state.tree_of(commit))
        if any(p.where in RANGE for p in places):  # with the whole branch: not held
            branch.append(commit)
            stuck.append((commit, places, refused))
            continue
        unfixed = _unfixed(state, k, refused)
        if unfixed or not refused.fixable:
            stuck.append((commit, places, unfixed if unfixed else refused))
            continue
        covering = next((h for h in holds if h.covers(k)), None)
        if covering is not None:  # a later commit of the same hold: hold its part too
            merged = covering.refused.merged(refused)
            last = last_touching(state, covering.first, merged)
            assert last is not None  # covering.last changes part of it
            holds[holds.index(covering)] = Hold(merged, covering.first, last, covering.base)
            continue
        last = last_touching(state, k, refused)
        assert last is not None  # nothing unfixed: a later commit changes each part
        parents = commit_info(state.drive, commit).parents
        holds.append(Hold(refused, k, last, parents[0] if parents else None))
    if stuck:
        kept = "; your local commits are kept"
        hints = dict.fromkeys(refusal_hint(c, r, "the gate").removesuffix(kept)
                              for c, _p, r in stuck if c not in branch)  # one per fix
        if branch:
            codes = {p.code for c, ps, _r in stuck if c in branch for p in ps
                     if p.where in RANGE}
            hints[_branch_hint(branch[0], codes)] = None
        raise GateRefusedError(_refusal_message([(c, p) for c, p, _r in stuck], branch),
                               hint="; ".join(hints) + kept)
    return holds


def _replay_holding(state: SyncState, onto: str) -> list[tuple[str, str | None]]:
    """``state.pending`` replayed onto ``onto`` by the sync client's replay, without the
    changes ``state.holds`` hold and with their net effect where each hold ends (what
    ``replay_chain`` does, with holds)."""
    tip: str | None = onto
    out: list[tuple[str, str | None]] = []
    for commit in state.pending:
        parents = commit_info(state.drive, commit).parents
        new = replay_pending(state, commit, parents[0] if parents else None, tip)
        out.append((commit, new))
        tip = new or tip
    return out


def sync_incoming(drive: Drive, agent: str, remote: str = "origin",
                  on_conflict: str = "local") -> IncomingReport:
    """One gate-mode sync; see the module docstring."""
    local_head = check_checkout(drive, remote)
    report = IncomingReport(remote, agent)
    server_head = fetch(drive, remote)
    if server_head is None:
        raise RepoError(f"{remote} has no {drive_branch(drive)}",
                        "the gate lands on an existing drive; ask its admin")
    learn_purged(drive, remote)
    on_forge = _remote_incoming(drive, remote, agent)
    start = since(DriveHistory(drive), local_head, server_head)
    commits = first_parent_chain(drive, local_head, start)
    # entries the server purged (its refs/memgit/purged, and ids gone from a rewritten
    # history) are never sent again; their text is pruned from this checkout below
    drop = frozenset(server_purged_ids(drive, remote)
                     | (purged_since(drive, ref_target(drive, LAST_SYNCED), server_head)
                        or set()))
    if is_ancestor(drive, local_head, server_head):  # the gate landed them as they were
        pairs: list[tuple[str, str | None]] = [(c, None) for c in commits]
    else:
        pairs = replay_chain(drive, commits, server_head, on_conflict, drop)
    refusals = _refusals(drive, remote, [c for c, new in pairs if new is not None])
    covered: set[str] = set()  # commits whose refused changes are held for a later one
    if refusals:  # raises unless a later commit changes each refused thing
        state = SyncState(drive, "", on_conflict, SyncReport(""), drop=set(drop),
                       pending=commits)
        state.holds = _hold_refused(state, refusals)
        pairs = _replay_holding(state, server_head)
        for hold in state.holds:
            report.held.append((commits[hold.first], commits[hold.last], hold.refused.names()))
            covered.update(commits[hold.first:hold.last + 1])
    report.reached_main = [c for c, new in pairs if new is None and c not in covered]
    waiting = [new for _c, new in pairs if new is not None]
    branch = f"refs/heads/{drive_branch(drive)}"
    target = waiting[-1] if waiting else server_head
    if waiting:
        lease = f"--force-with-lease={INCOMING}{agent}:{on_forge or ''}"
        proc = git("push", "--porcelain", "--no-verify", lease, remote,
                   f"{target}:{INCOMING}{agent}", cwd=drive.root, check=False)
        if proc.returncode != 0:
            raise network_error(remote, proc.stderr.decode(errors="replace") or
                                proc.stdout.decode(errors="replace"), "push to")
        report.sent = list(waiting)
    if target != local_head:
        switch_branch_to(drive, branch, local_head, target, "memgit sync: main + waiting work")
    set_ref(drive, LAST_SYNCED, server_head, "memgit sync: main as fetched")
    set_ref(drive, f"refs/remotes/{remote}/{drive_branch(drive)}", server_head, "memgit sync")
    config_set(drive.git_dir, LAST_SYNC_CONFIG, str(int(time.time())))
    report.head = target
    if drop and target != local_head:
        # a local commit may have held a purged entry: nothing reachable keeps it now
        delete_ref(drive, "ORIG_HEAD")
        expire_reflogs_and_prune(drive.git_dir)
    return report


def describe(report: IncomingReport) -> list[str]:
    lines = []
    if report.reached_main:
        n = len(report.reached_main)
        lines.append(f"{n} commit{'s' if n != 1 else ''} reached main through the gate")
    if report.sent:
        n = len(report.sent)
        lines.append(f"sent {n} commit{'s' if n != 1 else ''} to memgit/incoming/"
                     f"{report.agent}; they reach main when the gate has judged them "
                     "(run memgit sync again to see)")
    else:
        lines.append("nothing waiting for the gate")
    for refused, sent_with, names in report.held:
        lines.append(printable(f"the gate had refused {refused[:10]}: its changes to "
                               f"{', '.join(names)} were held and go with {sent_with[:10]}, "
                               "which fixed them"))
    if report.head:
        lines.append(f"now at {report.head[:10]}")
    return lines
