"""Code checks every suggestion of a proposal before anything is applied (docs/dream.md).

Suggestions are judged in a fixed order; nothing a rejected one says is applied, and text
a suggestion writes passes the policy, the secret gate and the purge registry like any
write. Reasons never contain a detected secret: model-given values go through
``policy.quote``, and a suggested text that holds one is withheld.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from memgit.dream.rule_based import PRUNE_DAYS
from memgit.dream.snapshot import Snapshot
from memgit.format import entries as fmt
from memgit.policy.judge import ERROR, check_blob, check_topic, quote, secret_kinds
from memgit.policy.registry import PurgeRegistry
from memgit.policy.settings import Policy
from memgit.write.ops import clean_text, normalize_topic

KINDS = ("merges", "contradictions", "prunes", "lessons")
KIND_NAMES = {"merges": "merge", "contradictions": "contradiction", "prunes": "prune",
              "lessons": "lesson"}
MAX_TEXT = 1000
MAX_SUGGESTIONS = 200
DEFAULT_LESSON_TOPIC = "lessons"
_SHOWN = 64  # characters of a model-given id or text shown in a reason


@dataclass
class Suggestion:
    """An accepted suggestion, normalised: ``ids`` every entry it touches, ``keep`` the
    entry that stays (merge, contradiction), ``text`` its new text or the lesson's."""

    kind: str  # merge, contradiction, prune, lesson
    index: int  # position in its list of the proposal (0-based)
    ids: list[str] = field(default_factory=list)
    keep: str = ""
    text: str = ""
    turns: list[str] = field(default_factory=list)
    topic: str = ""
    reason: str = ""

    @property
    def label(self) -> str:
        return f"{self.kind} #{self.index + 1}"

    @property
    def retired(self) -> list[str]:
        return [i for i in self.ids if i != self.keep]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Rejection:
    kind: str
    index: int
    check: str
    reason: str
    ids: tuple[str, ...] = ()
    text: str = ""  # the suggestion's text, or "" when withheld or absent

    @property
    def label(self) -> str:
        return f"{self.kind} #{self.index + 1}"

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "index": self.index, "check": self.check,
                "reason": self.reason, "ids": list(self.ids), "text": self.text}


@dataclass
class Checked:
    accepted: list[Suggestion] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)
    ignored_keys: list[str] = field(default_factory=list)


class _Reject(Exception):
    def __init__(self, check: str, reason: str) -> None:
        super().__init__(reason)
        self.check = check
        self.reason = reason


def shown(value: object, policy: Policy | None = None) -> str:
    """A model-given value fit for a reason: one line, possible credentials redacted
    (policy.quote), then cut short."""
    text = quote(" ".join(str(value).split()), policy)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."


def usable(proposal: object) -> str | None:
    """Why a model's answer cannot be used at all (the run fails), or None."""
    if not isinstance(proposal, Mapping):
        return f"the proposal is a {type(proposal).__name__}, not a JSON object"
    if proposal and not any(k in proposal for k in KINDS):
        return ("the proposal has none of the keys merges, contradictions, lessons, prunes "
                f"(it has {', '.join(shown(k) for k in list(proposal)[:5])})")
    return None


