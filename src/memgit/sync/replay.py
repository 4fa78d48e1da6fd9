"""Replay operations: the entry operations between two trees, and applying them to any tree.

A tree is a mapping ``path -> text``, so this module is pure: no git, no I/O.
``compute_ops(a, b)`` lists entry operations by id and ``SetLayout`` for everything else,
whose template refers to entries by id, so a layout change applied elsewhere never loses or
duplicates an entry someone else wrote. ``apply_replay_ops(a, compute_ops(a, b)) == b``
for trees in the drive format. An operation whose target moved on is a conflict, resolved
by ``on_conflict`` (``local``, ``server``, ``newest`` or ``fail``); one whose result is
already there does nothing, so a repeated replay never duplicates an entry. No conflict
marker is ever written, and MEMORY.md's Index section is regenerated last.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from memgit.errors import ConflictError
from memgit.format import entries as fmt

CONFLICT_CHOICES: tuple[str, ...] = ("local", "server", "newest", "fail")

# Where an inserted entry goes: after the entry ``("id", ID, blank)``, after the
# first non-entry line ``("text", CONTENT, blank)``, or at ``("start", "", blank)``
# of the file (``None`` = start, no blank); ``blank`` says the entry came after
# blank lines there (it goes after them too). An anchor that is gone: the end.
Anchor = tuple[str, str, bool] | None
# One line of a template: ("text", content, eol) or ("entry", id, eol).
Item = tuple[str, str, str]


@dataclass(frozen=True)
class AddEntry:
    path: str
    id: str
    line: str
    eol: str = "\n"
    after: Anchor = None
    kind: str = field(default="add", init=False)


@dataclass(frozen=True)
class EditEntry:
    path: str
    id: str
    old: str
    line: str
    eol: str = "\n"
    after: Anchor = None
    kind: str = field(default="edit", init=False)


@dataclass(frozen=True)
class DeleteEntry:
    path: str
    id: str
    old: str
    kind: str = field(default="delete", init=False)


@dataclass(frozen=True)
class MoveEntry:
    src: str
    path: str
    id: str
    old: str
    line: str
    eol: str = "\n"
    after: Anchor = None
    kind: str = field(default="move", init=False)


@dataclass(frozen=True)
class SetLayout:
    """The non-entry content of one file. ``template`` None: the file is removed.

    ``base`` and ``new`` are the file's text signatures (its non-entry lines,
    Index links left out) before and after, None for an absent file; they tell
    whether the target's non-entry lines were changed by someone else.
    """

    path: str
    base: tuple[str, ...] | None
    new: tuple[str, ...] | None
    template: tuple[Item, ...] | None
    kind: str = field(default="layout", init=False)

    @property
    def id(self) -> str:
        return "file:" + self.path


ReplayOp = AddEntry | EditEntry | DeleteEntry | MoveEntry | SetLayout


def op_key(op: ReplayOp) -> str:
    """What an operation touches: an entry id, or ``file:PATH`` for a layout."""
    return op.id


def op_dict(op: ReplayOp) -> dict[str, Any]:
    """A JSON-friendly summary (kind, path, id; never entry text)."""
    out: dict[str, Any] = {"kind": op.kind, "path": op.path, "id": op_key(op)}
    if isinstance(op, MoveEntry):
        out["from"] = op.src
    return out


@dataclass(frozen=True)
class Conflict:
    """One conflict met while applying: what, where, and who won."""

    key: str
    path: str
    kind: str  # edit-edit, edit-deleted, delete-edited, add-exists, move-*, file
    winner: str  # "local" or "server"

    def as_dict(self) -> dict[str, str]:
        return {"id": self.key, "path": self.path, "kind": self.kind, "winner": self.winner}


class EntryConflictError(ConflictError):
    """``--on-conflict fail`` met a conflict; nothing was applied."""

    def __init__(self, conflict: Conflict) -> None:
        super().__init__(
            f"conflict on {conflict.key} in {conflict.path} ({conflict.kind})",
            "sync again with --on-conflict local, server or newest")
        self.conflict = conflict


@dataclass
class Applied:
    tree: dict[str, str]
    conflicts: list[Conflict] = field(default_factory=list)


# --- the working form of a tree ---------------------------------------------------


@dataclass
class _Ln:
    content: str
    eol: str
    id: str | None  # None: not an entry (or a duplicate id, kept as text)


def _is_blank(ln: _Ln) -> bool:
    return not ln.content.strip()


@lru_cache(maxsize=1024)
def _parse_raw(path: str, text: str) -> tuple[tuple[str, str, str | None], ...]:
    """(content, eol, entry id or None) per line. Cached: a replay parses the
    same unchanged files of consecutive trees again and again."""
    if not path.endswith(".md"):
        return tuple((c, e, None) for c, e in fmt.split_lines(text))
    return tuple((line.content, line.eol, line.entry.id if line.entry is not None else None)
                 for line in fmt.parse_document(path, text).lines)


def _parse_file(path: str, text: str, taken: Callable[[str], bool]) -> list[_Ln]:
    out: list[_Ln] = []
    seen: set[str] = set()
    for content, eol, entry_id in _parse_raw(path, text):
        if entry_id is not None and (entry_id in seen or taken(entry_id)):
            entry_id = None  # a duplicate id is a lint error; keep the line as text
        if entry_id is not None:
            seen.add(entry_id)
        out.append(_Ln(content, eol, entry_id))
    return out


class _Work:
    """A tree as lines with entry ids, and where each id lives."""

    def __init__(self, tree: Mapping[str, str]) -> None:
        self.files: dict[str, list[_Ln]] = {}
        self.where: dict[str, str] = {}
        for path in sorted(tree):
            self.files[path] = _parse_file(path, tree[path], lambda i: i in self.where)
            self._index(path)

    def _index(self, path: str) -> None:
        for ln in self.files.get(path, []):
            if ln.id is not None:
                self.where[ln.id] = path

    def reparse(self, path: str) -> None:
        for entry_id in [i for i, p in self.where.items() if p == path]:
            del self.where[entry_id]
        text = self.text(path)
        if text is None:
            return
        self.files[path] = _parse_file(path, text, lambda i: i in self.where)
        self._index(path)

    def text(self, path: str) -> str | None:
        lines = self.files.get(path)
        if lines is None:
            return None
        return "".join(ln.content + ln.eol for ln in lines)

    def tree(self) -> dict[str, str]:
        return {p: "".join(ln.content + ln.eol for ln in lines) for p, lines in self.files.items()}

    def find(self, entry_id: str) -> tuple[str, int, _Ln] | None:
        path = self.where.get(entry_id)
        if path is None:
            return None
        for i, ln in enumerate(self.files[path]):
            if ln.id == entry_id:
                return path, i, ln
        return None

    def remove(self, entry_id: str) -> None:
        found = self.find(entry_id)
        if found is None:
            return
        path, i, _ln = found
        del self.files[path][i]
        del self.where[entry_id]

    def insert(self, path: str, entry_id: str, content: str, eol: str, after: Anchor) -> None:
        lines = self.files.setdefault(path, [])
        pos = _anchor_pos(path, lines, after)
        at_end = pos == len(lines)
        if at_end and lines and lines[-1].eol == "":
            lines[-1].eol = eol or "\n"
        lines.insert(pos, _Ln(content, eol if at_end else (eol or "\n"), entry_id))
        self.where[entry_id] = path
        _keep_entries(path, lines)


def _keep_entries(path: str, lines: list[_Ln]) -> None:
    """A bullet inside a code block, front matter or MEMORY.md's Index is no entry: a
    line that holds an entry and landed there (inserted, or kept from someone else
    while a layout changed around it) moves to the end of the file's entries
    (before the Index), else to the top of the file, below any front matter."""
    if not path.endswith(".md") or (path != fmt.MEMORY_FILE and not fmt.needs_block_reader(
            "".join(ln.content + ln.eol for ln in lines))):
        return
    for _attempt in range(len(lines)):
        for ln in lines[:-1]:
            ln.eol = ln.eol or "\n"  # only the last line may lack a terminator
        doc = fmt.parse_document(path, "".join(ln.content + ln.eol for ln in lines))
        lost = next((i for i, ln in enumerate(lines)
                     if ln.id is not None and doc.lines[i].entry is None), None)
        if lost is None:
            return
        line = lines.pop(lost)
        if line.eol == "":
            line.eol = "\n"
        pos = _anchor_pos(path, lines, ("id", "", False))
        lines.insert(pos, line)
        for ln in lines[:-1]:
            ln.eol = ln.eol or "\n"
        doc = fmt.parse_document(path, "".join(ln.content + ln.eol for ln in lines))
        if doc.lines[pos].entry is None:
            front = sum(1 for d in doc.lines if d.in_front_matter)
            lines.insert(front, lines.pop(pos))


def _anchor_pos(path: str, lines: list[_Ln], after: Anchor) -> int:
    """Where a new entry goes in ``lines`` (see :data:`Anchor`)."""
    pos: int | None = None
    blank = False
    if after is None or after[0] == "start":
        pos = 0
        blank = after is not None
    else:
        kind, value, blank = after
        for i, ln in enumerate(lines):
            if (kind == "id" and ln.id == value) or \
                    (kind == "text" and ln.id is None and ln.content == value):
                pos = i + 1
                break
    if pos is not None:
        if blank:
            while pos < len(lines) and _is_blank(lines[pos]):
                pos += 1
        return pos
    # The anchor is gone: append at the end (in MEMORY.md, before the Index).
    pos = len(lines)
    if path == fmt.MEMORY_FILE:
        for i, ln in enumerate(lines):
            if ln.id is None and ln.content.rstrip() == fmt.INDEX_HEADING:
                pos = i
                break
    while pos > 0 and _is_blank(lines[pos - 1]) and pos != len(lines):
        pos -= 1
    return pos


def _anchor_of(lines: Sequence[_Ln], i: int) -> Anchor:
    """The anchor of line ``i``: the nearest non-blank line before it."""
    j = i - 1
    while j >= 0 and _is_blank(lines[j]):
        j -= 1
    blank = j < i - 1
    if j < 0:
        return ("start", "", True) if blank else None
    ln = lines[j]
    return ("id", ln.id, blank) if ln.id is not None else ("text", ln.content, blank)


def signature(path: str, text: str | None) -> tuple[str, ...] | None:
    """A file's non-entry lines (Index links of MEMORY.md left out); None if absent."""
    if text is None:
        return None
    return _signature(path, _parse_file(path, text, lambda _i: False))


