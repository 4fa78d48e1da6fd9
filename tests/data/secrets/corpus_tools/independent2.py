"""A second independent set (issue 29, stop 45): kingfisher's rule examples, never tuned on.

    python tests/data/secrets/corpus_tools/independent2.py   # ../independent2/lines.jsonl

The independent set of record (``independent/``: gitleaks' and Nosey Parker's fixtures) has
moved by four lines in thirteen rounds, and stop 44's note asked whether to name another.
This one is offered as that candidate, built and scored once, by counts, and never read:

* mongodb/kingfisher (a secret scanner that began from Nosey Parker's rules and adds
  providers of its own): ``data/rules/*.yml``, each rule's ``examples`` (positives by the
  source) and ``negative_examples``. Its lines are correlated with the first independent
  set (the same family of rules); a line already in it, in the corpus or in a foreign
  round is left out.

**Labels**, mechanical, written before any line was scored and without reading one (the
builder prints counts only):

* a positive example's secret is the first capturing group of the rule's own pattern
  (Python's ``re``; the whole match when it has none), its line the example's line that
  holds the secret's first line; an example the pattern does not compile for or does not
  match in Python is left out (counted);
* a rule whose name names no credential (an id, a user name, a host, a URL, a bucket, an
  ARN, a region, an e-mail address: ``AWS Account ID``), unless it also names a key, a
  secret, a token, a password or a credential, gives no positive (as the first independent
  set dropped ARNs, bucket names and ids);
* the corpus's adjudication (``adjudication._drop``: a placeholder body, an e-mail address
  or a host name, an id field's value on a line with no credential word) and the foreign
  rounds' typed-value rules (``foreign_sources_r12._value_passes``, ``foreign_sources_r13._runs``,
  ``EXAMPLE``, ``xxxx``, an elided value) drop a positive;
* a negative example is a negative unless the foreign rounds' policy labeller (round 12's
  ``_policy``) reads a credential on it, which makes it a positive.

Values are kept as the source wrote them (public test strings), as in the first independent
set; origins ``repository@commit:path`` on every line.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import adjudication  # noqa: E402
import foreign_sources as r5  # noqa: E402
import foreign_sources_r12 as r12  # noqa: E402
import foreign_sources_r13 as r13  # noqa: E402
import foreign_sources_r17 as r17  # noqa: E402

OUT = HERE.parent / "independent2"
KINGFISHER = "mongodb/kingfisher"
EARLIER = ("dev/lines.jsonl", "independent/lines.jsonl",
           *r17.EARLIER, "foreign_r17/tuning.jsonl", "foreign_r17/heldout.jsonl")
LEFT_OUT: Counter[str] = Counter()
# what a rule's name says its match is, when that is no credential
_NOT_CREDENTIAL = re.compile(r"(?i)\b(?:id|ids|identifier|account|user ?name|login|host ?name|"
                             r"url|uri|endpoint|bucket|arn|region|e-?mail|domain|org(?:anization)?)\b")
_CREDENTIAL = re.compile(r"(?i)key|secret|token|passw|pwd|credential|auth|cookie|session|jwt|pat\b")


def _compiled(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except re.error:
        return None


def _secret(rx: re.Pattern[str], text: str) -> tuple[str, int] | None:
    """(secret, offset in ``text``) of the rule's first match: its first group's, or the
    whole match's."""
    m = rx.search(text)
    if m is None:
        return None
    for i in range(1, (rx.groups or 0) + 1):
        if m.group(i):
            return m.group(i), m.start(i)
    return m.group(0), m.start()


def _dotted_token(value: str) -> bool:
    """A token with dots (``SG.<22>.<43>``, ``dt0c01.<24>.<64>``, a JWT): the adjudication's
    host test would read it as a host name; a label of 16 characters or more, or one that
    mixes letters and digits past eight, is no host's."""
    parts = value.split(".")
    return len(parts) > 1 and any(len(p) >= 16 or (len(p) > 8 and re.search(r"\d", p)
                                                    and re.search(r"[A-Za-z]", p))
                                  for p in parts)


