"""The history rewriter: delete entries forever from every commit of a drive (docs/purge.md).

``plan_purge`` computes in memory every object that changes and writes nothing, so a dry
run, an unknown id or a refusal leaves the repository untouched. ``apply_purge`` writes
them as one pack, moves all refs in one compare-and-swap transaction, records the
registry, expires reflogs, prunes, and verifies that every object left is accounted for
and clean. Unchanged trees and blobs keep their ids.
"""

from __future__ import annotations

import gc
import re
import threading
import time
from collections.abc import Generator, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from memgit.errors import ConflictError, RepoError, UsageError
from memgit.format import entries as fmt
from memgit.git.pack_process import PackProcess
from memgit.git.plumbing import object_count, refs_snapshot
from memgit.git.raw import (
    TREE_MODES,
    ObjectReader,
    TreeCache,
    TreeEntry,
    is_regular,
    is_tree,
    join_object,
    object_key,
    split_object,
    swap_tree_ids,
    topo_commit_contents,
    tree_entries,
)
from memgit.git.repository import (
    Drive,
    head_branch,
    require_drive,
)
from memgit.git.rewrite import (
    drop_transient_heads,
    expire_reflogs_and_prune,
    remove_pack,
    repository_oddities,
    update_refs_atomically,
    write_pack,
)
from memgit.git.worktree import move_checkout, worktree_changes
from memgit.policy import registry_refs
from memgit.policy.registry import (
    LEASE_CONFIG,
    PURGE_LOCK_FILE,
    REGISTRY_FILE,
    PurgeRegistry,
    RegistryKey,
    hold_lock,
    lease_seconds,
    purge_digest,
    refuse_live_lock,
    registry_key,
    registry_lines,
)
from memgit.policy.settings import Policy, drive_policy, today_in
from memgit.purge import resume
from memgit.purge.plan import Change, PurgePlan, PurgeResult
from memgit.purge.text import (
    Checker,
    Progress,
    Removed,
    check_ids,
    key_words,
    longest_first,
    no_progress,
    quote,
    remove_entry_lines,
    scrub_message,
    scrub_registered,
    strip_tag_signature,
    verify_purged,
)
from memgit.state import events

_DETERMINISTIC_RE = re.compile(r"entry-[0-9a-f]{16}\Z")
_BULLET_BYTES_RE = re.compile(rb"[ \t]*[-*][ \t]+\S")
_SIGNATURE_HEADERS = (b"gpgsig ", b"gpgsig-sha256 ", b"mergetag ")
_SIGNATURE_RE = re.compile(rb"\n(?:gpgsig |gpgsig-sha256 |mergetag )")  # one of them, a line


