"""pre-receive: ref updates -> new commits -> new blobs -> policy.

git runs it with the push in a quarantine directory, before any ref moves; a non-zero exit
refuses every ref. Every commit the push brings is judged, parents first, not only the tip
(``git rev-list NEW --not --all``: inside pre-receive the refs still hold their pre-push
values), and an oversized push is refused from blob sizes before any content is read.
Only what is new is judged: a blob already at its path before the push was judged when it
landed (the tree rules still see it), and only lines not in the parent's version of a file
are scanned for secrets, which by induction over the commits scans every line of the push
once (docs/server.md, "What the hook judges"). Objects are read by git children, which
inherit the quarantine environment; no pygit2, no network. The hook never writes a ref or
an object, and any failure of its own refuses the push with MG609: a push is never
accepted by accident.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from memgit.errors import MemgitError
from memgit.format import entries as fmt
from memgit.git.modes import MODE_COMMIT, MODE_EXEC, MODE_FILE
from memgit.git.plumbing import (
    ObjectMissingError,
    PushCommit,
    config_get,
    has_refs,
    push_is_ancestor,
    push_new_commits,
    start_new_commits,
    start_plumbing,
)
from memgit.git.raw import LaterRead, ObjectReader, TreeCache, commit_headers, commit_text, is_tree
from memgit.githooks import old_files
from memgit.githooks.hook_io import (
    RefUpdate,
    ServerSideError,
    after_answer,
    parse_updates,
    server_error_lines,
)
from memgit.githooks.timing import TIMING
from memgit.githooks.verdict import SHORT, Finding, Verdict, report
from memgit.policy import WORKING_REF
from memgit.policy.census import no_secret_scan, push_cap_warnings
from memgit.policy.judge import (
    ERROR,
    HISTORY_RULES,
    NEAR_LIMIT_CODES,
    BlobFacts,
    TreeItem,
    Violation,
    check_blob,
    check_change,
    check_commit,
    check_not_purging,
    check_path,
    check_purged,
    check_push_size,
    check_tree,
    check_update,
)
from memgit.policy.registry import PurgeRegistry
from memgit.policy.settings import Policy, find_policy

if TYPE_CHECKING:
    from subprocess import Popen

_BLOB_MODES = (MODE_FILE, MODE_EXEC)


# --- input ------------------------------------------------------------------------


def check_quarantine(updates: Sequence[RefUpdate]) -> None:
    """The pushed objects must be in git's quarantine (git 2.11+ sets it for pre-receive).

    Only a push that deletes refs and nothing else brings no pack and no quarantine.
    """
    if all(u.is_delete for u in updates):
        return
    quarantine = os.environ.get("GIT_QUARANTINE_PATH")
    if not quarantine:
        raise ServerSideError("no quarantine: GIT_QUARANTINE_PATH is not set",
                              "run the hook from git receive-pack (git 2.11 or newer)")
    if not os.path.isdir(quarantine):
        raise ServerSideError("the quarantine directory GIT_QUARANTINE_PATH does not exist",
                              "run the hook from git receive-pack (git 2.11 or newer)")
    objects = os.environ.get("GIT_OBJECT_DIRECTORY", "")
    if not objects or os.path.realpath(objects) != os.path.realpath(quarantine):
        raise ServerSideError("GIT_OBJECT_DIRECTORY is not the quarantine",
                              "do not override git's object environment for hooks")


def start_policy_lookup(git_dir: Path, policy_file: str | None) -> Popen[bytes] | None:
    """Start ``git config memgit.policy`` when the policy may come from it."""
    if policy_file or (git_dir / "memgit.yaml").exists():
        return None
    return start_plumbing(git_dir, "config", "--get", "memgit.policy")


def load_policy_and_registry(git_dir: Path, policy_file: str | None,
                             lookup: Popen[bytes] | None = None
                             ) -> tuple[Policy, PurgeRegistry]:
    """The drive's policy and purge registry; any problem is a ServerSideError."""
    try:
        config = None
        if not policy_file and not (git_dir / "memgit.yaml").exists():
            config = config_get(git_dir, "memgit.policy", lookup)
        policy = find_policy(policy_file, git_dir, config)
    except MemgitError as exc:
        raise ServerSideError(f"the drive's policy cannot be used: {exc.message}",
                              exc.hint or "fix memgit.yaml in the git directory") from exc
    try:
        registry = PurgeRegistry.load(git_dir)
    except MemgitError as exc:
        raise ServerSideError(f"the purge registry cannot be read: {exc.message}",
                              exc.hint or "restore memgit-purged from backup") from exc
    return policy, registry


