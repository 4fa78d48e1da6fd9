"""Proposals: listing them, approving and rejecting them, removing old rejected ones.

A proposal is an entry with ``status: proposed`` (an add, or an edit that ``replaces`` an
entry), or an active entry marked ``review: forget``; the writer makes them where the
drive's autonomy rules say ``propose`` (memgit.write.propose). They are never indexed,
so never recalled and never in the context packet. Approving is one commit by the person
who approves (the writer's identity): the entry keeps its id and becomes active (the
entries it replaces are retired; a marked entry is retired). Rejecting sets ``status:
rejected`` with the reason and the day; :func:`expire` (memgit maintain) removes a
rejected entry ``review.keep_rejected_days`` after that day.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from memgit.errors import UsageError
from memgit.format import entries as fmt
from memgit.git.repository import Drive
from memgit.policy import autonomy as au
from memgit.policy.judge import quote
from memgit.policy.settings import Policy
from memgit.write.ops import (
    WriteOp,
    WriteResult,
    clean_text,
    credential_kind,
    prepare_edit,
    today,
)
from memgit.write.propose import Actor, head_entries
from memgit.write.writer import apply_write_ops

PERSON = Actor(review=True)


@dataclass(frozen=True)
class Proposal:
    """One pending proposal (``kind``: add, edit or forget) or rejected entry."""

    id: str
    path: str
    kind: str
    text: str
    proposed_by: str
    why: str
    added: str
    replaces: tuple[str, ...] = ()
    status: str = au.PROPOSED
    reason: str = ""
    rejected_on: str = ""

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["replaces"] = list(self.replaces)
        return out


def _proposal(path: str, entry: fmt.Entry) -> Proposal | None:
    meta = entry.meta
    status = meta.get(au.STATUS, "")
    if status not in (au.PROPOSED, au.REJECTED) and meta.get(au.REVIEW) != au.FORGET:
        return None
    replaces = tuple(meta.get(au.REPLACES, "").split())
    kind = "forget" if status not in (au.PROPOSED, au.REJECTED) else (
        "edit" if replaces else "add")
    return Proposal(entry.id, path, kind, entry.text, meta.get(au.PROPOSED_BY, ""),
                    meta.get(au.WHY, ""), meta.get("added", ""), replaces,
                    status or au.PROPOSED, meta.get(au.REASON, ""),
                    meta.get(au.REJECTED_ON, ""))


def listing(drive: Drive, policy: Policy, *, rejected: bool = False,
            by: str | None = None) -> list[Proposal]:
    """The pending proposals (with ``rejected``: the rejected entries instead), in file
    order; ``by``: only those proposed by this name."""
    out = []
    for path, entry in head_entries(drive, policy).values():
        found = _proposal(path, entry)
        if found is None or (found.status == au.REJECTED) != rejected:
            continue
        if by is not None and found.proposed_by != by:
            continue
        out.append(found)
    return out


def _pending(drive: Drive, policy: Policy, ids: Sequence[str]) -> list[Proposal]:
    if not ids:
        raise UsageError("no proposal id given", "list them: memgit review")
    found = {p.id: p for p in listing(drive, policy)}
    missing = [i for i in ids if i not in found]
    if missing:
        raise UsageError(f"not a pending proposal: {quote(', '.join(missing), policy)}",
                         "list the pending proposals: memgit review")
    return [found[i] for i in dict.fromkeys(ids)]


def approve(drive: Drive, ids: Sequence[str], *, text: str | None = None,
            policy: Policy) -> WriteResult:
    """Make the proposals active in one commit (``text``: the one proposal's new text)."""
    chosen = _pending(drive, policy, ids)
    if text is not None and len(chosen) != 1:
        raise UsageError("--text approves one proposal with a new text",
                         "give one id with --text, or approve the others without it")
    ops: list[WriteOp] = []
    for n, p in enumerate(chosen):
        if p.kind == "forget":
            ops.append(WriteOp("retire", p.id, ref=n))
            continue
        if text is not None:
            edit = prepare_edit(p.id, text, n, policy)
            if not isinstance(edit, WriteOp):
                raise UsageError(f"the new text is refused: {edit.reason} ({edit.detail})",
                                 "approve with another text, or without --text")
            ops.append(edit)
        for key in (au.STATUS, au.REPLACES):
            ops.append(WriteOp("set", p.id, key=key, value="", ref=n))
        ops.extend(WriteOp("retire", old, ref=n) for old in p.replaces)
    subject = f"Approve {len(chosen)} proposal{'s' if len(chosen) != 1 else ''}"
    return apply_write_ops(drive, ops, subject, policy=policy, actor=PERSON)


def reject(drive: Drive, ids: Sequence[str], *, reason: str, policy: Policy) -> WriteResult:
    """Mark the proposals rejected (kept ``review.keep_rejected_days``, never recalled);
    a proposed forget is withdrawn (the entry stays as it was)."""
    reason = au.clean_value(clean_text(reason))
    if not reason:
        raise UsageError("a rejection needs a reason", "memgit reject ID --reason 'why not'")
    if credential_kind(reason, policy) is not None:
        raise UsageError("the reason holds a possible credential", "write it without one")
    chosen = _pending(drive, policy, ids)
    ops: list[WriteOp] = []
    day = today(policy)
    for n, p in enumerate(chosen):
        if p.kind == "forget":
            ops.extend(WriteOp("set", p.id, key=k, value="", ref=n)
                       for k in (au.REVIEW, au.PROPOSED_BY, au.WHY))
            continue
        ops.extend(WriteOp("set", p.id, key=k, value=v, ref=n) for k, v in (
            (au.STATUS, au.REJECTED), (au.REASON, reason), (au.REJECTED_ON, day)))
    subject = f"Reject {len(chosen)} proposal{'s' if len(chosen) != 1 else ''}"
    return apply_write_ops(drive, ops, subject, policy=policy, actor=PERSON)


def expired(drive: Drive, policy: Policy, day: _dt.date) -> list[Proposal]:
    """Rejected entries whose ``rejected-on`` is more than keep_rejected_days before
    ``day`` (one without a readable day counts from its ``added`` date)."""
    keep = au.review_settings(policy).keep_rejected_days
    out = []
    for p in listing(drive, policy, rejected=True):
        since = p.rejected_on or p.added
        try:
            when = _dt.date.fromisoformat(since)
        except ValueError:
            continue
        if (day - when).days > keep:
            out.append(p)
    return out


def expire(drive: Drive, policy: Policy, day: _dt.date | None = None,
           *, dry_run: bool = False) -> tuple[list[Proposal], WriteResult | None]:
    """Remove the rejected entries past their time in one commit (memgit maintain)."""
    import zoneinfo

    day = day or _dt.datetime.now(zoneinfo.ZoneInfo(policy.timezone)).date()
    gone = expired(drive, policy, day)
    if not gone or dry_run:
        return gone, None
    ops = [WriteOp("retire", p.id, ref=n) for n, p in enumerate(gone)]
    result = apply_write_ops(drive, ops, f"Remove {len(gone)} rejected entries",
                             policy=policy, actor=PERSON)
    return gone, result
