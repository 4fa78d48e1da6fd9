"""memgit observe: one turn of a conversation, kept for the next dream.

A turn is cut to ``MAX_CHARS``, refused whole when it holds a possible credential (the
message names the kind, never the value), and kept in the state database, never in the
tracked tree; an incognito turn is stored nowhere. Turns older than
``dream.observations_days`` are deleted by the next dream or ``memgit maintain``.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import asdict, dataclass

from memgit import state
from memgit.errors import RefusedError, UsageError
from memgit.format import entries as fmt
from memgit.git.repository import Drive
from memgit.policy.judge import secret_kinds
from memgit.policy.settings import Policy
from memgit.state import observations

MAX_CHARS = 600
ROLES = ("user", "assistant", "tool")
_SESSION_RE = re.compile(r"[A-Za-z0-9._:/@+=~-]{1,128}\Z")
# control characters other than tab and newline are dropped from a turn
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


@dataclass(frozen=True)
class Observed:
    id: str | None  # None: incognito, nothing stored
    stored: bool
    chars: int  # characters kept
    truncated: bool

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def clean(text: str) -> str:
    return _CONTROL_RE.sub("", text).strip()


def observe(drive: Drive, text: str, *, session: str = "", role: str = "user",
            incognito: bool = False, policy: Policy | None = None,
            now: _dt.datetime | None = None) -> Observed:
    """Store one turn (see the module docstring); returns its id."""
    if role not in ROLES:
        raise UsageError(f"unknown role {role!r}", f"use one of {', '.join(ROLES)}")
    session = session.strip()
    if session and not _SESSION_RE.match(session):
        raise UsageError("the session id must be 1-128 letters, digits or ._:/@+=~-",
                         "pass the agent's own session id, e.g. --session 2026-05-01-a")
    text = clean(text)
    if not text:
        raise UsageError("the turn is empty", "pass TEXT, or - with the text on stdin")
    if incognito:
        return Observed(None, False, 0, False)
    kept = text[:MAX_CHARS].rstrip()
    kinds = secret_kinds(text, policy or Policy()) or secret_kinds(kept, policy or Policy())
    if kinds:
        raise RefusedError(f"the turn was not stored: it holds a possible credential "
                           f"({kinds[0]})", hint="leave the credential out of what agents "
                           "observe; say where it lives instead")
    turn = observations.Turn("t-" + fmt.new_id()[2:], state.stamp(now or _dt.datetime.now(_dt.UTC)),
                             session, role, kept)
    observations.add(state.connection(drive.git_dir), turn)
    return Observed(turn.id, True, len(kept), len(kept) < len(text))


def apply_retention(drive: Drive, days: int, now: _dt.datetime | None = None) -> int:
    """Delete the turns older than ``days`` days; returns how many."""
    cutoff = (now or _dt.datetime.now(_dt.UTC)) - _dt.timedelta(days=days)
    return observations.delete_before(state.connection(drive.git_dir), cutoff)
