"""``memgit sync`` on a drive whose forge runs the gate: push to an incoming branch.

A checkout is in this mode when ``git config memgit.push incoming`` is set (per
checkout: the drive's own files cannot say it, and git config is what every git tool
of the agent already reads); ``git config memgit.agents.operations NAME`` names its incoming
branch ``memgit/incoming/NAME`` (default: the ``user.name`` made safe). Then a sync:

1. fetches main (and the purged ids, as every sync) and the gate's report for this
   agent, ``refs/memgit/gate/NAME``;
2. replays the commits made since the last sync onto main (``sync.replay_chain``); a
   commit whose operations are already on main *reached main*: the gate landed it;
3. if the gate's report refused one of the commits still waiting, stops with the
   commit and its rule codes (exit 1, nothing changed): fix it as after a refused push;
4. otherwise pushes the waiting chain to ``memgit/incoming/NAME`` (leased on what the
   forge had, so nothing another sync sent is overwritten unseen), and moves the
   local branch onto it: local = main + the waiting commits;
5. with nothing waiting, takes main like a plain sync.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

from memgit.errors import RefusedError, RepoError, UsageError
from memgit.forges.gate import INCOMING, REPORTS, read_report
from memgit.git.plumbing import config_set, git
from memgit.git.repository import (
    Drive,
    commit_tree_id,
    delete_ref,
    first_parent_chain,
    is_ancestor,
    ref_target,
    set_ref,
    tree_texts,
)
from memgit.git.rewrite import expire_reflogs_and_prune
from memgit.git.worktree import switch_branch_to
from memgit.policy.judge import ID_RE
from memgit.policy.registry import PURGED_IDS_FILE
from memgit.sync.client import (
    PURGED_FROM,
    DriveHistory,
    check_checkout,
    drive_branch,
    fetch,
    learn_purged,
    network_error,
    purged_since,
    replay_chain,
)
from memgit.sync.status import LAST_SYNC_CONFIG, LAST_SYNCED, since

PUSH_CONFIG = "memgit.push"
AGENT_CONFIG = "memgit.agents.operations"
REPORT_COPY = "refs/memgit/gate-report/"  # + remote name


@dataclass
class IncomingReport:
    remote: str
    agent: str
    sent: list[str] = field(default_factory=list)  # commits now on the incoming branch
    reached_main: list[str] = field(default_factory=list)  # local commits the gate landed
    head: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"remote": self.remote, "mode": "incoming", "agent": self.agent,
                "branch": f"memgit/incoming/{self.agent}", "sent": self.sent,
                "reached_main": self.reached_main, "waiting_for_gate": len(self.sent),
                "head": self.head}


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


def _refusals(drive: Drive, remote: str, waiting: set[str]) -> list[str]:
    data = read_report(drive, REPORT_COPY + remote) or {}
    lines = []
    for item in data.get("refused", []):
        commit = str(item.get("commit", ""))
        if commit in waiting:
            found = ", ".join(f"{f.get('code', '')} at {f.get('where', '')}"
                              for f in item.get("findings", []))
            lines.append(f"commit {commit[:10]} ({found})")
    return lines


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
    drop = frozenset(_purged_ids(drive, remote)
                     | (purged_since(drive, ref_target(drive, LAST_SYNCED), server_head)
                        or set()))
    if is_ancestor(drive, local_head, server_head):  # the gate landed them as they were
        pairs: list[tuple[str, str | None]] = [(c, None) for c in commits]
    else:
        pairs = replay_chain(drive, commits, server_head, on_conflict, drop)
    report.reached_main = [c for c, new in pairs if new is None]
    waiting = [new for _c, new in pairs if new is not None]
    refused = _refusals(drive, remote, set(commits))
    if refused:
        raise GateRefusedError("the gate refused " + "; ".join(refused),
                               hint="fix them (memgit edit / memgit forget, or rewrite the commit) "
                               "and run memgit sync again; your local commits are kept")
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


def _purged_ids(drive: Drive, remote: str) -> set[str]:
    """The ids the server's ``refs/memgit/purged`` lists (fetched by every sync)."""
    head = ref_target(drive, PURGED_FROM + remote)
    if head is None:
        return set()
    text = tree_texts(drive, commit_tree_id(drive, head)).get(PURGED_IDS_FILE, "")
    return {line for line in text.split("\n") if ID_RE.match(line)}


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
    if report.head:
        lines.append(f"now at {report.head[:10]}")
    return lines
