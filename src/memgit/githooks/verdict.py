"""The verdict of a push and the lines pre-receive prints for it.

memgit.githooks.receive judges a push into a :class:`Verdict` (its :class:`Finding`\\ s);
:func:`report` turns it into the lines git relays to the pusher as ``remote: ...``.
Every value a line quotes (a path, a ref, a commit subject, a message) goes through
``policy.quote`` (possible credentials redacted, with the drive's extra rules) and
``safe_text.printable`` (no terminal escapes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memgit.policy.judge import ERROR, Violation, quote
from memgit.policy.settings import Policy
from memgit.safe_text import printable

SHORT = 10  # hex digits of a commit id in messages


@dataclass
class Finding:
    """A violation with where it was found: a ref, or a commit (first one it shows in)."""

    violation: Violation
    ref: str = ""
    commit: str = ""
    more: int = 0  # later commits of the push with the same violation


@dataclass
class Verdict:
    """What pre-receive found in a push: findings, commits judged, notes to print."""

    findings: list[Finding] = field(default_factory=list)
    subjects: dict[str, str] = field(default_factory=dict)
    commits: int = 0  # commits judged
    notes: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.violation.severity == ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.violation.severity != ERROR]

    @property
    def accepted(self) -> bool:
        return not self.errors


def shown(text: str, policy: Policy | None, limit: int = 300) -> str:
    """A value fit to print: possible credentials redacted, terminal escapes escaped."""
    return printable(quote(text, policy), limit)


def _violation_lines(finding: Finding, policy: Policy | None) -> list[str]:
    v = finding.violation
    where = shown(v.path, policy) if v.path else "(drive)"
    if v.line:
        where += f":{v.line}"
    tag = "" if v.severity == ERROR else " (warning)"
    more = ""
    if finding.more:
        more = f" (also in {finding.more} later commit{'s' if finding.more != 1 else ''})"
    return [f"  {where}: {v.code} {v.name}{tag}: {shown(v.message, policy)}{more}",
            f"    hint: {v.hint}"]


def report(verdict: Verdict, policy: Policy | None = None) -> list[str]:
    """The lines pre-receive prints (git shows each to the pusher as ``remote: ...``);
    ``policy``: the drive's, whose extra secret rules the quoting uses."""
    errors, warnings = verdict.errors, verdict.warnings
    if not errors and not warnings and not verdict.notes:
        return []
    lines: list[str] = []
    if errors:
        lines.append("memgit: push refused by the drive policy")
    groups: dict[tuple[str, str], list[Finding]] = {}
    for f in errors + warnings:
        groups.setdefault((f.ref, f.commit), []).append(f)
    for (ref, commit), items in groups.items():
        lines.append("")
        if ref:
            lines.append(shown(ref, policy))
        elif commit:
            subject = shown(verdict.subjects.get(commit, ""), policy, 72)
            lines.append(f"commit {commit[:SHORT]} {subject}")
        items.sort(key=lambda f: (f.violation.severity != ERROR, f.violation.path,
                                  f.violation.line, f.violation.code))
        for f in items:
            lines.extend(_violation_lines(f, policy))
    for note in verdict.notes:
        lines.append("")
        lines.append(f"memgit: note: {shown(note, policy)}")
    lines.append("")
    e, w = len(errors), len(warnings)
    counts = (f"{e} error{'s' if e != 1 else ''}, {w} warning{'s' if w != 1 else ''}")
    if errors:
        lines.append(f"memgit: {counts} found; nothing was accepted "
                     "(fix them and push again)")
    else:
        lines.append(f"memgit: push accepted with {counts}")
    return lines
