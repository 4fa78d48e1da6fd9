"""Autonomy classes: which writes land, which wait for a person, which are refused.

memgit.yaml's ``autonomy:`` is a list of rules; the first rule that matches a write
decides it: ``direct`` (it lands), ``propose`` (it lands as a proposal, ``status:
proposed``, and waits for ``memgit approve``) or ``refuse``. No rule matching (and no
``autonomy:`` key) is ``direct``: today's behaviour. A rule matches on who writes (the
agent's name, the entry's source label, the commit author), where (the topic file), what
(add, edit, forget, a dream's merge or prune) and the drive's kind; a condition left out
matches everything. The writer (through memgit.write.propose), memgit import, the dream,
the MCP server and pre-receive all ask :func:`decide`; nothing else matches a rule.

``review:`` holds the review settings (:class:`ReviewSettings`).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memgit.errors import PolicyFileError

DIRECT, PROPOSE, REFUSE = "direct", "propose", "refuse"
DECISIONS = (DIRECT, PROPOSE, REFUSE)
ACTIONS = ("add", "edit", "forget", "merge", "prune")
# The metadata a proposal carries (docs/review.md): who proposed it and why, and for a
# proposed edit or merge the entries it replaces once approved.
STATUS, PROPOSED, REJECTED = "status", "proposed", "rejected"
PROPOSED_BY, WHY, REPLACES, REASON, REJECTED_ON = "proposed-by", "why", "replaces", "reason", \
    "rejected-on"
# A proposed forget (or prune) marks the entry itself, which stays active until approved.
REVIEW = "review"
FORGET = "forget"
PROPOSAL_KEYS = (STATUS, PROPOSED_BY, WHY, REPLACES, REVIEW)

_RULE_KEYS = {"agent", "source", "author", "topic", "action", "kind", "decide"}
_HINT = ("autonomy: [{topic: decisions.md, agent: '*', decide: propose}] "
         "(keys: agent, source, author, topic, action, kind, decide)")


@dataclass(frozen=True)
class Rule:
    """One row of ``autonomy:``: glob patterns (any of a list matches) and a decision."""

    decide: str
    agent: tuple[str, ...] = ()
    source: tuple[str, ...] = ()
    author: tuple[str, ...] = ()
    topic: tuple[str, ...] = ()
    action: tuple[str, ...] = ()
    kind: tuple[str, ...] = ()


@dataclass(frozen=True)
class Write:
    """One write as the rules see it. ``agent``: the writer's name (an MCP client's, or
    the source label's tool: ``claude-code`` of ``claude-code:session/1``); ``author``:
    the commit author, ``Name <email>``."""

    action: str
    topic: str
    source: str = ""
    agent: str = ""
    author: str = ""


@dataclass(frozen=True)
class Decision:
    """What the autonomy rules decided for a write (direct, propose or refuse) and which
    rule decided it."""

    decide: str
    rule: int  # the matching rule's position in autonomy: (from 1); 0 when none matched

    def describe(self) -> str:
        return f"autonomy rule {self.rule}" if self.rule else "the default"


@dataclass(frozen=True)
class ReviewSettings:
    """``review:``: how long rejected entries stay, when a proposal or entry is old."""

    keep_rejected_days: int = 30
    proposal_days: int = 7  # memgit audit: proposals waiting longer
    stale_days: int = 180  # memgit audit: never retrieved and older


def agent_of(source: str) -> str:
    """The tool part of a source label (``codex`` of ``codex:session/9``); "" for a URL."""
    if "://" in source:
        return ""
    return source.split(":", 1)[0] if ":" in source else ""


def _globs(value: Any, key: str, origin: str) -> tuple[str, ...]:
    items = value if isinstance(value, list) else [value]
    if not items or not all(isinstance(v, str) and v for v in items):
        raise PolicyFileError(f"{origin}: autonomy: {key} must be a pattern or a list of them",
                              _HINT)
    return tuple(items)


def parse_rules(value: Any, origin: str) -> Mapping[str, Any]:
    """``autonomy: [...]`` -> the Policy settings value (a tuple of :class:`Rule`)."""
    if not isinstance(value, list):
        raise PolicyFileError(f"{origin}: autonomy must be a list of rules", _HINT)
    rules: list[Rule] = []
    for n, item in enumerate(value, start=1):
        if not isinstance(item, Mapping):
            raise PolicyFileError(f"{origin}: autonomy rule {n} must be a mapping", _HINT)
        unknown = set(item) - _RULE_KEYS
        if unknown:
            raise PolicyFileError(f"{origin}: autonomy rule {n}: unknown key(s) "
                                  f"{', '.join(sorted(map(str, unknown)))}", _HINT)
        decide = item.get("decide")
        if decide not in DECISIONS:
            raise PolicyFileError(f"{origin}: autonomy rule {n}: decide must be one of "
                                  f"{', '.join(DECISIONS)}", _HINT)
        fields = {k: _globs(item[k], k, origin) for k in _RULE_KEYS - {"decide"} if k in item}
        bad = set(fields.get("action", ())) - set(ACTIONS)
        if bad:
            raise PolicyFileError(f"{origin}: autonomy rule {n}: unknown action(s) "
                                  f"{', '.join(sorted(bad))}",
                                  f"actions: {', '.join(ACTIONS)}")
        rules.append(Rule(decide=decide, **fields))
    return {"settings": tuple(rules)}


def parse_review(value: Any, origin: str) -> Mapping[str, Any]:
    """``review: {keep_rejected_days, proposal_days, stale_days}`` (positive integers)."""
    hint = "review: {keep_rejected_days: 30, proposal_days: 7, stale_days: 180}"
    if not isinstance(value, Mapping):
        raise PolicyFileError(f"{origin}: review must be a mapping", hint)
    known = ReviewSettings.__dataclass_fields__
    out: dict[str, int] = {}
    for key, number in value.items():
        if key not in known:
            raise PolicyFileError(f"{origin}: review: unknown key {key!r}", hint)
        if not isinstance(number, int) or isinstance(number, bool) or number < 1:
            raise PolicyFileError(f"{origin}: review.{key} must be a positive integer", hint)
        out[key] = number
    return {"settings": ReviewSettings(**out)}


def rules(policy: Any) -> tuple[Rule, ...]:
    """The policy's autonomy rules (none: every write is direct)."""
    found: tuple[Rule, ...] = policy.autonomy_rules()
    return found


