"""Round 14 (issue 29): an eighth foreign set, split once by source unit into a tuning
two-thirds and a held-out third: secret detectors' own test tables and analysers' samples.

    python tests/data/secrets/corpus_tools/foreign_sources_r14.py --split-only  # units.json
    python tests/data/secrets/corpus_tools/foreign_sources_r14.py               # ../foreign_r14/

Sources (mirrors brought by the ``fetch`` tool; origins ``repository@commit:path:line``
on every line). None was used by an earlier round, and none is the independent set:

* google/osv-scalibr@c2094f2, the Veles secret detectors' table-driven tests
  (``veles/secrets/**/*detector_test.go``, ``http/*_test.go``, ``common/jwt/jwt_test.go``),
  a unit per file. Each table entry's ``input:`` is a Go string expression resolved
  mechanically (string and raw literals, file- and function-scope constants, ``+``,
  ``fmt.Sprintf`` with simple verbs, ``strings.Repeat``); an input that cannot be resolved
  (a call, a byte slice, a ``file:`` read from testdata, another field name) is left out
  and counted. An entry whose ``want`` holds a secret is a positive case: the input's
  line holding the wanted value (a credential-named field of the wanted struct, a URL's
  password, the header line of a wanted key, or the base64 of a wanted ``user:password``)
  is a positive, that value the secret; an entry wanting nothing (``nil``, an empty list,
  no ``want`` in a test function named for negatives) is a negative case. Every other
  line of an input is labelled by the written policy; a wanted value no line holds leaves
  the input out (counted).
* ZupIT/horusec@873d410, ``internal/services/engines/leaks/samples.go``: a unit per rule
  (``SampleVulnerableHSLEAKSn`` and ``SampleSafeHSLEAKSn``). Rule n's regular expressions
  (``rules.go``, ``HS-LEAKS-n``, translated to Python's syntax) say which lines of the
  vulnerable sample the source flags. A flagged line the policy calls clean is a positive
  when the rule's match holds a token-shaped value (its longest run mixing letters and
  digits or symbols), and a negative with its reason when the match names no credential
  (``"type": "service_account"``, a certificate header); the safe sample's lines are
  labelled by the policy.
* ajinabraham/njsscan@b6ade85 (``tests/assets/node_source/true_positives/semantic_grep/``
  ``{generic,jwt}/*.js`` and the ``true_negatives/safe_*.js`` of those rules),
  MobSF/mobsfscan@d564d58 (``tests/assets/rules/semgrep/android/secrets.java``), a unit per
  file. The paired semgrep rules' matches are not computed (semgrep is not run); the
  files' own marks stand for them: mobsfscan's ``// ruleid:`` comment flags the next code
  line (semgrep's test convention); njsscan's ``// ruleid:`` comments head a file's
  sections (the next line is often a ``require``), so only its ``//true`` comments flag the
  next code line, and a file without them marks no line. Every line is labelled by the
  policy; the source's marks only decide which lines carry ``relabel``. A true-negative
  file's policy positives carry ``relabel``.
* nickdeis/eslint-plugin-no-secrets@fe95b10: ``staging/has-secret.{js,json}`` (the source
  reports the file) and ``staging/has-no-secret.{js,json}`` (clean), a unit per file, and
  ``tests/lib/rules/no-secrets.ts`` (one unit): each ``code:`` of its ``valid`` and
  ``invalid`` lists resolved as a JavaScript string expression (literals, template
  literals without ``${}``, top-level constants, ``+``); an invalid entry's lines are
  flagged, a valid entry's clean; a code it cannot resolve is left out (counted).

**Labels** (the written policy, docs/security.md), every line alike, whatever the source
marks: round 13's labeller (``foreign_sources_r13._label``: ``label11`` and round 12's and
13's fixes, ``_policy``, ``_skip``, ``_not_judged_here``; its code-only fixes apply to code
files, not to the text of a detector's input). A positive on a line the source does not
flag, and a negative on a line it flags, carry ``relabel`` with the reason
(``foreign_r14/relabel.json`` lists the tuning part's). A placeholder value (``EXAMPLE``,
``xxxx``, ``notasecret``, a repeated character, alphabet runs) is not judged (left out).
Empty or punctuation-only lines, imports and a private key's body lines are left out (its
header line stands for it). Values are synthesised as in rounds 5 to 13
(``foreign_sources._synth_positive``, always replaced: ``foreign_sources_r12._synth``: the
same documented prefix, length and alphabet, GitHub-style CRC32 where the format has one).

**Label fixes after the tuning part was first scored** (made from tuning lines, applied to
both parts by rule, the held-out part only counted again): the base64 of a wanted
``user:password`` is synthesised with the user kept (the shared synthesis re-encoded a
password alone, which no basic-auth reader decodes); a synthetic value keeps the literal
head of the source detector's own pattern (``sk-pyx-2``, ``AIzaSy``: the shared synthesis
keeps only the prefixes it knows); a cookie's wanted map is judged line by line by the
policy (the reader had taken a cookie's name for its value); a CSRF or XSRF token is a
negative (the decision table: csrf names something else); curl's ``-u user:password`` in
quotes is a policy positive the labeller did not read, unless the password is a
credential's word (``svc:token``); a wanted token with a documented prefix glued to more of
its alphabet (``…extra``, a key typed twice without a space) is not judged, because the
decision table settles runs shorter than a format and wrong alphabets but a longer run is
each format's matter (GitHub's tokens may grow, a GCP key may not); a wanted value typed
from a unit repeated three times (``testtesttest``) is a typed fake, not judged. The
builder's first run had tuning 209 / 523 and held-out 153 / 150; after the fixes tuning
169 / 532 and held-out 130 / 150 (49 tuning and 23 held-out positives left out by the last
two rules).

**The split** is by source unit, made once from the unit names alone (seed 2914, 40 of
119 held out) and stored in ``foreign_r14/units.json`` (its own commit, before any line
was read); this builder reuses it, and a unit not in it goes to tuning. ``--split-only``
reuses the split and prints its counts; a full run writes ``tuning.jsonl``,
``heldout.jsonl`` and ``relabel.json`` (the same bytes on every run from the same mirrors)
and prints only counts.

**Exploration:** the parsers were written from tuning units' files only (scalibr's
gitlabpat, http/basicauth, urlcreds, hashicorpvault, cloudflareapitoken, gcshmackey,
bitwardenoauth2access tests and the field names of a few more; horusec's samples 1, 2, 26
and 27 and the records of 1, 7, 9, 14 and 20; ``rules.go``'s expressions, which belong to
no unit; njsscan's ``jwt_hardcoded.js``; mobsfscan's ``secrets.java``; the eslint plugin's
staging files and its ``no-pattern-match.ts`` test, which is no unit). No held-out unit's
line was printed, scored or read; the held-out part was only counted. No slip.

**Left out, counted** (a full run prints these): inputs whose expression could not be
resolved (tuning 19, held-out 2), table entries without a ``want`` in a function not named
for negatives (43, 8), wanted values that no line of the input holds (a slice expression,
a decoded form; 27, 3), eslint codes not resolved (held-out 4), one horusec vulnerable
sample no rule expression matches (tuning), one positive whose synthetic value could not
replace the source's (an elided JWT, tuning). The shared conventions also leave out some
lines silently: a positive whose synthetic value looks like a host name (``hvs.…``,
``adjudication``'s host rule), a value holding a run of one repeated character (the
eslint plugin's ``AAAA…`` Twitter bearer token in ``has-secret.*``: a placeholder by
round 12's rule), and negatives that hold a generated-looking run.
"""

