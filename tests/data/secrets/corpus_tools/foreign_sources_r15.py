"""Round 15 (issue 29): a ninth foreign set, split once by source unit into a tuning
two-thirds and a held-out third: IBM's fork of detect-secrets, its plugins' tests and its
test data.

    python tests/data/secrets/corpus_tools/foreign_sources_r15.py --split-only  # units.json
    python tests/data/secrets/corpus_tools/foreign_sources_r15.py               # ../foreign_r15/

Source (a mirror brought by the ``fetch`` tool; origins ``repository@commit:path:line`` on
every line): IBM/detect-secrets@076672a9a01abdfc7ecee2e7d14f08cdccb73976 (a fork of Yelp's
detect-secrets; Yelp's own plugin tests are in the corpus since round 4, ``late_sources``,
and their lines are left out here by the usual dedupe). Not used by an earlier round, and
not the independent set. Units (``ibm-ds:<path>``):

* ``tests/plugins/*_test.py`` (not ``base_test.py``, not ``common/``), a unit per file:
  each ``@pytest.mark.parametrize`` table whose cases carry the source's verdict. The file
  is parsed with ``ast``; a case's values are resolved mechanically (string literals,
  implicit concatenation, module constants assigned in order, ``+``, ``%`` and ``.format``
  on resolved strings, ``textwrap.dedent``, slices of a string, f-strings of resolved
  names); a case that cannot be resolved (a bytes literal, a call, an attribute of
  ``self``) is left out and counted. A table's verdict is its ``should_…`` argument (a
  boolean), or for a one-argument table of payloads, what its test asserts (a finding:
  ``assert logic.analyze…``, ``len(output) == 1``; none: ``== 0``, ``assert not``). Tables
  without a verdict on the line (``expected_output``, ``expected_result``, statuses,
  file names) and tables of templates the test fills at run time (``content_to_format``
  formatted with ``self.secret``) are left out and counted. A case with a ``token``
  argument names the secret the source reports: when it is 6 characters or more and on a
  line of the payload, that line is a positive with that value (``foreign_sources_r14.
  _positive``: placeholders not judged, r14's label fixes), the payload's other lines
  labelled by the policy; a shorter token, or none, leaves every line of a flagged payload
  flagged and labelled by the policy.
* ``test_data/*`` files (``config.{env,ini,md,yaml}``, ``config2.yaml``, ``each_secret.py``,
  ``only_comments.yaml``, ``sample.diff``, ``files/…``, ``short_files/…``; not
  ``baseline.file``, ``performance/``, ``word_list.txt``, ``__init__.py``), a unit per
  file: every line labelled by the policy. The source's marks are the lines its own
  ``test_data/baseline.file`` reports for the file (keys relative to ``test_data/files/``
  or ``test_data/``) and the ``Location: test_data/<file>:<n>`` lines the tuning unit
  ``tests/plugins/high_entropy_strings_test.py`` expects its entropy plugin to report
  (read by a regular expression; it names no held-out file); a file with no mark marks
  no line (``None``: its policy positives carry no relabel), and a ``file_with_no_secrets``
  is called clean.

**Labels** (the written policy, docs/security.md), every line alike, whatever the source
marks: round 14's labeller (``foreign_sources_r14._label``: round 13's ``_label``, i.e.
``label11`` and round 12's and 13's fixes, the code-only fixes for ``.py`` data files only,
not for a payload's text) and its ``_curl_user`` (curl's ``-u user:password``; CSRF names
no credential), and r14's ``_positive`` for a value the source names (the base64 of a
``user:password`` re-encoded with the user kept, CSRF negatives, documented prefixes
glued to more of their alphabet and ``testtesttest`` typed fakes not judged). Round 15's
additions, made from tuning units' lines before any line was scored, for both parts: a
payload the source flags on which the policy labeller judges nothing (``label11`` leaves
a bare generated-looking run unjudged) is a positive when it holds a token-shaped run (16
or more of ``[A-Za-z0-9+/_-]`` with ``=`` padding, mixing letters and digits: a plugin's
provider key such as ``AccountKey=<base64>``, a bare Stripe or Mailchimp key), that run the
value (through ``_positive``: alphabet-run placeholders such as Square's ``ABCDEFGHIJK…``
are not judged); a policy positive on a line with detect-secrets' allowlist pragma
(``# pragma: allowlist secret``) carries ``relabel`` (the source passes it on purpose; the
policy flags a live key behind an allowlist pragma); in a flagged payload of several lines
holding a positive, the positive is the source's mark and its other lines are unmarked.
Round 15's fixes after the tuning part's lines were first listed (before it was scored;
``_fix``, both parts): a policy positive whose value holds a marker word of the documented
placeholder filter (``AKIAIOSFODNN7EXAMPLE``, ``insert_key_here``, ``notapassword``) is not
judged (left out, counted); a URL "password" running across a closing quote
(``'https://url:8000';@something``: a port, then the string's end) is no password, the line
a negative. A positive on a line the source does
not flag (or calls clean), and a negative on a line it flags, carry ``relabel`` with the
reason (``foreign_r15/relabel.json`` lists the tuning part's). Values are synthesised as in
rounds 5 to 14 (always replaced); a positive whose value still appears verbatim in its
source file is dropped (counted).

**The split** is by source unit, made once from the unit names alone (seed 2915, 13 of 38
held out) and stored in ``foreign_r15/units.json`` (its own commit, before any line was
read); this builder reuses it, and a unit not in it goes to tuning. ``--split-only``
reuses the split and prints its counts; a full run writes ``tuning.jsonl``,
``heldout.jsonl`` and ``relabel.json`` (the same bytes on every run from the same mirror)
and prints only counts. Lines already in the corpus, the independent set, or rounds 5 to
14's sets are left out.

**Exploration:** the parsers were written from tuning units' files only: the plugin tests
of artifactory, azure_storage_key, basic_auth, box, cloudant, db2, high_entropy_strings,
ibm_cloud_iam, ibm_cos_hmac (its first 110 lines), mailchimp_key, npm, private_key,
square_oauth and stripe_key, their parametrize argument names listed for every tuning
plugin test, and the test data files config.env, config.ini, config.md, config.yaml,
config2.yaml, only_comments.yaml, each_secret.py, files/private_key,
files/file_with_secrets.py, files/file_with_no_secrets.py and
files/tmp/file_with_no_secrets.py. **Slip:** when first looking at ``baseline.file``'s
structure, a filter meant to hide held-out files compared against ``test_data/``-prefixed
paths while the baseline's keys have no prefix, so the baseline's entries for two held-out
units were printed: their line numbers and plugin types only (``sample.diff``: lines 10,
34 and 69, "High Entropy String"; ``files/tmp/file_with_secrets.py``: line 3 twice, "High
Entropy String"); no hashed secret and no line of any held-out file was printed. These
line numbers are exactly the source's marks this builder uses for those files, so the
held-out labels are unaffected (they are made by the policy, not by the marks; the marks
only decide which lines carry ``relabel``), and no rule was written from them. No held-out
unit's line was printed, scored or read; the held-out part was only counted.

**Counts** of the first full run: tuning 15 units with lines, 19 positives, 49 negatives;
held-out 10 units, 24 positives, 70 negatives (most of the source's flagged payloads are
typed fakes, ``abcd1234abcd1234…``, ``1234567890abcdef…``, ``AP6xxxx…``, which the policy
does not judge; many other lines are Yelp's and already in the corpus). Scored with
``scan_text`` (tuning part only): 18 of 19 positives found, 1 of 49 negatives flagged.

**Left out, counted** (a full run prints these): cases whose payload could not be
resolved, tables without a verdict on the line, template tables, tokens on no line of
their payload, flagged payload lines the policy does not judge and with no token-shaped run,
positives whose value is a typed placeholder by a marker word, and positives whose
synthetic value could not replace the source's (none this round). First run: tuning 22 template
cases, 33 cases of tables without a verdict, 69 flagged lines whose run is a placeholder, 4
flagged lines with no run, 3 marker-word values; held-out 9 cases without a verdict, 85
placeholder runs, 3 marker-word values. The shared conventions
also leave out some lines silently: empty or punctuation-only lines, a private key's body
lines (its header stands for it), placeholders (``AP6xxxxxxxxxx``, repeated characters,
alphabet runs), word-only values (``secret``), negatives holding a generated-looking run.
"""

