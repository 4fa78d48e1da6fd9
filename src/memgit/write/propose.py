"""Writes the autonomy rules turn into proposals, or refuse (docs/review.md).

:func:`route` takes a write's operations and asks memgit.policy.autonomy.decide about
each: a ``direct`` operation is kept, a ``refuse``d one is skipped (MG613), a ``propose``d
one becomes a proposal: an add is written with ``status: proposed``; an edit becomes a
new proposed entry that ``replaces`` the old one (approved, it takes the old one's place);
a forget marks the entry ``review: forget`` (it stays active until approved). Every
proposal says who proposed it (``proposed-by``) and why. Routing is idempotent (a
proposal is never routed again), so the dream may route before its preview and the writer
again before it commits. A person's review (approve, reject, expiry) is not routed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from memgit.format import entries as fmt
from memgit.git.repository import Drive, commit_tree_id, ref_target, signature, tree_texts
from memgit.policy import autonomy as au
from memgit.policy.judge import quote
from memgit.policy.settings import Policy
from memgit.write.ops import Skipped, WriteOp, today


@dataclass(frozen=True)
class Actor:
    """Who writes, as the rules see it. ``agent``: the writer's name (an MCP client's);
    empty: the name in each entry's source label. ``why``: a proposal's reason.
    ``actions``: per operation ref, the dream's ``merge`` or ``prune`` instead of the
    operation's own edit or forget. ``review``: a person's review, or operations routed
    already (the dream's), never routed."""

    agent: str = ""
    why: str = ""
    actions: Mapping[int, str] = field(default_factory=dict)
    review: bool = False


@dataclass
class Routed:
    ops: list[WriteOp]
    skipped: list[Skipped]
    proposed: list[str]  # ids of the proposals written (entries, or entries marked)


def _author(drive: Drive) -> str:
    sig = signature(drive)
    return f"{sig.name} <{sig.email}>"


def head_entries(drive: Drive, policy: Policy) -> dict[str, tuple[str, fmt.Entry]]:
    """entry id -> (topic file, entry) at the branch head (first copy of an id)."""
    head = ref_target(drive, policy.branch_ref)
    if head is None:
        return {}
    out: dict[str, tuple[str, fmt.Entry]] = {}
    for path, text in tree_texts(drive, commit_tree_id(drive, head)).items():
        if path.endswith(".md") and not fmt.is_reserved(path):
            for _line, entry in fmt.parse_document(path, text).entries():
                out.setdefault(entry.id, (path, entry))
    return out


def _marks(agent: str, why: str) -> list[tuple[str, str]]:
    marks = [(au.PROPOSED_BY, au.clean_value(agent or "unknown", 80))]
    if why.strip():
        marks.append((au.WHY, au.clean_value(why)))
    return marks


def _with(line: str, pairs: Sequence[tuple[str, str]]) -> str:
    entry = fmt.parse_entry(line)
    assert entry is not None
    for key, value in pairs:
        entry = entry.with_meta(key, value)
    return entry.serialise()


def route(drive: Drive, ops: Sequence[WriteOp], policy: Policy,
          actor: Actor | None = None) -> Routed:
    """The operations as the drive's autonomy rules want them (see the module docstring)."""
    actor = actor or Actor()
    if actor.review or not au.has_rules(policy):
        return Routed(list(ops), [], [])
    author = _author(drive)
    located: dict[str, tuple[str, fmt.Entry]] | None = None
    out = Routed([], [], [])
    for op in ops:
        if op.kind in ("edit", "retire") and located is None:
            located = head_entries(drive, policy)
        _route_one(op, policy, actor, author, located or {}, out)
    return out


def _route_one(op: WriteOp, policy: Policy, actor: Actor, author: str,
               located: Mapping[str, tuple[str, fmt.Entry]], out: Routed) -> None:
    if op.kind not in ("add", "edit", "retire"):
        out.ops.append(op)
        return
    if op.kind == "add":
        entry = fmt.parse_entry(op.line)
        topic, source = op.path, entry.get("source") if entry is not None else ""
        already = entry is not None and au.is_proposal(entry.meta)
    else:
        found = located.get(op.id)
        if found is None:
            out.ops.append(op)  # the writer reports it as not found
            return
        topic, source = found[0], found[1].get("source")
        already = au.is_proposal(found[1].meta)
    action = actor.actions.get(op.ref) or {"add": "add", "edit": "edit",
                                           "retire": "forget"}[op.kind]
    agent = actor.agent or au.agent_of(source)
    decision = au.decide(policy, au.Write(action, topic, source, agent, author))
    if decision.decide == au.REFUSE:
        out.skipped.append(Skipped(op.ref, op.id, "refused", f"MG613 {action} in "
                                   f"{quote(topic, policy)} is refused by "
                                   f"{decision.describe()}"))
        return
    if decision.decide == au.DIRECT or already:
        out.ops.append(op)
        return
    who = agent or au.agent_of(source) or source or author
    marks = _marks(who, actor.why)
    if op.kind == "add":
        out.ops.append(WriteOp("add", op.id, path=op.path, after=op.after, dedupe=op.dedupe,
                               ref=op.ref, line=_with(op.line, [(au.STATUS, au.PROPOSED),
                                                                *marks])))
        out.proposed.append(op.id)
    elif op.kind == "edit":
        new_id = fmt.new_id()
        line = fmt.format_entry(op.text, source or f"memgit:observation/{new_id}",
                                today(policy), new_id)
        line = _with(line, [(au.STATUS, au.PROPOSED), *marks, (au.REPLACES, op.id)])
        out.ops.append(WriteOp("add", new_id, path=topic, line=line, after=op.id,
                               dedupe=False, ref=op.ref))
        out.proposed.append(new_id)
    else:
        for key, value in [(au.REVIEW, au.FORGET), *marks]:
            out.ops.append(WriteOp("set", op.id, key=key, value=value, ref=op.ref))
        out.proposed.append(op.id)