from __future__ import annotations

import base64
import functools
import json
import re
import sys
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import foreign_sources as r5  # noqa: E402
import foreign_sources_r6 as r6  # noqa: E402
import foreign_sources_r12 as r12  # noqa: E402
import foreign_sources_r13 as r13  # noqa: E402
import gosrc  # noqa: E402
import late_sources  # noqa: E402

OUT = HERE.parent / "foreign_r14"
SEED = 2914
SCALIBR = "google/osv-scalibr"
SCALIBR_DIR = "veles/secrets/"
HORUSEC = "ZupIT/horusec"
HORUSEC_DIR = "internal/services/engines/leaks/"
NJSSCAN = "ajinabraham/njsscan"
MOBSF = "MobSF/mobsfscan"
MOBSF_FILE = "tests/assets/rules/semgrep/android/secrets.java"
ESLINT = "nickdeis/eslint-plugin-no-secrets"
ESLINT_TEST = "tests/lib/rules/no-secrets.ts"
_SCALIBR = re.compile(r"(?:detector_test\.go|^http/\w+_test\.go|^common/jwt/jwt_test\.go)$")
_NJS = re.compile(r"^tests/assets/node_source/(?:true_positives/semantic_grep/(?:generic|jwt)/"
                  r"(?:hardcoded|jwt)\w*\.js|true_negatives/safe_(?:creds|jwt|passport)\w*\.js)$")
EARLIER = tuple(f"{d}/{p}.jsonl" for d in ("foreign", "foreign_r6", "foreign_r9",
                                          "foreign_r11", "foreign_r12", "foreign_r13")
                for p in ("tuning", "heldout"))
FAMILY = "scanner fixture"

# inputs left out, by reason (counted, never printed line by line)
LEFT_OUT: Counter[str] = Counter()
_PART = ["tune"]  # the part of the unit being read (LEFT_OUT's keys start with it)


