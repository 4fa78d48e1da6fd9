"""Round 13 (issue 29): a seventh foreign set, split once by source unit into a tuning
two-thirds and a held-out third: the hard-coded credential fixtures of static analysers.

    python tests/data/secrets/corpus_tools/foreign_sources_r13.py --split-only  # units.json
    python tests/data/secrets/corpus_tools/foreign_sources_r13.py               # ../foreign_r13/

Sources (mirrors brought by the ``fetch`` tool; origins ``repository@commit:path:line``
on every line). None was used by an earlier round, and none is the independent set
(gitleaks', noseyparker's, kingfisher's and betterleaks' material stays out). Each is a
static analyser's test fixture for hard-coded passwords and secrets:

* PyCQA/bandit@9208054, ``examples/hardcoded-passwords.py`` (B105/B106/B107; its
  functional test counts findings per file, not per line), one unit.
* securego/gosec@45b083a, ``testutils/g101_samples.go``: a unit per G101 sample
  (``SampleCodeG101`` 39, ``SampleCodeG101Values`` 11; each a Go program in raw strings with
  the number of issues gosec expects), its code's lines.
* SonarSource's analysers, the tests of S2068 (hard-coded passwords), S6418 (hard-coded
  secrets) and S6437 (credentials in calls), a unit per file, as the rules' test classes
  name them: sonar-python@bc71972 (``python-checks/src/test/resources/checks/``
  ``hardCodedCredentials*.py``, ``hardcodedCredentialsCall.py``,
  ``hotspots/hardcodedCredentialsEntropy*.py``), sonar-java@3f13e22
  (``java-checks-test-sources/**/HardCodedPasswordCheck*``, ``HardCodedSecretCheck*``,
  ``HardCodedCredentialsShouldNotBeUsedCheckSample.java``), sonar-php@582e2e4
  (``php-checks/src/test/resources/checks/HardCodedCredentialsIn*.php``,
  ``HardCodedSecretCheck*.php``), sonar-dotnet@467d224
  (``analyzers/tests/SonarAnalyzer.Test/TestCases/**DoNotHardcode{Credentials,Secrets}*``: C#,
  VB, appsettings/launchSettings JSON, Web.config) and SonarJS@8cd6c08
  (``packages/analysis/src/jsts/rules/S{2068,6418,6437}/{unit.test,cb.fixture}.ts``, the
  linter's ``inline-config-no-hardcoded-passwords.js``). A ``Noncompliant`` marker
  (``# Noncompliant``, ``// Noncompliant@+1``, ``/* … */``, ``<!-- … -->``, VB's ``'``) says
  which line the analyser flags; markers (and ``Compliant``, ``OK``) are stripped from the
  text, secondary-location carets skipped.
* find-sec-bugs/find-sec-bugs@e38542b, the samples its password
  detectors' tests read (HARD_CODE_PASSWORD, HARD_CODE_KEY): ``testcode/password/**/*.java``,
  ``potential/PotentialHardcodePassword.java``, ``oauth/{SpringServerConfig,VertxOauth2Config}``,
  ``googlemaps/{GoogleMapsSigUtil,UrlSigner}`` and the Kotlin ``HardcodedPassword*.kt``, a unit
  per file.
* Checkmarx/kics' "Passwords And Secrets" tests were left out again: its snapshot is larger
  than the ``fetch`` tool brings, and reading a held-out file through the search tools
  would show its lines.

**Labels** (the written policy, docs/security.md), every line alike, whatever the source
marks: round 12's ``_policy`` (``label11``: ``label6``'s assignments in any syntax, URL
passwords, command-line options, query passwords, key headers; hashes, ``.netrc``, AWS key
ids, XML elements with attributes; round 9's rule leaving a clean-called line with a
credential word near a letters-and-digits value out; round 12's fixes: a read of the
environment with a literal default, placeholders, subscripts). Round 13's fixes, made from
the tuning part's lines and applied to both parts: in a code file an unquoted name outside
any string literal is a variable, constant or type, not a value (``x.Password =
secretVariable;``, Kotlin's ``password: String)``, Go's ``var password string``); a query's
bind parameter (``Password=:name``), a dotted name whose last part is no credential
(``networkCredential.Domain = "…"``), a name built on ``public`` (``PublicKeyToken=…``), a
letters-only value spelling its own name (``XAmzSecurityToken = "X-Amz-Security-Token"``) and
a value that is mostly alphabet or digit runs (``bacdefghijklmnopqrs``) hold none; a
credential-named ``name=value`` without spaces inside a string (``"login=a&token=…"``,
``CustomAttribute="Password=…"``: "``passwd=hunter``") and a bytes literal (``apiKey =
b"…"``) are positives. A positive on a line the source does not flag (or in a gosec sample
expecting no issue), and a negative on a line it flags, carry ``relabel`` with the reason
(``foreign_r13/relabel.json`` lists the tuning part's). Lines a note could not hold are
skipped: empty or punctuation-only lines, imports, package/namespace/``using`` lines, a Go
import block, PHP tags. Values are synthesised as in rounds 5 to 12
(``foreign_sources._synth_positive``, always replaced: ``foreign_sources_r12._synth``); a
source value met again on another positive of the unit gets the same synthetic one.

**The split** is by source unit, made once from the unit names alone (gosec's samples
counted from the file's structure, no line read; sorted, shuffled with seed 2913, every
third held out: 48 of 142) and stored in ``foreign_r13/units.json`` (its own commit); a
later run reuses it, and a unit not in it goes to tuning. ``--split-only`` makes (or
reuses) the split and prints its counts; a full run writes ``tuning.jsonl``,
``heldout.jsonl`` and ``relabel.json`` (the same bytes on every run from the same mirrors)
and prints only counts.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import foreign_sources as r5  # noqa: E402
import foreign_sources_r6 as r6  # noqa: E402
import foreign_sources_r12 as r12  # noqa: E402
import late_sources  # noqa: E402

OUT = HERE.parent / "foreign_r13"
SEED = 2913
BANDIT = "PyCQA/bandit"
BANDIT_FILE = "examples/hardcoded-passwords.py"
GOSEC = "securego/gosec"
GOSEC_FILE = "testutils/g101_samples.go"
SPY = "SonarSource/sonar-python"
SJAVA = "SonarSource/sonar-java"
SPHP = "SonarSource/sonar-php"
SNET = "SonarSource/sonar-dotnet"
SJS = "SonarSource/SonarJS"
FSB = "find-sec-bugs/find-sec-bugs"
# the files of each rule's tests (S2068 hard-coded passwords, S6418 hard-coded secrets,
# S6437 credentials in calls), as the rules' test classes name them
_SPY = re.compile(r"^python-checks/src/test/resources/checks/(?:hotspots/)?"
                  r"(?:hardCodedCredentials|hardcodedCredentials)\w*\.py$")
_SJAVA_DIR = "java-checks-test-sources/"
_SJAVA = re.compile(r"^java-checks-test-sources/(?P<mod>default|aws)/src/main/"
                    r"(?P<kind>java|files/non-compiling)/checks/(?:security/)?"
                    r"(?:HardCodedPasswordCheck|HardCodedSecretCheck"
                    r"|HardCodedCredentialsShouldNotBeUsedCheck)\w*\.java$")
_SPHP = re.compile(r"^php-checks/src/test/resources/checks/"
                   r"(?:HardCodedCredentialsIn|HardCodedSecretCheck)\w*\.php$")
_SNET_DIR = "analyzers/tests/SonarAnalyzer.Test/TestCases/"
_SNET = re.compile(r"(?:^|/)DoNotHardcode(?:Credentials|Secrets)[./]")
_SJS = re.compile(r"^packages/analysis/src/jsts/rules/S(?:2068|6418|6437)/"
                  r"(?:unit\.test|cb\.fixture)\.ts$"
                  r"|^packages/analysis/tests/jsts/linter/fixtures/wrapper/"
                  r"inline-config-no-hardcoded-passwords\.js$")
_FSB = re.compile(r"^findsecbugs-samples-java/src/test/java/testcode/(?:password/.+\.java"
                  r"|potential/PotentialHardcodePassword\.java"
                  r"|oauth/(?:SpringServerConfig|VertxOauth2Config)\.java"
                  r"|googlemaps/(?:GoogleMapsSigUtil|UrlSigner)\.java)$"
                  r"|^findsecbugs-samples-kotlin/src/test/kotlin/com/h3xstream/findsecbugs/"
                  r"(?:password/)?HardcodedPassword\w*\.kt$")
EARLIER = tuple(f"{d}/{p}.jsonl" for d in ("foreign", "foreign_r6", "foreign_r9",
                                          "foreign_r11", "foreign_r12")
                for p in ("tuning", "heldout"))


# ---- gosec's samples: where each one's code is (structure only) -------------------------

_GOSEC_VAR = re.compile(r"^\s*(?P<var>SampleCodeG101\w*)\s*=\s*\[\]CodeSample\{", re.M)
_GOSEC_SAMPLE = re.compile(r"^\s*\{\s*\[\]string\{", re.M)


def gosec_samples() -> dict[str, tuple[int, int, str]]:
    """unit -> (first, end) offsets of a G101 sample in the file and its variable: found
    by the file's structure (``Var = []CodeSample{`` and each ``{[]string{`` entry)."""
    text = r5._text(GOSEC, GOSEC_FILE) or ""
    groups = list(_GOSEC_VAR.finditer(text))
    out: dict[str, tuple[int, int, str]] = {}
    for i, group in enumerate(groups):
        end = groups[i + 1].start() if i + 1 < len(groups) else len(text)
        starts = [m.start() for m in _GOSEC_SAMPLE.finditer(text, group.end(), end)]
        name = "g101-values" if group.group("var").endswith("Values") else "g101"
        for n, at in enumerate(starts):
            stop = starts[n + 1] if n + 1 < len(starts) else end
            out[f"gosec:{name}-sample-{n + 1:02d}"] = (at, stop, group.group("var"))
    return out


