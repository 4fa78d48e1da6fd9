"""Round 18 (issue 29): a twelfth foreign set, split once by source unit into a tuning
two-thirds and a held-out third: infrastructure templates and application code that
static analysers flag for hard-coded credentials.

    python tests/data/secrets/corpus_tools/foreign_sources_r18.py --split-only  # units.json
    python tests/data/secrets/corpus_tools/foreign_sources_r18.py               # ../foreign_r18/

Sources (mirrors brought by the ``fetch`` tool; origins ``repository@commit:path:line`` on
every line). None was used by an earlier round, and none is an independent set (gitleaks',
Nosey Parker's, kingfisher's and betterleaks' material stays out):

* stelligent/cfn_nag (a CloudFormation linter, MIT): ``spec/test_templates/{json,yaml}/``,
  its rules' test templates; the templates whose file names name a password, secret,
  credential, token or authentication (``MasterUserPassword``, ``AuthToken``, an Amplify
  ``AccessToken``, a Pinpoint channel's ``TokenKey``, a DMS endpoint's ``Password``...), a
  unit a resource folder (``yaml/rds_dbinstance``).
* Bearer/bearer-rules (a SAST tool's rules, Elastic-2.0 for the rules, its tests' code
  fixtures): ``tests/<language>/<area>/<rule>/testdata/*`` of the rules on hard-coded
  secrets and database passwords (Go, Java, JavaScript, PHP, Python, Ruby), a unit a rule.
  Its ``go/gosec/secrets`` tests are a port of gosec's, round 13's source: left out.
* security-code-scan/security-code-scan (a Roslyn analyser, LGPL-3.0): its hard-coded
  password tests (``SecurityCodeScan.Test/Tests/Password/*.cs``, C# and VB inside the test
  strings), a unit a file.

**The split** is by source unit, made once from the paths alone (sorted, shuffled with seed
2918, every third unit held out) and stored in ``foreign_r18/units.json``, committed before
any file was read.

**Lines.** Each file's lines are labelled by the written policy (round 13's labeller: code
fixes for Bearer's and security-code-scan's code, none for the templates); none of the
sources marks lines, so no label carries the source's verdict. security-code-scan's programs
are read from the test's verbatim strings, their doubled quotes undone. Two label fixes,
made from the tuning part's lines after it was first scored and applied to both parts: a
value of lower-case words joined by hyphens is no credential (``correct-horse-battery-
staple``, ``my-hardcoded-secret``: the decision table's ``ibm-cloud-pwd = shorter-version``),
and a PHP static call's named argument (``C::f(api_key: "…")``) is read as the call's named
argument. The held-out part was counted once before them and once at the end.
"""

from __future__ import annotations

import functools
import re
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import foreign_sources as r5  # noqa: E402
import foreign_sources_r6 as r6  # noqa: E402
import foreign_sources_r12 as r12  # noqa: E402
import foreign_sources_r14 as r14  # noqa: E402
import late_sources  # noqa: E402

OUT = HERE.parent / "foreign_r18"
SEED = 2918
CFN_NAG = "stelligent/cfn_nag"
CFN_DIR = "spec/test_templates/"
BEARER = "Bearer/bearer-rules"
SCS = "security-code-scan/security-code-scan"
SCS_DIR = "SecurityCodeScan.Test/Tests/Password/"
EARLIER = r14.EARLIER + tuple(f"{d}/{p}.jsonl"
                              for d in ("foreign_r14", "foreign_r15", "foreign_r16", "foreign_r17")
                              for p in ("tuning", "heldout"))

# a template's file name that names a credential
_CFN_NAME = re.compile(r"(?i)passw|secret|cred|token|auth")
# Bearer's rules on hard-coded secrets and passwords (not its weak-hash rules, not the port
# of gosec's G101 tests)
_BEARER = re.compile(r"^tests/(?P<rule>\w+/\w+/\w+)/testdata/[^/]+$")
_BEARER_RULE = re.compile(r"(?i)hardcod|secret|passw|credential|authentication")
_BEARER_NOT = re.compile(r"weak_password|^go/gosec/")

LEFT_OUT: Counter[str] = Counter()
_PART = ["tune"]


def unit_files() -> dict[str, tuple[str, list[str]]]:
    """unit -> (repository, its files): from paths alone, no line read."""
    units: dict[str, tuple[str, list[str]]] = {}
    for path in r5._files(CFN_NAG):
        rel = path.removeprefix(CFN_DIR)
        if path.startswith(CFN_DIR) and rel.count("/") >= 2 and \
                _CFN_NAME.search(rel.rsplit("/", 1)[1]) and \
                rel.endswith((".json", ".yml", ".yaml", ".template")):
            units.setdefault("cfn_nag:" + rel.rsplit("/", 1)[0], (CFN_NAG, []))[1].append(path)
    for path in r5._files(BEARER):
        m = _BEARER.match(path)
        if m and _BEARER_RULE.search(m.group("rule")) and not _BEARER_NOT.search(m.group("rule")):
            units.setdefault("bearer:" + m.group("rule"), (BEARER, []))[1].append(path)
    for path in r5._files(SCS):
        if path.startswith(SCS_DIR) and path.endswith(".cs"):
            units["scs:" + path.removeprefix(SCS_DIR)] = (SCS, [path])
    return units


# ---- the lines of each source -----------------------------------------------------------