from __future__ import annotations

import ast
import functools
import json
import re
import sys
import textwrap
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import foreign_sources as r5  # noqa: E402
import foreign_sources_r6 as r6  # noqa: E402
import foreign_sources_r12 as r12  # noqa: E402
import foreign_sources_r13 as r13  # noqa: E402
import foreign_sources_r14 as r14  # noqa: E402
import late_sources  # noqa: E402

OUT = HERE.parent / "foreign_r15"
SEED = 2915
REPO = "IBM/detect-secrets"
PLUGINS = "tests/plugins/"
DATA = "test_data/"
ENTROPY_TEST = "tests/plugins/high_entropy_strings_test.py"
EARLIER = r14.EARLIER + ("foreign_r14/tuning.jsonl", "foreign_r14/heldout.jsonl")
FAMILY = "scanner fixture"

# cases and lines left out, by reason (counted, never printed line by line)
LEFT_OUT: Counter[str] = Counter()
_PART = ["tune"]


def unit_files() -> dict[str, tuple[str, list[str]]]:
    """unit -> (repository, its files): from file names alone, no line read."""
    units: dict[str, tuple[str, list[str]]] = {}
    for path in r5._files(REPO):
        if re.fullmatch(r"tests/plugins/\w+_test\.py", path) and path != PLUGINS + "base_test.py":
            units["ibm-ds:" + path] = (REPO, [path])
        elif path.startswith(DATA) and not re.search(
                r"^test_data/(?:baseline\.file|performance/|word_list\.txt)|__init__\.py$", path):
            units["ibm-ds:" + path] = (REPO, [path])
    return units