def unit_files() -> dict[str, tuple[str, list[str]]]:
    """unit -> (repository, its files): from file names alone, no line read."""
    units: dict[str, tuple[str, list[str]]] = {}
    for path in r5._files(SCALIBR):
        rel = path.removeprefix(SCALIBR_DIR)
        if path.startswith(SCALIBR_DIR) and _SCALIBR.search(rel):
            units["scalibr:" + rel] = (SCALIBR, [path])
    for n in range(1, 29):
        units[f"horusec:HSLEAKS{n}"] = (HORUSEC, [HORUSEC_DIR + "samples.go"])
    for path in r5._files(NJSSCAN):
        if _NJS.match(path):
            units["njsscan:" + path] = (NJSSCAN, [path])
    if MOBSF_FILE in r5._files(MOBSF):
        units["mobsfscan:" + MOBSF_FILE] = (MOBSF, [MOBSF_FILE])
    for path in r5._files(ESLINT):
        if path == ESLINT_TEST or re.fullmatch(r"staging/has-(?:no-)?secret\.(?:js|json)", path):
            units["eslint-no-secrets:" + path] = (ESLINT, [path])
    return units


# ---- the labeller: round 13's, its code-only fixes for code files only ------------------

def _label(numbered: list[tuple[int, str]], flagged: set[int] | None, common: dict,
           repo: str, path: str, clean_why: str = "", code: bool = True) -> Iterator[dict]:
    """``foreign_sources_r13._label``; with ``code`` False (a detector's input text, a
    sample's configuration) the origin keeps ``path`` but the code-only fixes (an unquoted
    name is a variable) are not applied."""
    if code:
        yield from r13._label(numbered, flagged, common, repo, path, clean_why)
        return
    commit = r5._commit(repo)
    for number, line in numbered:
        recs = list(r13._label([(0, line)], {0} if flagged and number in flagged else
                               (set() if flagged is not None else None),
                               common, repo, path + ".txt", clean_why))
        for rec in recs:
            yield {**rec, "origin": f"{repo}@{commit}:{path}:{number}"}


def _positive(line: str, value: str, col: int, common: dict, kind: str,
              prefixes: tuple[str, ...] = ()) -> Iterator[dict]:
    """The source's value on its line, synthesised; a placeholder is not judged. Then the
    written policy's decisions the source does not share (fixes made from tuning lines, applied
    to both parts): a CSRF token names no credential, and a token glued to more characters of
    a token's alphabet is not judged: the decision table settles runs shorter than a format
    and wrong alphabets (near misses pass), while a longer run is each format's own matter
    (GitHub's tokens may grow, a GCP key may not), and neither way is the policy's; a value
    with a unit typed three times (``testtesttest``) is a typed fake, not judged either."""
    if r12._value_passes(value, "") or r13._runs(value) or \
            re.search(r"(?i)example|x{4}|\.\.\.$|…$", value):  # an elided value too
        return
    if r6._PEM_HEADER.search(value):
        yield from r6.label6(line, {**common, "kind": kind}, FAMILY)
        return
    basic = _basic_pair(value)
    if basic is not None:  # base64 of user:password: a new password, the user kept
        new = base64.b64encode(f"{basic}:{r5.synthetic_password(value)}".encode()).decode()
        recs = [{**common, "line": line[:col] + new + line[col + len(value):], "label": "pos",
                 "secret": new, "start": col, "kind": kind, "family": FAMILY}]
        recs = [_strip(r) for r in recs]
    else:
        recs = [_keep_prefix(r, value, prefixes)
                for r in r12._synth(line, value, col, {**common, "kind": kind, "family": FAMILY})]
    glued = any(value.startswith(p) for p in prefixes) and (
        _GLUE.match(line[col + len(value): col + len(value) + 1]) or
        (col > 0 and _GLUE.match(line[col - 1])))  # a documented prefix's token only
    if glued or _TYPED_REPEAT.search(value):
        LEFT_OUT[_PART[0] + ": a documented token glued to more of its alphabet, or typed "
                 "(a unit repeated)"] += 1
        return
    why = ("a CSRF token guards a form, it names no credential (decision table)"
           if re.search(r"(?i)csrf|xsrf", kind) else "")
    for rec in recs:
        if why:
            rec = {k: v for k, v in rec.items() if k not in ("secret", "start")}
            rec = {**rec, "label": "neg", "kind": "", "relabel": "the source reports it; " + why}
        yield rec


# curl's -u/--user user:password (its manual); the password is a literal unless it is a
# reference, a placeholder or a credential's word (svc:token names what goes there)
_CURL_USER = re.compile(r"\bcurl\b.*?\s(?:-u|--user)[ =]?(['\"]?)[^\s:'\"$]+:(?P<pw>[^\s'\"$]+)\1(?=\s|$)")


