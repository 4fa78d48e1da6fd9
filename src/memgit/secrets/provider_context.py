"""Provider formats recognised by a provider name next to a value of a known shape.

The records live in ``provider_context.json`` (generated from secrets-patterns-db and,
since round 17, keyhog's detector catalogue, by
tests/data/secrets/corpus_tools/gen_provider_context.py): a keyword (the provider's
name as it appears in configuration) and the value's shape. A value counts when
it follows the keyword within 40 characters and looks generated (``token_like``).
Every record is one ``Rule`` keyed by its keyword, so the shared prefilter
dispatches only the providers named on a line.
"""

from __future__ import annotations

import json
from pathlib import Path

from .rules import Rule

CONTEXT_KIND = "provider credential"
# the rest of an assignment's name after the provider's, its operator and an opening quote
_IN_NAME = r"[A-Za-z0-9_.-]{0,30}[\"']?\s*(?::=|[:=])\s*[\"'`]?"


def load_context_formats() -> tuple[Rule, ...]:
    data = json.loads((Path(__file__).parent / "provider_context.json").read_text("utf-8"))
    out = []
    for rec in data["formats"]:
        # secrets-patterns-db's form: the value within 40 characters after the name; keyhog's
        # (round 17): the name inside the name of an assignment (IPINFO=, ipinfo_token: "...")
        gap = r"[^\n]{0,40}?" if "from" not in rec else _IN_NAME
        regex = (
            r"(?i:" + rec["keyword"] + r")" + gap + r"(?<![A-Za-z0-9])(?P<s>" + rec["value"]
            + r")(?![A-Za-z0-9])"
        )
        out.append(Rule(
            id="ctx-" + rec["id"], kind=CONTEXT_KIND, regex=regex,
            keywords=(rec["keyword"].lower(),), word_keywords=True, group="s",
            check="provider_value", locate="at",
            doc=rec.get("from", "secrets-patterns-db") + ": " + rec["kind"],
        ))
    return tuple(out)
