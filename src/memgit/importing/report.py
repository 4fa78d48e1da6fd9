"""What ``import plan`` and ``import apply`` print: a summary a person can read.

Per source file: the entries (and the files they go to, parts counted), entries the
drive has already, repeats, verbatim blocks, structure, and the refused lines grouped
by reason with their line numbers; then the totals, the drive limits the import would
pass with what to do, and (apply) the items whose verdict changed since the plan.
``--verbose`` adds one line per item; ``--json`` prints :func:`summary` instead. No
refused text is ever printed: a refused item holds its reason and line only.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from memgit.importing.items import PRESENT, Item, Plan
from memgit.importing.layout import split_name
from memgit.importing.markdown import ENTRY, REFUSED, STRUCTURE, VERBATIM
from memgit.safe_text import printable

COLUMNS = ("entries", "present", "repeated", "verbatim", "refused", "structure")
LOCATIONS_SHOWN = 8  # line numbers shown per refusal reason, then a count


def _column(item: Item) -> str:
    if item.action in (ENTRY, PRESENT) and item.duplicate_of:
        return "repeated"
    return {ENTRY: "entries", PRESENT: "present", VERBATIM: "verbatim", REFUSED: "refused",
            STRUCTURE: "structure"}[item.action]


def per_file(plan: Plan) -> dict[str, dict[str, Any]]:
    """Source path -> counts per column, the files its entries go to, its refusals by
    reason (line numbers) and its verbatim items left out."""
    out: dict[str, dict[str, Any]] = {}
    left = {o["item"] for o in plan.left_out}
    for item in plan.items:
        row = out.setdefault(item.path, {**{c: 0 for c in COLUMNS}, "files": set(),
                                         "refused_by": {}, "left_out": 0})
        row[_column(item)] += 1
        if item.action in (ENTRY, PRESENT) and not item.duplicate_of and item.topic:
            row["files"].add(item.topic)
        if item.action == REFUSED:
            row["refused_by"].setdefault(_reason(item.reason), []).append(item.line)
        if item.action == VERBATIM and item.where in left:
            row["left_out"] += 1
    return out


def _reason(reason: str) -> str:
    """A refusal's reason without the line it names (lines are listed apart)."""
    return reason.split(" (line ", 1)[0].split(" (front matter key ", 1)[0]


def summary(plan: Plan) -> dict[str, Any]:
    """The summary as JSON values."""
    files = per_file(plan)
    topics = {i.topic for i in plan.items if i.action == ENTRY and not i.duplicate_of}
    return {
        "tool": plan.tool, "name": plan.name, "judged": plan.judged, "counts": plan.counts(),
        "topic_files": len(topics),
        "split_notes": sum(1 for row in files.values() if _parts(row["files"]) > 1),
        "left_out": len(plan.left_out), "overflow": plan.overflow,
        "not_read": plan.not_read.get("count", 0),
        "files": {path: {**{c: row[c] for c in COLUMNS}, "files": sorted(row["files"]),
                         "refused_by": row["refused_by"], "left_out": row["left_out"]}
                  for path, row in files.items()},
    }


def _parts(files: set[str]) -> int:
    chains = Counter(split_name(f)[0] for f in files)
    return max(chains.values(), default=0)


def lines(plan: Plan, *, verbose: bool = False, created: str = "entries") -> list[str]:
    """The summary as text: a row per file, refusals grouped, totals, limits."""
    files = per_file(plan)
    counts = plan.counts()
    width = min(60, max((len(p) for p in files), default=4))
    out = [f"  {'file':<{width}}  " + " ".join(f"{c:>9}" for c in COLUMNS)]
    for path, row in files.items():
        out.append(f"  {_cut(path, width):<{width}}  "
                   + " ".join(f"{row[c]:>9}" for c in COLUMNS))
        if row["files"] and (len(row["files"]) > 1 or path not in row["files"]):
            out.append(f"      -> {_files(row['files'])}")
        for reason, numbers in row["refused_by"].items():
            shown = ", ".join(str(n) for n in numbers[:LOCATIONS_SHOWN])
            more = f" and {len(numbers) - LOCATIONS_SHOWN} more" if len(numbers) > \
                LOCATIONS_SHOWN else ""
            out.append(f"      refused: {reason}: line{'s' if len(numbers) > 1 else ''} "
                       f"{shown}{more}")
        if row["left_out"]:
            out.append(f"      verbatim left out: {row['left_out']}")
    topics = {i.topic for i in plan.items if i.action == ENTRY and not i.duplicate_of}
    split = sum(1 for row in files.values() if _parts(row["files"]) > 1)
    out.append(f"Total: {counts['entry']} {created} in {len(topics)} files"
               + (f" ({split} notes split into parts under the file limit)" if split else "")
               + f", {counts['present']} already in the drive, {counts['duplicate']} repeated "
               f"in the source, {counts['verbatim']} verbatim ({len(plan.left_out)} left out), "
               f"{counts['refused']} refused, {counts['structure']} structure.")
    if plan.not_read.get("count"):
        out.append(f"Not read: {plan.not_read['count']} files, "
                   f"{plan.not_read.get('why', 'not memory')} (e.g. "
                   f"{', '.join(plan.not_read.get('first', [])[:3])}).")
    for over in plan.overflow:
        out.append(f"Over the drive's limits: {over['message']}. Before applying:")
        out.extend(f"  - {step}" for step in over["what_to_do"])
    if verbose:
        out.append("Items:")
        out.extend("  " + item_line(item) for item in plan.items)
    return [printable(line) for line in out]


def item_line(item: Item) -> str:
    """One item: where, what, why, and where it goes."""
    where = f"{item.path}:{item.line}" + (f"-{item.end}" if item.end > item.line else "")
    what = "repeated" if item.duplicate_of else item.action
    tail = f" -> {item.topic}" if item.topic and item.action in (ENTRY, PRESENT) else ""
    why = f" ({item.reason})" if item.reason else ""
    dup = f" (same text as {item.duplicate_of})" if item.duplicate_of else ""
    return f"{where}: {what}{why}{dup}{tail}"


def _files(files: set[str]) -> str:
    chains = Counter(split_name(f)[0] for f in files)
    return ", ".join(first + (f" (+{n - 1} part{'s' if n > 2 else ''})" if n > 1 else "")
                     for first, n in sorted(chains.items()))


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else "…" + text[-(width - 1):]


def changed_lines(changed: list[dict[str, str]], *, verbose: bool = False) -> list[str]:
    """Apply's items whose verdict differs from the plan's, counted by change; every one
    with ``verbose``."""
    if not changed:
        return []
    kinds = Counter((c["was"].split(" in ", 1)[0], c["now"].split(" in ", 1)[0])
                    for c in changed)
    out = [f"Changed since the plan: {len(changed)} items ("
           + ", ".join(f"{n} {was} -> {now}" for (was, now), n in kinds.most_common()) + ")"]
    if verbose:
        out.extend(printable(f"  {c['item']}: {c['was']} -> {c['now']}"
                             + (f" ({c['reason']})" if c["reason"] else "")) for c in changed)
    return out
