"""What a write asks for and what it did: the writer's operations and results.

A write is a list of :class:`WriteOp` (add a line, retire, edit or set metadata of an entry,
by id; or give a whole file a text) applied as one commit at the branch head. Operations
carry their final ids and dates, so they can wait in the pending queue and be retried.
New facts become operations here, skipping empty text, credentials, reserved topics and
sources that are not allowed. (Not sync's replay operations, memgit.sync.replay.ReplayOp.)
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from memgit.format import entries as fmt
from memgit.policy.judge import check_topic, quote, source_allowed
from memgit.policy.settings import Policy, today_in

DEFAULT_TOPIC = "notes.md"


@dataclass(frozen=True)
class NewFact:
    """One entry to add: text, optional source (default memgit:observation/<id>), topic
    file (default notes.md) and ``added`` date (default today: memgit import gives the
    date the source recorded)."""

    text: str
    source: str | None = None
    topic: str | None = None
    added: str | None = None


@dataclass(frozen=True)
class WriteOp:
    """One entry operation; serialisable for the pending queue.

    ``kind`` is add (``line`` into ``path``, after entry ``after`` and its
    answers when set), retire, edit (new ``text``, metadata kept), set
    (metadata ``key`` = ``value``; an empty ``value`` removes the key) or file
    (``path`` gets the whole ``text``, or is removed when ``key`` is "remove", provided
    its blob at the head is ``value``, "" for absent; see writer.restore_files).
    ``ref`` is the caller's position, for reports.
    """

    kind: str
    id: str
    path: str = ""
    line: str = ""
    text: str = ""
    key: str = ""
    value: str = ""
    after: str = ""
    dedupe: bool = True
    ref: int = -1

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v not in ("", -1) or k == "kind"}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WriteOp:
        return cls(**{k: data[k] for k in data if k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class Added:
    id: str
    path: str
    text: str
    source: str
    added: str


@dataclass(frozen=True)
class Skipped:
    """An operation not applied: ``reason`` is a short code, ``detail`` a sentence
    (never the entry text, never a secret)."""

    ref: int
    id: str
    reason: str
    detail: str


@dataclass
class WriteResult:
    status: str  # "committed", "queued" or "unchanged" ("planned": write_plan's preview)
    commit: str | None = None
    added: list[Added] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    rewritten: list[str] = field(default_factory=list)  # paths given whole texts (file ops)
    proposed: list[str] = field(default_factory=list)  # ids written as proposals (autonomy)
    skipped: list[Skipped] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    attempts: int = 0
    pending: int | None = None  # queue sequence number when queued
    error: str = ""  # why it was queued

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# --- preparing operations ----------------------------------------------------------------


def today(policy: Policy) -> str:
    """Today's date in the drive's time zone."""
    return today_in(policy)


# a terminal's escape sequences (CSI: colours, cursor moves; OSC: titles, links) and the
# other control characters: text pasted from a terminal keeps its words, not its codes
_TERMINAL_CODES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
                             "|[\x00" + fmt.CONTROL_CHARACTERS + "]")


def clean_text(text: str) -> str:
    """An entry is one line: every run of whitespace (newlines too) becomes one space;
    terminal escape sequences and control characters are dropped (the policy refuses
    them in a drive, MG308)."""
    return " ".join(_TERMINAL_CODES.sub("", text).split())


def normalize_topic(topic: str | None) -> str:
    """``projects/payments`` -> ``projects/payments.md``; default notes.md."""
    path = (topic or "").strip().strip("/")
    while path.startswith("./"):
        path = path[2:]
    if not path:
        return DEFAULT_TOPIC
    return path if path.endswith(".md") else path + ".md"


def credential_kind(line: str, policy: Policy | None = None) -> str | None:
    """The kind of the first possible credential in ``line`` (the policy's scanner)."""
    from memgit.policy.judge import secret_kinds

    kinds = secret_kinds(line, policy or Policy())
    return kinds[0] if kinds else None


def prepare_add(fact: NewFact | str, ref: int, policy: Policy, added: str, *,
                allow_reserved: bool = False, extra: Sequence[tuple[str, str]] = (),
                after: str = "", dedupe: bool = True, entry_id: str = "",
                scan: bool = True) -> WriteOp | Skipped:
    """Turn one new fact into an add operation, or say why it is skipped. ``entry_id``:
    the id to write (memgit import keeps the one its plan judged), else a new one.
    ``scan=False`` leaves the secret scan to the writer's judgement of the new file (memgit
    import: its texts come from lines the policy judged already)."""
    if isinstance(fact, str):
        fact = NewFact(fact)
    text = clean_text(fact.text)
    entry_id = entry_id or fmt.new_id()
    if not text:
        return Skipped(ref, "", "empty", "the text is empty")
    path = normalize_topic(fact.topic)
    problems = check_topic(path, policy, reserved_ok=allow_reserved)
    if problems:
        reason = "topic-reserved" if problems[0].code == "MG213" else "topic-invalid"
        return Skipped(ref, "", reason, f"{problems[0].code} "
                       f"{quote(problems[0].message, policy)}")
    if fact.added and not fmt.is_valid_date(fact.added):
        return Skipped(ref, "", "invalid", "added must be a real date YYYY-MM-DD")
    added = fact.added or added
    source = (fact.source or "").strip() or f"memgit:observation/{entry_id}"
    if not source_allowed(source, policy):
        return Skipped(ref, "", "source", "the source is not an allowed link or label "
                       "(https://..., TOOL:session/ID, TOOL:observation/ID, "
                       "imported:TOOL/PATH#LN, imported:unknown)")
    line = fmt.format_entry(text, source, added, entry_id)
    entry = fmt.parse_entry(line)
    for key, value in extra:
        assert entry is not None
        entry = entry.with_meta(key, value)
        line = entry.serialise()
    if entry is None or entry.id != entry_id or entry.text != text:
        return Skipped(ref, "", "invalid", "the text cannot be written as one entry line "
                       "(it ends with something that reads as metadata)")
    kind = credential_kind(line, policy) if scan else None
    if kind is not None:
        return Skipped(ref, "", "credential", f"possible credential: {kind}")
    return WriteOp("add", entry_id, path=path, line=line, after=after, dedupe=dedupe, ref=ref)


def prepare_edit(entry_id: str, text: str, ref: int,
                 policy: Policy | None = None) -> WriteOp | Skipped:
    text = clean_text(text)
    if not text:
        return Skipped(ref, entry_id, "empty", "the new text is empty")
    kind = credential_kind(text, policy)
    if kind is not None:
        return Skipped(ref, entry_id, "credential", f"possible credential: {kind}")
    return WriteOp("edit", entry_id, text=text, ref=ref)


def prepare_facts(adds: Sequence[NewFact | str], retire: Sequence[str] = (), *,
                  edits: Mapping[str, str] | None = None,
                  policy: Policy) -> tuple[list[WriteOp], list[Skipped]]:
    """What writer.commit_facts takes, as operations (final ids and dates) and the
    facts skipped; refs count the adds, then the retires, then the edits, from 0."""
    date = today(policy)
    ops: list[WriteOp] = []
    skipped: list[Skipped] = []
    for number, fact in enumerate(adds):
        prepared = prepare_add(fact, number, policy, date)
        (ops if isinstance(prepared, WriteOp) else skipped).append(prepared)  # type: ignore[arg-type]
    for number, entry_id in enumerate(retire, start=len(adds)):
        ops.append(WriteOp("retire", entry_id.strip(), ref=number))
    for number, (entry_id, text) in enumerate((edits or {}).items(),
                                              start=len(adds) + len(retire)):
        prepared_edit = prepare_edit(entry_id.strip(), text, number, policy)
        if isinstance(prepared_edit, WriteOp):
            ops.append(prepared_edit)
        else:
            skipped.append(prepared_edit)
    return ops, skipped


# --- small helpers for commands -------------------------------------------------------------


def describe_skipped(skipped: Sequence[Skipped]) -> list[str]:
    return [f"skipped #{s.ref + 1}{' ' + quote(s.id) if s.id else ''}: {s.reason} "
            f"({quote(s.detail)})" for s in skipped]


def result_lines(result: WriteResult) -> list[str]:
    """What the write commands print (never a secret; texts only of added entries)."""
    out: list[str] = []
    if result.status == "committed":
        parts = [f"{label} {len(items)}" for label, items in (
            ("added", result.added), ("retired", result.retired),
            ("edited", result.edited), ("updated", result.updated),
            ("files", result.rewritten)) if items]
        out.append(f"Committed {(result.commit or '')[:12]}: {', '.join(parts)}")
    elif result.status == "queued":
        out.append(f"Queued as pending write #{result.pending} ({result.error}); "
                   "it is retried on the next write or read")
    else:
        out.append("Nothing written")
    out.extend(f"  + {a.id} {a.path}" for a in result.added if a.path)
    out.extend(f"  - {i}" for i in result.retired)
    out.extend(f"  ~ {i}" for i in result.edited + result.updated)
    out.extend(f"  * {p}" for p in result.rewritten)
    if result.proposed:
        out.append(f"  proposed for review ({len(result.proposed)}): "
                   f"{' '.join(result.proposed)}; a person approves them: memgit review")
    out.extend("  " + line for line in describe_skipped(result.skipped))
    out.extend(f"  warning: {w}" for w in result.warnings)
    return out


def exit_status(result: WriteResult) -> int:
    """0 when something was written or queued (or nothing was asked), 1 when
    everything asked was skipped."""
    if result.status == "unchanged" and result.skipped:
        return 1
    return 0
