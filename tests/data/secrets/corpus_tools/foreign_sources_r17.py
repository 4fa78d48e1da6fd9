"""Round 17 (issue 29): an eleventh foreign set, split once by source unit into a tuning
two-thirds and a held-out third: a secret scanner's per-provider detector catalogue and
its detectors' own test cases.

    python tests/data/secrets/corpus_tools/foreign_sources_r17.py --split-only  # units.json
    python tests/data/secrets/corpus_tools/foreign_sources_r17.py               # ../foreign_r17/

Source (a mirror brought by the ``fetch`` tool; origins ``repository@commit:path:line`` on
every line). It was not used by an earlier round, and it is not the independent set:

* santhreal/keyhog (a Rust secret scanner, MIT or Apache-2.0): ``detectors/<id>.toml``, one
  file a detector (its provider's documentation address, the format, the regular
  expressions, and ``[[detector.tests]]`` cases), and
  ``crates/scanner/tests/contracts/<id>.toml`` (``[[positive]]``, ``[[negative]]`` and
  ``[[evasion]]`` cases with the credential each positive must surface).

**Units** are providers: a detector's or contract's file name up to its first hyphen
(``aws-access-key`` and ``aws-secret-key`` are the unit ``keyhog:aws``), so one provider's
detectors and tests fall in one part. The split was made from the file names alone (seed
2917, every third unit held out) and committed before any file was read.

**Lines.** A contract's ``[[positive]]`` and ``[[evasion]]`` cases are positive examples: the
line of the case's ``text`` that holds (the first line of) its ``credential`` is a positive,
that value the secret, synthesised as in rounds 5 to 16 (round 12's ``_synth``: the same
documented prefix, length and alphabet per position, so keyhog's typed samples such as
``aBcDeFgHiJ...`` become random values of their shape, and no value of the source lands
here). Every other line of a case, and the lines of ``[[negative]]`` cases, are labelled by
the written policy (round 12's ``_policy``, round 11's labeller): a line the source calls
clean that holds a credential by the policy is a positive with its reason (``relabel``); a
line holding one of the unit's positive credentials is never a negative. The detector
files' own ``[[detector.tests]]`` name no credential and are not used. A case whose text is
not a string, or whose credential no line holds, is left out and counted.

**Provenance, and what it means for the independent set.** keyhog's README credits
TruffleHog (detector breadth), Betterleaks (a gitleaks fork) and Titus (a Nosey Parker
port) for ideas; its formats may share regular expressions with gitleaks' and Nosey
Parker's rules, whose fixtures are the independent set. This round's own held-out third is
the clean measure of what it teaches; the independent set's figure after it is reported
beside the figure before it, with this caveat.
"""

from __future__ import annotations

import functools
import re
import sys
import tomllib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import foreign_sources as r5  # noqa: E402
import foreign_sources_r6 as r6  # noqa: E402
import foreign_sources_r12 as r12  # noqa: E402
import foreign_sources_r14 as r14  # noqa: E402

OUT = HERE.parent / "foreign_r17"
SEED = 2917
KEYHOG = "santhreal/keyhog"
DETECTORS = "detectors/"
CONTRACTS = "crates/scanner/tests/contracts/"
EARLIER = r14.EARLIER + tuple(f"{d}/{p}.jsonl" for d in ("foreign_r14", "foreign_r15", "foreign_r16")
                              for p in ("tuning", "heldout"))
SOURCE = "keyhog detector contracts"

# cases left out, by reason (counted, never printed line by line)
LEFT_OUT: Counter[str] = Counter()
_PART = ["tune"]
_CASE = re.compile(r"^\[\[(positive|negative|evasion)\]\]\s*$", re.M)
_TEXT = re.compile(r"^text\s*=", re.M)


def unit_of(path: str) -> str:
    """``detectors/aws-access-key.toml`` -> ``keyhog:aws`` (the provider's stem)."""
    name = path.rsplit("/", 1)[1].removesuffix(".toml")
    return "keyhog:" + name.split("-", 1)[0].lower()


