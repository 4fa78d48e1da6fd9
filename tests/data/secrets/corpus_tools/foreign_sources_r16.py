"""Round 16 (issue 29): a tenth foreign set, split once by source unit into a tuning
two-thirds and a held-out third: connection-string test tables of database drivers and
specifications.

    python tests/data/secrets/corpus_tools/foreign_sources_r16.py --split-only  # units.json
    python tests/data/secrets/corpus_tools/foreign_sources_r16.py               # ../foreign_r16/

Sources (mirrors brought by the ``fetch`` tool; origins ``repository@commit:path:line`` on
every line). None was used by an earlier round, and none is the independent set:

* mongodb/specifications@92b3c0b9287bfba1b0ec4084300858d05c654f8c: a unit per entry of the
  ``"tests"`` list of each JSON file under ``source/connection-string/tests/`` and
  ``source/uri-options/tests/``, and of ``source/auth/tests/legacy/connection-string.json``
  (``mongodb-spec:<path>#<i>``). A test's strings are its ``uri`` and any other string
  field holding a URI (an option's value such as ``TOKEN_RESOURCE``'s); the origin's line
  is the string's first occurrence after the test's first key.
* jackc/pgx@728cefa8008f2b06aeca071cd3239862aa80f9af: a unit per ``func TestX`` of
  ``pgconn/config_test.go`` and ``pgconn/parse_url_test.go`` (``pgx:<file>:<TestX>``):
  the Go string literals (raw and interpreted, Go's escapes resolved) inside the function,
  from ``func`` to its closing brace, that look like a connection string (a URL, or a
  libpq keyword/value string starting ``key=``): a literal in a keyed field is one only when
  the field is named for it (``connString:``, ``dsn:``; not ``wantErr:``, ``secret:``,
  ``Passwd:``, ``name:``), a positional row's later columns (``wantRedacted``) and map
  entries are not, and ``fmt.Sprintf``'s format is left out (counted: not resolved).
  ``parse_url_test.go``'s top-level tables (``parseURLSettingsCorpus`` and
  ``parseURLSettingsMultiHostCorpus``) are in no function, so in no unit: they are shared
  by the held-out ``TestParseURLSettings`` and the tuning ``TestParseURLSettingsOracle``,
  so they are neither read nor used.
* go-sql-driver/mysql@416cd99d463949ca51faf4f84d674de2fc1aa54b, ``dsn_test.go``: a unit per
  ``func TestX`` and one for the top-level ``testDSNs`` table (``go-mysql:dsn_test.go:<name>``):
  literals chosen as for pgx, a DSN being one without spaces holding ``@`` or ``/`` in the
  driver's shape (``user:pw@net(addr)/db?params``, ``/db``, ``tcp(addr)/``). A literal
  concatenated with something else (``baseDSN + "testKey"``) is taken as written.
* sqlalchemy/sqlalchemy@f35da7e2b9349a08b8de1f6bd3b07c8bf8616790,
  ``test/engine/test_parseconnect.py``: a unit per top-level class
  (``sqlalchemy:<path>:<Class>``): every string constant (``ast``; implicit concatenation
  joined) holding ``scheme://``; an f-string holding one is left out (counted).

**Labels** (the written policy, docs/security.md: "a password in a URL is flagged; only
template syntax exempts it", and a credential-named key with a literal value), the same
for every source and whatever the source's verdict: a string is a positive when

* its URL's userinfo holds a password (the authority runs to the first ``/``, ``?`` or
  ``#``; the userinfo to its last ``@``; the password after the userinfo's first ``:``), or
  a MySQL DSN's does (the userinfo runs to the last ``@`` before the last ``/``, as the
  driver reads it): the password as written (percent-encoded or not) is the secret, unless
  it is template syntax (``<password>``, ``${X}``, ``$X``, ``{{…}}``, ``****``, ``xxx``, a
  format verb: a negative); a password of one or two characters is not judged (left out,
  counted; the policy's labeller reads three or more);
* or a query parameter (key percent-decoded: ``pass%77ord``, ``%70assword``), a MongoDB
  ``authMechanismProperties`` pair (``AWS_SESSION_TOKEN:…``) or a libpq keyword/value pair
  has a credential-named key whose last word is the credential word (``password``,
  ``sslpassword``, ``proxyPassword``, ``tlsCertificateKeyFilePassword``,
  ``AWS_SESSION_TOKEN``; not ``TOKEN_RESOURCE``, the token's audience) and a literal value
  (``foreign_sources._literal_value`` and ``foreign_sources_r12._value_passes``: four or
  more characters, not a number, a reference, a path, a word of the name such as
  ``AWS_SESSION_TOKEN:token``, or a placeholder; a keyword/value ``password= port=`` has no
  value).

Every other string is a negative (``late_sources._negative``: 8 to 500 characters, three
letters, nothing generated-looking; the rest left out, counted). A string of several lines
is left out. A string holding several credentials has them all replaced; the first is the
record's secret. **Values are synthesised** (always replaced, never a value the source file
holds): each password keeps its shape: percent-encoded characters keep their encoding
(``%21%40%23``), other punctuation stays (``p@/ssword``, ``pa:ss``, ``sec ret``), a word
becomes a word of syllables (``tiger``, ``password``: six letters or more), digits become
digits, a mixed run is ``synth.reshape``'d position by position; a result with fewer than
six letters or digits, or three distinct ones, is ``foreign_sources.synthetic_password``.
``adjudication``'s rules apply (``write_sets`` here), except its id rule for a URL's or a
DSN's password: the user name before it (``mongodb://user:…@``) names the account, not the
value, and that rule would drop every ``user:pw@`` URL. **Relabel** (the source's verdict
against the policy, MongoDB only: the others give none on credentials): a positive the
specification calls invalid (``valid: false``) or whose expected ``auth`` holds no password,
and a negative whose expected ``auth`` holds a password (none) carry ``relabel``
(``foreign_r16/relabel.json`` lists the tuning part's, and counts the held-out part's).
Lines already in the corpus, the independent set or rounds 5 to 15's sets are left out.

**The split** is by source unit, made once from the unit names alone (seed 2916, 127 of
380 held out) and stored in ``foreign_r16/units.json`` (its own commit, before any line
was read); this builder reuses it (``unit_files()`` gives exactly its 380 names), and a
unit not in it goes to tuning. ``--split-only`` reuses the split and prints its counts; a
full run writes ``tuning.jsonl``, ``heldout.jsonl`` and ``relabel.json`` (the same bytes on
every run from the same mirrors) and prints only counts.

**Exploration:** the parsers were written from tuning units only: the tuning MongoDB tests
(their ``uri``, ``valid``, ``auth``, ``options``, printed through a filter on units.json),
the bodies of pgx's tuning test functions in ``config_test.go`` and ``parse_url_test.go``
(each cut at its closing brace; the text after a tuning function up to a held-out one was
checked to be blank), the quoted lines of go-mysql's ``dsn_test.go`` (all its units are
tuning), and the URL constants of SQLAlchemy's tuning classes. Besides, pgx's and
SQLAlchemy's top-level declaration names were listed with their part, and, to decide
where pgx's top-level tables belong, how many times each top-level declaration of
``parse_url_test.go`` names them (counts of identifiers only, held-out functions
included: no string of theirs was printed). No held-out unit's line was printed, scored or
read; the held-out part was only counted. No slip.

**Counts** of the full run: tuning 238 units with lines, 83 positives, 272 negatives
(MongoDB 33 / 177, pgx 20 / 57, go-mysql 19 / 19, SQLAlchemy 11 / 19); held-out 121 units,
92 positives, 157 negatives (MongoDB 17 / 97, pgx 29 / 37, go-mysql none: no held-out unit,
SQLAlchemy 46 / 23). Relabel: tuning 8 positives, 0 negatives; held-out counted in
relabel.json. Scored with ``scan_text`` (tuning part only): 70 of 83 positives found, 1 of
272 negatives flagged.

**Left out, counted** (a full run prints these): tuning 10 negatives shorter than 8
characters or without three letters (``mongodb://``-only strings, ``@/``), 3 ``fmt.Sprintf``
formats; held-out 2 passwords of one or two characters, 1 ``fmt.Sprintf`` format.
Identical lines within a part are kept once.
"""