def unit_files() -> dict[str, tuple[str, list[str]]]:
    """unit -> (repository, its files): from file names (and gosec's sample structure)
    alone, no line read."""
    units: dict[str, tuple[str, list[str]]] = {}
    if BANDIT_FILE in r5._files(BANDIT):
        units["bandit:" + BANDIT_FILE.rsplit("/", 1)[1]] = (BANDIT, [BANDIT_FILE])
    for unit in gosec_samples():
        units[unit] = (GOSEC, [GOSEC_FILE])
    for path in r5._files(SPY):
        if _SPY.match(path):
            units["sonar-python:" + path.rsplit("/", 1)[1]] = (SPY, [path])
    for path in r5._files(SJAVA):
        m = _SJAVA.match(path)
        if m:
            where = ("aws/" if m.group("mod") == "aws" else "") + \
                ("non-compiling/" if "non-compiling" in m.group("kind") else "")
            units["sonar-java:" + where + path.rsplit("/", 1)[1]] = (SJAVA, [path])
    for path in r5._files(SPHP):
        if _SPHP.match(path):
            units["sonar-php:" + path.rsplit("/", 1)[1]] = (SPHP, [path])
    for path in r5._files(SNET):
        if path.startswith(_SNET_DIR) and _SNET.search(path.removeprefix(_SNET_DIR)):
            units["sonar-dotnet:" + path.removeprefix(_SNET_DIR)] = (SNET, [path])
    for path in r5._files(SJS):
        if _SJS.match(path):
            name = path.rsplit("/", 1)[1]
            rule = path.split("/")[-2]
            units["sonarjs:" + (f"{rule}/{name}" if rule.startswith("S") else name)] = (SJS, [path])
    for path in r5._files(FSB):
        if _FSB.match(path):
            units["find-sec-bugs:" + path.split("/testcode/")[-1].split("/findsecbugs/")[-1]] = (FSB, [path])
    return units


