"""memgit audit: a drive's health report, each finding with the command that fixes it.

The checks (docs/review.md, "Audit"): exact and near duplicates (the dream's comparison,
memgit.dream.rule_based; by meaning too when the drive has vectors), likely
contradictions (same subject, another value: candidates, never changed), stale entries
(never retrieved, older than ``review.stale_days``), entries without a usable source,
files and the drive near their limits, proposals waiting longer than
``review.proposal_days``, credentials in history that today's secret gate refuses
(review.history), and what pre-receive's rules refuse in what history records besides
the files' lines: commit and tag messages and people, names of paths and refs
(review.records). Nothing is written. Pairs are found with a prefix filter on the rarest
word bigrams (:func:`candidate_pairs`), so the audit stays near linear in the entries.
"""

from __future__ import annotations

import datetime as _dt
import math
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memgit import state
from memgit.dream.rule_based import Item, near_duplicates
from memgit.format import entries as fmt
from memgit.git.modes import MODE_EXEC, MODE_FILE
from memgit.git.repository import Drive, commit_tree_id, require_drive, tree_files
from memgit.policy import autonomy as au
from memgit.policy.judge import quote, source_allowed
from memgit.policy.registry import PurgeRegistry
from memgit.policy.settings import Policy
from memgit.review import records as rec
from memgit.review.history import history_listing, history_secrets
from memgit.review.proposals import listing
from memgit.state import facts

ERROR, WARNING, INFO = "error", "warning", "info"
NEAR = 0.75  # rule_based's Jaccard threshold: the prefix filter for duplicates
RELATED = 0.5  # word overlap from which two entries may talk about the same subject
MAX_POSTINGS = 8  # items a bigram pairs with, at most (see candidate_pairs)
MEANING = 0.93  # cosine of two entries' vectors from which they say the same
ANONYMOUS = ("imported:unknown", "memgit:observation/")


@dataclass(frozen=True)
class Finding:
    check: str
    level: str
    message: str  # quoted: no credential is ever shown
    fix: str  # the command (or the edit) that fixes it
    ids: tuple[str, ...] = ()
    path: str = ""  # quoted too when it may hold a credential
    commit: str = ""  # the commit or tag a finding in history is about

    def as_dict(self) -> dict[str, Any]:
        return {"check": self.check, "level": self.level, "message": self.message,
                "fix": self.fix, "ids": list(self.ids), "path": self.path,
                "commit": self.commit}


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    entries: int = 0
    files: int = 0
    seconds: float = 0.0

    @property
    def status(self) -> int:
        return 1 if any(f.level == ERROR for f in self.findings) else 0

    def as_dict(self) -> dict[str, Any]:
        counts = Counter(f.check for f in self.findings)
        return {"entries": self.entries, "files": self.files,
                "seconds": round(self.seconds, 3), "counts": dict(sorted(counts.items())),
                "errors": sum(f.level == ERROR for f in self.findings),
                "findings": [f.as_dict() for f in self.findings]}


@dataclass(frozen=True)
class _Entry:
    id: str
    path: str
    entry: fmt.Entry


def _active(drive: Drive, tree: str) -> tuple[list[_Entry], list[tuple[str, int, str]]]:
    """The active entries of the head's topic files, and (path, size, blob) of its files."""
    rows = [(f.path, f.size, f.oid) for f in tree_files(drive, tree)
            if f.mode in (MODE_FILE, MODE_EXEC)]
    out: list[_Entry] = []
    for path, _size, oid in rows:
        if not path.endswith(".md") or fmt.is_reserved(path):
            continue
        text = drive.repo[oid].data.decode("utf-8", "replace")  # type: ignore[attr-defined]
        for _line, entry in fmt.parse_document(path, text).entries():
            meta = entry.meta
            if meta.get("status", "active") not in ("active", "") or meta.get("kind"):
                continue
            out.append(_Entry(entry.id, path, entry))
    return out, rows