class _Checker:
    def __init__(self, snapshot: Snapshot, policy: Policy, registry: PurgeRegistry,
                 prune: bool) -> None:
        self.snap = snapshot
        self.policy = policy
        self.registry = registry
        self.prune = prune
        self.touched: dict[str, str] = {}

    # --- fields ---------------------------------------------------------------------

    def ids(self, item: Mapping[str, Any], key: str = "ids") -> list[str]:
        raw = item.get(key)
        if not isinstance(raw, list) or not all(isinstance(i, str) and i for i in raw):
            raise _Reject("shape", f"{key} must be a list of entry ids")
        return [i.strip() for i in raw]

    def entry_ids(self, ids: Sequence[str], label: str) -> None:
        unknown = [i for i in ids if i not in self.snap.by_id]
        if unknown:
            raise _Reject("unknown-id", f"unknown id {shown(unknown[0], self.policy)} "
                          "(not an entry of the snapshot)")
        seen: set[str] = set()
        for i in ids:
            if i in seen:
                raise _Reject("touched-twice", f"{i} is listed twice")
            seen.add(i)
            if i in self.touched:
                raise _Reject("touched-twice", f"{i} is already touched by "
                              f"{self.touched[i]}")

    def turns(self, item: Mapping[str, Any]) -> list[str]:
        raw = item.get("turns", [])
        if not isinstance(raw, list) or not all(isinstance(t, str) for t in raw):
            raise _Reject("shape", "turns must be a list of turn ids")
        for t in raw:
            if t.strip() not in self.snap.turn_ids:
                raise _Reject("turn-not-shown", f"turn {shown(t, self.policy)} was not shown "
                              "to the proposer")
        return list(dict.fromkeys(t.strip() for t in raw))

    def text(self, value: object, path: str, *, required: bool) -> str:
        if value is None and not required:
            return ""
        if not isinstance(value, str):
            raise _Reject("shape", "text must be a string")
        if "\n" in value.strip() or "\r" in value.strip():
            raise _Reject("text", "the text spans several lines (an entry is one line)")
        text = clean_text(value)
        if not text:
            raise _Reject("text", "the text is empty")
        if len(text) > MAX_TEXT:
            raise _Reject("text", f"the text has {len(text)} characters (at most {MAX_TEXT})")
        kinds = secret_kinds(text, self.policy)
        if kinds:
            raise _Reject("text", f"possible credential: {kinds[0]}")
        line = fmt.format_entry(text, "memgit:observation/check", "2000-01-01", "m-check")
        entry = fmt.parse_entry(line)
        if entry is None or entry.text != text or entry.id != "m-check":
            raise _Reject("text", "the text cannot be written as one entry line (it ends "
                          "with something that reads as metadata)")
        facts = check_blob(path, f"# Check\n\n{line}\n".encode(), self.policy)
        errors = [v for v in facts.violations if v.severity == ERROR]
        if errors:
            v = errors[0]
            raise _Reject("text", f"the policy refuses the text: {v.code} {v.name}: "
                          f"{quote(v.message, self.policy)}")
        if self.registry.holds_text(text):
            raise _Reject("text", "this text was purged from the drive and may not return")
        return text

    # --- kinds ------------------------------------------------------------------------

    def merge(self, item: Mapping[str, Any], index: int) -> Suggestion:
        ids = self.ids(item)
        label = f"merge #{index + 1}"
        self.entry_ids(ids, label)
        if len(ids) < 2:
            raise _Reject("too-few-ids", "a merge names at least two entries")
        turns = self.turns(item)
        keep = self.snap.by_id[ids[0]]
        text = self.text(item.get("text"), keep.path, required=True)
        return Suggestion("merge", index, ids, ids[0], text, turns,
                          reason=_reason(item, self.policy))

    def contradiction(self, item: Mapping[str, Any], index: int) -> Suggestion:
        ids = self.ids(item)
        self.entry_ids(ids, f"contradiction #{index + 1}")
        if len(ids) < 2:
            raise _Reject("too-few-ids", "a contradiction names at least two entries")
        keep = item.get("keep")
        if not isinstance(keep, str) or keep.strip() not in ids:
            raise _Reject("keep-not-listed", f"keep {shown(keep, self.policy)} is not one of "
                          "the contradiction's ids")
        keep = keep.strip()
        turns = self.turns(item)
        text = self.text(item.get("text"), self.snap.by_id[keep].path, required=False)
        return Suggestion("contradiction", index, ids, keep, text, turns,
                          reason=_reason(item, self.policy))

    def prune_one(self, item: Mapping[str, Any], index: int) -> Suggestion:
        entry_id = item.get("id")
        if not isinstance(entry_id, str) or not entry_id.strip():
            raise _Reject("shape", "id must be an entry id")
        entry_id = entry_id.strip()
        self.entry_ids([entry_id], f"prune #{index + 1}")
        if not self.prune:
            raise _Reject("prune-off", "pruning is off (set dream.prune: true in memgit.yaml)")
        entry = self.snap.by_id[entry_id]
        if entry.retrievals:
            raise _Reject("prune-retrieved", f"{entry_id} was retrieved {entry.retrievals} "
                          "time(s); only never-retrieved entries are pruned")
        if entry.age_days is None or entry.age_days < PRUNE_DAYS:
            age = "has no added date" if entry.age_days is None \
                else f"is {entry.age_days} days old"
            raise _Reject("prune-young", f"{entry_id} {age}; only entries at least "
                          f"{PRUNE_DAYS} days old are pruned")
        return Suggestion("prune", index, [entry_id], "", "", [],
                          reason=_reason(item, self.policy))

    def lesson(self, item: Mapping[str, Any], index: int) -> Suggestion:
        turns = self.turns(item)
        if not turns:
            raise _Reject("lesson-without-turn", "a lesson cites at least one turn it was "
                          "learned from")
        topic = item.get("topic") or DEFAULT_LESSON_TOPIC
        if not isinstance(topic, str):
            raise _Reject("shape", "topic must be a path such as lessons or projects/x")
        path = normalize_topic(topic)
        problems = check_topic(path, self.policy)
        if problems:
            raise _Reject("topic", f"topic {shown(path, self.policy)}: {problems[0].code} "
                          f"{problems[0].message}")
        text = self.text(item.get("text"), path, required=True)
        return Suggestion("lesson", index, [], "", text, turns, path,
                          reason=_reason(item, self.policy))