class _Scan:
    """One read of the history: commits, distinct trees, distinct blobs.

    Object ids are kept as raw 20-byte strings inside (hex only at the edges):
    a tree entry's id is then a slice of the tree, with no conversion.
    """

    def __init__(self, drive: Drive, ids: list[str], progress: Progress) -> None:
        self.drive = drive
        self.git_dir = drive.git_dir
        self.ids = frozenset(ids)
        self.progress = progress
        self.reader = ObjectReader(self.git_dir)
        self.trees = TreeCache(self.reader)
        self.needles: list[str] = list(ids)
        # deterministic ids are found by parsing id-less bullets until each is seen once
        self.unresolved = {i for i in ids if _DETERMINISTIC_RE.match(i)}
        self.seen_lines: set[bytes] = set()
        self.commit_raw: dict[str, bytes] = {}  # hex id -> raw commit
        self.blob_order: list[bytes] = []
        self.scanned: list[str] = []  # hex ids of every blob read, in reading order
        self.head_holders: list[str] = []  # kept blobs holding the head of a purged text
        self.heads_learned_at = 0  # blobs read before this position missed some head
        self.blob_new: dict[bytes, bytes] = {}  # old blob id -> new content (changed only)
        self.blob_removed: dict[bytes, list[Removed]] = {}
        self.tree_map: dict[bytes, bytes] = {}
        self.blob_map: dict[bytes, bytes] = {}  # old blob id -> new (hashed once, not per tree)
        self.tree_changes: dict[bytes, list[tuple[str, bytes]]] = {}  # (path, old blob)
        self.new_objects: dict[bytes, tuple[str, bytes]] = {}
        self.bases: dict[bytes, bytes] = {}  # new object -> the earlier version at its path
        self.last_at: dict[bytes, bytes] = {}  # path -> newest object written there
        self.refs: list[tuple[str, str, str]] = []  # (name, hex id, type)
        self.commits: list[tuple[str, list[str]]] = []  # parents before children
        self.tags: dict[str, tuple[list[bytes], bytes, str, str]] = {}  # headers, msg, target
        self.pack: PackProcess | None = None  # receives each new object as it is made

    # reading ----------------------------------------------------------------------

    def read_chunks(self, oids: list[str], phase: str
                    ) -> Generator[tuple[str, bytes], None, None]:
        """(hex id, content) of each object, in order, with progress every 2,000."""
        total = len(oids)
        done = 0
        for oid, (_kind, data) in zip(oids, self.reader.stream(oids), strict=False):
            yield oid, data
            done += 1
            if done % 2000 == 0:
                self.progress(phase, done, total)
        self.progress(phase, total, total)

    def read_trees(self, roots: list[bytes]) -> None:
        """Read every tree reachable from ``roots`` (one per commit, oldest first), level
        by level; list the blobs in the order of the first commit that holds them."""
        first: dict[bytes, int] = {}  # tree or blob -> index of the first commit with it
        for number, root in enumerate(roots):
            first.setdefault(root, number)

        def visit(oid: bytes, entries: list[TreeEntry]) -> None:
            when = first[oid]
            for mode, _name, child in entries:  # most were seen in an earlier commit
                if first.get(child, when + 1) > when and \
                        (mode in TREE_MODES or mode[:3] == b"100"):  # is_tree, is_regular
                    first[child] = when  # not a symlink or a submodule: no lines to purge

        self.trees.prefetch(roots, visit=visit, streamed=True,
                            progress=lambda done, total: self.progress("reading trees", done,
                                                                       total))
        blobs = [oid for oid in first if oid not in self.trees.raw]
        blobs.sort(key=first.__getitem__)  # stable: ties keep their discovery order
        self.blob_order = blobs

    def scan_blobs(self, first: list[bytes]) -> None:
        """Read every distinct blob once; keep the new content of those that change.

        It also notes what the verification needs: which kept blobs hold the head
        (first 16 bytes) of a purged text, and how far the scan had read when it
        learned the last new head (blobs before it were not searched for it).
        """
        order = [b.hex() for b in dict.fromkeys(first + self.blob_order)]
        self.scanned = order
        needles = [n.encode("utf-8", "surrogateescape") for n in self.needles]
        heads: list[bytes] = []
        for position, (hex_id, data) in enumerate(self.read_chunks(order, "reading files")):
            if self.unresolved:
                # parse id-less bullets until every requested deterministic id was seen
                self._discover(data)
                needles = [n.encode("utf-8", "surrogateescape") for n in self.needles]
            for needle in needles:
                if needle in data:
                    for removed in self._consider(hex_id, data):
                        head = removed.text.encode("utf-8", "surrogateescape")[:16]
                        if head not in heads:
                            heads.append(head)
                            self.heads_learned_at = position
                    break
            for head in heads:  # a changed blob's new content is checked from memory
                if head in data and bytes.fromhex(hex_id) not in self.blob_new:
                    self.head_holders.append(hex_id)
                    break

    def _consider(self, hex_id: str, data: bytes) -> list[Removed]:
        changed = remove_entry_lines(data, self.ids, self.needles)
        if changed is None:
            return []
        oid = bytes.fromhex(hex_id)
        self.blob_new[oid], self.blob_removed[oid] = changed
        return changed[1]

    def _discover(self, data: bytes) -> None:
        """Find the text of requested deterministic ids among this blob's new lines."""
        lines = set(data.split(b"\n")) - self.seen_lines
        self.seen_lines |= lines
        for raw in lines:
            if not _BULLET_BYTES_RE.match(raw):
                continue
            content = raw.decode("utf-8", "surrogateescape")
            entry = fmt.parse_entry(content[:-1] if content.endswith("\r") else content)
            if entry is not None and entry.id in self.unresolved:
                self.unresolved.discard(entry.id)
                self.needles.append(entry.text)

    # rewriting ----------------------------------------------------------------------

    def add(self, kind: str, raw: bytes, path: bytes | None = None) -> bytes:
        """Store a new object; with ``path``, remember it as the delta base for the
        next version written at that path (the pack stores that one as a delta)."""
        oid = object_key(kind, raw)
        if oid not in self.new_objects:
            self.new_objects[oid] = (kind, raw)
            base = self.last_at.get(path) if path is not None else None
            if base is not None:
                self.bases[oid] = base
            if self.pack is not None:  # in the order of plan.objects, as write_pack
                self.pack.add(kind, oid, raw, base)
        if path is not None:
            self.last_at[path] = oid
        return oid

    def map_tree(self, oid: bytes, path: bytes = b"") -> bytes:
        """The id of ``oid`` after the purge (itself when nothing under it changes)."""
        done = self.tree_map.get(oid)
        if done is not None:
            return done
        tree_map, blob_new = self.tree_map, self.blob_new
        entries = self.trees.entries(oid)
        swaps: list[tuple[int, bytes]] = []  # (entry index, new id)
        changes: list[tuple[str, bytes]] = []
        for i, (mode, name, child) in enumerate(entries):
            if mode in TREE_MODES:
                if tree_map.get(child) == child:
                    continue  # a subtree already known to stay as it is
                new = self.map_tree(child, path + name + b"/")
                if new == child:
                    continue
                prefix = name.decode("utf-8", "surrogateescape") + "/"
                changes += [(prefix + p, b) for p, b in self.tree_changes[child]]
            elif child in blob_new and mode[:3] == b"100":  # a regular file (is_regular)
                new = self.blob_map.get(child) or self.add("blob", blob_new[child], path + name)
                self.blob_map[child] = self.last_at[path + name] = new  # as add() does
                changes.append((name.decode("utf-8", "surrogateescape"), child))
            else:
                continue  # an unchanged file (or a symlink, or a submodule)
            swaps.append((i, new))
        if not swaps:
            tree_map[oid] = oid
            return oid
        result = self.add("tree", swap_tree_ids(self.trees.raw[oid], entries, swaps), path)
        tree_map[oid] = result
        self.tree_changes[oid] = changes
        return result

    def files(self, tree: bytes, *, rewritten: bool, prefix: str = "") -> list[tuple[str, bytes]]:
        """(path, blob id) of the regular files of a tree, before or after the rewrite."""
        new = self.new_objects.get(tree) if rewritten else None
        entries = tree_entries(new[1]) if new is not None else self.trees.entries(tree)
        out: list[tuple[str, bytes]] = []
        for mode, name_bytes, child in entries:
            name = name_bytes.decode("utf-8", "surrogateescape")
            if is_tree(mode):
                out.extend(self.files(child, rewritten=rewritten, prefix=prefix + name + "/"))
            elif is_regular(mode):
                out.append((prefix + name, child))
        return out


@contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cycle collector paused: a purge makes some 10^5 objects (ids, raw
    objects, tuples) that all live until it ends and form no cycles, and each time the
    allocations crossed the collector's threshold it walked them all again (250 runs,
    0.04-0.05 CPU s of a 10,000-commit purge)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            # the objects made meanwhile go straight to the oldest generation (freeze,
            # then unfreeze, which puts them there): enabled again, the collector's
            # next young collection walked them all (some 10^5, 15-20 ms), and the
            # oldest is only collected once enough objects were promoted into it
            gc.freeze()
            gc.unfreeze()
            gc.enable()


def _policy(drive: Drive) -> Policy:
    return drive_policy(drive)


def _drive_branch(drive: Drive) -> str:
    branch_ref = _policy(drive).branch_ref
    require_drive(drive, branch_ref)
    return branch_ref


def plan_purge(drive: Drive, ids: Iterable[str], *, progress: Progress = no_progress,
               missing_ok: bool = False, pack_ahead: bool = False) -> PurgePlan:
    """Read the history and compute the rewrite; nothing is written. ``missing_ok``: ids
    in no commit are left out of the plan instead of refused (a parent's registry).
    ``pack_ahead``: build the pack of the new objects in a helper process while they are
    made (git.pack_process), for an :func:`apply_purge` to follow; it writes nothing
    until then."""
    wanted = check_ids(ids, _policy(drive))
    branch_ref = _drive_branch(drive)
    oddities = repository_oddities(drive.git_dir)
    if oddities:
        raise RepoError(f"cannot purge {drive.root}: {'; '.join(oddities)}",
                        "purge a plain full repository (the server's bare drive), with no "
                        "operation in progress; see docs/purge.md")
    refuse_live_lock(drive.git_dir, _lease(drive))
    plan = PurgePlan(wanted, str(drive.git_dir), branch_ref)
    clock = time.perf_counter()
    scan = _Scan(drive, wanted, progress)
    scan.pack = PackProcess() if pack_ahead else None  # it starts while history is read
    try:
        with gc_paused():
            _read_history(scan, plan)
            plan.phases["read"] = time.perf_counter() - clock
            clock = time.perf_counter()
            _check_found(scan, plan, drive, missing_ok)
            _rewrite(scan, plan, progress)
            _check_head_duplicates(scan, plan)
            plan.phases["rewrite"] = time.perf_counter() - clock
            plan.pack_job, scan.pack = scan.pack, None
    finally:
        scan.reader.close()
        if scan.pack is not None:  # the plan failed or was refused
            scan.pack.abort()
    if drive.workdir is not None and plan.checkout_trees is not None:
        dirty = worktree_changes(drive, plan.checkout_paths, untracked=False)
        if dirty:
            raise UsageError(f"uncommitted changes in files the purge rewrites: "
                             f"{quote(', '.join(dirty[:5]), _policy(drive))}",
                             "commit or stash them (git stash), then run memgit purge again")
    return plan