from __future__ import annotations

import ast
import functools
import json
import random
import re
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import adjudication  # noqa: E402
import foreign_sources as r5  # noqa: E402
import foreign_sources_r12 as r12  # noqa: E402
import foreign_sources_r14 as r14  # noqa: E402
import gosrc  # noqa: E402
import late_sources  # noqa: E402
import synth  # noqa: E402

OUT = HERE.parent / "foreign_r16"
SEED = 2916
MONGO = "mongodb/specifications"
PGX = "jackc/pgx"
MYSQL = "go-sql-driver/mysql"
SQLA = "sqlalchemy/sqlalchemy"
MONGO_DIRS = ("source/connection-string/tests/", "source/uri-options/tests/")
MONGO_AUTH = "source/auth/tests/legacy/connection-string.json"
PGX_FILES = ("pgconn/config_test.go", "pgconn/parse_url_test.go")
MYSQL_FILE = "dsn_test.go"
SQLA_FILE = "test/engine/test_parseconnect.py"
EARLIER = r14.EARLIER + tuple(f"{d}/{p}.jsonl" for d in ("foreign_r14", "foreign_r15")
                              for p in ("tuning", "heldout"))
FAMILY = "connection string"
SOURCES = {"mongodb-spec": "MongoDB connection string specification tests",
           "pgx": "pgx connection string tests", "go-mysql": "go-sql-driver/mysql DSN tests",
           "sqlalchemy": "SQLAlchemy URL tests"}

