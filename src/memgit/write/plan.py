"""Planning a write: the new file texts from the operations, judged by the policy.

:func:`plan_and_judge` runs under the write lock: an error on a line an operation wrote
skips that operation, any other new error refuses the write, and file operations apply
all together or not at all. Blobs and verdicts are remembered by object id, since the
tree a write makes is the base of the next. :func:`preview_write_ops` plans and judges
the same way without the lock and commits nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from memgit import state
from memgit.errors import RefusedError, UsageError
from memgit.format import entries as fmt
from memgit.git.modes import MODE_EXEC, MODE_FILE
from memgit.git.repository import (
    Drive,
    build_tree,
    commit_tree_id,
    file_at,
    missing_branch,
    path_blocked,
    read_blob,
    ref_target,
    tree_files,
)
from memgit.policy.judge import (
    ERROR,
    NEAR_LIMIT_CODES,
    BlobFacts,
    TreeItem,
    Violation,
    check_blob,
    judge,
    quote,
    text_digest,
)
from memgit.policy.registry import PurgeRegistry
from memgit.policy.settings import Policy
from memgit.state import facts
from memgit.write.ops import Added, Skipped, WriteOp, WriteResult


class _L:
    """A mutable line of a file being edited."""

    __slots__ = ("content", "eol", "entry", "op")

    def __init__(self, content: str, eol: str, entry: fmt.Entry | None,
                 op: int | None = None) -> None:
        self.content = content
        self.eol = eol
        self.entry = entry
        self.op = op  # index of the operation that wrote this line


class PlannedFile:
    def __init__(self, path: str, text: str | None) -> None:
        self.path = path
        self.existed = text is not None
        self.removed = False  # a file operation removes it
        self.written = False  # a file operation gave it a whole text
        self.original = text if text is not None else _new_file_text(path)
        doc = fmt.parse_document(path, self.original)
        self.lines = [_L(ln.content, ln.eol, ln.entry) for ln in doc.lines]
        self.in_index_section = [ln.in_index_section for ln in doc.lines]
        first_eol = doc.lines[0].eol if doc.lines else "\n"
        self.eol = first_eol or "\n"

    def find(self, entry_id: str) -> int | None:
        for number, line in enumerate(self.lines):
            if line.entry is not None and line.entry.id == entry_id:
                return number
        return None

    def text(self) -> str:
        return "".join(line.content + line.eol for line in self.lines)

    def changed(self) -> bool:
        if self.removed:
            return self.existed
        return self.text() != self.original or (self.written and not self.existed)

    def set_text(self, text: str, op: int) -> None:
        """A file operation: every line is the operation's (the policy judges them all)."""
        doc = fmt.parse_document(self.path, text)
        self.lines = [_L(ln.content, ln.eol, ln.entry, op) for ln in doc.lines]
        self.written = True

    def _blank(self, number: int) -> bool:
        return not self.lines[number].content.strip()

    def insert(self, content: str, op: int, after: str = "",
               entry: fmt.Entry | None = None) -> None:
        entry = entry if entry is not None else fmt.parse_entry(content)
        if after:
            at = self.find(after)
            if at is not None:
                pos = at + 1
                while pos < len(self.lines) and self.lines[pos].entry is not None \
                        and self.lines[pos].entry.get("parent") == after:  # type: ignore[union-attr]
                    pos += 1
                self._ensure_eol(pos)
                self.lines.insert(pos, _L(content, self.eol, entry, op))
                return
        pos = len(self.lines)
        if self.path == fmt.MEMORY_FILE:
            for number, line in enumerate(self.lines):
                if line.content.rstrip() == fmt.INDEX_HEADING:
                    pos = number
                    break
        end = pos
        while pos > 0 and self._blank(pos - 1):
            pos -= 1
        self._ensure_eol(pos)
        new = [_L(content, self.eol, entry, op)]
        if pos > 0 and self.lines[pos - 1].entry is None:
            new.insert(0, _L("", self.eol, None))  # a blank line after a heading or prose
        if pos == end and end < len(self.lines):
            new.append(_L("", self.eol, None))  # keep a blank line before ## Index
        self.lines[pos:pos] = new

    def _ensure_eol(self, pos: int) -> None:
        if pos > 0 and not self.lines[pos - 1].eol:
            self.lines[pos - 1].eol = self.eol

    def op_lines(self) -> dict[int, int]:
        """line number -> operation index of the lines operations wrote."""
        return {n: line.op for n, line in enumerate(self.lines, start=1) if line.op is not None}