def _read_history(scan: _Scan, plan: PurgePlan) -> None:
    refs = refs_snapshot(scan.git_dir)
    commit_tips: list[str] = []
    tree_tips: list[bytes] = []
    blob_tips: list[bytes] = []
    pending = [(oid, kind) for _name, oid, kind in refs]
    while pending:
        oid, kind = pending.pop()
        if kind == "commit":
            commit_tips.append(oid)
        elif kind == "tree":
            tree_tips.append(bytes.fromhex(oid))
        elif kind == "blob":
            blob_tips.append(bytes.fromhex(oid))
        elif kind == "tag" and oid not in scan.tags:
            got = scan.reader.read(oid)
            if got is None:
                raise RepoError(f"tag object {oid} is missing", "run git fsck")
            headers, message = split_object(got[1])
            target = next(h[7:].decode() for h in headers if h.startswith(b"object "))
            target_kind = next(h[5:].decode() for h in headers if h.startswith(b"type "))
            scan.tags[oid] = (headers, message, target, target_kind)
            pending.append((target, target_kind))
    scan.refs = refs
    roots: list[bytes] = []
    commits = scan.commits
    # listed and read in one stream (rev-list into cat-file): the count is known at the end
    tips = list(dict.fromkeys(commit_tips))
    for oid, parents, raw in topo_commit_contents(scan.git_dir, tips):
        commits.append((oid, parents))
        scan.commit_raw[oid] = raw
        roots.append(bytes.fromhex(raw[5:45].decode()))  # a commit starts "tree <id>\n"
        if len(commits) % 2000 == 0:
            scan.progress("reading commits", len(commits), 0)
    scan.progress("reading commits", len(commits), len(commits))
    plan.commits_total = len(commits)
    plan.all_commits = [c for c, _p in commits]
    scan.read_trees(roots + tree_tips)
    first: list[bytes] = []
    branch_tip = next((o for n, o, _k in refs if n == plan.branch_ref), "")
    if scan.unresolved and branch_tip in scan.commit_raw:
        # id-less entries are usually still in the drive: read its current files first,
        # so their text is known before the rest of history is searched
        head_tree = bytes.fromhex(scan.commit_raw[branch_tip][5:45].decode())
        first = [b for _p, b in scan.files(head_tree, rewritten=False)]
    scan.scan_blobs(first + blob_tips)