# strings left out, by reason (counted, never printed line by line)
LEFT_OUT: Counter[str] = Counter()
_PART = ["tune"]


# ---- units (names only) --------------------------------------------------------------------

@functools.cache
def _mongo_tests(path: str) -> list[dict]:
    return list(json.loads(r5._text(MONGO, path) or "{}").get("tests", []))


def _mongo_files() -> list[str]:
    return [p for p in r5._files(MONGO) if p.endswith(".json") and
            (p.startswith(MONGO_DIRS) or p == MONGO_AUTH)]


_GO_TOP = re.compile(r"^(?:func\s+(?:\([^)]*\)\s*)?(?P<f>\w+)|var\s+(?P<v>\w+))", re.M)


@functools.cache
def _go_blocks(repo: str, path: str) -> dict[str, tuple[int, str]]:
    """Top-level name -> (its first line, its text from ``func``/``var`` to the first
    closing brace in column one): comments before the next declaration are not in it."""
    src = r5._text(repo, path) or ""
    out: dict[str, tuple[int, str]] = {}
    for m in _GO_TOP.finditer(src):
        end = re.compile(r"^[})]\s*$", re.M).search(src, m.end())
        stop = end.end() if end else len(src)
        out[m.group("f") or m.group("v")] = (src.count("\n", 0, m.start()) + 1, src[m.start():stop])
    return out


@functools.cache
def _sqla_classes() -> dict[str, ast.ClassDef]:
    tree = ast.parse(r5._text(SQLA, SQLA_FILE) or "")
    return {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}


