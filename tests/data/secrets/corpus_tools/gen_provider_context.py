"""Generate src/memgit/secrets/provider_context.json from secrets-patterns-db (and, since
round 17, keyhog's detector catalogue).

    python tests/data/secrets/corpus_tools/gen_provider_context.py           # both sources
    python tests/data/secrets/corpus_tools/gen_provider_context.py --keyhog  # keyhog's only

Takes the high-confidence "provider keyword, then a value of this shape within
40 characters" formats of mazen160/secrets-patterns-db (db/rules-stable.yml,
which collects trufflehog v3's and others' documented formats) and keeps the
ones whose value is long enough to be judged by its shape (at least 16
characters). Each becomes a record: id, kind, keyword, value (a regex).

Round 17 (issue 29) adds keyhog's catalogue (santhreal/keyhog ``detectors/*.toml``), the
providers of round 17's tuning units only (``foreign_r17/units.json``), so its held-out
third's providers stay unknown here: a detector pattern whose capture group is a value of
fixed shape (literal text and character classes with counts, at least 16 characters), not
named as an id, a public half or a place (``client_id``, ``public``, ``url``), becomes a
record keyed by the detector's service name (its first word, four or more letters and
digits: ``adobe`` for ``adobe-stock``), found inside an assignment's name (``IPINFO=``,
``ipinfo_token: "..."``; ``provider_context.py``). A service name that is ordinary in notes
(a word of the tuning half's negative lines, or a part of their words twice or more:
``render``, ``quire`` of ``required``) is left out: the prefilter would stop at it on
ordinary lines, and next to a value it says little of a credential. Records carry
``"from": "keyhog"``; ``--keyhog`` regenerates only them, keeping secrets-patterns-db's
records as they are.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import foreign_sources as r5  # noqa: E402
import foreign_sources_r17 as r17  # noqa: E402
from build_corpus import SPDB, head, show  # noqa: E402

from memgit.secrets import factoring  # noqa: E402

OUT = HERE.parents[3] / "src" / "memgit" / "secrets" / "provider_context.json"
_FORM = re.compile(r"^\(\?:([a-z0-9_.-]+)\)\.\{0,40\}\\b\((.+)\)\\b$")
_MIN = re.compile(r"\{(\d+)(?:,(\d*))?\}")


def min_len(value: str) -> int:
    total = 0
    for m in _MIN.finditer(value):
        total += int(m.group(1))
    return total


def spdb_formats() -> tuple[list[dict], str]:
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
    return out, f"{SPDB}@{head(SPDB)}:db/rules-stable.yml"


# a capture group of fixed shape: literal text and character classes with counts
_SHAPE = re.compile(r"(?:[A-Za-z0-9_.:-]|\[[^\]\\]*(?:\\.[^\]\\]*)*\]\{\d+(?:,\d*)?\})+")
_PIECE = re.compile(r"\[[^\]]*\]\{(\d+)(?:,\d*)?\}|[A-Za-z0-9_.:-]")
# what the regex says the value is, when it is no secret (an id, a public half, a place)
_NOT_SECRET = re.compile(r"(?i)(?:^|[^a-z])(?:id|ids|public|publishable|url|uri|endpoint|host"
                         r"|region|name|user(?:name)?|email|account|org(?:anization)?)(?:[^a-z]|$)")


def _group(regex: str) -> tuple[str, str] | None:
    """(what precedes it, the first capturing group) of ``regex`` (the project's regex walker:
    escapes and character classes skipped, parentheses counted)."""
    for i, c, _depth in factoring._walk(regex):
        if c == "(" and not regex.startswith("(?", i):
            return regex[:i], regex[i + 1: factoring._group_end(regex, i) - 1]
    return None


def _min_len(value: str) -> int:
    return sum(int(m.group(1)) if m.group(1) else 1 for m in _PIECE.finditer(value))


def _note_text() -> tuple[set[str], str]:
    """The words (four or more letters and digits) of the tuning half's negative lines, and
    their text in lower case."""
    words: set[str] = set()
    lines = []
    for line in (HERE.parent / "dev" / "lines.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec["label"] == "neg" and rec["split"] == "tune":
            words.update(w.lower() for w in re.findall(r"[A-Za-z0-9]{4,}", rec["line"]))
            lines.append(rec["line"].lower())
    return words, "\n".join(lines)


def _ordinary(keyword: str, words: set[str], text: str) -> bool:
    """A word of notes, or a part of their words (``quire`` of ``required``, ``consul`` of
    ``consult``) twice or more: the prefilter would stop at it on ordinary lines."""
    return keyword in words or text.count(keyword) >= 2


def keyhog_formats() -> tuple[list[dict], str]:
    split = r5.json.loads((r17.OUT / "units.json").read_text())
    words, text = _note_text()
    out: list[dict] = []
    for path in sorted(r5._files(r17.KEYHOG)):
        if not (path.startswith(r17.DETECTORS) and path.endswith(".toml")) or \
                split.get(r17.unit_of(path)) != "tune":
            continue
        det = tomllib.loads(r5._text(r17.KEYHOG, path) or "")["detector"]
        keyword = re.split(r"[^a-z0-9]+", str(det.get("service", "")).lower())[0]
        if len(keyword) < 4 or _ordinary(keyword, words, text):
            continue
        for pat in det.get("patterns", []):
            found = _group(pat["regex"]) if pat.get("group") == 1 else None
            if found is None:
                continue
            before, value = found
            if not _SHAPE.fullmatch(value) or _min_len(value) < 16 or \
                    _NOT_SECRET.search(before[-40:]):
                continue
            try:
                re.compile(value)
            except re.error:
                continue
            n = sum(r["id"].startswith("keyhog-" + det["id"]) for r in out)
            out.append({"id": "keyhog-" + det["id"] + (f"-{n + 1}" if n else ""),
                        "kind": det["name"], "keyword": keyword, "value": value,
                        "from": "keyhog"})
    return out, f"{r17.KEYHOG}@{r5._commit(r17.KEYHOG)}:detectors/ (round 17's tuning units)"


def main() -> None:
    if "--keyhog" in sys.argv:
        old = json.loads(OUT.read_text())
        spdb = [r for r in old["formats"] if r.get("from") != "keyhog"]
        source = old["source"]
    else:
        spdb, source = spdb_formats()
    seen = {(r["keyword"], r["value"]) for r in spdb}
    extra = []
    for rec in keyhog_formats()[0]:
        if (rec["keyword"], rec["value"]) not in seen:
            seen.add((rec["keyword"], rec["value"]))
            extra.append(rec)
    doc = {"source": source, "source_keyhog": keyhog_formats()[1], "formats": spdb + extra}
    OUT.write_text(json.dumps(doc, indent=0, sort_keys=True) + "\n")
    print(len(spdb), "+", len(extra), "formats ->", OUT)


if __name__ == "__main__":
    main()