def _host(value: str) -> bool:
    """A host name (``api.example.com``): dotted labels ending in a top-level domain's
    letters, none of them a token's."""
    return (adjudication._HOST.match(value) is not None and not _dotted_token(value)
            and re.search(r"\.[A-Za-z]{2,24}/?$", value) is not None)


def _typed(value: str) -> bool:
    return (r12._value_passes(value, "") or bool(r13._runs(value))
            or re.search(r"(?i)example|x{4}|\.\.\.$|…$", value) is not None)


def positives(rule: dict, origin: str) -> Iterator[dict]:
    name = str(rule.get("name", ""))
    if _NOT_CREDENTIAL.search(name) and not _CREDENTIAL.search(name):
        LEFT_OUT["a rule naming no credential (an id, a host, a URL...)"] += len(
            rule.get("examples") or [])
        return
    rx = _compiled(str(rule.get("pattern", "")))
    for example in rule.get("examples") or []:
        if rx is None:
            LEFT_OUT["a pattern Python's re does not compile"] += 1
            continue
        found = _secret(rx, str(example))
        if found is None:
            LEFT_OUT["an example the pattern does not match in Python"] += 1
            continue
        secret, at = found
        first = secret.split("\n", 1)[0]
        line_start = str(example).rfind("\n", 0, at) + 1
        line_end = str(example).find("\n", at)
        line = str(example)[line_start: line_end if line_end >= 0 else None].strip()
        if not first.strip() or first not in line:
            LEFT_OUT["a secret on no single line"] += 1
            continue
        rec = {"line": line, "label": "pos", "kind": name, "secret": first,
               "start": line.index(first), "source": "kingfisher rule examples",
               "unit": "kingfisher:" + str(rule.get("id", name)), "origin": origin}
        if _host(first):
            LEFT_OUT["a positive that is a host name"] += 1
            continue
        if (adjudication._drop(rec) and not _dotted_token(first)) or _typed(first) or \
                (_dotted_token(first) and adjudication._drop({**rec, "secret": "tok"
                                                              + first.replace(".", "")})):
            LEFT_OUT["a positive the adjudication or the typed-value rules drop"] += 1
            continue
        if not 8 <= len(line) <= 500:
            LEFT_OUT["a line shorter than 8 or longer than 500 characters"] += 1
            continue
        yield rec


def negatives(rule: dict, origin: str) -> Iterator[dict]:
    common = {"source": "kingfisher rule examples",
              "unit": "kingfisher:" + str(rule.get("id", rule.get("name", ""))), "origin": origin}
    for example in rule.get("negative_examples") or []:
        for line in str(example).split("\n"):
            if r12._skip(line):
                continue
            recs = list(r12._policy(line, common, "", "the source calls this example clean"))
            if not recs:
                LEFT_OUT["a negative line the labeller leaves out"] += 1
            yield from recs


def main() -> None:
    commit = r5._commit(KINGFISHER)
    known = r5.known_lines(*EARLIER)
    out: list[dict] = []
    for path in sorted(r5._files(KINGFISHER)):
        if not (path.startswith("data/rules/") and path.endswith(".yml")):
            continue
        doc = yaml.safe_load(r5._text(KINGFISHER, path) or "") or {}
        origin = f"{KINGFISHER}@{commit}:{path}"
        for rule in doc.get("rules") or []:
            for rec in [*positives(rule, origin), *negatives(rule, origin)]:
                if rec["line"] in known:
                    LEFT_OUT["a line already in the corpus, a foreign round or the first "
                             "independent set"] += 1
                    continue
                known.add(rec["line"])
                out.append(rec)
    OUT.mkdir(exist_ok=True)
    (OUT / "lines.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n"
                                             for r in out))
    pos = sum(r["label"] == "pos" for r in out)
    print(f"{len({r['unit'] for r in out})} rules, {pos} positives, {len(out) - pos} negatives")
    for reason, count in sorted(LEFT_OUT.items()):
        print(f"left out: {reason}: {count}")


if __name__ == "__main__":
    main()