def unit_files() -> dict[str, tuple[str, list[str]]]:
    """unit -> (repository, its files): test entries, test functions and classes by name."""
    units: dict[str, tuple[str, list[str]]] = {}
    for path in _mongo_files():
        for i in range(len(_mongo_tests(path))):
            units[f"mongodb-spec:{path}#{i}"] = (MONGO, [path])
    for path in PGX_FILES:
        for name in _go_blocks(PGX, path):
            if re.fullmatch(r"Test\w*", name):
                units[f"pgx:{path}:{name}"] = (PGX, [path])
    for name in _go_blocks(MYSQL, MYSQL_FILE):
        if re.fullmatch(r"Test\w*", name) or name == "testDSNs":
            units[f"go-mysql:{MYSQL_FILE}:{name}"] = (MYSQL, [MYSQL_FILE])
    for name in _sqla_classes():
        units[f"sqlalchemy:{SQLA_FILE}:{name}"] = (SQLA, [SQLA_FILE])
    return units


# ---- the labeller: where a connection string holds a credential ---------------------------

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_KV = re.compile(r"(?P<k>[A-Za-z_]\w*)\s*=\s*(?P<v>'(?:[^'\\]|\\.)*'?|[^\s']*)")


def _cred_key(name: str) -> bool:
    """A credential-named key (docs/security.md's names) whose last word is the credential
    word (``password``, ``sslpassword``, ``proxyPassword``, ``AWS_SESSION_TOKEN``), not a
    name where another word follows it (``TOKEN_RESOURCE``: the token's audience)."""
    found = list(r5.CRED_NAME.finditer(name))
    m = found[-1] if found else None
    return m is not None and m.end() == len(name) and not r5._NOT_CRED_NAME.search(name)


def _url_template(pw: str) -> bool:
    """Template syntax, the one exemption of a URL's password (``<password>``, ``${X}``,
    ``$X``, ``{{…}}``, ``****``, ``xxx``, a format verb)."""
    return r5._template(pw) or re.fullmatch(r"(?i)x{3,}|\*+|%[sv]|…|\.\.\.", pw) is not None


def _userinfo_password(s: str) -> tuple[int, int] | None:
    """(start, end) of the password of the first URL (``scheme://user:pw@host``) or MySQL
    DSN (``user:pw@net(addr)/db``) of ``s``: the userinfo runs to the authority's last
    ``@`` (a URL's authority ends at ``/``, ``?`` or ``#``; a DSN's userinfo ends at the last
    ``@`` before its last ``/``, as the driver reads it), its password after the first ``:``."""
    m = _SCHEME.search(s)
    if m:
        end = next((i for i in range(m.end(), len(s)) if s[i] in "/?#"), len(s))
        at = s.rfind("@", m.end(), end)
        if at < 0:
            return None
        colon = s.find(":", m.end(), at)
        return (colon + 1, at) if colon >= 0 else None
    return None


def _mysql_password(s: str) -> tuple[int, int] | None:
    slash = s.rfind("/")
    head = s[:slash] if slash >= 0 else s
    at = head.rfind("@")
    if at < 0:
        return None
    colon = head.find(":", 0, at)
    return (colon + 1, at) if colon >= 0 else None


def _params(s: str, base: int) -> Iterator[tuple[str, int, int]]:
    """(key decoded, value start, value end) of a query string's parameters, and of the
    ``KEY:value`` pairs of MongoDB's ``authMechanismProperties``."""
    for m in re.finditer(r"(?P<k>[^&?=#]+)=(?P<v>[^&#]*)", s):
        key = unquote(m.group("k"))
        if key.lower() == "authmechanismproperties":
            at = m.start("v")
            for part in m.group("v").split(","):
                name, sep, value = part.partition(":")
                if sep:
                    start = at + len(name) + 1
                    yield unquote(name), base + start, base + start + len(value)
                at += len(part) + 1
        else:
            yield key, base + m.start("v"), base + m.end("v")


def _assigned(key: str, value: str) -> bool:
    """A credential-named key's literal value by the policy (``_literal_value``: four or more
    characters, not a number, a reference, a path or a word of the name; not a
    placeholder)."""
    decoded = unquote(value).strip("'")
    return (_cred_key(key) and r5._literal_value(decoded, key)
            and not r12._value_passes(decoded, "") and not _url_template(decoded))


