"""The verdict of a push and the lines pre-receive prints for it.

memgit.receive judges a push into a :class:`Verdict` (its :class:`Finding`\\ s);
:func:`report` turns it into the lines git relays to the pusher as ``remote: ...``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .hook_io import clean
from .policy import ERROR, Violation

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


def _subject(subject: str) -> str:
    """A commit subject fit to print: cleaned, and withheld when it looks like a secret."""
    from .secrets import scan_text

    if scan_text(subject):
        return "(subject not shown: it may hold a credential)"
    return clean(subject, 72)


def _violation_lines(finding: Finding) -> list[str]:
    v = finding.violation
    where = clean(v.path) if v.path else "(drive)"
    if v.line:
        where += f":{v.line}"
    tag = "" if v.severity == ERROR else " (warning)"
    more = ""
    if finding.more:
        more = f" (also in {finding.more} later commit{'s' if finding.more != 1 else ''})"
    return [f"  {where}: {v.code} {v.name}{tag}: {clean(v.message)}{more}",
            f"    hint: {v.hint}"]


def report(verdict: Verdict) -> list[str]:
    """The lines pre-receive prints (git shows each to the pusher as ``remote: ...``)."""
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
            lines.append(clean(ref))
        elif commit:
            subject = _subject(verdict.subjects.get(commit, ""))
            lines.append(f"commit {commit[:SHORT]} {subject}")
        items.sort(key=lambda f: (f.violation.severity != ERROR, f.violation.path,
                                  f.violation.line, f.violation.code))
        for f in items:
            lines.extend(_violation_lines(f))
    for note in verdict.notes:
        lines.append("")
        lines.append(f"memgit: note: {clean(note)}")
    lines.append("")
    e, w = len(errors), len(warnings)
    counts = (f"{e} error{'s' if e != 1 else ''}, {w} warning{'s' if w != 1 else ''}")
    if errors:
        lines.append(f"memgit: {counts} found; nothing was accepted "
                     "(fix them and push again)")
    else:
        lines.append(f"memgit: push accepted with {counts}")
    return lines