# ---- Python expressions, resolved mechanically ---------------------------------------------

class _Fail(Exception):
    """An expression this resolver does not evaluate."""


def _ev(node: ast.AST, env: dict[str, object]) -> object:
    """The value of ``node`` when it is made of literals and resolved names only."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, (str, int, float, bool)) or node.value is None:
            return node.value
        raise _Fail  # a bytes literal
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        raise _Fail
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(_ev(e, env) for e in node.elts)
    if isinstance(node, ast.Dict):
        return {_ev(k, env) if k is not None else None: _ev(v, env)
                for k, v in zip(node.keys, node.values, strict=True)}
    if isinstance(node, ast.BinOp):
        left, right = _ev(node.left, env), _ev(node.right, env)
        try:
            if isinstance(node.op, ast.Add) and type(left) is type(right):
                return left + right  # type: ignore[operator]
            if isinstance(node.op, ast.Mod) and isinstance(left, str):
                return left % right
        except (TypeError, ValueError, KeyError):
            pass
        raise _Fail
    if isinstance(node, ast.JoinedStr):
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                out.append(str(part.value))
            elif isinstance(part, ast.FormattedValue) and part.conversion == -1 \
                    and part.format_spec is None:
                out.append(str(_ev(part.value, env)))
            else:
                raise _Fail
        return "".join(out)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        value = _ev(node.value, env)
        bounds = [_ev(b, env) if b is not None else None
                  for b in (node.slice.lower, node.slice.upper, node.slice.step)]
        ints = [b if isinstance(b, int) else None for b in bounds]
        if isinstance(value, str) and ints == bounds:
            return value[slice(*ints)]
        raise _Fail
    if isinstance(node, ast.Call):
        return _ev_call(node, env)
    raise _Fail


def _ev_call(node: ast.Call, env: dict[str, object]) -> object:
    func = node.func
    args = [_ev(a, env) for a in node.args if not isinstance(a, ast.Starred)]
    if any(isinstance(a, ast.Starred) for a in node.args):
        raise _Fail
    kwargs = {k.arg: _ev(k.value, env) for k in node.keywords if k.arg is not None}
    if len(kwargs) != len(node.keywords):
        raise _Fail
    if isinstance(func, ast.Attribute):
        if isinstance(func.value, ast.Name) and func.value.id == "textwrap" \
                and func.attr == "dedent" and len(args) == 1 and isinstance(args[0], str):
            return textwrap.dedent(args[0])
        base = _ev(func.value, env)
        if isinstance(base, str):
            try:
                if func.attr == "format":
                    return base.format(*args, **kwargs)
                if func.attr in ("strip", "lstrip", "rstrip", "lower", "upper") and not kwargs:
                    return getattr(base, func.attr)(*args)
                if func.attr == "join" and len(args) == 1 and not kwargs:
                    return base.join(args[0])  # type: ignore[arg-type]
            except (TypeError, ValueError, KeyError, IndexError, AttributeError):
                raise _Fail from None
    if isinstance(func, ast.Name) and func.id == "str" and len(args) == 1 and not kwargs:
        return str(args[0])
    raise _Fail


def _module_env(tree: ast.Module) -> dict[str, object]:
    """Module constants, assigned in order (a later assignment replaces an earlier one)."""
    env: dict[str, object] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], ast.Name):
            try:
                env[stmt.targets[0].id] = _ev(stmt.value, env)
            except _Fail:
                env.pop(stmt.targets[0].id, None)
    return env


# ---- plugin tests: parametrize tables -------------------------------------------------------

_FLAG = re.compile(r"^(?:should_\w+|is_secret|flagged)$")
_PAYLOAD = re.compile(r"^(?:payload|line|lines|file_content|content|content_to_format|text"
                      r"|string|input|data|secret_string)$")
_TOKEN_ARG = re.compile(r"^(?:token|secret|expected_secret)$")
_FINDS = re.compile(r"assert\s+(?:\w+\.)?analyze\w*\(|==\s*1\b|assert\s+(?:output|results?)\s*$"
                    r"|assert\s+len\(\w+\)\s*$", re.M)
_FINDS_NONE = re.compile(r"==\s*0\b|assert\s+not\s")


def _tables(tree: ast.Module, src: str) -> Iterator[tuple[ast.FunctionDef, list[str], list[ast.expr]]]:
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        for dec in fn.decorator_list:
            if not (isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute)
                    and dec.func.attr == "parametrize" and len(dec.args) >= 2):
                continue
            try:
                raw = _ev(dec.args[0], {})
            except _Fail:
                continue
            names = [str(n).strip() for n in (raw.split(",") if isinstance(raw, str) else
                                              raw if isinstance(raw, tuple) else ())]
            cases = dec.args[1]
            if isinstance(cases, (ast.List, ast.Tuple)):
                yield fn, names, list(cases.elts)


def _case_args(case: ast.expr, size: int) -> list[ast.expr] | None:
    if isinstance(case, ast.Call) and isinstance(case.func, ast.Attribute) and case.func.attr == "param":
        args: list[ast.expr] = list(case.args)
    elif size == 1:
        args = [case]
    elif isinstance(case, ast.Tuple):
        args = list(case.elts)
    else:
        return None
    return args if len(args) == size else None


def _numberer(node: ast.expr, value: str) -> Callable[[int], int]:
    """The source line of a payload's n-th line: a literal spanning as many source lines as
    it has lines maps one to one, anything else keeps the expression's first line."""
    first, last = node.lineno, getattr(node, "end_lineno", node.lineno) or node.lineno
    if isinstance(node, ast.Constant) and last - first == value.count("\n") and last > first:
        return lambda n: first + n - 1
    return lambda n: first