def secrets_of(s: str, dialect: str) -> tuple[list[tuple[int, int, str]], str]:
    """The credentials of a connection string, as (start, end, kind), and a reason when a
    password is present but not judged ("" otherwise)."""
    out: list[tuple[int, int, str]] = []
    why = ""
    span = _mysql_password(s) if dialect == "mysql" and not _SCHEME.search(s) else _userinfo_password(s)
    if span and span[1] > span[0]:
        pw = s[span[0]:span[1]]
        if _url_template(pw):
            pass
        elif len(pw) < 3:
            why = "a password of fewer than three characters (not judged)"
        else:
            out.append((span[0], span[1], "url password" if dialect != "mysql" else "dsn password"))
    q = s.find("?", span[1] if span else 0)
    if q >= 0 and (_SCHEME.search(s) or dialect == "mysql"):
        for key, a, b in _params(s[q + 1:], q + 1):
            if b > a and _assigned(key, s[a:b]):
                out.append((a, b, "query credential"))
    elif re.match(r"\s*[A-Za-z_]\w*\s*=", s) and not _SCHEME.search(s):  # libpq keyword/value
        for m in _KV.finditer(s):
            value = m.group("v")
            a, b = m.start("v"), m.end("v")
            if value.startswith("'"):
                a, b = a + 1, b - (1 if len(value) > 1 and value.endswith("'") else 0)
            if b > a and "=" not in s[a:b] and _assigned(m.group("k"), s[a:b]):
                out.append((a, b, "keyword/value password"))  # ``password= port=``: no value
    return sorted(out), why


# ---- synthetic values ------------------------------------------------------------------------

_SYLL = ["ka", "to", "ri", "mel", "dan", "vo", "sur", "pil", "ne", "gra", "bo", "lin", "tas"]


def _run(run: str, rng: random.Random) -> str:
    if run.isalpha():  # a word stays a word (``tiger``, ``password``): syllables, 6 or more
        word = ""
        while len(word) < max(6, len(run)):
            word += rng.choice(_SYLL)
        return word.capitalize() if run[0].isupper() else word
    if run.isdigit():
        return "".join(rng.choice("0123456789") for _ in range(max(6, len(run))))
    return synth.reshape(run, 0)


def synthetic(written: str, avoid: str, salt: str = "") -> str:
    """A password of the written one's shape: percent-encoded characters kept as they are
    encoded (``%21%40``), other punctuation kept, each run of letters or digits replaced
    (a word by a word of syllables, digits by digits, a mixed run position by position); a
    result with fewer than six letters or digits, or three distinct ones, is a
    ``synthetic_password``. Never a value ``avoid`` (the source file) holds."""
    for attempt in range(20):
        rng = random.Random(f"r16:{salt}:{attempt}:{written}")
        parts = re.split(r"(%[0-9A-Fa-f]{2}|[^A-Za-z0-9%]+)", written)
        new = "".join(p if not p or not p[0].isalnum() else _run(p, rng) for p in parts)
        core = re.sub(r"%[0-9A-Fa-f]{2}|[^A-Za-z0-9]", "", new)
        if len(core) < 6 or len(set(core.lower())) <= 3:
            new = r5.synthetic_password(f"{salt}{attempt}{written}")
        if new != written and new not in avoid and written not in new:
            return new
    return r5.synthetic_password("r16:" + written)


def _positive(s: str, found: list[tuple[int, int, str]], common: dict, avoid: str) -> dict | None:
    """The string with every credential replaced by a synthetic one; the first is the
    record's secret."""
    line, first = s, None
    for a, b, kind in sorted(found, reverse=True):
        new = synthetic(s[a:b], avoid, common["origin"])
        line = line[:a] + new + line[b:]
        first = (a, new, kind)
    assert first is not None
    a, new, kind = first
    stripped = line.strip()
    start = a - (len(line) - len(line.lstrip()))
    if not stripped or len(stripped) > 500 or start < 0 or "\n" in stripped:
        return None
    return {"line": stripped, "label": "pos", "secret": new, "start": start, "kind": kind,
            "family": FAMILY, **common}