def _reason(item: Mapping[str, Any], policy: Policy) -> str:
    reason = item.get("reason")
    return shown(reason, policy) if isinstance(reason, str) else ""


def check(proposal: Mapping[str, Any], snapshot: Snapshot, policy: Policy, *,
          prune: bool, registry: PurgeRegistry | None = None) -> Checked:
    """Judge every suggestion of ``proposal`` (see the module docstring)."""
    checker = _Checker(snapshot, policy, registry or PurgeRegistry(), prune)
    out = Checked(ignored_keys=sorted(shown(k, policy) for k in proposal if k not in KINDS))
    judges = {"merges": checker.merge, "contradictions": checker.contradiction,
              "prunes": checker.prune_one, "lessons": checker.lesson}
    for key in KINDS:
        kind = KIND_NAMES[key]
        items = proposal.get(key, [])
        if items is None:
            continue
        if not isinstance(items, list):
            out.rejected.append(Rejection(kind, 0, "shape", f"{key} must be a list"))
            continue
        for index, item in enumerate(items):
            if index >= MAX_SUGGESTIONS:
                out.rejected.append(Rejection(kind, index, "too-many",
                                              f"at most {MAX_SUGGESTIONS} {key} per run"))
                continue
            if not isinstance(item, Mapping):
                out.rejected.append(Rejection(kind, index, "shape",
                                              f"each of {key} must be an object"))
                continue
            try:
                suggestion = judges[key](item, index)
            except _Reject as why:
                out.rejected.append(_rejection(kind, index, why, item, policy))
                continue
            for entry_id in suggestion.ids:
                checker.touched[entry_id] = suggestion.label
            out.accepted.append(suggestion)
    return out


def _rejection(kind: str, index: int, why: _Reject, item: Mapping[str, Any],
               policy: Policy) -> Rejection:
    raw_ids = item.get("ids", [item.get("id")] if "id" in item else [])
    ids = tuple(shown(i, policy) for i in raw_ids) if isinstance(raw_ids, list) else ()
    text = item.get("text")
    keep_text = ""
    if isinstance(text, str) and not secret_kinds(text, policy):
        keep_text = " ".join(text.split())[:MAX_TEXT]
    return Rejection(kind, index, why.check, why.reason, ids, keep_text)