def review_settings(policy: Any) -> ReviewSettings:
    found: ReviewSettings | None = policy.setting("review")
    return found or ReviewSettings()


def _any(patterns: Sequence[str], *values: str) -> bool:
    return not patterns or any(fnmatch.fnmatchcase(v, p) for p in patterns for v in values)


def matches(rule: Rule, write: Write, kind: str) -> bool:
    """Whether every condition of ``rule`` holds for ``write`` on a drive of ``kind``.
    ``author`` matches ``Name <email>``, the name or the email alone; a condition on
    who writes never matches a write that does not say it (an empty agent, source or author)."""
    name, _, email = write.author.partition(" <")
    who = [(rule.agent, (write.agent,)), (rule.source, (write.source,)),
           (rule.author, (write.author, name, email.rstrip(">")))]
    for patterns, values in who:
        if patterns and not any(values[:1]):
            return False
        if not _any(patterns, *values):
            return False
    return (_any(rule.topic, write.topic) and _any(rule.action, write.action)
            and _any(rule.kind, kind))


def decide(policy: Any, write: Write) -> Decision:
    """The decision for ``write``: the first matching rule's, else ``direct``."""
    for n, rule in enumerate(rules(policy), start=1):
        if matches(rule, write, policy.kind):
            return Decision(rule.decide, n)
    return Decision(DIRECT, 0)


def has_rules(policy: Any) -> bool:
    return bool(rules(policy))


def is_proposal(meta: Mapping[str, str]) -> bool:
    """A pending proposal: a proposed entry, or an entry marked for a proposed forget."""
    return meta.get(STATUS) == PROPOSED or meta.get(REVIEW) == FORGET


def clean_value(text: str, most: int = 200) -> str:
    """A text made a metadata value: no ``;``, ``[`` or ``]``, one line, at most ``most``
    characters (the format's values cannot hold them)."""
    value = " ".join(text.replace(";", ",").replace("[", "(").replace("]", ")").split())
    return value[:most]