def _new_file_text(path: str) -> str:
    if path == fmt.MEMORY_FILE:
        return fmt.initial_memory()
    if path == fmt.QUESTIONS_FILE:
        return "# Questions\n"
    stem = path.rsplit("/", 1)[-1][:-3] if path.endswith(".md") else path.rsplit("/", 1)[-1]
    title = stem.replace("_", " ").replace("-", " ").strip() or "Notes"
    return f"# {title[:1].upper()}{title[1:]}\n"


@dataclass
class Plan:
    result: WriteResult
    changes: dict[str, str | None]  # path -> new text (None: removed)
    base_oids: dict[str, str | None]  # path -> blob id at the head
    files: dict[str, PlannedFile]  # every file loaded, changed or not
    tree: str = ""
    near_limit: bool = False


Finish = Callable[[WriteResult, Callable[[str], str]], list[WriteOp]]
"""Operations that depend on what a write really does (memgit import's receipt lists
the entries it created): called with the planned result of the other operations and a
lookup of a path's blob id at the head ("" when absent), each time the write is
planned (again after a policy skip, again on a new head), so what it returns always
matches the commit; its operations are planned and judged with the others."""


def plan_and_judge(drive: Drive, conn: state.Connection, head: str, ops: list[WriteOp],
                    policy: Policy, registry: PurgeRegistry,
                    finish: Finish | None = None) -> Plan:
    """Plan; judge; skip the operations whose own lines the policy refuses; repeat.

    Errors the head already has (a drive pushed past the rules by hand) are not
    the writer's: only errors the new tree adds count, compared per (rule, path).
    """
    base_tree = commit_tree_id(drive, head)
    blocked: dict[int, Violation] = {}

    def oid_at(path: str) -> str:
        found = file_at(drive, base_tree, path)
        return found.oid if found is not None else ""

    while True:
        plan = _plan(drive, conn, base_tree, ops, blocked, registry, policy)
        extra = finish(plan.result, oid_at) if finish is not None else []
        if extra:
            plan = _plan(drive, conn, base_tree, ops + extra, blocked, registry, policy)
        if not plan.changes:
            return plan
        files = plan.files
        plan.tree = build_tree(drive, base_tree, encoded(plan.changes))
        violations = _judge(drive, plan.tree, files, policy, registry)
        plan.near_limit = any(v.code in NEAR_LIMIT_CODES for v in violations)
        plan.result.warnings.extend(v.format(policy) for v in violations
                                    if v.severity != ERROR
                                    and (v.path in plan.changes or not v.path))
        errors = [v for v in violations if v.severity == ERROR]
        if not errors:
            return plan
        owned: dict[int, Violation] = {}
        rest: list[Violation] = []
        for v in errors:
            file = files.get(v.path)
            if file is not None and v.line == 0 and not file.existed and file.op_lines():
                # a path rule on a file this write creates: the adds into it own it
                for creator in file.op_lines().values():
                    owned.setdefault(creator, v)
                continue
            op = file.op_lines().get(v.line) if file is not None else None
            if op is None:
                rest.append(v)
            else:
                owned.setdefault(op, v)
        foreign = _new_errors(rest, _judge(drive, base_tree, {}, policy, registry))
        if foreign:
            raise RefusedError(f"the policy refuses this write: {foreign[0].format(policy)}",
                               foreign, foreign[0].hint)
        if not owned:
            return plan
        blocked.update(owned)


@dataclass
class Preview:
    """What writer.apply_write_ops would commit now: the result it would report and, per
    changed path, the text at the head and after (None: absent)."""

    result: WriteResult
    changes: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    tree: str = ""  # the tree the write would commit ("" when nothing changes)


def preview_write_ops(drive: Drive, ops: Sequence[WriteOp], *, policy: Policy,
                      finish: Finish | None = None) -> Preview:
    """Plan and judge ``ops`` against the branch head exactly as writer.apply_write_ops
    would, and commit nothing: no lock, no ref, no recall-index repair, no queue (the
    only trace is unreferenced blobs and trees that ``git gc`` removes). Raises
    RefusedError like apply_write_ops; ``result.status`` is "planned" or "unchanged"."""
    if not ops:
        return Preview(WriteResult("unchanged"))
    head = ref_target(drive, policy.branch_ref)
    if head is None:
        raise missing_branch(drive, policy.branch_ref)
    plan = plan_and_judge(drive, state.connection(drive.git_dir), head, list(ops), policy,
                          PurgeRegistry.load(drive.git_dir), finish)
    plan.result.status = "planned" if plan.changes else "unchanged"
    changes = {path: (plan.files[path].original if plan.files[path].existed else None, text)
               for path, text in plan.changes.items()}
    return Preview(plan.result, changes, plan.tree)


