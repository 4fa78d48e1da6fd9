"""The autonomy rules on a pushed change (pre-receive, memgit check, the gate).

Which entries a change adds, edits or removes, and what memgit.policy.autonomy decides
for each: an active entry written where its writer may only propose is MG612, a write
the rules refuse MG613. A proposal itself (``status: proposed``, a ``review: forget``
mark, a rejection) is judged only for refusal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memgit.format import entries as fmt
from memgit.policy.autonomy import (
    FORGET,
    PROPOSE,
    PROPOSED,
    PROPOSED_BY,
    REFUSE,
    REJECTED,
    REVIEW,
    STATUS,
    Write,
    agent_of,
    decide,
    has_rules,
    is_proposal,
)
from memgit.policy.judge import Violation, quote


def _entries(files: Mapping[str, str | None]) -> dict[str, tuple[str, Any]]:
    """entry id -> (path, Entry) over topic files' texts (None: absent)."""
    out: dict[str, tuple[str, Any]] = {}
    for path, text in files.items():
        if text is None or not path.endswith(".md") or fmt.is_reserved(path):
            continue
        for _line, entry in fmt.parse_document(path, text).entries():
            out.setdefault(entry.id, (path, entry))
    return out


def classify(old: Mapping[str, str | None],
             new: Mapping[str, str | None]) -> list[tuple[str, str, Any]]:
    """The entry changes between two versions of the same files, as (action, path, entry):
    an active entry that appears (``add``, an approval too), changes its text (``edit``),
    leaves (``forget``); a new or changed proposal (``propose``: judged only for refusal).
    Moving an entry between the files is no change of its own."""
    before, after = _entries(old), _entries(new)
    out: list[tuple[str, str, Any]] = []
    for entry_id, (path, entry) in after.items():
        was = before.get(entry_id)
        meta = entry.meta
        if meta.get(STATUS) in (PROPOSED, REJECTED) or meta.get(REVIEW) == FORGET:
            if was is None or was[1].serialise() != entry.serialise():
                out.append(("propose", path, entry))
            continue
        if meta.get(STATUS, "active") not in ("active", ""):
            continue  # questions and answers: the board's own rules
        if was is None or was[1].meta.get(STATUS) == PROPOSED:
            out.append(("add", path, entry))
        elif was[1].text != entry.text:
            out.append(("edit", path, entry))
    for entry_id, (path, entry) in before.items():
        if entry_id not in after and not is_proposal(entry.meta) \
                and entry.meta.get(STATUS) != REJECTED:
            out.append(("forget", path, entry))
    return out


def check_entries(old: Mapping[str, str | None], new: Mapping[str, str | None], author: str,
                  policy: Any) -> list[Any]:
    """The autonomy rules on a pushed change: an active entry written, edited or removed
    where this writer may only propose (MG612), or not at all (MG613)."""
    if not has_rules(policy):
        return []
    out = []
    for action, path, entry in classify(old, new):
        source = entry.get("source")
        agent = entry.get(PROPOSED_BY) if action == "propose" else ""
        write = Write("add" if action == "propose" else action, path, source,
                      agent or agent_of(source), author)
        decision = decide(policy, write)
        if decision.decide == REFUSE:
            out.append(Violation("MG613", path, 0, f"{action} of entry {quote(entry.id)} is "
                                 f"refused by {decision.describe()}"))
        elif decision.decide == PROPOSE and action != "propose":
            out.append(Violation("MG612", path, 0, f"{action} of entry {quote(entry.id)} "
                                 f"needs a proposal ({decision.describe()})"))
    return out