_RUN = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")


def _token_run(line: str) -> tuple[str, int] | None:
    """The longest token-shaped run of a line (letters and digits mixed), and its column."""
    runs = [m for m in _RUN.finditer(line)
            if re.search(r"\d", m.group(0)) and re.search(r"[A-Za-z]", m.group(0))]
    if not runs:
        return None
    run = max(runs, key=lambda m: len(m.group(0)))
    return run.group(0), run.start()


def _policy_line(number: int, line: str, flagged: bool | None, common: dict, path: str,
                 why: str, kind: str) -> Iterator[dict]:
    """One payload line by the policy; a flagged line the policy leaves unjudged is a
    positive when it holds a token-shaped run (round 15's addition)."""
    recs = list(r14._label([(number, line)], ({number} if flagged else set())
                           if flagged is not None else None, common, REPO, path, why, code=False))
    if flagged and not recs:
        run = _token_run(line)
        if run is None:
            LEFT_OUT[_PART[0] + ": a flagged payload line the policy does not judge, no token run"] += 1
            return
        where = {**common, "origin": f"{REPO}@{r5._commit(REPO)}:{path}:{number}"}
        got = list(r14._positive(line, run[0], run[1], where, kind))
        if not got:
            LEFT_OUT[_PART[0] + ": a flagged payload's token run not judged (a placeholder)"] += 1
        yield from got
        return
    for rec in recs:
        for out in r14._curl_user(rec):
            yield from _fix(out, line)


# the placeholder filter's marker words (docs/security.md), and typed negations
_MARKER = re.compile(r"(?i)example|your_|dummy|sample|redacted|changeme|placeholder|fake|insert"
                     r"|replace|not_?a_?(?:secret|password|pass|key|token)")