def _signature(path: str, lines: Sequence[_Ln]) -> tuple[str, ...]:
    """Line terminators and blank lines are left out: appending an entry to a file
    that lacks a final newline gives its last line one, and the blank lines
    around an added entry are no change of the file's text worth a conflict."""
    out: list[str] = []
    in_index_section = False
    for ln in lines:
        if ln.id is not None or _is_blank(ln):
            continue
        if path == fmt.MEMORY_FILE:
            if ln.content.rstrip() == fmt.INDEX_HEADING:
                in_index_section = True
            elif ln.content.startswith(("# ", "## ")):
                in_index_section = False
            elif in_index_section and ln.content.lstrip().startswith(("- [[", "* [[")):
                continue  # regenerated on every write: never a conflict
        out.append(ln.content)
    return tuple(out)


def _template(lines: Sequence[_Ln]) -> tuple[Item, ...]:
    return tuple(("entry", ln.id, ln.eol) if ln.id is not None else ("text", ln.content, ln.eol)
                 for ln in lines)


# --- computing ------------------------------------------------------------------------


def compute_ops(a: Mapping[str, str], b: Mapping[str, str],
                changed: Iterable[str] | None = None) -> list[ReplayOp]:
    """The operations that turn tree ``a`` into tree ``b``.

    ``changed``, when given, names the paths that differ (a git tree diff
    knows them for free): then only those files are parsed, which makes a
    one-entry commit on a full 2 MiB drive cheap. That is exact only when no
    entry of a changed file could share its id with a line elsewhere (a
    duplicate id makes the later line plain text), so it is used only when
    every entry of the changed files has an explicit id that no other file
    mentions; otherwise everything is parsed.
    """
    others: list[str] = []
    if changed is not None:
        keep = set(changed)
        a_part = {p: t for p, t in a.items() if p in keep}
        b_part = {p: t for p, t in b.items() if p in keep}
        wa, wb = _Work(a_part), _Work(b_part)
        if _restriction_is_exact(wa, wb, [t for p, t in a.items() if p not in keep]):
            others = [p for p in a if p not in keep and p in b]
            return _compute(a_part, b_part, wa, wb, others)
    return _compute(a, b, _Work(a), _Work(b), others)