def label(s: str, dialect: str, common: dict, avoid: str) -> Iterator[dict]:
    if "\n" in s or "\r" in s:
        LEFT_OUT[_PART[0] + ": a string of several lines"] += 1
        return
    found, why = secrets_of(s, dialect)
    if found:
        rec = _positive(s, found, common, avoid)
        if rec is None:
            LEFT_OUT[_PART[0] + ": a positive too long or empty"] += 1
        else:
            yield rec
    elif why:
        LEFT_OUT[_PART[0] + ": " + why] += 1
    else:
        neg = list(late_sources._negative(s, family=FAMILY, **common))
        if not neg:
            LEFT_OUT[_PART[0] + ": a negative shorter than 8 characters, without 3 letters, "
                     "or generated-looking"] += 1
        yield from neg


# ---- MongoDB ------------------------------------------------------------------------------

def _json_lines(path: str, values: list[str], after: int) -> list[int]:
    text = r5._text(MONGO, path) or ""
    out = []
    for v in values:
        at = -1
        for enc in (json.dumps(v), json.dumps(v, ensure_ascii=False)):
            at = text.find(enc, after)
            if at >= 0:
                break
        out.append(text.count("\n", 0, at) + 1 if at >= 0 else 0)
    return out


@functools.cache
def _mongo_starts(path: str) -> list[int]:
    """The offset of each test's ``"description"`` (or first key) in the file, in order."""
    text = r5._text(MONGO, path) or ""
    starts, at = [], text.find('"tests"')
    for test in _mongo_tests(path):
        key = json.dumps(next(iter(test), "description"))
        at = text.find(key, at + 1)
        starts.append(max(at, 0))
    return starts


def _uri_strings(test: dict) -> list[str]:
    out = [test["uri"]] if isinstance(test.get("uri"), str) else []

    def walk(x: object, key: str = "") -> None:
        if isinstance(x, dict):
            for k, v in x.items():
                if k not in ("uri", "description", "comment"):
                    walk(v, k)
        elif isinstance(x, list):
            for v in x:
                walk(v, key)
        elif isinstance(x, str) and _SCHEME.search(x):
            out.append(x)
    walk(test)
    return out


def mongo(unit: str, path: str) -> Iterator[dict]:
    i = int(unit.rsplit("#", 1)[1])
    test = _mongo_tests(path)[i]
    strings = _uri_strings(test)
    lines = _json_lines(path, strings, _mongo_starts(path)[i])
    commit = r5._commit(MONGO)
    auth = test.get("auth") if isinstance(test.get("auth"), dict) else None
    for s, number in zip(strings, lines, strict=True):
        common = {"source": SOURCES["mongodb-spec"], "unit": unit,
                  "origin": f"{MONGO}@{commit}:{path}:{number}"}
        for rec in label(s, "mongodb", common, _source(MONGO, path)):
            why = _mongo_disagrees(rec, test, auth)
            yield {**rec, "relabel": why} if why else rec


def _mongo_disagrees(rec: dict, test: dict, auth: dict | None) -> str:
    """Where the source's own verdict and the policy disagree (tuning lines listed in
    relabel.json): a URI the source calls invalid, or whose expected ``auth`` holds no
    password, that holds one; a URI whose expected ``auth`` holds a password the policy
    does not flag."""
    if rec["label"] == "pos":
        if test.get("valid") is False:
            return ("the source calls this URI invalid (valid: false); the policy flags a "
                    "credential in a connection string whatever a parser accepts")
        if auth is not None and auth.get("password") is None:
            return ("the source's expected auth holds no password; the string carries a "
                    "credential (an option, or a password the parser does not take)")
        return ""
    if auth is not None and auth.get("password"):
        return "the source's expected auth holds a password; the policy passes this string"
    return ""


# ---- Go test tables -------------------------------------------------------------------------