def _curl_user(rec: dict) -> Iterator[dict]:
    """A policy negative holding curl's ``-u user:password`` becomes a positive (the
    policy's command-line rule, which the labeller does not read in quotes); a policy
    positive whose name is a CSRF token's becomes a negative (the decision table)."""
    if rec["label"] == "pos" and re.search(r"(?i)csrf|xsrf", rec["line"][:rec["start"]]):
        yield {k: v for k, v in rec.items() if k not in ("secret", "start")} | {
            "label": "neg", "kind": "", "relabel": "a CSRF token names no credential (decision table)"}
        return
    m = _CURL_USER.search(rec["line"]) if rec["label"] == "neg" else None
    pw = m.group("pw") if m else ""
    if not m or r12._value_passes(pw, "") or re.fullmatch(r"(?i)pass(?:word)?|token|secret|key", pw):
        yield rec
        return
    for new in r12._synth(rec["line"], pw, m.start("pw"), {k: v for k, v in rec.items()
                          if k not in ("line", "label", "kind", "secret", "start")}):
        yield {**new, "kind": "command line", "relabel":
               "the source expects no secret here; curl's -u user:password (the policy)"}


_GLUE = re.compile(r"[A-Za-z0-9]")
# a unit of four or more letters typed three times (``testtesttest``): a typed fake
_TYPED_REPEAT = re.compile(r"([A-Za-z]{4,8})\1\1")


def _basic_pair(value: str) -> str | None:
    """The user of a base64 ``user:password`` (a basic auth header's value), else None."""
    if not re.fullmatch(r"[A-Za-z0-9+/]{8,}={0,2}", value) or len(value) % 4:
        return None
    try:
        raw = base64.b64decode(value, validate=True).decode("ascii")
    except (ValueError, UnicodeDecodeError):
        return None
    user, sep, pw = raw.partition(":")
    return user if sep and user and pw and raw.isprintable() else None


@functools.cache
def _scalibr_files() -> tuple[str, ...]:
    return tuple(r5._files(SCALIBR))


def _strip(rec: dict) -> dict:
    """A record's line without its outer spaces (the secret's offset moved with it)."""
    line = rec["line"]
    lead = len(line) - len(line.lstrip())
    return {**rec, "line": line.strip(), "start": rec["start"] - lead}


def _keep_prefix(rec: dict, original: str, prefixes: tuple[str, ...]) -> dict:
    """The synthesised value keeps the literal prefix of the source's own pattern
    (``sk-pyx-2``, ``AIzaSy``): the shared synthesis keeps only the prefixes it knows."""
    new = rec.get("secret", "")
    at = rec.get("start", 0)
    for p in sorted(prefixes, key=len, reverse=True):
        if original.startswith(p) and new and not new.startswith(p) and len(new) >= len(p):
            fixed = p + new[len(p):]
            return {**rec, "secret": fixed,
                    "line": rec["line"][:at] + fixed + rec["line"][at + len(new):]}
    return rec


@functools.cache
def _literal_prefixes(unit: str) -> tuple[str, ...]:
    """The literal heads (3+ characters) of the patterns of a unit's detector sources."""
    folder = SCALIBR_DIR + unit.removeprefix("scalibr:").rsplit("/", 1)[0] + "/"
    out = []
    for path in _scalibr_files():
        if not path.startswith(folder) or not path.endswith(".go") or path.endswith("_test.go"):
            continue
        for pat in re.findall(r"regexp\.MustCompile\(`([^`]*)`\)", r5._text(SCALIBR, path) or ""):
            head = re.match(r"(?:\\b)?((?:[A-Za-z0-9_]|\\-|-)+)(.?)", pat)
            if head is None or head.group(2) in ("?", "*", "+", "{"):
                continue  # the last character is optional or repeated: not all literal
            lit = head.group(1).replace("\\-", "-")
            if len(lit) >= 3:
                out.append(lit)
    return tuple(out)


# ---- osv-scalibr's Go tables --------------------------------------------------------------

class _Go(gosrc._Parser):
    """gosrc's expressions and ``strings.Repeat(s, n)``."""

    def term(self) -> str | None:
        kind, text = self.peek()
        if kind == "ident" and text == "strings.Repeat":
            self.take()
            if self.take()[1] != "(":
                return None
            value = self.expr()
            if self.take()[1] != ",":
                return None
            count = self.take()
            if self.take()[1] != ")" or count[0] != "num" or value is None:
                return None
            return value * int(count[1])
        return super().term()


def _tokens(src: str) -> tuple[list[tuple[str, str]], list[int]]:
    """gosrc's tokens with each one's offset."""
    toks: list[tuple[str, str]] = []
    where: list[int] = []
    for m in gosrc._TOKEN.finditer(src):
        kind = m.lastgroup or "other"
        if kind == "ws":
            if "\n" in m.group(0):
                toks.append(("nl", "\n"))
                where.append(m.start())
            continue
        toks.append((kind, m.group(0)))
        where.append(m.start())
    return toks, where