def unit_files() -> dict[str, tuple[str, list[str]]]:
    """unit -> (repository, its detector and contract files), from the file names alone."""
    units: dict[str, tuple[str, list[str]]] = {}
    for path in r5._files(KEYHOG):
        if path.endswith(".toml") and (
                (path.startswith(DETECTORS) and path.count("/") == 1)
                or (path.startswith(CONTRACTS) and path.count("/") == 4)):
            units.setdefault(unit_of(path), (KEYHOG, []))[1].append(path)
    return units


def _cases(text: str) -> Iterator[tuple[str, dict, int]]:
    """(kind, case, 1-based line of its ``text =``) of a contract's cases, in file order."""
    data = tomllib.loads(text)
    seen: Counter[str] = Counter()
    for m in _CASE.finditer(text):
        kind = m.group(1)
        cases = data.get(kind) or []
        if seen[kind] >= len(cases):
            continue
        case = cases[seen[kind]]
        seen[kind] += 1
        at = _TEXT.search(text, m.end())
        yield kind, case, text.count("\n", 0, at.start() if at else m.start()) + 1


# an envelope of punctuation between a name and its value, as keyhog's case generator writes
# it (``hubspot_api_key = ::"':==VALUE``): four or more of = : ' " with blanks between
_ENVELOPE = re.compile(r"(?:[=:'\"][\s_.-]*){4,}$")
# a name that says its value is an id, a public half or a place, not a secret (the decision
# table: ids pass, and names built on public, or ending _name, _url, name something else)
_NOT_SECRET_NAME = re.compile(
    r"(?i)(?:client|account|project|app|site|org|tenant|secret)?[\s_.-]*id|dev[_-]?eui|public"
    r"|publishable|site[_-]?name|(?:base|rpc|webhook)?[_-]?url|region")
# a credential that is more than a token: a key header or phrase (spaces), a connection
# string's or a SAS query's key=value pairs, a host with a path; the shared synthesis reshapes
# every run of it, names and words included (``HostName=`` would become ``MwkcObqw=``)
_STRUCTURED = re.compile(r"\s|=.*[;&]|[;&].*=|\..*/|/.*\.")
# a negative case's value of letters and separators only, the case's word for what is wrong
# with it (``X_API_KEY=short``, ``client_token=akab-short``, ``RAILWAY_API_TOKEN=not-a-uuid``):
# the policy would read a literal, and the synthesis would invent a credential the source
# never wrote (one such value stood for 87 of the tuning part's positives), so it is not judged
_WORD_VALUE = re.compile(r"[=:]\s*[\"']?[A-Za-z_.-]*[A-Za-z][\"']?\s*$")
_NAME_BEFORE = re.compile(r"([A-Za-z][\w.-]*)[\s\"']*(?:[:=]{1,2}|\s)[\s\"']*$")


def _positive(line: str, value: str, col: int, common: dict, unit: str) -> Iterator[dict]:
    """A positive case's credential on its line (round 14's ``_positive``: synthesised, a
    placeholder or typed value not judged, base64 ``user:password`` keeping its user), with
    this round's label rules (written from tuning lines, applied to both parts): a value
    after an envelope of punctuation no syntax writes, a URL whose scheme the synthesis
    could not keep, or a credential with a structure (``_STRUCTURED``) is not judged; a value named as an id, a public half or a place
    (``client_id:``, ``PUBLISHABLE_KEY=``, ``SITE_NAME=``, ``DEVEUI=``) or a Stripe-style
    ``pk_test_`` key holds none by the decision table, and is not judged either (its value
    looks generated, which a negative of this corpus may not hold)."""
    before = line[:col]
    if _ENVELOPE.search(before.rstrip()) or ("://" in value and not value.startswith(
            ("http://", "https://", "wss://"))):
        LEFT_OUT[_PART[0] + ": an envelope of punctuation, or a URL of another scheme"] += 1
        return
    if _STRUCTURED.search(value) and "://" not in value:
        LEFT_OUT[_PART[0] + ": a credential with its structure (a header, key=value pairs, "
                 "a host and path), which the synthesis would reshape word by word"] += 1
        return
    name = _NAME_BEFORE.search(before)
    if (name and _NOT_SECRET_NAME.fullmatch(name.group(1).rsplit(".", 1)[-1].split("_", 1)[-1])
            ) or (name and re.search(r"(?i)public|publishable|client[_-]?id$|_id$|deveui|site_name",
                                     name.group(1))) or value.startswith("pk_test_"):
        LEFT_OUT[_PART[0] + ": a value named as an id, a public half or a place, or pk_test_"] += 1
        return
    yield from r14._positive(line, value, col, common, unit)