_ID_PAIR_RE = re.compile(r"[\[;][ \t]*id:[ \t]*([^;\]\n]*?)[ \t]*(?=[;\]])")


def _restriction_is_exact(wa: _Work, wb: _Work, unchanged: Iterable[str]) -> bool:
    ids = set(wa.where) | set(wb.where)
    if any(i.startswith("entry-") for i in ids):
        return False
    texts = [wa.text(p) or "" for p in wa.files] + [wb.text(p) or "" for p in wb.files]
    mentioned = frozenset().union(*(_mentioned_ids(t) for t in texts))
    return not any(mentioned & _mentioned_ids(t) for t in unchanged)


@lru_cache(maxsize=1024)
def _mentioned_ids(text: str) -> frozenset[str]:
    return frozenset(_ID_PAIR_RE.findall(text))


def _compute(a: Mapping[str, str], b: Mapping[str, str], wa: _Work, wb: _Work,
             others: list[str]) -> list[ReplayOp]:
    ops: list[ReplayOp] = []
    before = {ln.id: (path, ln) for path, lines in wa.files.items() for ln in lines if ln.id}
    for path in sorted(wa.files):
        for ln in wa.files[path]:
            if ln.id is not None and ln.id not in wb.where:
                ops.append(DeleteEntry(path, ln.id, ln.content))
    placed: list[ReplayOp] = []
    for path in sorted(wb.files):
        lines = wb.files[path]
        for i, ln in enumerate(lines):
            if ln.id is None:
                continue
            old = before.get(ln.id)
            if old is None:
                placed.append(AddEntry(path, ln.id, ln.content, ln.eol, _anchor_of(lines, i)))
            elif old[0] != path:
                placed.append(MoveEntry(old[0], path, ln.id, old[1].content, ln.content,
                                        ln.eol, _anchor_of(lines, i)))
            elif old[1].content != ln.content:
                ops.append(EditEntry(path, ln.id, old[1].content, ln.content, ln.eol,
                                     _anchor_of(lines, i)))
    ops.extend(placed)
    simulated = _apply(a, ops, _Resolver("local", None, None), others).tree
    for path in sorted(set(simulated) | set(b)):
        if simulated.get(path) == b.get(path):
            continue
        template = _template(wb.files[path]) if path in wb.files else None
        base = _signature(path, wa.files[path]) if path in wa.files else None
        new = _signature(path, wb.files[path]) if path in wb.files else None
        ops.append(SetLayout(path, base, new, template))
    return ops