def _new_errors(errors: list[Violation], before: list[Violation]) -> list[Violation]:
    """The errors of ``errors`` beyond those the base tree had, per (rule, path):
    line numbers shift when lines are inserted, so they cannot identify an error."""
    budget = Counter((v.code, v.path) for v in before if v.severity == ERROR)
    out = []
    for v in errors:
        key = (v.code, v.path)
        if budget[key] > 0:
            budget[key] -= 1
        else:
            out.append(v)
    return out


def _plan(drive: Drive, conn: state.Connection, base_tree: str, ops: list[WriteOp],
          blocked: Mapping[int, Violation], registry: PurgeRegistry, policy: Policy) -> Plan:
    result = WriteResult("unchanged")
    files: dict[str, PlannedFile] = {}
    base_oids: dict[str, str | None] = {}

    def load(path: str) -> PlannedFile | None:
        if path not in files:
            entry = file_at(drive, base_tree, path)
            if entry is not None and entry.mode not in (MODE_FILE, MODE_EXEC):
                return None
            if entry is None and path_blocked(drive, base_tree, path):
                return None  # a folder there, or a parent folder that is a file
            base_oids[path] = entry.oid if entry is not None else None
            text = None
            if entry is not None:
                try:
                    text = read_blob(drive, entry.oid).decode("utf-8")
                except UnicodeDecodeError:
                    return None
            files[path] = PlannedFile(path, text)
        return files[path]

    wanted = [op.id for op in ops if op.kind not in ("add", "file")]
    located = facts.locate(conn, wanted)
    retiring = {op.id for op in ops if op.kind == "retire"}
    retiring_digests = set()
    for entry_id in retiring:
        found = _find(drive, base_tree, entry_id, located, load)
        if found is not None and found[0].lines[found[1]].entry is not None:
            retiring_digests.add(text_digest(found[0].lines[found[1]].entry.text))  # type: ignore[union-attr]
    # each add's line parsed and digested once (a plan is made again after a policy skip)
    parsed = {n: fmt.parse_entry(op.line) for n, op in enumerate(ops) if op.kind == "add"}
    digests = {n: text_digest(e.text) for n, e in parsed.items() if e is not None}
    present = facts.present_digests(conn, digests.values())
    batch: set[str] = set()
    skipped = result.skipped
    file_refusal = _file_refusal(ops, blocked, load, base_oids)
    for number, op in enumerate(ops):
        if op.kind == "file":
            _plan_file(op, number, file_refusal, load, result)
            continue
        if number in blocked:
            v = blocked[number]
            skipped.append(Skipped(op.ref, op.id, "policy",
                                   f"{v.code} {v.name}: {quote(v.message, policy)}"))
            continue
        if op.kind == "add":
            entry = parsed[number]
            assert entry is not None
            if op.id in located:
                # already in the drive: a retried write that had landed
                result.added.append(_added(op, entry))
                continue
            digest = digests[number]
            if op.id in registry.ids or registry.holds_text(entry.text):
                skipped.append(Skipped(op.ref, op.id, "purged", "this text was purged from the "
                                       "drive and may not return"))
                continue
            if op.dedupe and ((digest in present and digest not in retiring_digests)
                              or digest in batch):
                twin = present.get(digest, "")
                skipped.append(Skipped(op.ref, op.id, "duplicate",
                                       f"same text as {twin or 'another entry of this write'}"))
                continue
            batch.add(digest)
            file = load(op.path)
            if file is None:
                skipped.append(Skipped(op.ref, op.id, "topic-invalid",
                                       f"{quote(op.path, policy)} cannot be written as a "
                                       "text file"))
                continue
            if op.after and file.find(op.after) is None:
                skipped.append(Skipped(op.ref, op.id, "not-found",
                                       f"no entry {quote(op.after, policy)} in "
                                       f"{quote(op.path, policy)}"))
                continue
            file.insert(op.line, number, op.after, entry)
            result.added.append(_added(op, entry))
            continue
        found = _find(drive, base_tree, op.id, located, load)
        if found is None:
            skipped.append(Skipped(op.ref, op.id, "not-found",
                                   f"no entry {quote(op.id, policy)} in the drive"))
            continue
        file, pos = found
        line = file.lines[pos]
        assert line.entry is not None
        # an id-less line written twice: both copies have this (derived) id
        copies = _copies(drive, base_tree, line.entry, load) \
            if not line.entry.has_explicit_id else [found]
        if op.kind == "retire":
            for copy_file, copy_pos in sorted(copies, key=lambda c: (c[0].path, -c[1])):
                del copy_file.lines[copy_pos]
            result.retired.append(op.id)
            if len(copies) > 1:
                result.warnings.append(f"{op.id}: removed every copy of the line "
                                       f"({_where(copies)})")
        elif len(copies) > 1:
            skipped.append(Skipped(op.ref, op.id, "ambiguous",
                                   f"the same line is at {_where(copies)}: edit one copy by "
                                   f"hand, or forget them all (memgit forget {op.id})"))
        elif op.kind == "edit":
            new_entry = line.entry.with_text(op.text)
            if not line.entry.has_explicit_id:
                new_entry = new_entry.with_meta("id", op.id)  # keep the id across the edit
            if new_entry.serialise() != line.content:
                line.content, line.entry, line.op = new_entry.serialise(), new_entry, number
                result.edited.append(op.id)
        elif op.kind == "set":
            new_entry = line.entry.with_meta(op.key, op.value) if op.value \
                else fmt.without_meta(line.entry, op.key)
            if not line.entry.has_explicit_id:
                new_entry = new_entry.with_meta("id", op.id)
            if new_entry.serialise() != line.content:
                line.content, line.entry, line.op = new_entry.serialise(), new_entry, number
                result.updated.append(op.id)
        else:
            raise UsageError(f"unknown operation {op.kind!r}", "")
    if any(f.changed() for f in files.values()):
        # The Index lists exactly the drive's topic files: regenerate it in the same commit.
        paths = {e.path for e in tree_files(drive, base_tree)}
        paths |= {p for p, f in files.items() if not f.existed and f.changed()}
        paths -= {p for p, f in files.items() if f.removed}
        memory = load(fmt.MEMORY_FILE)
        if memory is not None:
            regenerated = fmt.regenerate_index_section(memory.text(), paths)
            if regenerated != memory.text():
                files[fmt.MEMORY_FILE] = _reparse(memory, regenerated)
    changes = {path: None if f.removed else f.text()
               for path, f in files.items() if f.changed()}
    _count_once(result)
    return Plan(result, changes, base_oids, files)