_GO_LIT = re.compile(r"//[^\n]*|/\*.*?\*/|'(?:[^'\\\n]|\\.)*'|`(?P<raw>[^`]*)`|\"(?P<str>(?:[^\"\\\n]|\\.)*)\"",
                     re.S)
# a keyed field holds a connection string only when its name says so (``connString:``,
# ``dsn:``); ``Passwd: "p@ss(word)"``, ``Addr:``, ``wantErr:``, ``secret:`` hold parts
_CONN_FIELD = re.compile(r"(?i)^(?:conn\w*|dsn\w*|uri|url|in|input|tst|s)$")


def _go_strings(body: str) -> Iterator[tuple[int, str, str]]:
    """(offset, value, why-not) of each string literal of a Go block: a literal's value
    as written (raw, or interpreted with Go's escapes). ``why-not`` says why it is no
    candidate: a keyed field not named for a connection string, a later column of a positional row,
    a map entry, ``fmt.Sprintf``'s format."""
    for m in _GO_LIT.finditer(body):
        if m.group("raw") is None and m.group("str") is None:
            continue
        value = m.group("raw") if m.group("raw") is not None else gosrc._unquote(m.group(0))
        line_head = body[body.rfind("\n", 0, m.start()) + 1:m.start()]
        before = body[:m.start()].rstrip()
        field = re.search(r"(\w+)\s*:\s*$", line_head)
        why = ""
        if before.endswith("fmt.Sprintf("):
            why = "format"
        elif field and not _CONN_FIELD.match(field.group(1)):
            why = "field"
        elif re.search(r"\"\s*:\s*$", line_head):
            why = "map"
        elif re.match(r"\s*\{", line_head) and re.search(r",\s*$", line_head):
            why = "column"
        yield m.start(), value, why


def _go_candidate(value: str, dialect: str) -> bool:
    if _SCHEME.match(value.strip()):
        return True
    if dialect == "postgres":
        return re.match(r"\s*[A-Za-z_]\w*\s*=", value) is not None
    return (not re.search(r"\s", value) and ("@" in value or "/" in value)
            and re.match(r"[\w.-]*(?::[^@]*)?@|[\w]*\(|/|\w+/", value) is not None)


def go_unit(unit: str, repo: str, path: str, name: str, dialect: str) -> Iterator[dict]:
    first, body = _go_blocks(repo, path)[name]
    commit = r5._commit(repo)
    prefix = unit.split(":", 1)[0]
    for at, value, why in _go_strings(body):
        if not _go_candidate(value, dialect):
            continue
        if why == "format":
            LEFT_OUT[_PART[0] + f": {prefix}: fmt.Sprintf's format (not resolved)"] += 1
            continue
        if why:
            continue
        number = first + body.count("\n", 0, at)
        common = {"source": SOURCES[prefix], "unit": unit,
                  "origin": f"{repo}@{commit}:{path}:{number}"}
        yield from label(value, dialect, common, _source(repo, path))


# ---- SQLAlchemy -------------------------------------------------------------------------------

def sqla(unit: str) -> Iterator[dict]:
    cls = _sqla_classes()[unit.rsplit(":", 1)[1]]
    commit = r5._commit(SQLA)
    for node in ast.walk(cls):
        if isinstance(node, ast.JoinedStr) and any(
                isinstance(v, ast.Constant) and "://" in str(v.value) for v in node.values):
            LEFT_OUT[_PART[0] + ": sqlalchemy: an f-string URL (not resolved)"] += 1
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and _SCHEME.search(node.value)):
            continue
        common = {"source": SOURCES["sqlalchemy"], "unit": unit,
                  "origin": f"{SQLA}@{commit}:{SQLA_FILE}:{node.lineno}"}
        yield from label(node.value, "sqlalchemy", common, _source(SQLA, SQLA_FILE))


# ---- build ------------------------------------------------------------------------------------

@functools.cache
def _source(repo: str, path: str) -> str:
    return r5._text(repo, path) or ""


