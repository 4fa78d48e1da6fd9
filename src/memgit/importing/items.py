"""The plan document of ``memgit import``: its items, its JSON, reading it back.

An :class:`Item` says what becomes of lines ``line``..``end`` of a source file; a
:class:`Plan` holds every item of a source and what the plan was judged against
(docs/import.md describes the JSON). plan.py builds plans, verdict.py judges them,
apply.py applies them; they share this model.
"""

from __future__ import annotations

import json
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memgit.errors import UsageError
from memgit.importing.markdown import ENTRY, REFUSED, STRUCTURE, VERBATIM
from memgit.policy.judge import ID_RE, quote

PLAN_FORMAT = "memgit-import-plan"
PLAN_VERSION = 2
READABLE_VERSIONS = (1, 2)  # a version 1 plan has no ids: apply makes them
PRESENT = "present"
ACTIONS = (ENTRY, PRESENT, REFUSED, VERBATIM, STRUCTURE)


@dataclass
class Item:
    """What becomes of lines ``line``..``end`` of source file ``path``."""

    path: str
    line: int
    end: int
    action: str
    reason: str = ""
    topic: str = ""
    text: str = ""
    context: str = ""
    added: str = ""
    source: str = ""
    meta: dict[str, str] = field(default_factory=dict)
    duplicate_of: str = ""
    id: str = ""  # the entry id it is written with (the source's own, or made by the plan)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "line": self.line, "end": self.end,
                               "action": self.action}
        if self.reason:
            out["reason"] = self.reason
        if self.action == REFUSED:
            return out  # never the refused text, nor anything derived from it
        for key in ("id", "topic", "text", "context", "added", "source", "duplicate_of"):
            value = getattr(self, key)
            if value:
                out[key] = value
        if self.meta:
            out["meta"] = dict(self.meta)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Item:
        meta = data.get("meta") or {}
        if not isinstance(meta, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                 for k, v in meta.items()):
            raise ValueError("meta must map strings to strings")
        kwargs: dict[str, Any] = {"meta": dict(meta)}
        for key in ("path", "action", "reason", "topic", "text", "context", "added", "source",
                    "duplicate_of", "id"):
            value = data.get(key, "")
            if not isinstance(value, str):
                raise ValueError(f"{key} must be a string")
            kwargs[key] = value
        for key in ("line", "end"):
            value = data.get(key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{key} must be a line number")
            kwargs[key] = value
        if kwargs["action"] not in ACTIONS:
            raise ValueError(f"action must be one of {', '.join(ACTIONS)}")
        if not kwargs["id"] and kwargs["meta"].get("id"):  # version 1 kept it in meta
            kwargs["id"] = kwargs["meta"].pop("id")
        if kwargs["id"] and not valid_id(kwargs["id"]):
            raise ValueError(f"id {quote(kwargs['id'])} is not a valid entry id")
        return cls(**kwargs)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass
class Plan:
    """A plan: what the source's items become, as judged against ``judged`` (the drive
    and its head, or an empty drive); ``overflow`` holds the drive limits the import
    would pass (with what to do), ``left_out`` the verbatim items apply cannot keep,
    ``not_read`` the source's files that are not the tool's memory."""

    tool: str
    name: str
    source: str
    created: str
    items: list[Item] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)
    judged: dict[str, str] = field(default_factory=dict)
    overflow: list[dict[str, Any]] = field(default_factory=list)
    left_out: list[dict[str, str]] = field(default_factory=list)
    not_read: dict[str, Any] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        """Items by action; an entry repeating an earlier one counts as ``duplicate``."""
        out = {action: 0 for action in ACTIONS}
        out["duplicate"] = 0
        for item in self.items:
            if item.action in (ENTRY, PRESENT) and item.duplicate_of:
                out["duplicate"] += 1
            else:
                out[item.action] += 1
        return out

    def entries(self) -> list[Item]:
        """The items that become entries (duplicates of earlier ones excluded)."""
        return [i for i in self.items if i.action == ENTRY and not i.duplicate_of]

    def as_dict(self) -> dict[str, Any]:
        return {"format": PLAN_FORMAT, "version": PLAN_VERSION, "tool": self.tool,
                "name": self.name, "source": self.source, "created": self.created,
                "judged": self.judged, "counts": self.counts(), "overflow": self.overflow,
                "left_out": self.left_out, "not_read": self.not_read, "files": self.files,
                "items": [i.as_dict() for i in self.items]}

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=1, ensure_ascii=False) + "\n"


def load_plan(path: str | Path) -> Plan:
    """Read a plan file; every mistake is a UsageError that names what is wrong."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read the plan {p}: {exc.strerror or exc}",
                         "write one with: memgit import plan SOURCE -o PLAN") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{p} is not a JSON plan: {exc}",
                         "write one with: memgit import plan SOURCE -o PLAN") from exc
    return plan_from_dict(data, str(p))


def plan_from_dict(data: Any, origin: str = "plan") -> Plan:
    hint = "make the plan again with: memgit import plan SOURCE -o PLAN"
    if not isinstance(data, dict) or data.get("format") != PLAN_FORMAT:
        raise UsageError(f"{origin} is not a memgit import plan", hint)
    if data.get("version") not in READABLE_VERSIONS:
        raise UsageError(f"{origin} has plan version {data.get('version')!r}; this memgit "
                         f"reads versions {', '.join(map(str, READABLE_VERSIONS))}", hint)
    items = data.get("items")
    if not isinstance(items, list):
        raise UsageError(f"{origin}: items must be a list", hint)
    plan = Plan(str(data.get("tool", "")), str(data.get("name", "")) or "import",
                str(data.get("source", "")), str(data.get("created", "")))
    for number, raw in enumerate(items, start=1):
        try:
            if not isinstance(raw, dict):
                raise ValueError("an item must be an object")
            plan.items.append(Item.from_dict(raw))
        except ValueError as exc:
            raise UsageError(f"{origin}: item {number}: {exc}", hint) from exc
    files = data.get("files", [])
    plan.files = [f for f in files if isinstance(f, dict)] if isinstance(files, list) else []
    judged = data.get("judged")
    if isinstance(judged, dict):
        plan.judged = {str(k): str(v) for k, v in judged.items()}
    not_read = data.get("not_read")
    if isinstance(not_read, dict) and isinstance(not_read.get("count"), int):
        plan.not_read = not_read
    for key in ("overflow", "left_out"):  # what the plan said; apply judges again
        said = data.get(key)
        if isinstance(said, list) and all(isinstance(o, dict) for o in said):
            setattr(plan, key, said)
    return plan


def imported_source(tool: str, path: str, line: int) -> str:
    """``imported:<tool>/<path>#L<line>``, the path percent-encoded so the value
    holds no blank, ``;``, ``[`` or ``]``."""
    return f"imported:{tool}/{urllib.parse.quote(path, safe='/-._~')}#L{line}"



def refuse(item: Item, reason: str) -> None:
    """Make ``item`` refused: its reason stays, its text and all derived from it go."""
    item.action, item.reason = REFUSED, reason
    item.text = item.context = item.source = item.topic = item.added = item.id = ""
    item.meta = {}


def valid_id(value: str) -> bool:
    return bool(value) and ID_RE.match(value) is not None


def line_extras(item: Item) -> list[tuple[str, str]]:
    """The metadata pairs an imported entry carries after source, added and id."""
    extras = [(k, v) for k, v in item.meta.items() if k != "id"]
    if item.context:
        extras.append(("context", item.context))
    return extras