# --- judging ----------------------------------------------------------------------


class TreeFile(NamedTuple):
    """One non-tree entry of a commit's tree, with its full path."""

    path: str
    mode: int
    oid: str


class PushJudge:
    """Judges the commits of one push; caches trees, path checks and blob facts."""

    def __init__(self, git_dir: Path, policy: Policy, registry: PurgeRegistry,
                 reader: ObjectReader) -> None:
        self.git_dir = git_dir
        self.policy = policy
        self.registry = registry
        self.reader = reader
        self.verdict = Verdict()
        self._tree_cache = TreeCache(reader, missing_from="the push or the repository")
        self._flat: dict[tuple[str, str], tuple[TreeFile, ...]] = {}  # (tree, prefix) -> rows
        self._raw: dict[str, bytes] = {}  # prefetched commits and blobs
        self._trees: dict[str, tuple[TreeFile, ...]] = {}  # commit -> rows of its tree
        self._maps: dict[str, dict[str, TreeFile]] = {}  # commit -> path -> row
        self._old: set[TreeFile] = set()  # rows of the old parents: judged when they landed
        self._old_tips: dict[str, str] = {}  # tip of a ref update -> the ref's old value
        self._commit_raw: dict[str, bytes] = {}  # the new commits, read after their sizes
        self._sizes: dict[str, int] = {}
        self._facts: dict[tuple[str, str], BlobFacts] = {}  # (blob, path) -> facts
        self._lean: dict[tuple[str, str], BlobFacts] = {}  # the same without links
        self._ids: dict[str, list[tuple[str, str]]] = {}  # entry id -> (blob, path) keys
        self._paths: dict[tuple[str, int], list[Violation]] = {}
        self._reported: set[tuple[str, str]] = set()  # (blob, path) whose violations are out
        self._tree_errors: dict[tuple[str, str, int, str], Finding] = {}
        self._needles: set[bytes] = set()  # see _introduce
        self._texts: set[bytes] = set()
        self._parse_all_old = False
        self._listing: dict[str, Popen[bytes]] = {}
        self._old_read: LaterRead | None = None
        self._known: set[str] = set()  # blobs whose ids an earlier push recorded (old_files)
        self._first_push = False  # an existing history pushed to an empty drive

    # objects ---------------------------------------------------------------------

    def _object(self, oid: str, kind: str) -> bytes:
        raw = self._raw.get(oid)
        if raw is not None:
            return raw
        got = self.reader.read(oid)
        if got is None:
            raise ObjectMissingError(f"{kind} {oid[:SHORT]} is not in the push or the "
                                     "repository", "")
        if got[0] != kind:
            raise ObjectMissingError(f"{oid[:SHORT]} is a {got[0]}, not a {kind}", "")
        return got[1]

    def flat_tree(self, tree: str, prefix: str = "") -> tuple[TreeFile, ...]:
        """Every non-tree entry below ``tree`` (subtrees cached by id and prefix)."""
        key = (tree, prefix)
        cached = self._flat.get(key)
        if cached is not None:
            return cached
        rows: list[TreeFile] = []
        for mode, name, child in self._tree_cache.entries(bytes.fromhex(tree)):
            # names are UTF-8; undecodable bytes are kept as surrogate escapes
            path = prefix + name.decode("utf-8", "surrogateescape")
            if is_tree(mode):
                rows.extend(self.flat_tree(child.hex(), path + "/"))
            else:
                rows.append(TreeFile(path, int(mode, 8), child.hex()))
        result = tuple(rows)
        self._flat[key] = result
        return result

    def _commit_tree(self, oid: str) -> str:
        """The tree of a commit that is already in the repository."""
        first = self._object(oid, "commit").split(b"\n", 1)[0]
        if not first.startswith(b"tree "):
            raise ObjectMissingError(f"commit {oid[:SHORT]} has no tree line", "")
        return first[5:].decode()

    def _map(self, commit: str) -> dict[str, TreeFile]:
        found = self._maps.get(commit)
        if found is None:
            found = self._maps[commit] = {r.path: r for r in self._trees[commit]}
        return found

    # the push ----------------------------------------------------------------------

    def judge(self, updates: Sequence[RefUpdate]) -> Verdict:
        if updates:
            self._tree_cache.oid_bytes = len(updates[0].new) // 2
        commits: dict[str, PushCommit] = {}
        tips: set[str] = set()
        # every rev-list starts now, side by side with the first cat-file answers
        self._listing = {u.new: start_new_commits(self.git_dir, u.new) for u in updates
                         if not u.is_delete and u.new not in self._listing}
        try:
            self._ref_finding("", check_not_purging(self.git_dir))
            for update in updates:
                for commit in self._judge_update(update, tips):
                    commits.setdefault(commit.oid, commit)
            TIMING.mark("refs")
            if commits:
                self._judge_commits(list(commits.values()), tips)
        finally:
            for proc in self._listing.values():
                proc.kill()
                proc.communicate()
            if self._old_read is not None:
                self._old_read.close()
        return self.verdict

    def _ref_finding(self, ref: str, violations: Iterable[Violation]) -> None:
        self.verdict.findings.extend(Finding(v, ref=ref) for v in violations)

    def _judge_update(self, update: RefUpdate, tips: set[str]) -> list[PushCommit]:
        policy = self.policy
        if update.ref == WORKING_REF:  # working memory: its own rules (docs/working-memory.md)
            from memgit.policy.working import judge_push as judge_working  # its pushes only

            self._ref_finding(update.ref, judge_working(self.git_dir, update.old, update.new,
                                                        policy, self.registry, self.reader))
            return []
        if update.is_delete:
            self._ref_finding(update.ref, check_update(update.ref, update.old, update.new,
                                                       policy, fast_forward=True,
                                                       new_commits=0))
            return []
        info = self.reader.info_many([update.new])[update.new]
        listing = self._listing.pop(update.new, None)
        # a branch must name a commit (a tag object is fine for refs/tags/, which the
        # branch rule refuses anyway; git itself would let a branch hold one)
        kind = info[0] if info is not None else "missing"
        if kind != "commit" and (kind != "tag" or update.ref.startswith("refs/heads/")):
            if listing is not None:
                listing.kill()
                listing.communicate()
            if info is None:
                self._ref_finding(update.ref, [Violation(
                    "MG608", "", 0, f"{update.ref} would point at {update.new[:SHORT]}, "
                    "which is not in the push")])
            else:
                self._ref_finding(update.ref, check_update(
                    update.ref, update.old, update.new, self.policy, fast_forward=True,
                    new_commits=0, target_kind=kind))
            return []
        try:
            new_commits = push_new_commits(self.git_dir, update.new, listing)
            fast_forward = update.is_create or self._fast_forward(update, new_commits)
        except ObjectMissingError as exc:
            self._ref_finding(update.ref, [Violation("MG608", "", 0, exc.message)])
            return []
        self._ref_finding(update.ref, check_update(update.ref, update.old, update.new,
                                                   policy, fast_forward=fast_forward,
                                                   new_commits=len(new_commits)))
        if update.is_create and update.ref == policy.branch_ref and not has_refs(self.git_dir):
            self._first_push = True
            self.verdict.notes.append(
                "first push to an empty drive: its tip is judged by every rule, its older "
                "commits by the history rules (credentials, purged entries, paths)")
        if len(new_commits) > policy.push_commits:
            self.verdict.notes.append(
                f"the content of {update.ref} was not checked: {len(new_commits)} new "
                f"commits, at most {policy.push_commits} per push")
            return []
        if new_commits:
            tips.add(new_commits[-1].oid)  # --topo-order --reverse lists the (peeled) tip last
            if not update.is_create:
                self._old_tips[new_commits[-1].oid] = update.old
        return new_commits

    def _fast_forward(self, update: RefUpdate, new_commits: list[PushCommit]) -> bool:
        """Whether OLD is an ancestor of NEW; asks git only when OLD is not a parent of one
        of the new commits (the usual push extends the branch by commits on top of OLD)."""
        if any(update.old in c.parents for c in new_commits):
            return True
        return push_is_ancestor(self.git_dir, update.old, update.new)

    def _judge_commits(self, commits: list[PushCommit], tips: set[str]) -> None:
        verdict = self.verdict
        new = {c.oid for c in commits}
        old_parents = list(dict.fromkeys(p for c in commits for p in c.parents if p not in new))
        for oid, got in self.reader.read_many(old_parents).items():
            if got is not None and got[0] == "commit":
                self._raw[oid] = got[1]
        self._tree_cache.prefetch(bytes.fromhex(t) for t in
                                  [c.tree for c in commits]
                                  + [self._commit_tree(p) for p in old_parents if p in self._raw])
        for commit in commits:
            verdict.subjects[commit.oid] = commit.subject
            try:
                self._trees[commit.oid] = self.flat_tree(commit.tree)
                for parent in commit.parents:
                    if parent not in new and parent not in self._trees:
                        self._trees[parent] = self.flat_tree(self._commit_tree(parent))
                        self._old.update(self._trees[parent])
            except ObjectMissingError as exc:
                verdict.findings.append(Finding(Violation("MG608", "", 0, exc.message),
                                                commit=commit.oid))
                return
        if not self._read_sizes(commits):
            return
        self._commit_raw = {o: got[1] for o, got in
                            self.reader.read_many([c.oid for c in commits]).items()
                            if got is not None and got[0] == "commit"}
        # old files may be needed for duplicate ids: git reads those whose ids no earlier
        # push recorded (githooks.old_files) while Python judges the new ones
        others = [r.oid for r in self._old_in_push(commits) if old_files.recordable(r.path)]
        TIMING.mark("trees")
        self._known = old_files.recorded(self.git_dir, others)
        TIMING.mark("known")
        self._old_read = self.reader.read_later([o for o in others if o not in self._known])
        TIMING.mark("trees")
        self._prefetch_blobs(commits)
        for commit in commits:
            self._new_blob_facts(commit)
        TIMING.mark("new_blobs")
        self._old_blob_facts(commits)
        for key, facts in self._facts.items():
            for entry_id, _line in facts.ids:
                self._ids.setdefault(entry_id, []).append(key)
        TIMING.mark("old_blobs")
        for commit in commits:
            self._judge_commit(commit, tip=commit.oid in tips)
            if commit.oid in tips and self.registry:
                self._judge_returning(commit)
        verdict.commits = len(commits)
        TIMING.mark("tree_rules")

    def _read_sizes(self, commits: list[PushCommit]) -> bool:
        """Blob sizes of every tree (the new commits' and their old parents'); a blob
        that is nowhere is MG608."""
        wanted = list({r.oid for rows in self._trees.values() for r in rows
                       if r.mode != MODE_COMMIT})
        info = self.reader.info_many(wanted + [c.oid for c in commits])
        sizes = self._sizes
        missing: list[Finding] = []
        for commit in commits:
            for row in self._trees[commit.oid]:
                if row.mode == MODE_COMMIT or row.oid in sizes:
                    continue
                got = info.get(row.oid)
                sizes[row.oid] = got[1] if got is not None else -1
                if got is None:
                    missing.append(Finding(Violation(
                        "MG608", row.path, 0,
                        f"blob {row.oid[:SHORT]} is not in the push or the repository"),
                        commit=commit.oid))
        for oid in wanted:
            if oid not in sizes:
                got = info.get(oid)
                sizes[oid] = got[1] if got is not None else -1
        self.verdict.findings.extend(missing)
        if missing:
            return False
        # What judging would read: each (blob, path) new in the push, and the commits.
        # Counted from sizes alone, so a flood is refused before any content is read.
        new_bytes = sum(sizes[oid] for oid, _path in {
            (r.oid, r.path) for c in commits for r in self._trees[c.oid]
            if r.mode in _BLOB_MODES and r not in self._old})
        new_bytes += sum((info.get(c.oid) or ("", 0))[1] for c in commits)
        too_large = check_push_size(new_bytes, self.policy)
        self._ref_finding("", too_large)
        return not too_large

    # blobs -------------------------------------------------------------------------

    def _readable(self, row: TreeFile) -> bool:
        """Content over the per-file limit is not read: check_tree refuses it by size."""
        return row.mode in _BLOB_MODES and 0 <= self._sizes.get(row.oid, -1) \
            <= self.policy.file_bytes

    def _contents(self, oids: list[str]) -> dict[str, bytes]:
        out: dict[str, bytes] = {o: self._raw[o] for o in oids if o in self._raw}
        for oid, value in self.reader.read_many([o for o in oids if o not in out]).items():
            if value is None:
                raise ObjectMissingError(f"blob {oid[:SHORT]} cannot be read", "")
            out[oid] = value[1]
        return out

    _PREFETCH_BYTES = 64 * 1024 * 1024

    def _prefetch_blobs(self, commits: list[PushCommit]) -> None:
        """Read the blobs new in the push, and their parents' versions, in one batch when
        they fit in memory comfortably (else commit by commit, as _new_blob_facts asks)."""
        wanted: dict[str, None] = {}
        for commit in commits:
            parents = [self._map(p) for p in commit.parents]
            for row in self._trees[commit.oid]:
                if row in self._old or not self._readable(row):
                    continue
                wanted[row.oid] = None
                for parent in parents:
                    version = parent.get(row.path)
                    if version is not None and version != row and self._readable(version):
                        wanted[version.oid] = None
        if sum(self._sizes.get(o, 0) for o in wanted) > self._PREFETCH_BYTES:
            return
        self._raw.update(self._contents(list(wanted)))

    def _new_blob_facts(self, commit: PushCommit) -> None:
        """check_blob for each (blob, path) of this commit that is new in the push.

        Commits come parents first, so a parent's version of a file is judged already;
        the secret scan skips the lines that version has.
        """
        todo = [r for r in self._trees[commit.oid] if (r.oid, r.path) not in self._facts
                and r not in self._old and self._readable(r)]
        if not todo:
            return
        parents = [self._map(p) for p in commit.parents]
        previous = {r.path: [p[r.path] for p in parents if r.path in p] for r in todo}
        need = [r.oid for r in todo]
        need += [v.oid for versions in previous.values() for v in versions
                 if (v.oid, v.path) not in self._facts and self._readable(v)]
        contents = self._contents(need)
        for row in todo:
            seen: set[str] = set()
            for version in previous[row.path]:
                seen.update(self._lines(version, contents))
            facts = check_blob(row.path, contents[row.oid], self.policy,
                               scan=_new_lines_only(seen) if seen else None)
            self._facts[(row.oid, row.path)] = facts
            self._introduce(facts, seen)

    def _lines(self, row: TreeFile, contents: dict[str, bytes]) -> set[str]:
        facts = self._facts.get((row.oid, row.path))
        if facts is not None and facts.text is not None:
            text = facts.text
        elif row.oid in contents:
            text = contents[row.oid].decode("utf-8", "replace")
        else:
            return set()
        return {content for content, _eol in fmt.split_lines(text)}

    def _introduce(self, facts: BlobFacts, seen_lines: set[str]) -> None:
        """Remember what an old file must contain to share an id with the entries this
        blob adds (lines not in the parent's version of the file).

        An added entry with an explicit id X collides with an old file only if that file
        holds the text X. An added id-less entry gets its id from text, source and date,
        so an old file with the same id holds the same entry text, or the id written
        out. An explicit ``entry-`` id may equal the computed id of any id-less old
        line: only a parse of every old file can tell (rare; memgit stamps ``m-`` ids).
        """
        if facts.text is None or not facts.ids:
            return
        lines = fmt.split_lines(facts.text)
        for entry_id, number in facts.ids:
            content = lines[number - 1][0]
            if content in seen_lines:
                continue  # the entry was already in this file before the commit
            self._needles.add(entry_id.encode())
            if entry_id.startswith("entry-"):
                entry = fmt.parse_entry(content)
                if entry is None or entry.has_explicit_id:
                    self._parse_all_old = True
                else:
                    self._texts.add(entry.text.encode())

    def _old_blob_facts(self, commits: list[PushCommit]) -> None:
        """Facts of files already in the repository that the tree rules need.

        MEMORY.md always (the Index rule reads it). Other old files exactly when they hold
        an id the push introduces (MG103, MG108 across files): known from the ids an
        earlier push recorded for their blob (githooks.old_files), else from a byte-level
        test of their content first, then a real parse of those that hit.
        """
        old = self._old_in_push(commits)
        chosen = [r for r in old if r.path == fmt.MEMORY_FILE]
        others = [r for r in old if old_files.recordable(r.path)]
        read = self._old_read.result() if self._old_read is not None else {}
        self._old_read = None
        self._raw.update((oid, got[1]) for oid, got in read.items() if got is not None)
        needles = {n.decode() for n in self._needles}
        known = [r for r in others if r.oid in self._known]
        hits = old_files.holding(self.git_dir, [r.oid for r in known], needles) \
            if needles else set()
        if hits is None:  # the record cannot be read now: read those files too
            self._known, hits = set(), set()
        unknown = [r for r in others if r.oid not in self._known]
        if needles:
            chosen += [r for r in known if r.oid in hits]
            contents = self._contents([r.oid for r in unknown])
            chosen += [r for r in unknown
                       if self._parse_all_old or self._may_share_id(contents[r.oid])]
        contents = self._contents([r.oid for r in chosen])
        for r in chosen:
            facts = check_blob(r.path, contents[r.oid], self.policy, scan=no_secret_scan)
            ids = [entry_id for entry_id, _line in facts.ids]
            if r.path == fmt.MEMORY_FILE or not needles.isdisjoint(ids):
                self._facts[(r.oid, r.path)] = facts
        self._record_ids(unknown)

    def _record_ids(self, unknown: list[TreeFile]) -> None:
        """Have the ids of the blobs this push judged or read recorded for the next push
        (a child of the warm judge does it once the push has its answer)."""
        # a blob the policy refuses is not recorded: its ids are the pusher's text and
        # may hold what it was refused for (an "id: ghp_..." stayed in state.sqlite after
        # its push was refused: hostile sweep, branch hostile42)
        learned = {oid: [entry_id for entry_id, _line in facts.ids]
                   for (oid, path), facts in self._facts.items()
                   if old_files.recordable(path) and oid not in self._known
                   and not any(v.severity == ERROR for v in facts.violations)}
        unparsed = [(r.oid, r.path, self._raw[r.oid]) for r in unknown
                    if r.oid not in learned and r.oid in self._raw]
        old_files.record_after_answer(self.git_dir, learned, unparsed)

    def _old_in_push(self, commits: list[PushCommit]) -> list[TreeFile]:
        """Files of the new commits' trees that were already in the repository."""
        return sorted({r for c in commits for r in self._trees[c.oid]
                       if r in self._old and self._readable(r)
                       and (r.oid, r.path) not in self._facts})

    def _may_share_id(self, data: bytes) -> bool:
        if any(t in data for t in self._texts):
            return True
        if len(self._needles) <= 8:
            return any(n in data for n in self._needles)
        # many ids: pick out what could be an id value in the file, then compare sets
        # (a superset of the explicit ids: any "id:" followed by a value)
        return any(m.group(1).strip(b" \t") in self._needles for m in _ID_VALUE.finditer(data))

    # one commit ----------------------------------------------------------------------

    def _judge_returning(self, tip: PushCommit) -> None:
        """Purged ids and texts in files the tip takes from an old commit (a merge of an
        old parent, any number of parents) that the ref's old tip did not have: such
        content was judged when it landed, but the registry may have grown since."""
        old_tip = self._old_tips.get(tip.oid)
        before: set[TreeFile] = set()
        if old_tip is not None:
            if old_tip not in self._trees:
                self._trees[old_tip] = self.flat_tree(self._commit_tree(old_tip))
            before = set(self._trees[old_tip])
        rows = [r for r in self._trees[tip.oid] if r in self._old and r not in before
                and self._readable(r)]
        if not rows:
            return
        contents = self._contents([r.oid for r in rows if (r.oid, r.path) not in self._facts])
        for row in rows:
            key = (row.oid, row.path)
            facts = self._facts.get(key)
            if facts is None:
                facts = self._facts[key] = check_blob(row.path, contents[row.oid],
                                                      self.policy, scan=no_secret_scan)
            for v in check_purged(row.path, facts, self.registry):
                self.verdict.findings.append(Finding(v, commit=tip.oid))

    def _judge_commit(self, commit: PushCommit, *, tip: bool) -> None:
        """Every rule on one commit; for an older commit of a first push to an empty
        drive, only the history rules (a finding held back there is not marked reported,
        so the tip reports it when its file is still there)."""
        history = self._first_push and not tip
        rows = self._trees[commit.oid]
        first = self._map(commit.parents[0]) if commit.parents else {}
        out: list[Violation] = []
        raw = self._commit_raw.get(commit.oid)
        if raw is not None:
            message, people = commit_text(raw)
            # every other header too (gpgsig, mergetag, unknown ones): clones carry them
            out.extend(check_commit(message, people + commit_headers(raw), self.policy,
                                    self.registry))
        items: list[TreeItem] = []
        changed: list[TreeFile] = []
        for row in rows:
            items.append(TreeItem(row.path, row.mode, max(self._sizes.get(row.oid, 0), 0)))
            if first.get(row.path) != row:
                changed.append(row)
            if row in self._old:
                continue
            path_key = (row.path, row.mode)
            if path_key not in self._paths:
                found = check_path(row.path, row.mode, self.policy)
                shown = _history_only(found) if history else found
                if len(shown) == len(found):
                    self._paths[path_key] = found
                out.extend(shown)
            key = (row.oid, row.path)
            blob = self._facts.get(key)
            if blob is not None and key not in self._reported:
                found = blob.violations + (check_purged(row.path, blob, self.registry)
                                           if self.registry else [])
                shown = _history_only(found) if history else found
                if len(shown) == len(found):
                    self._reported.add(key)
                out.extend(shown)
        out.extend(self._changes(commit, rows))
        if self.policy.autonomy_rules() and not history:  # most drives have none
            out.extend(self._autonomy(commit, changed, first))
        for v in out:
            if v.severity == ERROR:
                self.verdict.findings.append(Finding(v, commit=commit.oid))
        same_paths = len(rows) == len(first) and all(r.path in first for r in changed)
        facts = self._tree_facts(rows, changed, tip=tip, same_paths=same_paths)
        caps = push_cap_warnings(self.git_dir, self.policy, rows, self._facts,
                                 self._contents) if tip else []
        for v in check_tree(items, facts, self.policy) + caps:
            if v.severity == ERROR and not (history and v.code not in HISTORY_RULES):
                self._add_tree_error(commit.oid, v)
            elif tip:
                self.verdict.findings.append(Finding(v, commit=commit.oid))

    def _tree_facts(self, rows: tuple[TreeFile, ...], changed: list[TreeFile], *, tip: bool,
                    same_paths: bool) -> dict[str, BlobFacts]:
        """The facts check_tree gets for one commit.

        The tip gets every file's facts. Other commits get what can make a new error
        there: the files changed since the first parent, the files that share an id with
        them (MG103), and MEMORY.md, all without links (link rules only warn, and
        warnings are reported for the tip only). Unchanged files, and an unchanged
        MEMORY.md over an unchanged set of paths (the Index), cannot make an error the
        first parent did not already have.
        """
        if tip:
            return {r.path: f for r in rows if (f := self._facts.get((r.oid, r.path)))}
        wanted: dict[str, TreeFile] = {r.path: r for r in changed}
        present = {(r.oid, r.path) for r in rows} if changed else set()
        for row in changed:
            facts = self._facts.get((row.oid, row.path))
            for entry_id, _line in facts.ids if facts is not None else ():
                for key in self._ids.get(entry_id, ()):
                    if key in present:
                        wanted.setdefault(key[1], TreeFile(key[1], 0, key[0]))
        out: dict[str, BlobFacts] = {}
        for path, row in wanted.items():
            key = (row.oid, path)
            if key in self._facts:
                out[path] = self._lean_facts(key)
        memory = next((r for r in rows if r.path == fmt.MEMORY_FILE), None)
        if memory is not None and memory.path not in out:
            key = (memory.oid, memory.path)
            if key in self._facts:
                lean = self._lean_facts(key)
                # text None: check_tree skips the Index and size rules of MEMORY.md
                out[memory.path] = replace(lean, text=None) if same_paths else lean
        return out

    def _lean_facts(self, key: tuple[str, str]) -> BlobFacts:
        lean = self._lean.get(key)
        if lean is None:
            lean = self._lean[key] = replace(self._facts[key], links=[])
        return lean

    def _autonomy(self, commit: PushCommit, changed: list[TreeFile],
                  first: Mapping[str, TreeFile]) -> list[Violation]:
        """The autonomy rules (policy.autonomy) on the entries this commit changes."""
        paths = {r.path for r in changed} | {p for p in first if p not in self._map(commit.oid)}
        paths = {p for p in paths if p.endswith(".md")}
        rows = {p: (first.get(p), self._map(commit.oid).get(p)) for p in paths}
        texts = self._contents([r.oid for pair in rows.values() for r in pair if r is not None])

        def text(row: TreeFile | None) -> str | None:
            data = texts.get(row.oid) if row is not None else None
            return data.decode("utf-8", "replace") if data is not None else None

        from memgit.policy.autonomy_check import check_entries

        _message, people = commit_text(self._commit_raw.get(commit.oid, b"\n\n"))
        who = dict(people)
        author = f"{who.get('author name', '')} <{who.get('author email', '')}>"
        return check_entries({p: text(o) for p, (o, _n) in rows.items()},
                             {p: text(n) for p, (_o, n) in rows.items()}, author, self.policy)

    def _changes(self, commit: PushCommit, rows: tuple[TreeFile, ...]) -> list[Violation]:
        """check_change on the paths that differ from every parent (a merge's own changes)."""
        mine = self._map(commit.oid)
        changed: set[str] | None = None
        for parent in commit.parents:
            theirs = self._map(parent)
            diff = {p for p in mine.keys() | theirs.keys() if mine.get(p) != theirs.get(p)}
            changed = diff if changed is None else changed & diff
        if changed is None:
            changed = set(mine)
        return check_change(sorted(changed), self.policy)

    def _add_tree_error(self, commit: str, v: Violation) -> None:
        key = (v.code, v.path, v.line, v.message)
        first = self._tree_errors.get(key)
        if first is not None:
            first.more += 1
            return
        finding = Finding(v, commit=commit)
        self._tree_errors[key] = finding
        self.verdict.findings.append(finding)