# ---- the lines of a fixture: markers, what a note could hold ----------------------------

# a Sonar test's marker comment: ``# Noncompliant``, ``// Noncompliant@+1 {{…}}``,
# ``/* Compliant */``, ``<!-- Noncompliant -->``, ``' Noncompliant`` (VB), ``# OK``
_MARK = re.compile(r"\s*(?:<!--|/\*|#|//|(?P<vb>'))\s*(?P<m>Noncompliant|Compliant|Sensitive|OK)\b"
                   r"(?:@(?P<at>[+-]?\d+))?.*$")
# a secondary location's carets (``#  ^^^^``, ``/*  ^^^ */``)
_CARETS = re.compile(r"^\s*(?:<!--|/\*|#|//|')\s*\^")
# an import, a package or namespace line, a PHP open tag
_IMPORT = re.compile(r"^\s*(?:import\s|from\s+[\w.]+\s+import\s|package\s+[\w.]+;?\s*$"
                     r"|using\s+[\w.=\s]+;\s*$|Imports\s|(?:namespace|Namespace)\s+[\w.\\\\]+\s*[;{]?\s*$"
                     r"|use\s+[\w\\\\]+(?:\s+as\s+\w+)?;\s*$|<\?php\s*$|\?>\s*$"
                     r"|(?:require|include)(?:_once)?[\s(])")