def contract(unit: str, path: str) -> Iterator[dict]:
    """A contract's lines: each positive case's credential line, synthesised, and every other
    line of its cases labelled by the written policy."""
    text = r5._text(KEYHOG, path)
    if text is None:
        LEFT_OUT[_PART[0] + ": a file that is not UTF-8"] += 1
        return
    commit = r5._commit(KEYHOG)
    cases = list(_cases(text))
    secrets = {str(c.get("credential") or "").split("\n", 1)[0].strip()
               for kind, c, _ in cases if kind != "negative"}
    secrets = {x for x in secrets if len(x) >= 8}
    for kind, case, at in cases:
        body, first = case.get("text"), ""
        if kind != "negative":
            first = str(case.get("credential") or "").split("\n", 1)[0].strip()
        if not isinstance(body, str):
            LEFT_OUT[_PART[0] + ": a case whose text is not a string"] += 1
            continue
        why = ("the source calls this case clean" if kind == "negative"
               else "the source marks another line of this case")
        common = {"source": SOURCE, "unit": unit, "origin": f"{KEYHOG}@{commit}:{path}:{at}"}
        done = False
        for _, line in r6.key_block_free_lines(body):
            if r12._skip(line):
                continue
            if first and not done and first in line:
                done = True
                url = r5._URL_PW.search(line)  # the password, not a user of that name
                col = url.start(1) if url and url.group(1) == first else line.index(first)
                yield from _positive(line, first, col, common, unit)
                continue
            for rec in r12._policy(line, common, path, why):
                if rec["label"] == "pos" and kind == "negative" and _WORD_VALUE.search(line):
                    LEFT_OUT[_PART[0] + ": a negative case's value that is a word (short)"] += 1
                    continue
                if rec["label"] == "pos" or not any(x in line for x in secrets):
                    yield rec
        if first and not done:
            LEFT_OUT[_PART[0] + ": a positive case whose credential no line holds"] += 1


def records_of(unit: str, repo: str, paths: list[str]) -> Iterator[dict]:
    """A unit's records from its contracts; an error while reading a held-out unit is
    counted by its type only (its message could quote the unit's text)."""
    _PART[0] = r14._PART[0] = r14.part_of(OUT).get(unit, "tune")
    for path in sorted(paths):
        if not path.startswith(CONTRACTS):
            continue
        recs = r5.read_guarded(functools.partial(contract, unit, path), _PART[0], LEFT_OUT)
        yield from r14.finished((r12._key_body_synth(r) for r in recs), _source(path),
                                LEFT_OUT, _PART[0])


@functools.cache
def _source(path: str) -> str:
    return r5._text(KEYHOG, path) or ""


_NOTE = ("Lines labelled by memgit's written policy (docs/security.md) against the "
         "source's own verdict, mechanically, by foreign_sources_r17.py (round 12's "
         "labeller): 'positives', lines of keyhog's cases that the source does not mark "
         "(or calls clean) that hold a credential by the policy; 'negatives', lines the "
         "source marks that the policy passes. The held-out part's are counted, not listed.")


def main() -> None:
    r5.build_and_report(unit_files(), records_of, OUT, SEED, EARLIER, _NOTE,
                        (LEFT_OUT, r14.LEFT_OUT))


if __name__ == "__main__":
    main()
