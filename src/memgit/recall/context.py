"""The context packet: what an agent loads at session start, under a token budget.

The drive's title, its ``## Index`` and the entries most likely to matter, each with its
id (docs/agents.md). The packet never exceeds its budget as counted by
:func:`estimate_tokens`, a conservative estimate without a tokenizer that never exceeds
the sum of its lines' estimates, so adding up lines bounds the whole; its last line says
what was left out.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from memgit import state
from memgit.format import entries as fmt
from memgit.index.search import search
from memgit.recall.defaults import DEFAULT_BUDGET
from memgit.safe_text import printable
from memgit.state import search as rows

if TYPE_CHECKING:
    from memgit.git.repository import Drive
    from memgit.policy.settings import Policy

QUERY_HITS = 10
INDEX_SHARE = 0.5  # the Index may take this share of the budget before entries are added

# A run of id characters holding both a letter and a digit.
_MIXED_RE = re.compile(r"[A-Za-z0-9_-]*(?:[A-Za-z][A-Za-z0-9_-]*[0-9]|[0-9][A-Za-z0-9_-]*"
                       r"[A-Za-z])[A-Za-z0-9_-]*")


def estimate_tokens(text: str) -> int:
    """A conservative token count of ``text`` (see the module docstring)."""
    mixed = 0
    plain = 0
    pos = 0
    for m in _MIXED_RE.finditer(text):
        plain += len(text[pos:m.start()].encode("utf-8"))
        mixed += math.ceil((m.end() - m.start()) / 2)
        pos = m.end()
    plain += len(text[pos:].encode("utf-8"))
    return mixed + math.ceil(plain / 3)


@dataclass(frozen=True)
class PacketEntry:
    id: str
    text: str
    topic: str
    added: str
    source: str
    retrievals: int
    reason: str  # "query", "retrieved" or "newest"


@dataclass
class Packet:
    """The packet's text and what it holds (``as_dict`` is the ``--json`` form)."""

    title: str
    head: str | None
    budget: int
    tokens: int = 0
    text: str = ""
    query: str | None = None
    index_lines: list[str] = field(default_factory=list)
    entries: list[PacketEntry] = field(default_factory=list)
    index_lines_total: int = 0
    entries_total: int = 0

    @property
    def omitted_index_lines(self) -> int:
        return self.index_lines_total - len(self.index_lines)

    @property
    def omitted_entries(self) -> int:
        return self.entries_total - len(self.entries)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["omitted"] = {"index_lines": self.omitted_index_lines,
                           "entries": self.omitted_entries}
        return data


# --- reading the drive ---------------------------------------------------------------------


def memory_outline(text: str) -> tuple[str, list[str]]:
    """MEMORY.md's title (its first level-1 heading) and the lines of its ``## Index``."""
    lines = fmt.split_lines(text)
    title = next((c[2:].strip() for c, _e in lines if c.startswith("# ")), "") or "Memory"
    # The packet is printed on terminals and pasted into a model's context: control and
    # invisible characters (ESC sequences, bidi controls) are shown escaped, never live.
    return printable(title), [printable(line) for line in fmt.index_section_lines(text)]


def memory_text(drive: Drive, head: str | None) -> str:
    """MEMORY.md at commit ``head`` ('' without a commit or without the file)."""
    from memgit.git.repository import commit_tree_id, file_at, read_blob

    if head is None:
        return ""
    found = file_at(drive, commit_tree_id(drive, head), fmt.MEMORY_FILE)
    return read_blob(drive, found.oid).decode("utf-8", "replace") if found else ""


def _top(conn: state.Connection, order: str, limit: int) -> list[PacketEntry]:
    return [PacketEntry(r[0], r[1], r[2], r[3], r[4], int(r[5]), order)
            for r in rows.top_entries(conn, order, limit)]


# --- assembling ------------------------------------------------------------------------------

_HEADINGS = {"query": "## Matching the query", "retrieved": "## Most retrieved",
             "newest": "## Newest"}
_USAGE = ("Entries end with their ids: cite them, and change them only through memgit "
          "(remember, edit, forget).")


def entry_line(entry: PacketEntry) -> str:
    return (f"- {printable(entry.text)} [id: {entry.id}; {printable(entry.topic)}; "
            f"added {entry.added or '?'}]")


def trailer(packet: Packet) -> str:
    if not packet.omitted_index_lines and not packet.omitted_entries:
        return "(Nothing left out.)"
    return (f"(Left out: {packet.omitted_index_lines} of {packet.index_lines_total} Index "
            f"lines, {packet.omitted_entries} of {packet.entries_total} entries; "
            "recall finds more.)")


class _Budget:
    def __init__(self, total: int) -> None:
        self.left = total

    def take(self, *lines: str) -> bool:
        # Every token covers at most 3 bytes (mixed runs are ASCII, 2 characters a token),
        # so lines of more than 3 bytes per token of room left are refused unweighed.
        if sum(len(line.encode("utf-8")) + 1 for line in lines) > 3 * self.left:
            return False
        cost = sum(estimate_tokens(line + "\n") for line in lines)
        if cost > self.left:
            return False
        self.left -= cost
        return True