def candidate_pairs(items: Sequence[Item], threshold: float) -> Iterable[tuple[int, int]]:
    """Pairs that may share ``threshold`` of their word bigrams (both near duplicates and
    contradiction candidates keep most of their word order): each item's bigrams sorted
    rarest first, two items sharing that share of each one's bigrams share one among the
    first ``|x| - ceil(t|x|) + 1`` of each (the prefix filter), so only pairs sharing such
    a bigram are compared. A bigram already in MAX_POSTINGS items pairs no more (it says
    nothing about a subject); items with the same normalised text are always paired."""
    freq = Counter(p for item in items for p in item.pairs)
    seen: set[tuple[int, int]] = set()
    by_key: dict[str, list[int]] = {}
    for n, item in enumerate(items):
        by_key.setdefault(item.key, []).append(n)
    for group in by_key.values():
        for i, a in enumerate(group):
            for b in group[i + 1:]:
                seen.add((a, b))
                yield a, b
    postings: dict[tuple[str, str], list[int]] = {}
    for n, item in enumerate(items):
        ordered = sorted(item.pairs, key=lambda p: (freq[p], p))
        for pair in ordered[:max(len(ordered) - math.ceil(threshold * len(ordered)) + 1, 0)]:
            found = postings.setdefault(pair, [])
            for m in found:
                if (m, n) not in seen:
                    seen.add((m, n))
                    yield m, n
            if len(found) < MAX_POSTINGS:
                found.append(n)


def _contradicts(a: Item, b: Item, shared: int) -> bool:
    """Same subject, another value: at least three words shared, at most four differ, and
    what differs is a number, a negation, or one or two words on each side."""
    differ = len(a.set) + len(b.set) - 2 * shared
    if a.key == b.key or shared < 3 or differ > 4:
        return False
    if a.numbers != b.numbers and (a.set - a.numbers) == (b.set - b.numbers):
        return True
    if a.negations != b.negations and (a.set - a.negations) == (b.set - b.negations):
        return True
    only_a, only_b = len(a.set) - shared, len(b.set) - shared
    return 0 < only_a <= 2 and 0 < only_b <= 2 and shared >= 2 * max(only_a, only_b)


def _root(parent: dict[int, int], n: int) -> int:
    """The group of ``n`` (union-find: ``parent`` maps a member to a smaller one)."""
    while n in parent:
        n = parent[n]
    return n


def _pairs(entries: list[_Entry], policy: Policy) -> list[Finding]:
    items = [Item({"id": e.id, "text": e.entry.text}) for e in entries]
    out: list[Finding] = []
    dup_of: dict[int, int] = {}
    contradictions: list[tuple[int, int]] = []
    for a, b in candidate_pairs(items, RELATED):
        a, b = min(a, b), max(a, b)
        x, y = items[a], items[b]
        shared = len(x.set & y.set)
        if x.key == y.key or shared >= NEAR * (len(x.set) + len(y.set) - shared):
            if near_duplicates(x, y):
                ra, rb = _root(dup_of, a), _root(dup_of, b)
                if ra != rb:
                    dup_of[max(ra, rb)] = min(ra, rb)
                continue
        if _contradicts(x, y, shared):
            contradictions.append((a, b))
    contradictions.sort()
    groups: dict[int, list[int]] = {}
    for member in list(dup_of):
        root = _root(dup_of, member)
        groups.setdefault(root, [root]).append(member)
    for _first, members in sorted(groups.items()):
        ids = tuple(entries[m].id for m in sorted(set(members)))
        exact = len({items[m].key for m in members}) == 1
        where = sorted({entries[m].path for m in members})
        out.append(Finding("duplicate", WARNING,
                           f"{'exact' if exact else 'near'} duplicates in "
                           f"{quote(', '.join(where), policy)}: {' '.join(ids)}",
                           f"memgit forget {' '.join(ids[1:])}  (or: memgit dream)", ids,
                           where[0]))
    for a, b in contradictions:
        ids = (entries[a].id, entries[b].id)
        out.append(Finding("contradiction", INFO,
                           f"maybe contradictory (same subject, another value): "
                           f"{quote(entries[a].entry.text, policy)} / "
                           f"{quote(entries[b].entry.text, policy)}",
                           f"keep the true one: memgit forget {ids[0]} or memgit forget "
                           f"{ids[1]} (or memgit edit)", ids, entries[a].path))
    return out