def _count_once(result: WriteResult) -> None:
    """Each entry listed once, under what happened to it: one request may hold several
    operations on one entry (approving a proposal with a new text edits it and drops its
    keys; rejecting one sets three keys), and an entry edited or retired is not also
    "updated"."""
    result.edited = list(dict.fromkeys(result.edited))
    result.retired = list(dict.fromkeys(result.retired))
    done = set(result.edited) | set(result.retired)
    result.updated = [i for i in dict.fromkeys(result.updated) if i not in done]


def _file_refusal(ops: Sequence[WriteOp], blocked: Mapping[int, Violation],
                  load: Callable[[str], PlannedFile | None],
                  base_oids: Mapping[str, str | None]) -> tuple[str, str] | None:
    """File operations apply all together or not at all: the reason none applies."""
    for number, op in enumerate(ops):
        if op.kind != "file":
            continue
        if number in blocked:
            v = blocked[number]
            return "policy", f"{v.code} {v.name}: {v.message}"
        if load(op.path) is None:
            return "topic-invalid", f"{op.path} cannot be written as a text file"
        if (base_oids.get(op.path) or "") != op.value:
            return "changed", f"{op.path} changed since the texts were computed"
    return None


def _plan_file(op: WriteOp, number: int, refusal: tuple[str, str] | None,
               load: Callable[[str], PlannedFile | None], result: WriteResult) -> None:
    if refusal is not None:
        result.skipped.append(Skipped(op.ref, op.id, *refusal))
        return
    file = load(op.path)
    assert file is not None
    if op.key == "remove":
        file.removed = True
    else:
        file.set_text(op.text, number)
    result.rewritten.append(op.path)


def encoded(changes: Mapping[str, str | None]) -> dict[str, bytes | None]:
    """A plan's changes as the bytes to store (None: remove); texts read from a tree keep
    their non-UTF-8 bytes through ``surrogateescape`` (git.repository.tree_texts)."""
    return {p: None if t is None else t.encode("utf-8", "surrogateescape")
            for p, t in changes.items()}