def _fix(rec: dict, raw: str) -> Iterator[dict]:
    """Round 15's label fixes (made from tuning lines before any line was scored, for both
    parts) on a policy positive: a value holding a marker word of the documented
    placeholder filter (``AKIAIOSFODNN7EXAMPLE``, ``insert_key_here``, ``notapassword``)
    is not judged (the corpus's typed placeholders); a URL "password" running across a
    closing quote (``'https://url:8000';@something``: a port, then the string's end) is
    no password, the line a negative."""
    value = r13._original(raw.strip(), rec) if rec["label"] == "pos" else None
    if value is None:
        yield rec
        return
    if _MARKER.search(value):
        LEFT_OUT[_PART[0] + ": a policy positive whose value is a typed placeholder (a marker word)"] += 1
        return
    if re.search(r"[\"']", value) and r5._URL_PW.search(raw) is None and "://" in raw:
        fields = {k: rec[k] for k in ("source", "unit", "origin")}
        yield from late_sources._negative(raw, family=FAMILY, **fields)
        return
    yield rec


def plugin_test(unit: str, path: str) -> Iterator[dict]:
    src = r5._text(REPO, path) or ""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        LEFT_OUT[_PART[0] + ": plugin tests: a file ast does not parse"] += 1
        return
    env = _module_env(tree)
    kind = path.rsplit("/", 1)[1].removesuffix("_test.py")
    common = {"source": "IBM detect-secrets plugin tests", "unit": unit}
    commit = r5._commit(REPO)
    for fn, names, cases in _tables(tree, src):
        body = ast.get_source_segment(src, fn) or ""
        flag_i = next((i for i, n in enumerate(names) if _FLAG.match(n)), None)
        pay_i = next((i for i, n in enumerate(names) if _PAYLOAD.match(n)), None)
        tok_i = next((i for i, n in enumerate(names) if _TOKEN_ARG.match(n)), None)
        verdict: bool | None = None
        if pay_i is None or (flag_i is None and len(names) > 1):
            LEFT_OUT[_PART[0] + ": plugin tests: a case of a table with no verdict on the line"] += len(cases)
            continue
        if re.search(rf"\b{names[pay_i]}\s*(?:\.format\(|%)", body):
            LEFT_OUT[_PART[0] + ": plugin tests: a case of a template table (filled at run time)"] += len(cases)
            continue
        if flag_i is None:  # one argument: what the test asserts
            verdict = True if _FINDS.search(body) else False if _FINDS_NONE.search(body) else None
            if verdict is None:
                LEFT_OUT[_PART[0] + ": plugin tests: a case of a table with no verdict on the line"] += len(cases)
                continue
        for case in cases:
            args = _case_args(case, len(names))
            if args is None:
                LEFT_OUT[_PART[0] + ": plugin tests: a case not resolved"] += 1
                continue
            try:
                payload = _ev(args[pay_i], env)
                flag = _ev(args[flag_i], env) if flag_i is not None else verdict
                token = _ev(args[tok_i], env) if tok_i is not None else ""
            except _Fail:
                LEFT_OUT[_PART[0] + ": plugin tests: a case not resolved"] += 1
                continue
            if not isinstance(payload, str) or not isinstance(flag, bool) or not isinstance(token, str):
                LEFT_OUT[_PART[0] + ": plugin tests: a case not resolved"] += 1
                continue
            num = _numberer(args[pay_i], payload)
            lines = [(num(n), line) for n, line in r6.key_block_free_lines(payload)
                     if not r12._skip(line)]
            yield from _case(lines, flag, token, common, path, kind, commit)


def _case(lines: list[tuple[int, str]], flag: bool, token: str, common: dict, path: str,
          kind: str, commit: str) -> Iterator[dict]:
    if flag and len(token) >= 6 and "\n" not in token:
        hit = next((i for i, (_, line) in enumerate(lines) if token in line), None)
        if hit is None:
            LEFT_OUT[_PART[0] + ": plugin tests: a token on no line of its payload"] += 1
            return
        for i, (number, line) in enumerate(lines):
            if i == hit:
                where = {**common, "origin": f"{REPO}@{commit}:{path}:{number}"}
                yield from r14._positive(line, token, line.index(token), where, kind)
            else:
                yield from _policy_line(number, line, None, common, path,
                                        "the source marks another line of this payload", kind)
        return
    why = "" if flag else "the source expects no secret in this payload"
    per_line = [(number, line, list(_policy_line(number, line, True if flag else None, common,
                                                 path, why, kind))) for number, line in lines]
    marked = flag and len(lines) > 1 and any(r["label"] == "pos" for *_, recs in per_line
                                             for r in recs)
    for number, line, recs in per_line:
        if marked and not any(r["label"] == "pos" for r in recs):
            # a flagged payload's positive is its mark; its other lines are not marked
            recs = list(_policy_line(number, line, None, common, path,
                                     "the source marks another line of this payload", kind))
        yield from recs