def _check_found(scan: _Scan, plan: PurgePlan, drive: Drive, missing_ok: bool) -> None:
    found: set[str] = set()
    for removed in scan.blob_removed.values():
        found.update(r.entry_id for r in removed)
    missing = [i for i in plan.ids if i not in found]
    if not missing or missing_ok:
        plan.ids = [i for i in plan.ids if i in found]
        scan.needles = [n for n in scan.needles if n not in missing]
        return
    registry = PurgeRegistry.load(drive.git_dir)
    already = [i for i in missing if i in registry.ids]
    unknown = [i for i in missing if i not in registry.ids]
    parts = []
    if unknown:
        parts.append(f"no entry has the id {', '.join(unknown)} in any commit")
    if already:
        parts.append(f"{', '.join(already)} {'was' if len(already) == 1 else 'were'} "
                     "already purged")
    raise UsageError("; ".join(parts) + ": nothing was rewritten",
                     "check the ids (memgit recall, or git log -S ID --all); an id named "
                     "only inside a code block or as parent/supersedes is not an entry")


def _rewrite(scan: _Scan, plan: PurgePlan, progress: Progress) -> None:
    keys: dict[str, dict[RegistryKey, None]] = {i: {} for i in plan.ids}
    texts: dict[str, None] = {}
    for removed in scan.blob_removed.values():
        plan.lines_removed += len(removed)
        for r in removed:
            keys[r.entry_id].setdefault(registry_key(r.text))
            texts.setdefault(r.text)
    plan.keys = {i: list(k) for i, k in keys.items()}
    plan.digests = {i: [k.digest for k in ks] for i, ks in plan.keys.items()}
    # every text purged so far, this purge's too: messages quoting one are scrubbed
    registered = PurgeRegistry.load(scan.git_dir)
    for entry_id, entry_keys in plan.keys.items():
        for key in entry_keys:
            registered.add(entry_id, key)
    plan.texts = list(texts)
    plan.needles = list(scan.needles)
    plan.blobs_rewritten = len(scan.blob_new)
    sorted_texts = longest_first(plan.texts)
    # Which messages quote a purged text: one search per text over all messages.
    # (a message is what follows the first blank line, as split_object has it)
    joined = b"\x00".join(raw.partition(b"\n\n")[2] for raw in scan.commit_raw.values())
    quoting = [t for t in sorted_texts if t in joined]
    commit_map = plan.commit_map
    scrubbed: set[str] = set()  # commits and tags whose message changed
    # many commits share a message ("Update memory"): each distinct one is scrubbed once
    scrubbed_as: dict[bytes, bytes] = {}
    changed_by: dict[str, set[tuple[str, bytes]]] = {}
    total = len(scan.commits)
    for number, (oid, _parents) in enumerate(scan.commits, start=1):
        raw = scan.commit_raw[oid]
        # A commit is "tree <id>\n", "parent <id>\n" lines, the other headers, a
        # blank line and the message: tree and parents are sliced, the rest kept.
        old_tree = bytes.fromhex(raw[5:45].decode())
        new_tree = scan.map_tree(old_tree)
        parents: list[str] = []
        pos = 46
        while raw.startswith(b"parent ", pos):
            parents.append(raw[pos + 7:pos + 47].decode())
            pos += 48
        new_parents = [commit_map.get(p, p) for p in parents]
        message = raw.partition(b"\n\n")[2]
        new_message = scrubbed_as.get(message)
        if new_message is None:
            new_message = scrub_registered(scrub_message(message, quoting), registered)
            scrubbed_as[message] = new_message
        if new_message != message:
            scrubbed.add(oid)
        if new_tree != old_tree:
            # the dry-run listing: (path, version) pairs no parent had already
            paths = set(scan.tree_changes[old_tree])
            changed_by[oid] = paths
            inherited: set[tuple[str, bytes]] = set()
            for p in parents:
                inherited |= changed_by.get(p, set())
            for path, blob in sorted(paths - inherited):
                for entry_id in dict.fromkeys(r.entry_id for r in scan.blob_removed[blob]):
                    plan.changes.append(Change(entry_id, oid, path))
        elif new_parents == parents and new_message == message:
            continue
        new_head = b"tree " + new_tree.hex().encode() + b"\n" + \
            b"".join(b"parent " + p.encode() + b"\n" for p in new_parents)
        header_end = raw.find(b"\n\n", pos - 1)
        headers = raw[pos - 1:header_end if header_end >= 0 else len(raw)]
        if new_message == message and not _SIGNATURE_RE.search(headers):
            new_raw = new_head + raw[pos:]
        else:
            all_headers, own_message = split_object(raw)
            kept = all_headers[1 + len(parents):]
            if any(h.startswith(_SIGNATURE_HEADERS) for h in kept):
                plan.signatures_dropped += 1
                kept = [h for h in kept if not h.startswith(_SIGNATURE_HEADERS)]
            if new_message != message:
                plan.messages_scrubbed += 1
            new_raw = new_head + join_object(kept, new_message)
        commit_map[oid] = scan.add("commit", new_raw).hex()
        plan.commits_rewritten += 1
        if number % 2000 == 0:
            progress("rewriting commits", number, total)
    progress("rewriting commits", total, total)
    tag_map: dict[str, str] = {}

    def map_any(oid: str, kind: str) -> str:
        if kind == "commit":
            return commit_map.get(oid, oid)
        if kind == "tree":
            return scan.map_tree(bytes.fromhex(oid)).hex()
        if kind == "blob":
            new = scan.blob_new.get(bytes.fromhex(oid))
            return oid if new is None else scan.add("blob", new).hex()
        if kind == "tag":
            return map_tag(oid)
        return oid

    def map_tag(oid: str) -> str:
        if oid in tag_map:
            return tag_map[oid]
        headers, message, target, target_kind = scan.tags[oid]
        new_target = map_any(target, target_kind)
        new_message = scrub_registered(scrub_message(message, sorted_texts), registered)
        if new_target == target and new_message == message:
            tag_map[oid] = oid
            return oid
        if new_message != message:
            plan.messages_scrubbed += 1
            scrubbed.add(oid)
        kept = [h for h in headers if not h.startswith((b"object ", b"gpgsig"))]
        stripped = strip_tag_signature(new_message)
        if stripped != new_message or len(kept) + 1 != len(headers):
            plan.signatures_dropped += 1
        new = scan.add("tag", join_object([b"object " + new_target.encode()] + kept,
                                                  stripped)).hex()
        tag_map[oid] = new
        return new

    for name, oid, kind in scan.refs:
        new_id = map_any(oid, kind)
        if new_id != oid:
            plan.ref_updates.append((name, new_id, oid))
        if name == plan.branch_ref:
            plan.old_head, plan.new_head = oid, new_id
    if scan.pack is not None:
        scan.pack.seal()  # every new object was made: the helper makes the index meanwhile
    plan.objects = [(kind, oid.hex(), raw) for oid, (kind, raw) in scan.new_objects.items()]
    plan.bases = {k.hex(): v.hex() for k, v in scan.bases.items()}
    checked = plan.checked
    for commit in scan.commit_raw:
        checked[commit] = True  # its message was searched for every purged text above
    for commit in commit_map:
        if commit in scrubbed:
            checked[commit] = False  # its message quoted a purged text
    for tag in tag_map:
        checked[tag] = tag not in scrubbed
    for tree in scan.trees.raw:
        checked[tree.hex()] = True  # names and ids only
    for scanned in scan.scanned:
        checked[scanned] = bytes.fromhex(scanned) not in scan.blob_new
    # kept blobs still to search for purged texts: those read before the scan knew
    # every text's head, and those that hold a head
    recheck = [k for k in scan.scanned[:scan.heads_learned_at] if checked[k]]
    plan.kept_blobs = list(dict.fromkeys(recheck + scan.head_holders))
    _checkout_move(scan, plan)