def _bindings(src: str) -> dict[str, str]:
    env: dict[str, str] = {}
    for m in gosrc._ASSIGN.finditer(src):
        toks = gosrc.tokens(src[m.end():m.end() + 20000])
        value = _Go(toks, env).expr()
        if value is not None:
            env[m.group(1)] = value
    return env


def _group_end(toks: list[tuple[str, str]], i: int) -> int:
    """The index after the brace group opening at or after ``i``."""
    while i < len(toks) and toks[i][1] != "{":
        if toks[i][1] in (",", "}"):
            return i
        i += 1
    depth = 0
    while i < len(toks):
        if toks[i][1] in "({[" and toks[i][0] == "op":
            depth += 1
        elif toks[i][1] in ")}]" and toks[i][0] == "op":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def _fields(toks: list[tuple[str, str]], i: int, j: int, env: dict[str, str],
            structs: dict[str, list[tuple[str, str]]]) -> list[tuple[str, str]]:
    """(field, string) of every resolvable ``Field: expr`` between ``i`` and ``j``, and of
    the struct values named there."""
    out: list[tuple[str, str]] = []
    k = i
    while k < j:
        kind, text = toks[k]
        if kind == "ident" and k + 1 < j and toks[k + 1][1] == ":":
            p = _Go(toks, env)
            p.i = k + 2
            value = p.expr()
            if value is not None:
                out.append((text, value))
        elif kind == "ident" and text in structs and toks[k + 1][1] in (",", "}", "\n", "nl"):
            out.extend(structs[text])
        elif kind in ("str", "raw") and (k == i or toks[k - 1][1] in ("{", ",")):
            p = _Go(toks, env)
            p.i = k
            value = p.expr()
            if value is not None:
                out.append(("", value))
        k += 1
    return out


_STRUCT = re.compile(r"^\s*(\w+)\s*:?=\s*&?[\w.]+\{", re.M)
_SECRET_FIELD = re.compile(r"(?i)key|token|secret|pass|pat$|cred|private|jwt|cookie|value|sig"
                           r"|bearer|auth|^$")
_NOT_SECRET_FIELD = re.compile(r"(?i)^(?:user(?:name)?|name|id|client_?id|email|url|host|domain"
                               r"|issuer|region|project\w*|type|account\w*|keyid|key_?id|kid)$")


def _structs(src: str, env: dict[str, str]) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for m in _STRUCT.finditer(src):
        toks = gosrc.tokens(src[m.end() - 1:m.end() + 4000])
        end = _group_end(toks, 0)
        out[m.group(1)] = _fields(toks, 0, end, env, {})
    return out


_WANT = re.compile(r"^(?:want|expected)(?!Err|Pos|Count|Len|Offset|Match$)\w*$")


def _case_want(toks: list[tuple[str, str]], start: int, env: dict[str, str],
               structs: dict[str, list[tuple[str, str]]]) -> list[tuple[str, str]] | None:
    """The wanted (field, value)s of the case whose input ends at ``start`` (its ``want``,
    ``expected``, ``want…`` fields): [] for a case wanting nothing, None when the case has
    no such field or one that is no list of secrets (``want: true``)."""
    depth = 0
    found: list[tuple[str, str]] | None = None
    for k in range(start, min(len(toks), start + 600)):
        kind, text = toks[k]
        if kind == "op" and text in "({[":
            depth += 1
        elif kind == "op" and text in ")}]":
            depth -= 1
            if depth < 0:
                break  # the case ended
        if depth == 0 and kind == "ident" and text == "input":
            break
        if depth == 0 and kind == "ident" and _WANT.match(text) and toks[k + 1][1] == ":":
            found = found or []
            if toks[k + 2][1] == "nil":
                continue
            end = _group_end(toks, k + 2)
            span = [t for t in toks[k + 2:end] if t[0] != "nl"]
            if len(span) == 1 and span[0][0] in ("ident", "num"):
                return None  # a boolean or a count, not the secrets found
            if span and span[-1][1] == "}" and span[-2][1] == "{":
                continue  # an empty list
            found.extend(_fields(toks, k + 2, end, env, structs) or [("?", "")])
    return found


def _func_at(src: str, at: int) -> str:
    names = re.findall(r"^func\s+(\w+)", src[:at], re.M)
    return names[-1] if names else ""