_ID_VALUE = re.compile(rb"id:[ \t]*([^;\]\r\n]*)")


def _history_only(violations: list[Violation]) -> list[Violation]:
    return [v for v in violations if v.code in HISTORY_RULES]


def _new_lines_only(seen: set[str]) -> Callable[[int, str], bool]:
    def scan(_number: int, content: str) -> bool:
        return content not in seen

    return scan


def judge_push(git_dir: Path, updates: Sequence[RefUpdate], policy: Policy,
               registry: PurgeRegistry, reader: ObjectReader | None = None) -> Verdict:
    """Everything pre-receive decides, without printing: the verdict of the push."""
    if reader is not None:
        return PushJudge(git_dir, policy, registry, reader).judge(updates)
    with ObjectReader(git_dir) as own:
        return PushJudge(git_dir, policy, registry, own).judge(updates)


# --- the hooks -------------------------------------------------------------------------


def _record(git_dir: Path, name: str, n: int = 1) -> None:
    """Count an event (events.record is best effort and never raises for its database)."""
    from memgit.state import events

    events.record(git_dir, name, n)


def run_pre_receive(git_dir: Path, stdin: bytes, *, policy_file: str | None = None
                    ) -> tuple[int, list[str]]:
    """Decide a push: (exit status, lines to print). Never raises."""
    TIMING.mark("start")
    reader = ObjectReader(git_dir)
    try:
        updates = parse_updates(stdin)
        check_quarantine(updates)
        lookup = start_policy_lookup(git_dir, policy_file)
        if not all(u.is_delete for u in updates):
            reader.start()  # git starts while the policy is read
        policy, registry = load_policy_and_registry(git_dir, policy_file, lookup)
        TIMING.mark("policy")
        verdict = judge_push(git_dir, updates, policy, registry, reader)
        reader.close()
        lines = report(verdict, policy)
        TIMING.mark("report")
    except MemgitError as err:
        reader.close()
        server = err if isinstance(err, ServerSideError) else ServerSideError(err.message,
                                                                              err.hint)
        _record_quietly(git_dir, "push_refused")
        return 1, server_error_lines(server)
    except Exception as exc:  # a crash must refuse, never accept
        reader.close()
        _record_quietly(git_dir, "push_refused")
        return 1, server_error_lines(ServerSideError(
            f"the hook failed: {type(exc).__name__}: {exc}",
            "see the server's memgit version; run the push again after a fix"))
    # the counters are written once git has the answer when a warm judge's child judges
    if not verdict.accepted:
        after_answer(lambda: _record(git_dir, "push_refused"))
        TIMING.mark("events")
        return 1, lines + TIMING.line()
    if any(f.violation.code in NEAR_LIMIT_CODES for f in verdict.warnings):
        after_answer(lambda: _record(git_dir, "near_limit"))
    TIMING.mark("events")
    return 0, lines + TIMING.line()


def _record_quietly(git_dir: Path, name: str) -> None:
    try:
        _record(git_dir, name)
    except Exception as exc:  # the refusal stands whatever the counter does
        print(f"memgit: warning: could not count event {name}: {exc}", file=sys.stderr)