# --- applying -------------------------------------------------------------------------


class _Resolver:
    def __init__(self, on_conflict: str, when: int | None,
                 theirs_when: Callable[[str], int | None] | None) -> None:
        if on_conflict not in CONFLICT_CHOICES:
            raise ValueError(f"on_conflict must be one of {CONFLICT_CHOICES}")
        self.on_conflict = on_conflict
        self.when = when
        self.theirs_when = theirs_when
        self.conflicts: list[Conflict] = []

    def local_wins(self, key: str, path: str, kind: str) -> bool:
        choice = self.on_conflict
        if choice == "newest":
            theirs = self.theirs_when(key) if self.theirs_when is not None else None
            mine = self.when
            choice = "local" if theirs is None or mine is None or mine >= theirs else "server"
        conflict = Conflict(key, path, kind, "local" if choice == "local" else "server")
        if choice == "fail":
            raise EntryConflictError(conflict)
        self.conflicts.append(conflict)
        return choice == "local"


def apply_replay_ops(tree: Mapping[str, str], ops: Sequence[ReplayOp], *,
                     on_conflict: str = "local", when: int | None = None,
                     theirs_when: Callable[[str], int | None] | None = None) -> Applied:
    """Apply ``ops`` to ``tree`` (not modified); conflicts resolved by ``on_conflict``.

    ``when`` is the time of the local change (for ``newest``); ``theirs_when(key)``
    the time the target last changed that entry id (or ``file:PATH``), None if
    unknown (the local change then wins).
    """
    return _apply(tree, ops, _Resolver(on_conflict, when, theirs_when), ())


def _apply(tree: Mapping[str, str], ops: Sequence[ReplayOp], resolver: _Resolver,
           other_paths: Iterable[str]) -> Applied:
    work = _Work(tree)
    for op in ops:
        if isinstance(op, SetLayout):
            _apply_layout(work, op, resolver)
        else:
            _apply_entry_op(work, op, resolver)
    out = work.tree()
    if fmt.MEMORY_FILE in out:
        out[fmt.MEMORY_FILE] = fmt.regenerate_index_section(out[fmt.MEMORY_FILE],
                                                    [*out, *other_paths])
    return Applied(out, resolver.conflicts)