def _by_meaning(drive: Drive, entries: list[_Entry], lexical: set[frozenset[str]],
                policy: Policy) -> list[Finding]:
    """Pairs of entries whose stored vectors are nearly the same (cosine >= MEANING) and
    that the lexical comparison did not pair; nothing when the drive has no vectors."""
    if policy.embeddings() is None:
        return []
    from memgit.embeddings.vectors import VectorMatrix
    from memgit.state import vectors

    conn = state.connection(drive.git_dir)
    model = vectors.recorded_model(conn)
    if model is None:
        return []
    by_fact = {key: stored.row.entry_id for key, stored in facts.stored_rows(conn).items()
               if stored.valid_until is None}
    rows = [(by_fact[f], blob) for _seq, f, blob in vectors.load(conn) if f in by_fact]
    if len(rows) < 2:
        return []
    matrix = VectorMatrix.from_blobs(rows, model[1])
    import numpy as np

    where = {e.id: e.path for e in entries}
    out: list[Finding] = []
    block = 512
    for start in range(0, len(matrix.ids), block):
        scores = np.einsum("ij,kj->ik", matrix.matrix[start:start + block], matrix.matrix)
        for i, j in zip(*np.nonzero(scores >= MEANING), strict=True):
            a, b = matrix.ids[start + int(i)], matrix.ids[int(j)]
            if a >= b or a not in where or b not in where or frozenset((a, b)) in lexical:
                continue
            out.append(Finding("duplicate", WARNING, f"the same by meaning "
                               f"(cosine {float(scores[i, j]):.2f}): {a} {b}",
                               f"memgit forget {b}  (or: memgit dream)", (a, b), where[a]))
    return out


def _days_since(value: str, today: _dt.date) -> int | None:
    try:
        return (today - _dt.date.fromisoformat(value)).days
    except ValueError:
        return None


def _entry_checks(drive: Drive, entries: list[_Entry], policy: Policy,
                  today: _dt.date) -> list[Finding]:
    settings = au.review_settings(policy)
    conn = state.connection(drive.git_dir)
    counts = facts.retrievals(conn, [e.id for e in entries])
    out: list[Finding] = []
    for e in entries:
        source = e.entry.get("source")
        if not source or source.startswith(ANONYMOUS) or not source_allowed(source, policy):
            out.append(Finding("source", WARNING if policy.require_source else INFO,
                               f"{e.id} in {quote(e.path, policy)} names no usable source",
                               f"add [source: TOOL:session/ID] to its line in "
                               f"{quote(e.path, policy)}, or memgit forget {e.id}",
                               (e.id,), e.path))
        age = _days_since(e.entry.get("added"), today)
        if age is not None and age > settings.stale_days and counts.get(e.id, 0) == 0:
            out.append(Finding("stale", INFO, f"{e.id} in {quote(e.path, policy)} was never "
                               f"recalled in {age} days", f"memgit forget {e.id}  (or keep "
                               "it: recall it once)", (e.id,), e.path))
    return out


def _limits(rows: list[tuple[str, int, str]], policy: Policy) -> list[Finding]:
    out: list[Finding] = []
    total = sum(size for _p, size, _o in rows)
    checks = [("files", len(rows), policy.files, "", "merge small topic files, or raise "
               "limits.files in memgit.yaml"),
              ("drive_bytes", total, policy.drive_bytes, "", "memgit compact, memgit dream, "
               "or raise limits.drive_bytes")]
    checks += [("file_bytes", size, policy.file_bytes, path, "split it into topic files "
                "(memgit edit / forget), or raise limits.file_bytes")
               for path, size, _oid in rows]
    for name, used, limit, path, fix in checks:
        if used >= policy.near_limit * limit:
            level = ERROR if used > limit else WARNING
            what = f"{quote(path, policy)} " if path else ""
            out.append(Finding("limit", level, f"{what}{name}: {used} of {limit} "
                               f"({100 * used // limit}%)", fix, (), path))
    return out


def _proposals(drive: Drive, policy: Policy, today: _dt.date) -> list[Finding]:
    days = au.review_settings(policy).proposal_days
    out = []
    for p in listing(drive, policy):
        age = _days_since(p.added, today)
        if age is not None and age > days:
            out.append(Finding("proposal", WARNING, f"proposal {p.id} ({p.kind}, by "
                               f"{quote(p.proposed_by, policy)}) has waited {age} days",
                               f"memgit approve {p.id}  or  memgit reject {p.id} --reason R",
                               (p.id,), p.path))
    return out


def _secrets(drive: Drive, policy: Policy, head_blobs: set[str],
             listing: dict[str, str]) -> list[Finding]:
    out = []
    for s in history_secrets(drive.git_dir, policy, head_blobs, listing):
        where = "at the head and in history" if s.at_head else "in history"
        fix = f"memgit purge {s.entry_id}" if s.entry_id else \
            "remove the line, then purge it (docs/purge.md)"
        path = _shown(s.path, policy) if rec.name_refused(s.path, policy) else s.path
        out.append(Finding("secret", ERROR, f"a possible credential ({s.kind}) in "
                           f"{path} {where}" + (f", entry {s.entry_id}" if s.entry_id else ""),
                           fix + "; and rotate the credential", (s.entry_id,) if s.entry_id
                           else (), path))
    return out