def _candidates(conn: state.Connection, query: str | None, budget: int,
                key: tuple[str, str]) -> list[PacketEntry]:
    """Query hits, then most retrieved and newest interleaved; each id once."""
    limit = max(20, min(2000, budget // 10))
    hits: list[PacketEntry] = []
    if query and query.strip():
        hits = [PacketEntry(h.entry_id, h.text, h.path, h.added, h.source, h.retrievals,
                            "query")
                for h in search(conn, query, QUERY_HITS, count=False, key=key)]
    retrieved, newest = _top(conn, "retrieved", limit), _top(conn, "newest", limit)
    mixed: list[PacketEntry] = []
    for i in range(max(len(retrieved), len(newest))):
        mixed.extend(group[i] for group in (retrieved, newest) if i < len(group))
    seen: set[str] = set()
    out: list[PacketEntry] = []
    for entry in hits + mixed:
        if entry.id not in seen:
            seen.add(entry.id)
            out.append(entry)
    return out


def build_packet(drive: Drive, budget: int = DEFAULT_BUDGET, query: str | None = None, *,
                 policy: Policy | None = None) -> Packet:
    """The context packet of the drive's branch head (after the read path's catch-up)."""
    from memgit.git.repository import ref_target
    from memgit.policy.settings import drive_policy
    from memgit.recall.read_path import catch_up

    policy = policy or drive_policy(drive)
    conn = state.connection(drive.git_dir)
    current = catch_up(drive, policy=policy, conn=conn)
    head = current.head if current.head is not None else ref_target(drive, policy.branch_ref)
    return assemble_packet(conn, head, memory_text(drive, head), budget, query,
                           str(drive.git_dir))


def assemble_packet(conn: state.Connection, head: str | None, memory: str, budget: int,
                    query: str | None, drive_key: str) -> Packet:
    """The packet from a recall index that is current at ``head`` and MEMORY.md's text
    there (memgit.cli.quick_read calls this without pygit2); ``drive_key`` names the drive
    for the search's cached word counts."""
    title, index_lines = memory_outline(memory)
    packet = Packet(title, head, max(0, budget), query=query or None,
                    index_lines_total=len(index_lines),
                    entries_total=rows.searchable_count(conn))
    candidates = _candidates(conn, query, packet.budget, (drive_key, head or ""))
    # The trailer is written last but its room is kept first: with the totals as
    # counts it is at least as long as the final one.
    room = _Budget(packet.budget - estimate_tokens(trailer(packet) + "\n"))
    head_line = f"# {title} (memgit drive at {head[:12] if head else 'no commit yet'})"
    if room.left < 0 or not room.take(head_line):
        return _finish(packet, [], [], [])
    extra = [_USAGE] if room.take(_USAGE) else []
    chosen_index: list[int] = []
    index_room = _Budget(int(room.left * INDEX_SHARE) if candidates else room.left)
    query_first = [c for c in candidates if c.reason == "query"]
    chosen = _fill_entries(room, query_first, [])
    _fill_index(room, index_room, index_lines, chosen_index)
    chosen = _fill_entries(room, [c for c in candidates if c.reason != "query"], chosen)
    _fill_index(room, _Budget(room.left), index_lines, chosen_index)
    return _finish(packet, [head_line, *extra], [index_lines[i] for i in sorted(chosen_index)],
                   chosen)


def _fill_index(room: _Budget, share: _Budget, lines: list[str], chosen: list[int]) -> None:
    for i, line in enumerate(lines):
        if i in chosen:
            continue
        heading = [] if chosen else [fmt.INDEX_HEADING]
        cost_lines = [*heading, line]
        if not share.take(*cost_lines):
            break
        if not room.take(*cost_lines):
            break
        chosen.append(i)


def _fill_entries(room: _Budget, candidates: list[PacketEntry],
                  chosen: list[PacketEntry]) -> list[PacketEntry]:
    out = list(chosen)
    groups = {e.reason for e in out}
    for entry in candidates:
        lines = [entry_line(entry)]
        if entry.reason not in groups:
            lines.insert(0, _HEADINGS[entry.reason])
        if room.take(*lines):
            out.append(entry)
            groups.add(entry.reason)
    return out


def _finish(packet: Packet, top: list[str], index_lines: list[str],
            entries: list[PacketEntry]) -> Packet:
    packet.index_lines = index_lines
    packet.entries = entries
    lines = list(top)
    if index_lines:
        lines += [fmt.INDEX_HEADING, *index_lines]
    for reason in ("query", "retrieved", "newest"):
        group = [e for e in entries if e.reason == reason]
        if group:
            lines += [_HEADINGS[reason], *(entry_line(e) for e in group)]
    end = trailer(packet)
    if estimate_tokens(end + "\n") <= packet.budget:
        lines.append(end)
    packet.text = "".join(line + "\n" for line in lines)
    packet.tokens = estimate_tokens(packet.text)
    return packet