# a C# verbatim string that holds a test's program: ``var cSharpTest = @"`` up to ``";``
_SCS_OPEN = re.compile(r"=\s*@\"\s*$")
_SCS_CLOSE = re.compile(r"^\s*\"\s*;\s*$")
_SCS_VB = re.compile(r"(?i)visualBasic|\bvb\w*\s*=")


def scs_programs(text: str) -> Iterator[tuple[str, list[tuple[int, str]]]]:
    """(".cs" or ".vb", the numbered lines) of each program a test holds in a verbatim
    string, its doubled quotes undone (``""pass""`` is ``"pass"`` in the program)."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if _SCS_OPEN.search(lines[i]):
            ext = ".vb" if _SCS_VB.search(lines[i]) else ".cs"
            body: list[tuple[int, str]] = []
            i += 1
            while i < len(lines) and not _SCS_CLOSE.match(lines[i]):
                body.append((i + 1, lines[i].rstrip("\r").replace('""', '"')))
                i += 1
            yield ext, body
        i += 1


# ---- label fixes of round 18 (made from the tuning part's lines, applied to both parts) ----

# a value of lower-case words joined by hyphens (``correct-horse-battery-staple``)
_HYPHEN_WORDS = re.compile(r"[a-z]{2,}(?:-[a-z]{2,})+")
_WORDS_WHY = ("a value of words joined by hyphens passes (decision table: "
              "ibm-cloud-pwd = shorter-version)")
_STATIC_WHY = ("a static call's named argument (C::f(api_key: ...)) is read as a call's "
               "named argument (the labeller had read C: as the name)")


def _fixes(numbered: list[tuple[int, str]]) -> tuple[set[int], dict[int, tuple[str, int]]]:
    """(the lines whose credential by the policy is words joined by hyphens, the lines
    where a PHP or C++ ``::`` hid a named argument's credential: its value and column)."""
    words: set[int] = set()
    static: dict[int, tuple[str, int]] = {}
    for number, line in numbered:
        found = r5.policy_value(line)
        if found and _HYPHEN_WORDS.fullmatch(found[0]):
            words.add(number)
        elif found is None and "::" in line:
            at = line.rfind("::") + 2
            after = r5.policy_value(line[at:])
            if after and not r12._value_passes(after[0], ""):
                static[number] = (after[0], at + after[1])
    return words, static


def _fixed(recs: Iterator[dict], numbered: list[tuple[int, str]], common: dict
           ) -> Iterator[dict]:
    """``recs`` with round 18's label fixes applied by source line (``_fixes``)."""
    words, static = _fixes(numbered)
    text = dict(numbered)
    done: set[int] = set()
    for rec in recs:
        number = int(rec["origin"].rsplit(":", 1)[1])
        where = {**common, "origin": rec["origin"]}
        if number in words and rec["label"] == "pos":
            if number not in done:
                done.add(number)
                for neg in late_sources._negative(text[number], family=r14.FAMILY, **where):
                    yield {**neg, "relabel": _WORDS_WHY}
        elif number in static and rec["label"] == "neg":
            value, col = static[number]
            for pos in r12._synth(text[number], value, col, {**where, "family": r14.FAMILY}):
                yield {**pos, "relabel": _STATIC_WHY}
        else:
            yield rec


def _records(unit: str, repo: str, path: str) -> Iterator[dict]:
    text = (r5._text(repo, path) or "").lstrip("\ufeff")
    if unit.startswith("cfn_nag:"):
        common = {"source": "cfn_nag test templates", "unit": unit}
        lines = list(r6.key_block_free_lines(text))
        yield from _fixed(r14._label(lines, None, common, repo, path, code=False), lines, common)
    elif unit.startswith("bearer:"):
        common = {"source": "Bearer rule tests", "unit": unit}
        lines = list(r6.key_block_free_lines(text))
        yield from _fixed(r14._label(lines, None, common, repo, path), lines, common)
    else:
        common = {"source": "security-code-scan tests", "unit": unit}
        for ext, body in scs_programs(text):
            recs = r14._label(body, None, common, repo, path.removesuffix(".cs") + ext)
            recs = ({**r, "origin": r["origin"].replace(path.removesuffix(".cs") + ext, path)}
                    for r in recs)
            yield from _fixed(recs, body, common)


def records_of(unit: str, repo: str, paths: list[str]) -> Iterator[dict]:
    """A unit's records; an error while reading a held-out unit is counted by its type only
    (its message could quote the unit's text)."""
    _PART[0] = r14._PART[0] = r14.part_of(OUT).get(unit, "tune")
    for path in sorted(paths):
        recs = r5.read_guarded(functools.partial(_records, unit, repo, path), _PART[0], LEFT_OUT)
        yield from r14.finished((r12._key_body_synth(r) for r in recs), _source(repo, path),
                                LEFT_OUT, _PART[0])


@functools.cache
def _source(repo: str, path: str) -> str:
    return r5._text(repo, path) or ""


_NOTE = ("Lines labelled by memgit's written policy (docs/security.md), mechanically, by "
         "foreign_sources_r18.py (round 13's labeller; none of the sources marks lines). "
         "'positives' and 'negatives' list the tuning part's lines that round 18's label fixes "
         "decided, with the reason; the held-out part's are counted, not listed.")


def main() -> None:
    r5.build_and_report(unit_files(), records_of, OUT, SEED, EARLIER, _NOTE,
                        (LEFT_OUT, r14.LEFT_OUT))


if __name__ == "__main__":
    main()