def _apply_entry_op(work: _Work, op: ReplayOp, resolver: _Resolver) -> None:
    found = work.find(op.id)
    if isinstance(op, DeleteEntry):
        if found is None:
            return  # already gone
        _path, _i, ln = found
        if ln.content == op.old or resolver.local_wins(op.id, op.path, "delete-edited"):
            work.remove(op.id)
        return
    if isinstance(op, AddEntry):
        if found is None:
            work.insert(op.path, op.id, op.line, op.eol, op.after)
        elif found[2].content != op.line and resolver.local_wins(op.id, op.path, "add-exists"):
            found[2].content = op.line
        return
    if isinstance(op, EditEntry):
        if found is None:
            if resolver.local_wins(op.id, op.path, "edit-deleted"):
                work.insert(op.path, op.id, op.line, op.eol, op.after)
            return
        ln = found[2]
        if ln.content == op.line:
            return
        if ln.content == op.old or resolver.local_wins(op.id, op.path, "edit-edit"):
            ln.content = op.line
        return
    assert isinstance(op, MoveEntry)
    if found is None:
        if resolver.local_wins(op.id, op.path, "move-deleted"):
            work.insert(op.path, op.id, op.line, op.eol, op.after)
        return
    path, _i, ln = found
    if path == op.path and ln.content == op.line:
        return
    if ln.content not in (op.old, op.line) and \
            not resolver.local_wins(op.id, op.path, "move-edited"):
        return
    work.remove(op.id)
    work.insert(op.path, op.id, op.line, op.eol, op.after)


def _apply_layout(work: _Work, op: SetLayout, resolver: _Resolver) -> None:
    lines = work.files.get(op.path)
    current = _signature(op.path, lines) if lines is not None else None
    if current == () and op.base is None:
        current = None  # only entries (just added by this replay): the file is new
    if current not in (op.base, op.new):
        if op.base is None and current is not None:
            # Both sides created the file (e.g. two drives started apart): the
            # target's text lines stay, the entries of both are kept.
            # (Their entries were placed by their own AddEntry operations.)
            resolver.conflicts.append(Conflict(op.id, op.path, "file-created", "server"))
            return
        if not resolver.local_wins(op.id, op.path, "file"):
            return
    lines = lines or []
    if op.template is not None and current == op.new:
        # The target already has the new text; what is left is blank lines and
        # the order of entries. Where the target's file holds entries the
        # template does not know (someone else's), its arrangement is kept: a
        # cosmetic change never reshuffles their work, and a replay of work
        # already there changes nothing.
        known = {value for kind, value, _eol in op.template if kind == "entry"}
        if any(ln.id is not None and ln.id not in known for ln in lines):
            return
    if op.template is None:
        if any(ln.id is not None for ln in lines):
            # Entries someone else put there survive a removal of their file.
            resolver.conflicts.append(Conflict(op.id, op.path, "file-removed", "server"))
        else:
            work.files.pop(op.path, None)
        return
    by_id = {ln.id: ln for ln in lines if ln.id is not None}
    out: list[_Ln] = []
    used: set[str] = set()
    for kind, value, eol in op.template:
        if kind == "text":
            out.append(_Ln(value, eol, None))
        elif value in by_id:
            out.append(_Ln(by_id[value].content, eol, value))
            used.add(value)
    for i, ln in enumerate(lines):
        if ln.id is not None and ln.id not in used:
            # Someone else's entry: it keeps its place after the line it followed.
            pos = _anchor_pos(op.path, out, _anchor_of(lines, i))
            if pos == len(out) and out and out[-1].eol == "":
                out[-1].eol = ln.eol or "\n"
            out.insert(pos, _Ln(ln.content, ln.eol if pos == len(out) else ln.eol or "\n",
                                ln.id))
    _keep_entries(op.path, out)
    work.files[op.path] = out
    work.reparse(op.path)


def entry_map(tree: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """Every entry of a tree: id -> (path, line)."""
    work = _Work(tree)
    return {ln.id: (path, ln.content) for path, lines in work.files.items()
            for ln in lines if ln.id is not None}