def _marked_lines(lines: list[tuple[int, str]], vb: bool) -> tuple[set[int], dict[int, str]]:
    """(the lines the source flags, each line without its marker comment): a
    ``Noncompliant`` marker flags its own line, or the line ``@+n``/``@-n`` away."""
    flagged: set[int] = set()
    text: dict[int, str] = {}
    for number, line in lines:
        m = _MARK.search(line)
        if m and (m.group("vb") is None or vb):
            if m.group("m") in ("Noncompliant", "Sensitive"):
                flagged.add(number + int(m.group("at") or 0))
            line = line[:m.start()]
        text[number] = line
    return flagged, text


def _note_lines(numbered: list[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """The lines a memory note could hold: no empty or punctuation-only line, no import,
    package or namespace line (nor a Go import block's paths), no secondary-location
    carets."""
    in_import = False
    for number, line in numbered:
        if re.match(r"\s*import\s*\($", line):
            in_import = True
            continue
        if in_import:
            in_import = not line.strip().startswith(")")
            continue
        if r12._skip(line) or _CARETS.match(line) or _IMPORT.match(line):
            continue
        yield number, line


def _clean_reason(line: str) -> str:
    """Why the written policy passes a line the source flags (for the relabel list)."""
    literals = [a or b for a, b in re.findall(r"\"([^\"]*)\"|'([^']*)'", line)]
    if literals and all(not x.strip() or r12._PLACEHOLDER.search(x) or len(x) < 4
                        or r5._WORDS.__contains__(x.lower()) for x in literals):
        return "the value is empty, short or a placeholder (a typed fake, low variety)"
    if not r5.CRED_NAME.search(line):
        return ("no credential name the policy knows holds the value (the rule's own word "
                "list, a call's parameter position or a user-configured word)")
    if not literals:
        return "the value is a reference (a variable, a call, a concatenation), not a literal"
    return ("no credential-named literal, URL password or token shape by the policy (the value "
            "is a word, a name, a reference or is read from elsewhere)")


def _original(orig: str, rec: dict) -> str | None:
    """The source's value that a positive's synthetic secret replaced (everywhere on the
    line: ``orig`` is the record's line with each copy of the secret put back)."""
    parts = rec["line"].split(rec["secret"])
    if len(parts) < 2:
        return None
    size, rest = divmod(len(orig) - sum(len(p) for p in parts), len(parts) - 1)
    value = orig[len(parts[0]):len(parts[0]) + size] if size > 0 and not rest else ""
    return value if value and value.join(parts) == orig and value != rec["secret"] else None


_CODE = (".py", ".java", ".kt", ".go", ".cs", ".vb", ".php", ".ts", ".js")


def _in_string(text: str) -> bool:
    """``text`` (a line up to a point) leaves a string literal open."""
    quote = ""
    i = 0
    while i < len(text):
        c = text[i]
        if quote and c == "\\":
            i += 2
            continue
        if c in "\"'`":
            quote = "" if quote == c else (quote or c)
        i += 1
    return bool(quote)


def _runs(value: str) -> bool:
    """Most of the value is runs of the alphabet or the digits, four or more long
    (``bacdefghijklmnopqrs``, ``0123456789``): the policy's placeholder."""
    flat = value.lower()
    inside = [False] * len(flat)
    start = 0
    for i in range(1, len(flat) + 1):
        if i == len(flat) or not (flat[i].isalnum() and ord(flat[i]) - ord(flat[i - 1]) == 1):
            if i - start >= 4:
                inside[start:i] = [True] * (i - start)
            start = i
    return len(value) >= 8 and sum(inside) >= 0.6 * len(value)


_NAME_BEFORE = re.compile(r"(?P<n>[A-Za-z_$][\w$.-]*)[\"']?\s*(?:=|:|==|=>)\s*[\"'@]?\s*$")


def _code_reference(orig: str, start: int, value: str | None, path: str) -> str:
    """Why a value ``label11`` took holds no credential by the policy (label fixes of round
    13, made from the tuning part's lines before any line was scored, for both parts):
    in a code file, an unquoted name outside any string literal is a variable, a constant
    or a type (``x.Password = secretVariable;``, ``password: String)``, Go's ``var
    password string``); a ``:name`` inside a query is its bind parameter; a dotted name
    whose last part is no credential name (``networkCredential.Domain = "…"``), a name
    built on ``public`` (``PublicKeyToken=…``: the policy's "public…" names), and a
    letters-only value that spells its own name (``XAmzSecurityToken =
    "X-Amz-Security-Token"``) hold none. "" when it is a value."""
    if value is None:
        return ""
    if _runs(value):
        return "the value is a placeholder: mostly alphabet or digit runs (abcdefgh…, 12345678)"
    if re.fullmatch(r":[A-Za-z_]\w*", value):
        return "the value is a query's bind parameter (:name), a reference"
    named = _NAME_BEFORE.search(orig[:start])
    name = named.group("n") if named else ""
    last = re.split(r"[.]", name)[-1]
    if "." in name and not r5.CRED_NAME.search(last):
        return f"the property assigned ({last}) names no credential"
    if re.search(r"(?i)public", name):
        return "a name built on public names no secret (a public key token)"
    if re.search(r"(?:_REF|_ref|Ref)$", name):
        return "a name ending in ref names a reference (the policy's suffixes), not a value"
    flat, flat_name = (re.sub(r"[^a-z0-9]", "", x.lower()) for x in (value, last))
    url = r5._URL_PW.search(orig)
    if re.fullmatch(r"[a-z]{4,}", flat) and flat == flat_name and not (url and url.start(1) == start):
        return "the value spells its own name (a field or header name), not a secret"
    if not path.endswith(_CODE) or orig[start - 1:start] in ("\"", "'", "`"):
        return ""
    if re.fullmatch(r"[A-Za-z_$][\w$]*", value.rstrip("),:;{ ?")) and \
            not _in_string(orig[:start]):
        return "the value is a variable, a constant or a type in code, not a literal"
    return ""


# ``name=value`` inside a string (a connection string, a query, an attribute's value) and
# a bytes literal (``apiKey = b"…"``)
_STRING_PAIR = re.compile(r"[\"'&;?\s](?P<n>[A-Za-z_][\w.-]*)=(?P<v>[^\s\"'&;=,)]{4,})(?=[\"'&;,)\s]|$)")
_BYTES = re.compile(r"(?P<n>[A-Za-z_]\w*)\s*=\s*b(?P<q>[\"'])(?P<v>[^\"']{4,})(?P=q)")


# forms the written policy flags that label11 does not read (label fixes of round 13, made
# after the tuning part was first scored, for both parts): a call that takes a user and a
# password as two strings (NetworkCredential, login), a URL's password of any characters, a
# function's default for a password parameter, a literal written into a credential-named slot
_POLICY_FORMS = (
    (re.compile(r"\b(?:NetworkCredential|login|HTTPBasicAuth|PlainAuth|PasswordAuthentication)"
                r"\s*\(\s*\"[^\"]*\"\s*,\s*\"(?P<v>[^\"]{4,})\""),
     "a call that takes a user and a password as two strings (the policy's code forms)"),
    (re.compile(r"[a-z][a-z0-9+.-]*://[^\s:/@\"']+:(?P<v>[^\s@\"]*[A-Za-z0-9][^\s@\"]*)@"),
     "a password in a URL (only template syntax exempts it)"),
    (re.compile(r"\bdef\s+\w+\([^)]*\b\w*pass\w*\s*=\s*(?P<q>[\"'])(?P<v>[^\"']{4,})(?P=q)"),
     "a password parameter's default is a literal password"),
    (re.compile(r"\[\s*[\"'][^\"']*(?:password|secret|token)[^\"']*[\"']\s*\]\s*=\s*"
                r"(?P<q>[\"'])(?P<v>[^\"']{4,})(?P=q)"),
     "a literal written into a credential-named slot"),
)


def _in_string_pair(line: str) -> tuple[str, int, str] | None:
    """(value, column, reason) of what ``label11`` leaves on a line the written policy flags
    (label fixes of round 13, made from the tuning part's lines, for both parts): a
    credential-named ``name=value`` without spaces inside a string ("``passwd=hunter``:
    an assignment copied from config, its value taken literally"), and a credential-named
    assignment of a bytes literal."""
    for m in list(_STRING_PAIR.finditer(line)) + list(_BYTES.finditer(line)):
        name, value = m.group("n"), m.group("v")
        if m.re is _STRING_PAIR and not _in_string(line[:m.start("n")]):
            continue  # a keyword argument, not a string's pair
        if not r5.CRED_NAME.search(name) or r5._NOT_CRED_NAME.search(name) or \
                re.search(r"(?i)public|user|name|_id$|url|host|file|path", name):
            continue
        if not r5._literal_value(value, name) or r12._value_passes(value, "") or \
                _runs(value) or re.fullmatch(r"[\d.]+|:\w+|\?+|@\w+|\{\d+\}.*", value):
            continue
        kind = ("a bytes literal is a literal" if m.re is _BYTES else
                "name=value without spaces inside a string is taken literally (passwd=hunter)")
        return value, m.start("v"), kind
    for form, reason in _POLICY_FORMS:
        found = form.search(line)
        if found and not r12._value_passes(found.group("v"), "") and not _runs(found.group("v")):
            return found.group("v"), found.start("v"), reason
    return None


def _label(numbered: list[tuple[int, str]], flagged: set[int] | None, common: dict,
           repo: str, path: str, clean_why: str = "") -> Iterator[dict]:
    """Each line by the written policy (``foreign_sources_r12._policy``: ``label11`` and
    round 12's fixes); ``flagged``: the lines the source flags (None: it marks none). A
    positive the source does not flag, and a negative it flags, carry ``relabel``."""
    commit = r5._commit(repo)
    out: list[dict] = []
    values: dict[str, str] = {}
    for number, line in _note_lines(numbered):
        where = {**common, "origin": f"{repo}@{commit}:{path}:{number}"}
        hit = flagged is not None and number in flagged
        why = clean_why or "the source does not flag this line"
        recs = list(r12._policy(line, where, path, why))
        extra = _in_string_pair(line) if all(r["label"] == "neg" for r in recs) else None
        if extra:
            recs = [{**rec, "relabel": f"{why}; {extra[2]}"}
                    for rec in r12._synth(line, extra[0], extra[1],
                                          {**where, "family": "scanner fixture"})]
        for rec in recs:
            if rec["label"] == "pos":
                if hit or (flagged is None and not clean_why):
                    rec = {k: v for k, v in rec.items() if k != "relabel"}
                value = _original(line.strip(), rec)
                code = _code_reference(line.strip(), rec["start"], value, path)
                if code:
                    for neg in late_sources._negative(line, family="scanner fixture", **where):
                        out.append({**neg, "relabel": f"the source flags this line; {code}"}
                                   if hit else neg)
                    continue
                if value and (not re.fullmatch(r"[A-Za-z_$][\w$]*", value)
                              or line.strip()[rec["start"] - 1:rec["start"]] in "\"'`"):
                    values[value] = rec["secret"]
            elif hit:
                rec = {**rec, "relabel": "the source flags this line; " + _clean_reason(line)}
            out.append(rec)
    for rec in out:  # a source value left on another positive of the unit: its synthetic one
        yield _replace(rec, values)


def _replace(rec: dict, values: dict[str, str]) -> dict:
    if not any(v in rec["line"] for v in values):
        return rec
    if rec["label"] != "pos":
        return rec  # a line the policy passes: its text as the source wrote it
    start, end = rec["start"], rec["start"] + len(rec["secret"])
    head, tail = rec["line"][:start], rec["line"][end:]
    for old, new in sorted(values.items(), key=lambda x: -len(x[0])):
        head, tail = head.replace(old, new), tail.replace(old, new)
    return {**rec, "line": head + rec["secret"] + tail, "start": len(head)}


def fixture(unit: str, repo: str, path: str, source: str) -> Iterator[dict]:
    """A fixture file: its markers (if it has any) say which lines the source flags."""
    text = r5._text(repo, path)
    if text is None:
        return
    lines = list(r6.key_block_free_lines(text))
    marked = "Noncompliant" in text
    flagged, stripped = _marked_lines(lines, path.endswith(".vb"))
    yield from _label([(n, stripped[n]) for n, _ in lines], flagged if marked else None,
                      {"source": source, "unit": unit}, repo, path)


def gosec(unit: str) -> Iterator[dict]:
    """A G101 sample: the lines of its code (Go inside the file's raw strings); a sample
    gosec expects no issue in calls all its lines clean."""
    text = r5._text(GOSEC, GOSEC_FILE) or ""
    at, end, _ = gosec_samples()[unit]
    body = text[at:end]
    errors = re.search(r"`\s*\}\s*,\s*(\d+)", body)
    first = text.count("\n", 0, at) + 1
    numbered: list[tuple[int, str]] = []
    inside = False
    for i, raw in enumerate(body.split("\n")):
        parts = raw.split("`")
        for j, part in enumerate(parts):
            if inside and part:
                numbered.append((first + i, part))
            if j < len(parts) - 1:
                inside = not inside
    why = ("the source expects no issue in this sample"
           if errors and errors.group(1) == "0" else "")
    yield from _label(numbered, None, {"source": "gosec G101 samples", "unit": unit},
                      GOSEC, GOSEC_FILE, why)


_SOURCES = {"bandit": "bandit examples", "sonar-python": "sonar-python check tests",
            "sonar-java": "sonar-java check samples", "sonar-php": "sonar-php check tests",
            "sonar-dotnet": "sonar-dotnet test cases", "sonarjs": "SonarJS rule tests",
            "find-sec-bugs": "find-sec-bugs samples"}


def records_of(unit: str, repo: str, paths: list[str]) -> Iterator[dict]:
    prefix = unit.split(":", 1)[0]
    recs = gosec(unit) if prefix == "gosec" else fixture(unit, repo, paths[0], _SOURCES[prefix])
    for rec in recs:
        yield _at_secret(r12._key_body_synth(rec))


def _at_secret(rec: dict) -> dict:
    """A positive's ``start`` on its secret: where a copy of the value before it was
    replaced by a synthetic one of another length, the copy nearest the old start."""
    at, secret, line = rec.get("start", 0), rec.get("secret", ""), rec["line"]
    if rec["label"] != "pos" or line[at:at + len(secret)] == secret:
        return rec
    spots = [m.start() for m in re.finditer(re.escape(secret), line)]
    return {**rec, "start": min(spots, key=lambda i: abs(i - at))} if spots else rec


_NOTE = ("Lines labelled by memgit's written policy (docs/security.md) against the "
         "source's own marker, mechanically, by foreign_sources_r13.py (label11 and "
         "round 12's fixes): 'positives', lines the source does not flag (or a gosec "
         "sample expecting no issue) that hold a credential by the policy; "
         "'negatives', lines the source flags that the policy passes. The held-out "
         "part's are counted, not listed.")


def main() -> None:
    r5.build_round(unit_files(), records_of, OUT, SEED, EARLIER)
    if "--split-only" not in sys.argv:
        r5.write_relabel(OUT, _NOTE)


if __name__ == "__main__":
    main()