# ---- test data files -----------------------------------------------------------------------

@functools.cache
def _marks() -> dict[str, frozenset[int]]:
    """path -> the lines the source reports: its baseline.file (keys relative to
    test_data/files/ or test_data/) and the entropy plugin test's expected locations."""
    files = set(r5._files(REPO))
    out: dict[str, set[int]] = {}
    baseline = json.loads(r5._text(REPO, DATA + "baseline.file") or "{}")
    for key, found in baseline.get("results", {}).items():
        path = next((p for p in (DATA + "files/" + key, DATA + key) if p in files), None)
        if path is not None:
            out.setdefault(path, set()).update(int(x["line_number"]) for x in found)
    entropy = r5._text(REPO, ENTROPY_TEST) or ""
    for m in re.finditer(r"Location:\s+(test_data/[^\s:'\"]+):(\d+)", entropy):
        out.setdefault(m.group(1), set()).add(int(m.group(2)))
    return {k: frozenset(v) for k, v in out.items()}


_PRAGMA = re.compile(r"pragma:\s*(?:allow|white)list secret")


def data_file(unit: str, path: str) -> Iterator[dict]:
    text = r5._text(REPO, path)
    if text is None:
        LEFT_OUT[_PART[0] + ": test data: a file that is not UTF-8 text"] += 1
        return
    lines = list(r6.key_block_free_lines(text))
    clean = "the source's tests use this file as one without secrets" if "no_secrets" in path else ""
    marks = _marks().get(path)
    flagged = set(marks) if marks and not clean else None
    common = {"source": "IBM detect-secrets test data", "unit": unit}
    for rec in r14._label(lines, flagged, common, REPO, path, clean, code=path.endswith(".py")):
        if rec["label"] == "pos" and _PRAGMA.search(rec["line"]):
            rec = {**rec, "relabel": "the source's allowlist pragma passes this line on purpose; "
                                     "the policy flags a live key behind an allowlist pragma"}
        for out in r14._curl_user(rec):
            yield from _fix(out, _raw(path, out))


def _raw(path: str, rec: dict) -> str:
    """The source line of a record (its origin's line number)."""
    number = int(rec["origin"].rsplit(":", 1)[1])
    return _source(path).split("\n")[number - 1].rstrip("\r")


# ---- build ----------------------------------------------------------------------------------

@functools.cache
def _source(path: str) -> str:
    return r5._text(REPO, path) or ""


def records_of(unit: str, repo: str, paths: list[str]) -> Iterator[dict]:
    """A unit's records; an error while reading a held-out unit is counted by its type
    only (its message could quote the unit's text)."""
    _PART[0] = r14._PART[0] = r14.part_of(OUT).get(unit, "tune")
    yield from r5.read_guarded(lambda: _records(unit, paths[0]), _PART[0], LEFT_OUT, "unit")


def _records(unit: str, path: str) -> Iterator[dict]:
    recs = plugin_test(unit, path) if path.startswith(PLUGINS) else data_file(unit, path)
    yield from r14.finished(recs, _source(path), LEFT_OUT, _PART[0])


_NOTE = ("Lines labelled by memgit's written policy (docs/security.md) against the "
         "source's own verdict, mechanically, by foreign_sources_r15.py (round 14's "
         "labeller): 'positives', lines the source does not flag (or calls clean, or "
         "passes by an allowlist pragma) that hold a credential by the policy; "
         "'negatives', lines the source flags that the policy passes. The held-out "
         "part's are counted, not listed.")


def main() -> None:
    r5.build_and_report(unit_files(), records_of, OUT, SEED, EARLIER, _NOTE,
                        (LEFT_OUT, r14.LEFT_OUT))


if __name__ == "__main__":
    main()