def _wanted_on(line: str, wanted: list[tuple[str, str]]) -> tuple[str, int] | None:
    """(value, column) of a wanted secret on an input's line."""
    found: list[tuple[str, int]] = []
    for field, value in wanted:
        if _NOT_SECRET_FIELD.match(field):
            continue
        first = next((x.strip() for x in value.split("\n") if x.strip()), "")
        if len(first) < 6:
            continue
        url = r5._URL_PW.search(first)
        if url and first in line:
            at = line.index(first)
            found.append((url.group(1), at + url.start(1)))
        elif first in line and _SECRET_FIELD.search(field):
            found.append((first, line.index(first)))
    if not found:  # a wanted user and password, base64 in a basic auth header
        values = [v for _, v in wanted if v and "\n" not in v]
        for user in values:
            for pw in values:
                b64 = base64.b64encode(f"{user}:{pw}".encode()).decode()
                if user != pw and b64 in line:
                    found.append((b64, line.index(b64)))
    return max(found, key=lambda x: len(x[0])) if found else None


def scalibr(unit: str, path: str) -> Iterator[dict]:
    src = r5._text(SCALIBR, path) or ""
    env = _bindings(src)
    structs = _structs(src, env)
    toks, where = _tokens(src)
    kind = unit.removesuffix("/detector_test.go").removesuffix(".go")
    common = {"source": "osv-scalibr detector tests", "unit": unit}
    for idx, (tkind, text) in enumerate(toks):
        if tkind != "ident" or text != "input" or idx + 1 >= len(toks) or toks[idx + 1][1] != ":":
            continue
        p = _Go(toks, env)
        p.i = idx + 2
        value = p.expr()
        if value is None:
            LEFT_OUT[_PART[0] + ": scalibr: an input not resolved"] += 1
            continue
        first = idx + 2
        while toks[first][0] == "nl":
            first += 1
        single = p.i == first + 1 and toks[first][0] in ("raw", "str")
        base = src.count("\n", 0, where[first if single else idx]) + 1
        want = _case_want(toks, p.i, env, structs)
        if want is None and re.search(r"(?i)negative|invalid|nomatch|no_match|false", _func_at(src, where[idx])):
            want = []
        if want is None:
            LEFT_OUT[_PART[0] + ": scalibr: a case without a want"] += 1
            continue
        if "cookie" in unit:  # a cookie map's names and values: the policy judges each line
            want, why0 = [], "the source reports a cookie here"
        else:
            why0 = ""
        lines = list(r6.key_block_free_lines(value))
        hits = {n: _wanted_on(line, want) for n, line in lines} if want else {}
        if want and not any(hits.values()):
            LEFT_OUT[_PART[0] + ": scalibr: a wanted value on no line"] += 1
            continue
        why = why0 or ("the source marks another line of this input" if want else
                       "the source expects no secret in this input")
        for n, line in lines:
            number = base + (n - 1 if single else 0)
            if r12._skip(line):
                continue
            hit = hits.get(n)
            if hit:
                where_ = {**common, "origin": f"{SCALIBR}@{r5._commit(SCALIBR)}:{path}:{number}"}
                yield from _positive(line, hit[0], hit[1], where_, kind, _literal_prefixes(unit))
            else:
                for rec in _label([(number, line)], None, common, SCALIBR, path, why, code=False):
                    yield from _curl_user(rec)


# ---- horusec's samples ----------------------------------------------------------------------

def _go_regex(pattern: str) -> re.Pattern[str] | None:
    """A Go (RE2) pattern in Python's syntax: ``(?i)…(?-i)…`` as scoped groups."""
    if "(?-i)" in pattern and pattern.startswith("(?i)"):
        head, _, tail = pattern[4:].partition("(?-i)")
        pattern = f"(?i:{head}){tail}"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            return re.compile(pattern)
    except re.error:
        try:
            return re.compile(pattern.replace("(?-i)", "").replace("(?i)", ""), re.I)
        except re.error:
            return None


def horusec_rules() -> dict[int, list[re.Pattern[str]]]:
    text = r5._text(HORUSEC, HORUSEC_DIR + "rules.go") or ""
    out: dict[int, list[re.Pattern[str]]] = {}
    ids = list(re.finditer(r"ID:\s*\"HS-LEAKS-(\d+)\"", text))
    for i, m in enumerate(ids):
        end = ids[i + 1].start() if i + 1 < len(ids) else len(text)
        body = text[m.end():end]
        pats = [_go_regex(a if a else json.loads(f'"{b}"')) for a, b in
                re.findall(r"regexp\.MustCompile\((?:`([^`]*)`|\"((?:[^\"\\]|\\.)*)\")\)", body)]
        out[int(m.group(1))] = [p for p in pats if p is not None]
    return out


def _sample(text: str, name: str) -> list[tuple[int, str]]:
    m = re.search(r"^\s*" + name + r"\s*=\s*`", text, re.M)
    if not m:
        return []
    end = text.index("`", m.end())
    first = text.count("\n", 0, m.end()) + 1
    return [(first + i, line) for i, line in enumerate(text[m.end():end].split("\n"))
            if i or line.strip()]


_TOKENISH = re.compile(r"[A-Za-z0-9+/=_$.:-]{8,}")