def _commit_tree(scan: _Scan, commit: str) -> bytes:
    new = scan.new_objects.get(bytes.fromhex(commit))
    raw = new[1] if new is not None else scan.commit_raw[commit]
    return bytes.fromhex(raw[5:45].decode())


def _checkout_move(scan: _Scan, plan: PurgePlan) -> None:
    """The (old, new) tree of the checked-out branch, when a checkout's HEAD moves."""
    if scan.drive.workdir is None:
        return
    head = head_branch(scan.drive) or "HEAD"
    for name, new, old in plan.ref_updates:
        if name == head and old in scan.commit_raw:
            old_tree, new_tree = _commit_tree(scan, old), _commit_tree(scan, new)
            plan.checkout_trees = (old_tree.hex(), new_tree.hex())
            plan.checkout_paths = [p for p, _b in scan.tree_changes.get(old_tree, [])]


def _check_head_duplicates(scan: _Scan, plan: PurgePlan) -> None:
    """Refuse when an entry kept at the branch head holds a purged text.

    The registry refuses purged texts from then on, so such an entry would make
    every later push touching its file fail; the admin must purge it too.
    """
    if not plan.new_head or plan.new_head not in scan.commit_raw and \
            bytes.fromhex(plan.new_head) not in scan.new_objects:
        return
    wanted = {d for ds in plan.digests.values() for d in ds}
    files = [(p, b) for p, b in scan.files(_commit_tree(scan, plan.new_head), rewritten=True)
             if p.endswith(".md")]
    missing = [b.hex() for _p, b in files if b not in scan.new_objects]
    contents = dict(scan.read_chunks(missing, "checking the head")) if missing else {}
    words = key_words(plan.texts)
    clashes: list[str] = []
    for path, oid in files:
        data = scan.new_objects[oid][1] if oid in scan.new_objects else contents[oid.hex()]
        if words is not None and data.isascii():
            lowered = data.lower()
            if not any(w in lowered for w in words):
                continue
        text = data.decode("utf-8", "surrogateescape")
        for _line, entry in fmt.parse_document(path, text).entries():
            if entry.id not in scan.ids and purge_digest(entry.text) in wanted:
                clashes.append(f"{entry.id} in {path}")
    if clashes:
        raise UsageError("entries kept at the head hold the same text as a purged entry: "
                         + quote(", ".join(clashes[:10]), _policy(scan.drive))
                         + "; nothing was rewritten",
                         "purge those ids too (or edit their text first): the registry "
                         "refuses purged texts, so they could never be pushed again")