def records_of(unit: str, repo: str, paths: list[str]) -> Iterator[dict]:
    """A unit's records; an error while reading a held-out unit is counted by its type
    only (its message could quote the unit's text)."""
    _PART[0] = r14.part_of(OUT).get(unit, "tune")
    prefix, _, rest = unit.partition(":")
    try:
        if prefix == "mongodb-spec":
            recs = list(mongo(unit, paths[0]))
        elif prefix == "pgx":
            recs = list(go_unit(unit, repo, paths[0], rest.rsplit(":", 1)[1], "postgres"))
        elif prefix == "go-mysql":
            recs = list(go_unit(unit, repo, paths[0], rest.rsplit(":", 1)[1], "mysql"))
        else:
            recs = list(sqla(unit))
    except Exception as err:  # noqa: BLE001
        if _PART[0] == "tune":
            raise
        LEFT_OUT[f"heldout: a unit the builder failed on ({type(err).__name__})"] += 1
        return
    for rec in recs:
        if rec["label"] == "pos":
            assert rec["line"][rec["start"]:rec["start"] + len(rec["secret"])] == rec["secret"]
            if rec["secret"] in _source(repo, paths[0]):
                LEFT_OUT[_PART[0] + ": a positive whose synthetic value the source holds"] += 1
                continue
        yield rec


def _drop(rec: dict) -> bool:
    """``adjudication._drop`` without its id rule for a password in a connection string:
    the user name before a URL's password (``user:pw@``) names the account, not the
    value (the id rule would drop ``mongodb://user:…@host``)."""
    if rec["label"] == "pos" and rec["kind"] in ("url password", "dsn password"):
        secret = rec["secret"]
        runs = re.findall(r"[A-Za-z0-9]+", secret)
        body = max(runs, key=len) if runs else ""
        return len(set(body.lower())) <= 3 or bool(adjudication._EMAIL.match(secret)
                                                    or adjudication._HOST.match(secret))
    return adjudication._drop(rec)


def write_sets(units: dict, split: dict[str, str], known: set[str]) -> None:
    """``foreign_sources.write_sets`` with ``_drop`` above; counts per part and source."""
    out: dict[str, list[dict]] = {"tune": [], "heldout": []}
    for unit in sorted(units):
        repo, paths = units[unit]
        recs = list(records_of(unit, repo, paths))
        kept = [r for r in recs if not _drop(r)]
        LEFT_OUT[split[unit] + ": a positive adjudication drops"] += len(recs) - len(kept)
        for rec in kept:
            if rec["line"] in known:
                LEFT_OUT[split[unit] + ": a line already in the corpus or an earlier round"] += 1
                continue
            rec["split"] = split[unit]
            out[split[unit]].append(rec)
    for name, recs in r5.write_parts(out, OUT).items():
        by: Counter[tuple[str, str]] = Counter((r["unit"].split(":")[0], r["label"]) for r in recs)
        for src in SOURCES:
            print(f"  {name} {src}: {by[(src, 'pos')]} positives, {by[(src, 'neg')]} negatives")


_NOTE = ("Lines labelled by memgit's written policy (docs/security.md) against the "
         "source's own verdict, mechanically, by foreign_sources_r16.py: 'positives', "
         "connection strings holding a credential that the MongoDB specification calls "
         "invalid or whose expected auth holds no password; 'negatives', strings whose "
         "expected auth holds a password the policy passes. The held-out part's are "
         "counted, not listed.")


def main() -> None:
    units = unit_files()
    split = r5.the_split(list(units), OUT, SEED)
    if "--split-only" in sys.argv:
        held = sum(v == "heldout" for v in split.values())
        print(f"{len(split)} units, {held} held out")
        return
    known = r5.known_lines("dev/lines.jsonl", "independent/lines.jsonl", *EARLIER)
    write_sets(units, split, known)
    r5.write_relabel(OUT, _NOTE)
    for reason, count in sorted(LEFT_OUT.items()):
        if count:
            print(f"left out: {reason}: {count}")


if __name__ == "__main__":
    main()