def horusec(unit: str) -> Iterator[dict]:
    n = int(unit.removeprefix("horusec:HSLEAKS"))
    path = HORUSEC_DIR + "samples.go"
    text = r5._text(HORUSEC, path) or ""
    commit = r5._commit(HORUSEC)
    rules = horusec_rules().get(n, [])
    common = {"source": "horusec leaks samples", "unit": unit}
    vuln = list(r6.key_block_free_lines("\n".join(x for _, x in _sample(text, f"SampleVulnerableHSLEAKS{n}"))))
    numbers = [x for x, _ in _sample(text, f"SampleVulnerableHSLEAKS{n}")]
    numbered = [(numbers[i - 1], line) for i, line in vuln]
    flagged = {num for num, line in numbered if any(r.search(line) for r in rules)}
    if not flagged:
        LEFT_OUT[_PART[0] + ": horusec: a vulnerable sample no rule line matches"] += 1
    for num, line in numbered:
        recs = list(_label([(num, line)], flagged, common, HORUSEC, path, code=False))
        if num in flagged and not any(r["label"] == "pos" for r in recs):
            match = next(m for m in (r.search(line) for r in rules) if m)
            runs = [r for r in _TOKENISH.finditer(match.group(0))
                    if re.search(r"\d", r.group(0)) and re.search(r"[A-Za-z]", r.group(0))]
            if runs:
                run = max(runs, key=lambda x: len(x.group(0)))
                where = {**common, "origin": f"{HORUSEC}@{commit}:{path}:{num}"}
                yield from _positive(line, run.group(0).strip("'\""), match.start() + run.start(),
                                     where, f"HS-LEAKS-{n}")
                continue
            recs = [{**r, "relabel": "the source flags this line; the rule's match names no "
                                     "credential (a type field, a certificate, a word)"}
                    if r["label"] == "neg" else r for r in recs]
        yield from recs
    safe = _sample(text, f"SampleSafeHSLEAKS{n}")
    lines = dict(safe)
    kept = [(numbers_, lines[numbers_]) for numbers_ in
            [safe[i - 1][0] for i, _ in r6.key_block_free_lines("\n".join(x for _, x in safe))]]
    yield from _label(kept, None, common, HORUSEC, path,
                      "the source calls this sample safe", code=False)


# ---- njsscan, mobsfscan: marked fixture files -------------------------------------------------

_RULEID = re.compile(r"^\s*//\s*ruleid\s*:")
_TRUE = re.compile(r"^\s*//\s*true\s*$")


def marked_file(unit: str, repo: str, path: str, source: str) -> Iterator[dict]:
    """mobsfscan: a ``// ruleid:`` comment flags the next code line (semgrep's test
    convention). njsscan: its ``// ruleid:`` comments head a file's sections (the next line
    is often a ``require``), so only its ``//true`` comments flag the next code line; a
    file without them marks no line (``None``: its policy positives carry no relabel)."""
    text = r5._text(repo, path)
    if text is None:
        return
    lines = list(r6.key_block_free_lines(text))
    marker = _TRUE if repo == NJSSCAN else _RULEID
    flagged: set[int] = set()
    pending = False
    for number, line in lines:
        if marker.match(line):
            pending = True
        elif pending and not r12._skip(line) and not line.strip().startswith("//"):
            flagged.add(number)
            pending = False
    clean = "the source lists this file as a true negative" if "true_negatives/" in path else ""
    yield from _label(lines, None if clean or not flagged else flagged,
                      {"source": source, "unit": unit}, repo, path, clean)


# ---- eslint-plugin-no-secrets -------------------------------------------------------------

_JS_TOKEN = re.compile(r"(?P<tpl>`(?:[^`\\]|\\.)*`)|(?P<str>\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*')"
                       r"|(?P<ident>[A-Za-z_$][\w$.]*)|(?P<op>\+)|(?P<ws>\s+)|(?P<other>.)", re.S)


def _js_literal(lit: str) -> str | None:
    body = lit[1:-1]
    if lit[0] == "`" and "${" in body:
        return None
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


def _js_expr(src: str, at: int, env: dict[str, str]) -> tuple[str | None, int | None]:
    """(value, offset of its literal when it is one literal or one constant) of the JS
    string expression at ``at``."""
    parts: list[str] = []
    offsets: list[int | None] = []
    expect = True
    for m in _JS_TOKEN.finditer(src, at):
        kind = m.lastgroup
        if kind == "ws":
            continue
        if expect and kind in ("tpl", "str"):
            value = _js_literal(m.group(0))
            if value is None:
                return None, None
            parts.append(value)
            offsets.append(m.start() + 1)
            expect = False
        elif expect and kind == "ident" and m.group(0) in env:
            parts.append(env[m.group(0)])
            offsets.append(_JS_AT.get(m.group(0)))
            expect = False
        elif not expect and kind == "op":
            expect = True
        elif expect:
            return None, None
        else:
            break
    if not parts:
        return None, None
    return "".join(parts), offsets[0] if len(parts) == 1 else None