def _reparse(old: PlannedFile, text: str) -> PlannedFile:
    """MEMORY.md after Index regeneration, keeping which lines operations wrote."""
    new = PlannedFile(old.path, text)
    new.existed, new.original = old.existed, old.original
    new.removed, new.written = old.removed, old.written
    written = {line.content: line.op for line in old.lines if line.op is not None}
    for line in new.lines:
        if line.content in written:
            line.op = written[line.content]
    return new


def _added(op: WriteOp, entry: fmt.Entry) -> Added:
    meta = entry.meta
    return Added(op.id, op.path, entry.text, meta.get("source", ""), meta.get("added", ""))


def _copies(drive: Drive, base_tree: str, entry: fmt.Entry,
            load: Callable[[str], PlannedFile | None]) -> list[tuple[PlannedFile, int]]:
    """Every line of the drive with the derived id of ``entry`` (an id-less line): the
    same text, source and date; only files holding the text are parsed."""
    needle = entry.text.encode()
    out: list[tuple[PlannedFile, int]] = []
    for found in tree_files(drive, base_tree):
        if not found.path.endswith(".md") or found.mode not in (MODE_FILE, MODE_EXEC) \
                or needle not in read_blob(drive, found.oid):
            continue
        file = load(found.path)
        if file is not None:
            out.extend((file, n) for n, line in enumerate(file.lines)
                       if line.entry is not None and line.entry.id == entry.id)
    return out


def _where(copies: list[tuple[PlannedFile, int]]) -> str:
    return ", ".join(f"{f.path}:{n + 1}" for f, n in sorted(copies, key=lambda c: (c[0].path,
                                                                                  c[1])))


def _find(drive: Drive, base_tree: str, entry_id: str, located: Mapping[str, str],
          load: Callable[[str], PlannedFile | None], *,
          scan: bool = True) -> tuple[PlannedFile, int] | None:
    """Where entry ``entry_id`` is: the index's answer, checked; else a scan of every file."""
    path = located.get(entry_id)
    if path is not None:
        file = load(path)
        if file is not None:
            pos = file.find(entry_id)
            if pos is not None:
                return file, pos
    if not scan:
        return None
    needle = entry_id.encode()
    for entry in tree_files(drive, base_tree):
        if not entry.path.endswith(".md") or entry.mode not in (MODE_FILE, MODE_EXEC):
            continue
        if not entry_id.startswith("entry-") and needle not in read_blob(drive, entry.oid):
            continue  # an explicit id is written in the line itself
        file = load(entry.path)
        if file is not None:
            pos = file.find(entry_id)
            if pos is not None:
                return file, pos
    return None


# --- judging the new tree -------------------------------------------------------------------

# (policy) -> (blob id, path) -> facts; blobs the writer did not touch are judged
# without a secret scan (they were accepted before), touched ones scan only the
# lines the writer wrote.
_FACTS: dict[Policy, dict[tuple[str, str], BlobFacts]] = {}
_FACTS_LIMIT = 4096


_VERDICTS: dict[tuple[Policy, str, int], list[Violation]] = {}


def _judge(drive: Drive, tree: str, files: Mapping[str, PlannedFile], policy: Policy,
           registry: PurgeRegistry) -> list[Violation]:
    """policy.judge on a whole tree; remembered per tree id, since the tree a write
    makes is the base tree the next write compares with."""
    key = (policy, tree, registry.size)
    known = _VERDICTS.get(key)
    if known is not None:
        return known
    cache = _FACTS.setdefault(policy, {})
    if len(cache) > _FACTS_LIMIT:
        cache.clear()
    entries = tree_files(drive, tree)
    oids = {e.path: e.oid for e in entries}
    for e in entries:
        if e.mode not in (MODE_FILE, MODE_EXEC) or (e.oid, e.path) in cache:
            continue
        data = read_blob(drive, e.oid)
        file = files.get(e.path)
        if file is not None:
            written = {line.content for line in file.lines if line.op is not None}
            facts = check_blob(e.path, data, policy,
                               scan=lambda _n, content, w=written: content in w)  # type: ignore[misc]
        else:
            facts = check_blob(e.path, data, policy, scan=lambda _n, _c: False)
        cache[(e.oid, e.path)] = facts
    items = [TreeItem(e.path, e.mode, e.size) for e in entries]

    def read(path: str) -> bytes:
        return read_blob(drive, oids[path])

    verdict = judge(items, read, policy, registry=registry, cache=cache, oids=oids)
    if len(_VERDICTS) > 64:
        _VERDICTS.clear()
    _VERDICTS[key] = verdict
    return verdict
