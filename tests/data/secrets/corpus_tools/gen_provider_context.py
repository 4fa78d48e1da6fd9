"""Generate src/memgit/secrets/provider_context.json from secrets-patterns-db.

    python tests/data/secrets/corpus_tools/gen_provider_context.py

Takes the high-confidence "provider keyword, then a value of this shape within
40 characters" formats of mazen160/secrets-patterns-db (db/rules-stable.yml,
which collects trufflehog v3's and others' documented formats) and keeps the
ones whose value is long enough to be judged by its shape (at least 16
characters). Each becomes a record: id, kind, keyword, value (a regex).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from build_corpus import SPDB, head, show  # noqa: E402

OUT = HERE.parents[3] / "src" / "memgit" / "secrets" / "provider_context.json"
_FORM = re.compile(r"^\(\?:([a-z0-9_.-]+)\)\.\{0,40\}\\b\((.+)\)\\b$")
_MIN = re.compile(r"\{(\d+)(?:,(\d*))?\}")


def min_len(value: str) -> int:
    total = 0
    for m in _MIN.finditer(value):
        total += int(m.group(1))
    return total


def main() -> None:
    data = yaml.safe_load(show(SPDB, "db/rules-stable.yml"))
    out = []
    seen = set()
    for entry in data["patterns"]:
        p = entry["pattern"]
        if p["confidence"] != "high":
            continue
        m = _FORM.match(p["regex"])
        if not m:
            continue
        keyword, value = m.group(1), m.group(2)
        if len(keyword) < 4 or min_len(value) < 16:
            continue
        try:
            re.compile(value)
        except re.error:
            continue
        name = re.sub(r"\s*-\s*\d+$", "", p["name"]).strip()
        key = (keyword, value)
        if key in seen:
            continue
        seen.add(key)
        out.append({"id": re.sub(r"[^a-z0-9]+", "-", p["name"].lower()).strip("-"),
                    "kind": name, "keyword": keyword, "value": value})
    doc = {"source": f"{SPDB}@{head(SPDB)}:db/rules-stable.yml", "formats": out}
    OUT.write_text(json.dumps(doc, indent=0, sort_keys=True) + "\n")
    print(len(out), "formats ->", OUT)


if __name__ == "__main__":
    main()