# --- applying ------------------------------------------------------------------------


def apply_purge(drive: Drive, plan: PurgePlan, *, progress: Progress = no_progress,
                today: str | None = None) -> PurgeResult:
    """Write the plan's objects, move the refs (compare-and-swap), record, prune, verify."""
    started = time.perf_counter()
    resumed = resume.resume(drive)  # a purge a kill interrupted
    lock, note = hold_lock(drive.git_dir, _lease(drive))  # registry.hold_lock: MG610 for pushes
    try:
        with gc_paused():
            result = _apply_locked(drive, plan, progress, today, started)
    finally:
        lock.unlink(missing_ok=True)
    if note:
        result.notes.insert(0, note)
    result.notes[:0] = resumed
    return result


LOCK_FILE = PURGE_LOCK_FILE  # pre-receive refuses pushes while it holds (MG610)


def _lease(drive: Drive) -> float:
    return lease_seconds(drive.config_value(LEASE_CONFIG))


def _apply_locked(drive: Drive, plan: PurgePlan, progress: Progress,
                  today: str | None, started: float) -> PurgeResult:
    result = PurgeResult(plan)
    git_dir = drive.git_dir
    before = object_count(git_dir)
    clock = time.perf_counter()
    progress("writing objects", 0, len(plan.objects))
    pack = _write_objects(git_dir, plan)
    result.objects_written = len(plan.objects)
    progress("writing objects", len(plan.objects), len(plan.objects))
    plan.phases["write"] = time.perf_counter() - clock
    clock = time.perf_counter()
    policy = _policy(drive)
    date = today or today_in(policy)
    rows = [(i, k) for i in plan.ids for k in plan.keys.get(i, [])]
    # a kill from here until the registry holds the ids is finished by purge.resume
    resume.begin(git_dir, list(plan.ids), registry_lines(rows, date), plan.ref_updates)
    failed = update_refs_atomically(git_dir, plan.ref_updates,
                                            f"memgit purge {' '.join(plan.ids)}")
    if failed is not None:
        resume.end(git_dir)
        if pack is not None:
            remove_pack(pack)
        raise ConflictError(f"a ref moved while the purge ran (a push landed?): {failed}; "
                            "nothing was changed", "run memgit purge again")
    drop_transient_heads(git_dir)
    if drive.workdir is not None and plan.checkout_trees is not None:
        move_checkout(drive, *plan.checkout_trees)
    PurgeRegistry.append(git_dir, rows, date)
    _publish_records(drive)
    resume.end(git_dir)
    plan.phases["refs"] = time.perf_counter() - clock
    clock = time.perf_counter()
    checker = Checker(plan.ids, plan.needles, plan.texts, PurgeRegistry.load(git_dir))
    # Pruning is git's work (a repack); meanwhile the blobs kept from the old history
    # are searched for entries holding a purged text under another id (the scan learned
    # the texts only at its end), and the new objects are checked from memory. git
    # readers and repack run side by side safely: a reader whose pack vanished re-reads
    # the pack directory and finds the object in the new pack.
    pruned: list[BaseException] = []

    def prune() -> None:
        try:
            expire_reflogs_and_prune(git_dir)
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            pruned.append(exc)

    progress("pruning", 0, 1)
    worker = threading.Thread(target=prune, name="memgit-prune")
    worker.start()
    known = dict(plan.checked)
    indexed: list[Exception] = []
    index_seconds = 0.0
    try:
        problems = checker.kept_blobs(git_dir, plan.kept_blobs, progress)
        for kind, oid, raw in plan.objects:  # the new objects, from the bytes written
            if kind == "tree":  # names and ids only (Checker.problems finds nothing)
                known[oid] = True
                continue
            found = checker.problems(oid, kind, raw)
            problems += found
            known[oid] = not found
        # The recall index is memgit's own (SQLite), which git's prune does not touch:
        # it is brought to the new history meanwhile too (the refs have moved); an
        # error there is raised once the verification has run.
        index_clock = time.perf_counter()
        try:
            _update_index(drive, plan)
        except Exception as exc:  # noqa: BLE001 - raised after the verification
            indexed.append(exc)
        index_seconds = time.perf_counter() - index_clock
    finally:
        worker.join()
    if pruned:
        raise pruned[0]
    progress("pruning", 1, 1)
    result.objects_pruned = max(0, before + len(plan.objects) - object_count(git_dir))
    plan.phases["prune"] = time.perf_counter() - clock - index_seconds
    clock = time.perf_counter()
    result.verified_objects = verify_purged(git_dir, checker, known, problems,
                                            progress=progress)
    plan.phases["verify"] = time.perf_counter() - clock
    if indexed:
        raise indexed[0]
    events.record(git_dir, "purge")
    plan.phases["index"] = index_seconds  # (during the prune, see above)
    result.seconds = time.perf_counter() - started
    return result