_JS_AT: dict[str, int | None] = {}


def eslint_tests(unit: str, path: str) -> Iterator[dict]:
    src = r5._text(ESLINT, path) or ""
    env: dict[str, str] = {}
    _JS_AT.clear()
    for m in re.finditer(r"^(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*", src, re.M):
        value, offset = _js_expr(src, m.end(), env)
        if value is not None:
            env[m.group(1)] = value
            _JS_AT[m.group(1)] = offset
    lists = [(m.start(), m.group(1)) for m in re.finditer(r"\b(valid|invalid)\s*:\s*\[", src)]
    common = {"source": "eslint-plugin-no-secrets tests", "unit": unit}
    for m in re.finditer(r"\bcode\s*:\s*", src):
        which = next((w for at, w in reversed(lists) if at < m.start()), None)
        value, offset = _js_expr(src, m.end(), env)
        if which is None or value is None:
            LEFT_OUT[_PART[0] + ": eslint: a code not resolved"] += 1
            continue
        base = src.count("\n", 0, offset if offset is not None else m.start()) + 1
        numbered = [(base + (i - 1 if offset is not None else 0), line)
                    for i, line in r6.key_block_free_lines(value)]
        flagged = {n for n, _ in numbered} if which == "invalid" else None
        yield from _label(numbered, flagged, common, ESLINT, path,
                          "" if which == "invalid" else "the source lists this code as valid")


def eslint_staging(unit: str, path: str) -> Iterator[dict]:
    text = r5._text(ESLINT, path) or ""
    lines = list(r6.key_block_free_lines(text))
    clean = "has-no-secret" in path
    yield from _label(lines, None if clean else {n for n, _ in lines},
                      {"source": "eslint-plugin-no-secrets staging", "unit": unit}, ESLINT, path,
                      "the source calls this file clean" if clean else "")


# ---- build ----------------------------------------------------------------------------------

@functools.cache
def part_of(out_dir: Path = OUT) -> dict[str, str]:
    """The split a round's ``units.json`` stores (unit -> "tune" or "heldout")."""
    path = out_dir / "units.json"
    return json.loads(path.read_text()) if path.exists() else {}


def records_of(unit: str, repo: str, paths: list[str]) -> Iterator[dict]:
    prefix = unit.split(":", 1)[0]
    _PART[0] = part_of().get(unit, "tune")
    if prefix == "scalibr":
        recs: Iterator[dict] = scalibr(unit, paths[0])
    elif prefix == "horusec":
        recs = horusec(unit)
    elif prefix == "njsscan":
        recs = marked_file(unit, repo, paths[0], "njsscan semgrep rule tests")
    elif prefix == "mobsfscan":
        recs = marked_file(unit, repo, paths[0], "mobsfscan semgrep rule tests")
    elif paths[0] == ESLINT_TEST:
        recs = eslint_tests(unit, paths[0])
    else:
        recs = eslint_staging(unit, paths[0])
    yield from finished(recs, _source(repo, paths[0]), LEFT_OUT, _PART[0])


def finished(recs: Iterable[dict], source: str, left_out: Counter[str], part: str
             ) -> Iterator[dict]:
    """A unit's records with a key body's value synthesised and each secret placed at its
    start; a positive whose secret cannot be placed, or whose value the synthesis left as the
    source wrote it, is left out and counted in ``left_out`` (rounds 14 and 15)."""
    for rec in recs:
        rec = r13._at_secret(r12._key_body_synth(rec))
        if rec["label"] == "pos" and rec["line"][rec["start"]:rec["start"] + len(rec["secret"])] \
                != rec["secret"]:
            left_out[part + ": a positive whose secret could not be placed"] += 1
            continue
        if rec["label"] == "pos" and len(rec["secret"]) >= 8 and \
                not r6._PEM_HEADER.search(rec["secret"]) and rec["secret"] in source:
            left_out[part + ": a positive whose value the synthesis left as the source wrote it"] += 1
            continue
        yield rec


@functools.cache
def _source(repo: str, path: str) -> str:
    return r5._text(repo, path) or ""


_NOTE = ("Lines labelled by memgit's written policy (docs/security.md) against the "
         "source's own verdict, mechanically, by foreign_sources_r14.py (round 13's "
         "labeller): 'positives', lines the source does not flag (or calls clean) "
         "that hold a credential by the policy; 'negatives', lines the source flags "
         "that the policy passes. The held-out part's are counted, not listed.")


def main() -> None:
    r5.build_and_report(unit_files(), records_of, OUT, SEED, EARLIER, _NOTE, (LEFT_OUT,))
    _ = late_sources  # the shared helpers' module, imported for r13's labeller


if __name__ == "__main__":
    main()
