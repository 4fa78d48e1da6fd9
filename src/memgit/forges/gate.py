"""The gate for forges without server hooks (``memgit gate``).

On GitHub.com, GitLab.com or any forge that runs no custom pre-receive hook, agents
push to their own incoming branch, ``memgit/incoming/<agent>``, never to main; only
the forge's CI, with the one token that may push main, runs the gate. For each
incoming branch it:

1. judges the commits the branch has that main lacks with the full policy, exactly
   as pre-receive would judge their push (:func:`memgit.forges.judge.judge_range`);
2. replays the commits without an error onto main as ``memgit sync`` replays them
   (``sync.replay_chain``: entry operations, author and message kept);
3. judges the replayed chain once more as a push onto main, so what lands is what
   was judged; a replayed commit with an error is refused too and the chain replayed
   again without it;
4. pushes, in one atomic push: main (a fast-forward, never forced), the deletion of
   the incoming branch (leased on the tip it judged, so commits pushed meanwhile
   are never lost: the push then fails and the next round sees them) and the report
   ``refs/memgit/gate/<agent>`` (``report.json``: landed and refused commits, by id
   and rule code) that gate-mode ``memgit sync`` reads.

A lost race (main moved, the agent pushed again) fetches and starts the branch over,
at most :data:`MAX_ROUNDS` times. Refused commits are reported by commit, code, path
and line: no value of an entry is printed.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

from memgit.errors import RepoError, UsageError
from memgit.forges.judge import judge_range, merge_base
from memgit.git.plumbing import git
from memgit.git.repository import (
    Drive,
    commit_tree_id,
    first_parent_chain,
    ref_target,
    tree_texts,
)
from memgit.githooks.verdict import SHORT, Finding, shown
from memgit.policy.judge import ERROR
from memgit.policy.registry import PurgeRegistry
from memgit.policy.settings import Policy
from memgit.sync.client import network_error, replay_chain
from memgit.sync.refusal import entry_on

INCOMING = "refs/heads/memgit/incoming/"
REPORTS = "refs/memgit/gate/"
LOCAL = "refs/memgit/gating/"  # the gate's private copies of what it fetched
REGISTRY_REFS = "refs/memgit/registry/"
MAX_ROUNDS = 5
AGENT_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


@dataclass
class Refusal:
    """One refused commit: its id and each finding as (code, name, where); ``entries``
    maps a finding's ``where`` (``PATH:LINE``) to the id of the entry on that line of the
    tree that was judged (gate-mode sync holds that entry's changes until a later commit
    fixes them, memgit.forges.incoming)."""

    commit: str
    findings: list[tuple[str, str, str]]
    entries: dict[str, str] = field(default_factory=dict)

    def codes(self) -> list[str]:
        return sorted({code for code, _n, _w in self.findings})

    def as_dict(self) -> dict[str, Any]:
        return {"commit": self.commit, "codes": self.codes(),
                "findings": [{"code": c, "name": n, "where": w}
                             | ({"entry": self.entries[w]} if w in self.entries else {})
                             for c, n, w in self.findings]}


@dataclass
class BranchResult:
    agent: str
    tip: str
    landed: list[tuple[str, str]] = field(default_factory=list)  # (incoming, on main)
    already: list[str] = field(default_factory=list)  # its operations were on main
    refused: list[Refusal] = field(default_factory=list)
    main: str | None = None  # main after this branch
    rounds: int = 0
    error: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"agent": self.agent, "tip": self.tip,
                "landed": [{"incoming": a, "main": b} for a, b in self.landed],
                "already_on_main": self.already,
                "refused": [r.as_dict() for r in self.refused],
                "main": self.main, "rounds": self.rounds, "error": self.error}


@dataclass
class GateReport:
    remote: str
    branches: list[BranchResult] = field(default_factory=list)

    @property
    def refused(self) -> int:
        return sum(len(b.refused) for b in self.branches)

    def as_dict(self) -> dict[str, Any]:
        return {"remote": self.remote, "branches": [b.as_dict() for b in self.branches],
                "landed": sum(len(b.landed) for b in self.branches),
                "refused": self.refused}


def _env() -> dict[str, str]:
    return dict(os.environ, GIT_TERMINAL_PROMPT="0")


def agent_of(ref: str) -> str:
    return ref.removeprefix(LOCAL + "incoming/").removeprefix(INCOMING)


def fetch_incoming(drive: Drive, remote: str, branch: str) -> None:
    """Fetch main, every incoming branch and the purge registry into private refs;
    ``--prune`` drops copies of incoming branches the forge no longer has."""
    proc = git("fetch", "--no-tags", "--prune", "--quiet", remote,
               f"+refs/heads/{branch}:{LOCAL}main",
               f"+{INCOMING}*:{LOCAL}incoming/*",
               f"+{REGISTRY_REFS}*:{REGISTRY_REFS}*",
               cwd=drive.root, env=_env(), check=False)
    if proc.returncode != 0:
        raise network_error(remote, proc.stderr.decode(errors="replace"), "fetch from")


def incoming_refs(drive: Drive) -> list[str]:
    proc = git("for-each-ref", "--format=%(refname)", LOCAL + "incoming/", cwd=drive.root)
    return sorted(proc.stdout.decode().split())


def _where(finding: Finding, policy: Policy) -> str:
    v = finding.violation
    if not v.path:
        return "(drive)"
    return shown(v.path, policy) + (f":{v.line}" if v.line else "")


def _entry_at(drive: Drive, finding: Finding, policy: Policy,
              trees: dict[str, dict[str, str]]) -> str | None:
    """The id of the entry on the finding's line of the commit it was found in (None:
    no entry there); only an id that prints as it is (no credential in it)."""
    v = finding.violation
    if not v.path or not v.line or not v.path.endswith(".md") or finding.commit is None:
        return None
    if finding.commit not in trees:
        trees[finding.commit] = tree_texts(drive, commit_tree_id(drive, finding.commit))
    text = trees[finding.commit].get(v.path)
    entry = entry_on(v.path, text, v.line) if text is not None else None
    return entry if entry is not None and shown(entry, policy) == entry else None


def _bad_commits(drive: Drive, findings: list[Finding], policy: Policy, chain: list[str],
                 source: dict[str, str]) -> dict[str, Refusal] | None:
    """Refusals by source commit; None when an error names no commit (the whole range
    is refused: too many commits, too many bytes, a ref problem)."""
    out: dict[str, Refusal] = {}
    trees: dict[str, dict[str, str]] = {}
    for f in findings:
        if f.violation.severity != ERROR:
            continue
        if not f.commit or f.commit not in source:
            return None
        src = source[f.commit]
        refusal = out.setdefault(src, Refusal(src, []))
        where = _where(f, policy)
        refusal.findings.append((f.violation.code, f.violation.name, where))
        entry = _entry_at(drive, f, policy, trees)
        if entry is not None:
            refusal.entries[where] = entry
    return dict(sorted(out.items(), key=lambda kv: chain.index(kv[0])))


def land_branch(drive: Drive, ref: str, main: str, policy: Policy,
                registry: PurgeRegistry) -> BranchResult:
    """Judge and replay one incoming branch onto ``main`` (nothing is pushed here)."""
    tip = ref_target(drive, ref)
    assert tip is not None
    result = BranchResult(agent_of(ref), tip, main=main)
    base = merge_base(drive.git_dir, main, tip)
    if base is None:
        raise UsageError(f"{ref} shares no history with main", "push incoming branches "
                         "made from the drive's main (memgit sync does)")
    chain = first_parent_chain(drive, tip, base)
    if not chain:
        return result
    first = judge_range(drive.git_dir, base, tip, policy, registry).verdict
    refused = _bad_commits(drive, first.findings, policy, chain, {c: c for c in chain})
    if refused is None:
        codes = sorted({f.violation.code for f in first.errors})
        result.refused = [Refusal(c, [(code, "", "(push)") for code in codes]) for c in chain]
        return result
    for _ in range(len(chain) + 1):
        keep = [c for c in chain if c not in refused]
        pairs = replay_chain(drive, keep, main)
        new_tip = next((n for _c, n in reversed(pairs) if n is not None), main)
        if new_tip == main:
            break
        replayed = {n: c for c, n in pairs if n is not None}
        again = judge_range(drive.git_dir, main, new_tip, policy, registry).verdict
        more = _bad_commits(drive, again.findings, policy, chain, replayed)
        if more is None:
            codes = sorted({f.violation.code for f in again.errors})
            refused.update({c: Refusal(c, [(code, "", "(replayed)") for code in codes])
                            for c in keep})
            pairs, new_tip = [], main
            break
        if not more:
            break
        refused.update(more)
    else:  # pragma: no cover - each round refuses at least one more commit
        raise RepoError("the gate could not settle the replay", "")
    result.refused = list(refused.values())
    result.landed = [(c, n) for c, n in pairs if n is not None]
    result.already = [c for c, n in pairs if n is None]
    result.main = new_tip
    return result


def _report_commit(drive: Drive, result: BranchResult) -> str:
    """A commit holding ``report.json`` (no parent: the ref keeps the latest report)."""
    data = json.dumps(result.as_dict(), indent=2, sort_keys=True) + "\n"
    blob = git("hash-object", "-w", "--stdin", cwd=drive.root, input=data.encode())
    tree = git("mktree", cwd=drive.root,
               input=f"100644 blob {blob.stdout.decode().strip()}\treport.json\n".encode())
    env = dict(_env(), GIT_AUTHOR_NAME="memgit gate", GIT_AUTHOR_EMAIL="gate@memgit.invalid",
               GIT_COMMITTER_NAME="memgit gate", GIT_COMMITTER_EMAIL="gate@memgit.invalid")
    commit = git("commit-tree", tree.stdout.decode().strip(), "-m",
                 f"memgit gate: {result.agent}", cwd=drive.root, env=env)
    return commit.stdout.decode().strip()


def push_result(drive: Drive, remote: str, branch: str, main: str,
                result: BranchResult) -> str:
    """One atomic push: main, the incoming branch deleted (leased), the report.
    Returns "ok", "race" or raises for anything else."""
    incoming = INCOMING + result.agent
    specs = []
    if result.main is not None and result.main != main:
        specs.append(f"{result.main}:refs/heads/{branch}")
    specs += [f"+{_report_commit(drive, result)}:{REPORTS}{result.agent}", f":{incoming}"]
    proc = git("push", "--porcelain", "--atomic", "--no-verify",
               f"--force-with-lease={incoming}:{result.tip}", remote, *specs,
               cwd=drive.root, env=_env(), check=False)
    out, err = proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")
    if proc.returncode == 0:
        return "ok"
    if any(w in out + err for w in ("stale info", "fetch first", "non-fast-forward",
                                     "atomic push failed", "cannot lock ref")):
        return "race"
    if "[remote rejected]" in out or "[rejected]" in out:
        raise RepoError(f"the forge refused the gate's push: {shown(out.strip(), None)}",
                        "give the gate's token the right to push main and delete "
                        "incoming branches (docs/forges.md, branch protection)")
    raise network_error(remote, err, "push to")


def run_gate(drive: Drive, remote: str, policy: Policy, agents: list[str] | None = None,
             registry_loader: Any = None) -> GateReport:
    """Land every incoming branch (or those of ``agents``) on the remote's main."""
    for name in agents or []:
        if not AGENT_RE.fullmatch(name):
            raise UsageError(f"{name!r} is not an agent name",
                             "letters, digits, '.', '_' and '-' (at most 64)")
    branch = policy.branch
    report = GateReport(remote)
    fetch_incoming(drive, remote, branch)
    load = registry_loader or (lambda: PurgeRegistry.load(drive.git_dir))
    registry = load()
    for ref in incoming_refs(drive):
        agent = agent_of(ref)
        if agents and agent not in agents:
            continue
        if not AGENT_RE.fullmatch(agent):
            report.branches.append(BranchResult(agent, ref_target(drive, ref) or "",
                                                error="not an agent name; left alone"))
            continue
        for rounds in range(1, MAX_ROUNDS + 1):
            main = ref_target(drive, LOCAL + "main")
            if main is None:
                raise RepoError(f"{remote} has no {branch}", "the gate lands on an existing "
                                "drive: push its first commit to main yourself")
            if ref_target(drive, ref) is None:
                break  # gone meanwhile (another gate run landed it)
            result = land_branch(drive, ref, main, policy, registry)
            result.rounds = rounds
            if push_result(drive, remote, branch, main, result) == "ok":
                report.branches.append(result)
                git("update-ref", LOCAL + "main", result.main or main, cwd=drive.root)
                break
            fetch_incoming(drive, remote, branch)
        else:
            report.branches.append(BranchResult(agent, ref_target(drive, ref) or "",
                                                error=f"lost {MAX_ROUNDS} races; run again"))
    return report


def report_lines(report: GateReport) -> list[str]:
    """The job's log: one line per landed and refused commit, no entry text."""
    lines: list[str] = []
    for b in report.branches:
        lines.append(f"memgit gate: {b.agent}: {len(b.landed)} landed, {len(b.refused)} "
                     f"refused, {len(b.already)} already on main"
                     + (f" ({b.error})" if b.error else ""))
        for src, new in b.landed:
            lines.append(f"  landed  {src[:SHORT]} -> {new[:SHORT]}")
        for r in b.refused:
            lines.append(f"  refused {r.commit[:SHORT]} {' '.join(r.codes())}")
            for code, name, where in r.findings:
                lines.append(f"    {where}: {code} {name}".rstrip())
    if not report.branches:
        lines.append("memgit gate: no incoming branch")
    return lines


def read_report(drive: Drive, ref: str) -> dict[str, Any] | None:
    """A fetched gate report (``report.json`` of the commit at ``ref``), or None."""
    proc = git("show", f"{ref}:report.json", cwd=drive.root, check=False)
    if proc.returncode != 0:
        return None
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