def _publish_records(drive: Drive) -> None:
    """``refs/memgit/purged`` (the ids, for sync clients) and the registry refs (the
    digests, replicated with refs: docs/forges.md), from the registry file, side by
    side: each is a few git processes (hash-object, mktree, commit-tree, update-ref)
    writing objects and a ref of its own, and git writes objects and locks each ref
    on its own, so neither waits for the other. An error of either is raised once
    both are done."""
    failed: list[BaseException] = []

    def publish_ids() -> None:
        try:
            resume.publish_ids(drive)
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            failed.append(exc)

    worker = threading.Thread(target=publish_ids, name="memgit-publish-ids")
    worker.start()
    try:
        registry_refs.publish(drive.git_dir, drive.git_dir / REGISTRY_FILE)
    finally:
        worker.join()
    if failed:
        raise failed[0]


def _write_objects(git_dir: Path, plan: PurgePlan) -> Path | None:
    """The pack of the plan's new objects: the helper's, built while they were made,
    or (no helper, or it failed) written now."""
    job, plan.pack_job = plan.pack_job, None
    if not plan.objects:
        if job is not None:
            job.abort()
        return None
    pack = job.install(git_dir, len(plan.objects)) if job is not None else None
    return pack or write_pack(git_dir, plan.objects, plan.bases)


def _update_index(drive: Drive, plan: PurgePlan) -> None:
    """Delete the purged entries' index rows, remap stored revisions."""
    from memgit.index import reindex as recall_index  # at the end: nothing before needs it

    recall_index.forget_entries(drive, list(plan.ids))
    # commits before the first purged line keep their ids: map them to themselves
    recall_index.remap_revisions(drive, {c: plan.commit_map.get(c, c) for c in plan.all_commits})


def purge(drive: Drive, ids: Iterable[str], *, dry_run: bool = False,
          progress: Progress = no_progress, today: str | None = None) -> PurgeResult:
    """Plan and (unless ``dry_run``) apply a purge of ``ids``."""
    started = time.perf_counter()
    plan = plan_purge(drive, ids, progress=progress, pack_ahead=not dry_run)
    if dry_run:
        return PurgeResult(plan, seconds=time.perf_counter() - started)
    result = apply_purge(drive, plan, progress=progress, today=today)
    result.seconds = time.perf_counter() - started
    return result