# How each part of what history records is rewritten: no memgit command rewrites commit
# or tag messages, people or names (memgit purge removes entries; from a message only a
# purged entry's whole text), so the fix is git's (docs/review.md, "Audit").
REWRITE = {
    rec.MESSAGE: "no memgit command removes it (memgit purge rewrites a message only where "
                 "it quotes a purged entry's whole text): rewrite the message with git in "
                 "the drive, git filter-repo --force --replace-message FILE, FILE holding a "
                 "line regex:PATTERN==>[redacted] whose PATTERN matches it (a commit not "
                 "yet pushed: git rebase -i {oid}^ and reword it)",
    rec.PEOPLE: "no memgit command removes it: rewrite the name or email with git in the "
                "drive, git filter-repo --force --mailmap FILE, FILE mapping it to a clean "
                "one",
    rec.PATH: "no memgit command renames a path in history: rewrite it with git in the "
              "drive, git filter-repo --force --path-rename OLD:NEW (or --invert-paths "
              "--path OLD to drop the file)",
    rec.REF: "delete the ref with git (git for-each-ref lists it; git update-ref -d REF), "
             "then git reflog expire --expire=now --all && git gc --prune=now",
}


def _shown(name: str, policy: Policy) -> str:
    """``name`` quoted; a name the quoting leaves as it is (a credential only the deep
    scanner sees) is not shown at all."""
    shown = quote(name, policy)
    return shown if shown != name else "<redacted>"


def _recorded_finding(r: rec.Recorded, policy: Policy) -> Finding:
    credential = r.code != "MG607"
    fix = REWRITE[r.part].format(oid=r.oid[:10])
    fix += "; and rotate the credential" if credential else ""
    if r.oid:
        where, path = f"{r.object_type} {r.oid[:10]}", ""
    else:
        path = _shown(r.name, policy)
        where = f"{'ref' if r.part == rec.REF else 'path'} {path}"
    return Finding("secret" if credential else "purged", ERROR if r.severity == ERROR
                   else WARNING, f"{where}: {r.code} {r.detail}", fix, (), path,
                   r.oid)


def _recorded(drive: Drive, policy: Policy, listing: dict[str, str]) -> list[Finding]:
    """Findings in commit and tag messages and people, and in the names of paths and
    refs (memgit.review.records: the rules pre-receive applies)."""
    registry = PurgeRegistry.load(drive.git_dir)
    return [_recorded_finding(r, policy)
            for r in rec.recorded(drive.git_dir, policy, registry, listing)]


def audit(drive: Drive, policy: Policy, *, today: _dt.date | None = None,
          history: bool = True) -> Report:
    """The drive's health report at the branch head (see the module docstring)."""
    import zoneinfo

    from memgit.recall.read_path import catch_up

    started = time.perf_counter()
    today = today or _dt.datetime.now(zoneinfo.ZoneInfo(policy.timezone)).date()
    head = require_drive(drive, policy.branch_ref)
    report = Report()
    catch_up(drive, policy=policy)  # the recall index holds the retrieval counts
    entries, rows = _active(drive, commit_tree_id(drive, head))
    report.entries, report.files = len(entries), len(rows)
    found = _pairs(entries, policy)
    lexical = {frozenset(f.ids[i:i + 2]) for f in found for i in range(len(f.ids) - 1)}
    lexical |= {frozenset((a, b)) for f in found for a in f.ids for b in f.ids if a != b}
    found += _by_meaning(drive, entries, lexical, policy)
    found += _entry_checks(drive, entries, policy, today)
    found += _limits(rows, policy)
    found += _proposals(drive, policy, today)
    if history:
        objects = history_listing(drive.git_dir)
        found += _secrets(drive, policy, {oid for _p, _s, oid in rows}, objects)
        found += _recorded(drive, policy, objects)
    order = {ERROR: 0, WARNING: 1, INFO: 2}
    report.findings = sorted(found, key=lambda f: (order[f.level], f.check, f.path, f.ids,
                                                      f.commit))
    report.seconds = time.perf_counter() - started
    return report
