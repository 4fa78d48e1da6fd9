"""What the server refused in a replayed commit, and how sync gets past it (docs/sync.md,
"A refused commit").

The server's refusal names each finding as ``PATH:LINE: CODE name: ...``, ``PATH: CODE
name: ...`` or ``(drive): CODE name: ...`` (memgit.githooks.verdict). :func:`read_refusal`
maps those onto the pushed tree: the entries on the named lines, the files named as a
whole (or by a line that is no entry), the drive as a whole (its size, its file count),
and the commit itself (its message or author: MG403, MG607 without a path).

A later local commit that changes or deletes what was refused is the fix the hint asks
for (``memgit edit``, ``memgit forget``, ``git rm``): sync then *holds* the refused
changes from the refused commit up to that later commit and replays their net effect
there (a :class:`Hold`), so the fix lands with them and every other change of the
commits in between lands as its own commit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from memgit.format import entries as fmt
from memgit.sync.replay import MoveEntry, ReplayOp

# git relays each line the hook printed as "remote: LINE"; verdict.report indents findings
_FINDING_RE = re.compile(r"^\s*(?P<where>.+?)(?::(?P<line>\d+))?: (?P<code>MG\d{3}) "
                         r"(?P<name>[a-z0-9-]+)(?P<warning> \(warning\))?: ")
DRIVE = "(drive)"
COMMIT_CODES = frozenset({"MG403", "MG607"})  # under (drive): the message or the author
# about the push, not its content (a purge running, objects missing, the server's setup):
# no edit of an entry is the fix; the server's own hint says what is
PUSH_CODES = frozenset({"MG602", "MG603", "MG605", "MG608", "MG609", "MG610"})
# memgit gate's report: a finding on the whole range it judged, naming no commit (too many
# commits, too many bytes, ...): about the push too
RANGE = frozenset({"(push)", "(replayed)"})


@dataclass(frozen=True)
class Refused:
    """What the server refused in one pushed commit."""

    ids: frozenset[str] = frozenset()  # entries on refused lines
    paths: frozenset[str] = frozenset()  # files refused whole, or by a line that is no entry
    whole: bool = False  # a finding on the whole drive: any change may be the fix
    commit: tuple[str, ...] = ()  # codes refusing the commit's message or author
    push: tuple[str, ...] = ()  # codes about the push itself (PUSH_CODES)

    def __bool__(self) -> bool:
        return bool(self.ids or self.paths or self.whole or self.commit or self.push)

    @property
    def fixable(self) -> bool:
        """Whether a later commit can be the fix (not so for a message, or the push)."""
        return bool(self) and not self.commit and not self.push

    def touches(self, op: ReplayOp) -> bool:
        """Whether ``op`` changes something refused here."""
        if self.whole or op.id in self.ids or op.path in self.paths:
            return True
        return isinstance(op, MoveEntry) and op.src in self.paths

    def merged(self, other: Refused) -> Refused:
        return Refused(self.ids | other.ids, self.paths | other.paths,
                       self.whole or other.whole, tuple(sorted({*self.commit, *other.commit})),
                       tuple(sorted({*self.push, *other.push})))

    def names(self) -> list[str]:
        """The ids and paths, for messages (ids and paths only, never entry text)."""
        return sorted(self.ids) + sorted(self.paths) + (["the whole drive"] if self.whole else [])


@dataclass(frozen=True)
class Place:
    """Where one error finding is: ``(drive)``, a path, or a path and a line; ``entry``
    when the judge named the entry on that line itself (memgit gate's report does)."""

    where: str
    line: int | None
    code: str
    entry: str | None = None


def read_refusal(message: str, tree: Mapping[str, str]) -> Refused:
    """The findings of the server's ``message`` (errors only), mapped onto ``tree``, the
    tree of the commit it refused."""
    places = []
    for line in message.splitlines():
        found = _FINDING_RE.match(line)
        if found is None or found["warning"]:
            continue
        number = int(found["line"]) if found["line"] else None
        places.append(Place(found["where"], number, found["code"]))
    return refused_at(places, tree)


def refused_at(places: Iterable[Place], tree: Mapping[str, str]) -> Refused:
    """What the error findings at ``places`` refuse in the commit whose tree is ``tree``:
    the entries on their lines, the files they name whole, the drive, the commit's message
    or author, the push. The server's message (:func:`read_refusal`) and memgit gate's
    report (memgit.forges.incoming) are both read here."""
    ids: set[str] = set()
    paths: set[str] = set()
    whole = False
    commit: set[str] = set()
    push: set[str] = set()
    for place in places:
        where, number, code = place.where, place.line, place.code
        if code in PUSH_CODES or where in RANGE:
            push.add(code)
        elif where == DRIVE:
            if code in COMMIT_CODES:
                commit.add(code)
            else:
                whole = True
        elif place.entry is not None:
            ids.add(place.entry)
        elif where not in tree:
            whole = True  # a path we cannot place (escaped when printed): anything may fix it
        else:
            entry = entry_on(where, tree[where], number) if number else None
            if entry is not None:
                ids.add(entry)
            else:
                paths.add(where)
    return Refused(frozenset(ids), frozenset(paths), whole, tuple(sorted(commit)),
                   tuple(sorted(push)))


def entry_on(path: str, text: str, number: int) -> str | None:
    """The id of the entry on line ``number`` of ``path``, None when the line is no entry."""
    if not path.endswith(".md"):
        return None
    for ln, entry in fmt.parse_document(path, text).entries():
        if ln.number == number:
            return entry.id
    return None


@dataclass(frozen=True)
class Hold:
    """Changes to what the server refused in pending commit ``first`` (an index into the
    commits being replayed) are held back from it and from the commits after it, and their
    net effect since ``base`` (the local commit before the first held change) is replayed
    with commit ``last``, the last pending commit that changes them."""

    refused: Refused
    first: int
    last: int
    base: str | None

    def covers(self, index: int) -> bool:
        return self.first <= index <= self.last


def refusal_hint(commit: str, refused: Refused, judge: str = "the server") -> str:
    """What the user runs to get a commit ``judge`` refused past it; every part names a
    command that works on that kind of finding (tests/sync/test_refusals.py, and through
    memgit gate tests/forges/test_gate_refusals.py)."""
    short = commit[:10]
    parts: list[str] = []
    if refused.push:
        parts.append(f"{judge} refused the push itself ({', '.join(refused.push)}): do "
                     "what its hint above says, then run memgit sync again")
    if refused.commit:
        parts.append(f"memgit edit and forget cannot change a commit's message or author: "
                     f"reword commit {short} (git rebase -i {short}~1 and mark it 'reword'; "
                     "git commit --amend when it is the last commit), then run memgit sync "
                     "again")
    if refused.ids:
        shown = ", ".join(sorted(refused.ids)[:5]) + (" ..." if len(refused.ids) > 5 else "")
        parts.append(f"change or remove the refused entries ({shown}) with memgit edit ID "
                     "TEXT or memgit forget ID (an entry refused for its source or other "
                     "metadata: memgit forget ID, then memgit remember it again with "
                     "--source), then run memgit sync again: the fix lands with the refused "
                     "commit")
    if refused.paths:
        shown = ", ".join(sorted(refused.paths)[:5]) + (" ..." if len(refused.paths) > 5 else "")
        parts.append(f"fix or remove the refused files ({shown}): edit them, put one back "
                     f"as it was before that commit (git restore --source={short}~1 PATH; "
                     "a protected file) or remove one it added (git rm PATH), then git "
                     "commit and run memgit sync again")
    if refused.whole:
        parts.append(f"bring the drive within the limit {judge} names (memgit forget ID, "
                     "git rm PATH; then git commit), then run memgit sync again")
    if not parts:
        parts.append(f"fix what {judge} names (memgit edit ID TEXT or memgit forget ID "
                     "for an entry; edit or git rm a file and git commit), then run memgit "
                     "sync again")
    return "; ".join(parts) + "; your local commits are kept"
