"""A range's verdict printed for people and for CI systems.

Every value taken from the drive (a path, a ref, a commit subject, a message) goes
through ``receive_report.shown``: possible credentials redacted with the drive's
rules, terminal escapes escaped. A finding never carries a secret's value: the
policy's messages name the kind of credential, never the text (docs/security.md),
and the quoting redacts anything that still looks like one.

Formats:

* ``text``: pre-receive's own report (``receive_report.report``) under one line
  naming the range;
* ``json``: ``{"range", "accepted", "commits", "errors", "warnings", "findings",
  "notes"}``;
* ``sarif``: SARIF 2.1.0, one result per finding, the rules that fired in
  ``tool.driver.rules`` (findings about the whole drive or a ref point at MEMORY.md,
  the drive's root document, since code scanning shows results at a file);
* ``github``: workflow commands (``::error file=...,line=...,title=...::message``);
  :func:`github_summary` is the Markdown written to ``$GITHUB_STEP_SUMMARY``;
* ``gitlab``: a code quality report (a JSON array of Code Climate issues).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from memgit import __version__
from memgit.forges.judge import RangeVerdict
from memgit.format.entries import MEMORY_FILE
from memgit.githooks.verdict import SHORT, Finding, report, shown
from memgit.policy.judge import ERROR
from memgit.policy.settings import Policy

FORMATS = ("text", "json", "sarif", "github", "gitlab")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFO_URI = "https://pypi.org/project/memgit/"  # the rules are in docs/rules.md


def finding_dict(finding: Finding, verdict: RangeVerdict, policy: Policy | None) -> dict[str, Any]:
    """One finding as JSON values, every drive value quoted."""
    v = finding.violation
    subject = verdict.verdict.subjects.get(finding.commit, "") if finding.commit else ""
    return {
        "code": v.code,
        "name": v.name,
        "severity": v.severity,
        "path": shown(v.path, policy) if v.path else "",
        "line": v.line,
        "message": shown(v.message, policy, 500),
        "hint": v.hint,
        "commit": finding.commit,
        "subject": shown(subject, policy, 72) if subject else "",
        "ref": shown(finding.ref, policy) if finding.ref else "",
        "also_in_later_commits": finding.more,
    }


def _items(verdict: RangeVerdict, policy: Policy | None) -> list[dict[str, Any]]:
    return [finding_dict(f, verdict, policy) for f in verdict.verdict.findings]


def _fingerprint(item: dict[str, Any]) -> str:
    """Stable across runs for the same problem at the same place (not the commit:
    the same finding on a rebased branch is the same problem)."""
    key = "\0".join([item["code"], item["path"], str(item["line"]), item["message"]])
    return hashlib.sha256(key.encode()).hexdigest()


def _range_name(verdict: RangeVerdict) -> str:
    base = verdict.base[:SHORT] if verdict.base else "(root)"
    return f"{base}..{verdict.head[:SHORT]}"


def render_text(verdict: RangeVerdict, policy: Policy | None, source: str = "") -> str:
    v = verdict.verdict
    head = f"memgit check: {_range_name(verdict)}"
    if source:
        head += f" ({shown(source, policy)})"
    head += f": {v.commits} commit{'s' if v.commits != 1 else ''} judged"
    lines = [head] + report(v, policy)
    if not v.findings and not v.notes:
        lines.append("memgit: no problem found")
    return "\n".join(lines) + "\n"


def render_json(verdict: RangeVerdict, policy: Policy | None, source: str = "") -> str:
    v = verdict.verdict
    out = {
        "range": {"base": verdict.base, "head": verdict.head, "source": source},
        "accepted": v.accepted,
        "commits": v.commits,
        "errors": len(v.errors),
        "warnings": len(v.warnings),
        "findings": _items(verdict, policy),
        "notes": [shown(n, policy) for n in v.notes],
    }
    return json.dumps(out, indent=2, ensure_ascii=False) + "\n"


def render_sarif(verdict: RangeVerdict, policy: Policy | None, source: str = "") -> str:
    items = _items(verdict, policy)
    codes = sorted({i["code"] for i in items})
    rules = [{"id": code, "name": _rule_name(code),
              "shortDescription": {"text": _rule_name(code)},
              "help": {"text": _rule_hint(code)}} for code in codes]
    results = []
    for item in items:
        where = item["path"] or MEMORY_FILE
        region = {"startLine": item["line"]} if item["line"] and item["path"] else None
        location: dict[str, Any] = {"physicalLocation": {
            "artifactLocation": {"uri": where, "uriBaseId": "%SRCROOT%"}}}
        if region:
            location["physicalLocation"]["region"] = region
        text = item["message"]
        if not item["path"]:
            text = f"(drive) {text}"
        if item["commit"]:
            text += f" (commit {item['commit'][:SHORT]})"
        results.append({
            "ruleId": item["code"],
            "ruleIndex": codes.index(item["code"]),
            "level": "error" if item["severity"] == ERROR else "warning",
            "message": {"text": text},
            "locations": [location],
            "partialFingerprints": {"memgitFinding/v1": _fingerprint(item)},
        })
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "memgit", "version": __version__,
                            "informationUri": INFO_URI, "rules": rules}},
        "results": results,
        "columnKind": "unicodeCodePoints",
        "properties": {"range": _range_name(verdict), "source": source},
    }
    doc = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _rule_name(code: str) -> str:
    from memgit.policy.codes import RULES

    return RULES[code][0]


def _rule_hint(code: str) -> str:
    from memgit.policy.codes import RULES

    return RULES[code][1]


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(verdict: RangeVerdict, policy: Policy | None, source: str = "") -> str:
    """Workflow commands: one ``::error``/``::warning`` per finding, a closing notice."""
    lines = []
    for item in _items(verdict, policy):
        kind = "error" if item["severity"] == ERROR else "warning"
        props = []
        if item["path"]:
            props.append(f"file={_escape_property(item['path'])}")
            if item["line"]:
                props.append(f"line={item['line']}")
        props.append(f"title={_escape_property(item['code'] + ' ' + item['name'])}")
        where = f" (commit {item['commit'][:SHORT]})" if item["commit"] else ""
        message = f"{item['message']}{where}. hint: {item['hint']}"
        lines.append(f"::{kind} {','.join(props)}::{_escape_data(message)}")
    v = verdict.verdict
    summary = (f"memgit check {_range_name(verdict)}: {len(v.errors)} errors, "
               f"{len(v.warnings)} warnings in {v.commits} commits")
    lines.append(f"::notice title=memgit check::{_escape_data(summary)}")
    return "\n".join(lines) + "\n"


def github_summary(verdict: RangeVerdict, policy: Policy | None, source: str = "") -> str:
    """The job summary (GitHub-flavoured Markdown); table cells escape ``|``."""
    v = verdict.verdict
    state = "refused" if not v.accepted else "accepted"
    out = [f"## memgit check: {state}", "",
           f"Range `{_range_name(verdict)}`" + (f" ({_md(shown(source, policy))})"
                                                if source else "")
           + f": {v.commits} commits, {len(v.errors)} errors, {len(v.warnings)} warnings.", ""]
    items = _items(verdict, policy)
    if items:
        out += ["| | code | where | commit | message |", "|---|---|---|---|---|"]
        for item in items:
            mark = "error" if item["severity"] == ERROR else "warning"
            where = item["path"] + (f":{item['line']}" if item["line"] else "") or "(drive)"
            commit = item["commit"][:SHORT] if item["commit"] else item["ref"]
            out.append(f"| {mark} | {item['code']} {item['name']} | {_md(where)} | "
                       f"{_md(commit)} | {_md(item['message'])} |")
        out.append("")
    return "\n".join(out) + "\n"


def _md(text: str) -> str:
    """A table cell: pipes and backticks escaped, no HTML."""
    return (text.replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`")
            .replace("<", "&lt;").replace(">", "&gt;"))


_GITLAB_SEVERITY = {ERROR: "major"}


def render_gitlab(verdict: RangeVerdict, policy: Policy | None, source: str = "") -> str:
    issues = []
    for item in _items(verdict, policy):
        text = f"{item['code']} {item['name']}: {item['message']}"
        if item["commit"]:
            text += f" (commit {item['commit'][:SHORT]})"
        issues.append({
            "type": "issue",
            "check_name": item["code"],
            "description": text,
            "content": {"body": item["hint"]},
            "categories": ["Security"] if item["code"].startswith("MG4") else ["Style"],
            "fingerprint": _fingerprint(item),
            "severity": _GITLAB_SEVERITY.get(item["severity"], "minor"),
            "location": {"path": item["path"] or MEMORY_FILE,
                         "lines": {"begin": item["line"] or 1}},
        })
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"


RENDERERS = {"text": render_text, "json": render_json, "sarif": render_sarif,
             "github": render_github, "gitlab": render_gitlab}


def render(kind: str, verdict: RangeVerdict, policy: Policy | None, source: str = "") -> str:
    return RENDERERS[kind](verdict, policy, source)
