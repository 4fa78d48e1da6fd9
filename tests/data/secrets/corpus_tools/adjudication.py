"""Labelling rules applied to every source line, in both halves, before the split.

Mechanical rules only (no line is judged by looking at a scanner's output):

* a positive whose secret is a placeholder body (its longest alphanumeric run
  has three or fewer distinct characters: ``sk-lf-0000-...``, ``API-AAAA...``)
  is dropped: documentation placeholders are negatives by the gate's policy;
* a positive whose secret is an e-mail address or a host name only (trufflehog
  reports usernames and domains of some services) is dropped: not a credential;
* a positive whose secret is the value of an identifier field (``CLIENT_ID=``,
  ``sheet_id :=``, ``<id>``) on a line with no credential word: an id, not a
  credential (the fixture's secret half sits on another line);
* a positive with no secret text on its line (a multi-line fixture whose value
  starts on another line) is dropped;
* a documentation line (a negative of the "docs with placeholders" family) that holds
  a generated-looking value (a run of 12+ letters and digits with 3+ of each, such as
  ``token: "8e4b8ca8cf2c67"``) is dropped: the docs may show a working credential or a
  realistic example; either way it is not a placeholder, and it is no known secret.
"""

from __future__ import annotations

import re

_EMAIL = re.compile(r"^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$")
_HOST = re.compile(r"^(?:https?://)?[\w-]+(?:\.[\w-]+)+/?$")


_ID_NAME = re.compile(r"(?i)(?:^|[^a-z])(?:[a-z]+[ _-]?)?(?:id|sid|user(?:name)?|email|login)"
                      r"\d?[\"'>]?\s*(?::=|[:=]|\{)?\s*[\"'{]?$")
_CRED_WORD = re.compile(r"(?i)pass|secret|token|key|auth|cred|bearer|pwd")


def _is_id_value(rec: dict) -> bool:
    line, start = rec["line"], rec.get("start", 0)
    before = line[:start]
    return bool(_ID_NAME.search(before)) and not _CRED_WORD.search(
        line[: start] + line[start + len(rec.get("secret", "")) :])


def _generated_looking(line: str) -> bool:
    for run in re.findall(r"[A-Za-z0-9]{12,}", line):
        digits = sum(c.isdigit() for c in run)
        if digits >= 3 and len(run) - digits >= 3:
            return True
    return False


def _drop(rec: dict) -> bool:
    if rec["label"] != "pos":
        return rec.get("family") == "docs with placeholders" and _generated_looking(rec["line"])
    if rec.get("secret") and _is_id_value(rec):
        return True
    secret = rec.get("secret", "")
    runs = re.findall(r"[A-Za-z0-9]+", secret)
    body = max(runs, key=len) if runs else ""
    if not secret or len(set(body.lower())) <= 3:
        return True
    return bool(_EMAIL.match(secret) or _HOST.match(secret))


def apply(records: list[dict]) -> list[dict]:
    return [r for r in records if not _drop(r)]


def apply_independent(records: list[dict]) -> list[dict]:
    """The independent set: same mechanical rules for positives (a positive with no
    digit-bearing token is kept: its secret is a word, e.g. a password in prose)."""
    relabel = independent_relabel()
    out = []
    for rec in records:
        if rec["label"] == "neg" and rec["line"] in relabel:
            rec = {**rec, "label": "pos", "relabelled": True}
        if rec["label"] == "pos" and rec.get("secret") and _drop(rec):
            continue
        out.append(rec)
    return out


def independent_relabel() -> set[str]:
    import json
    from pathlib import Path

    data = json.loads((Path(__file__).parent / "independent_relabel.json").read_text())
    return set(data["lines"])
