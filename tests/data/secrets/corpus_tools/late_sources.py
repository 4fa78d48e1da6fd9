"""Sources added after the split (round 4): they join the tuning half.

    python tests/data/secrets/corpus_tools/late_sources.py   # rewrites their lines in ../dev

The split by source unit was made once (``build_corpus.split_of``); a source found
later cannot go to the evaluation half without changing what that half measures, so
every unit of these sources is a tuning unit (``split_of`` knows their prefixes).
The script replaces the records of these sources in ``dev/lines.jsonl`` and leaves
every other record as it is. Sources (mirrors brought by the ``fetch`` tool):

* secretlint's rule tests (secretlint/secretlint, ``packages/@secretlint/
  secretlint-rule-*/test/snapshots/<case>/``): each case is an input file and the
  findings secretlint must report (``output.json``, with line and column). A line
  where a finding starts is a positive, its secret the finding's span on that line;
  every line of a case with no finding is a negative. Meta rules (user patterns,
  dotenv files, home directories, comments, Kubernetes kinds, the example rule) and
  binary inputs are left out; AWS account ids are not credentials here.
* ripsecrets' tests (sirwart/ripsecrets, ``test/one_per_line/*``: one secret a line;
  ``test/none``: lines it must pass).
* detect-secrets' plugin tests (Yelp/detect-secrets, ``tests/plugins/*_test.py``: the
  literal ``(payload, should_flag)`` pairs of each plugin; the entropy, IP-address and
  keyword plugins' cases are left out). Its documentation is already in the corpus.
* semgrep-rules' secret rules (semgrep/semgrep-rules, ``generic/secrets/security``: the
  line after ``ruleid:`` must be reported, the line after ``ok:`` must not; the
  ``generic/secrets/gitleaks`` rules are gitleaks' own and stay out).
* near misses (one character short, wrong alphabet, placeholder body) of the provider
  formats added in round 4 (``NEW_FORMATS``), as ``build_corpus.near_misses`` makes them.

Labelling is mechanical, as for the rest of the corpus (``adjudication.apply``), plus:
a negative that holds a generated-looking value (``adjudication._generated_looking``:
a scanner's near miss often keeps a realistic random body, which memgit's generic
rule may rightly report) is dropped, the rule used for documentation lines; a
positive whose secret is a bare credential word (``PASSWORD``) is dropped, a
placeholder. Every value that looks live is replaced by a synthetic one of the same
shape (``synth.reshape``, segment by segment). Lines a source lists as passing but
that hold a credential by memgit's written policy (a password in a URL, a key header
alone) are relabelled positive in ``late_relabel.json``, each with its reason.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import adjudication  # noqa: E402
import build_corpus  # noqa: E402
import synth  # noqa: E402

SECRETLINT = "secretlint/secretlint"
RIPSECRETS = "sirwart/ripsecrets"
DETECT_SECRETS = "Yelp/detect-secrets"
SEMGREP = "semgrep/semgrep-rules"
# not credentials here (account ids, a service account's type field, shadow lines without
# a hash), or truncated fixtures (a webhook URL cut at its @)
_SEMGREP_SKIP = {"aws-account-id", "google-gcm-service-account", "etc-shadow", "outlook-team",
                 "ssh-password"}  # sshpass -p 'blah': four letters, under the policy's minimum
# detect-secrets' plugins whose tests hold no credential shapes (entropy of words, IP
# addresses, the keyword plugin's file-type cases) are left out
_DS_SKIP = {"base", "high_entropy_strings", "ip_public", "keyword"}
LATE_UNITS = build_corpus.LATE_UNITS  # every unit of these sources is a tuning unit
_SKIP_RULES = {"pattern", "filter-comments", "no-dotenv", "no-homedir", "no-k8s-kind-secret",
               "example", "preset-recommend", "preset-canary"}
_FAMILY = {"basicauth": "password in URL", "database-connection-string": "connection string",
           "privatekey": "private key", "secp256k1-privatekey": "private key"}
_NOT_CREDENTIAL = re.compile(r"(?i)account.?id")
_WORD_ONLY = re.compile(r"(?i)^(?:password|passwd|secret|token|username|user|pass)$")


def _git(repo: str, *args: str) -> bytes:
    gitdir = build_corpus.MIRROR / repo.replace("/", "+") / "repo"
    return subprocess.run(["git", "--git-dir", str(gitdir), *args], capture_output=True,
                          check=True).stdout


def _text(repo: str, path: str) -> str | None:
    try:
        return _git(repo, "show", "HEAD:" + path).decode("utf-8")
    except UnicodeDecodeError:
        return None  # a binary input (a PKCS#12 file)


# a typed placeholder: an alphabet or digit run of ten, a character eight times, a marker
_TYPED = re.compile(r"(?i)abcdefghij|0123456789|1234567890|example|(.)\1{7}")
_KNOWN_PREFIXES: list[str] = []
_FIXED_HEADS = ("pypi-AgEIcHlwaS5vcmc", "pypi-AgENdGVzdC5weXBpLm9yZw")
_AGE = "AGE-SECRET-KEY-1"
_BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


def _known_prefix(value: str) -> str:
    """The longest documented prefix (a format record's keyword) ``value`` starts with."""
    if not _KNOWN_PREFIXES:
        sys.path.insert(0, str(HERE.parents[3] / "src"))
        from memgit.secrets.formats import FORMATS

        _KNOWN_PREFIXES.extend(sorted({k for r in FORMATS for k in r.get("keywords", ())
                                       if len(k) >= 3 and not k.isalpha()}, key=len, reverse=True))
    low = value.lower()
    return next((value[: len(k)] for k in _KNOWN_PREFIXES if low.startswith(k)), "")


def _reshape(value: str) -> str:
    """A synthetic value of the same shape, segment by segment (``glsa_<b62>_<hex>``,
    ``<hex>-us30``): each run between separators keeps its own alphabet."""
    if "://" in value:  # a URL (a webhook): its path's live-looking segments only
        return "/".join(_reshape(p) for p in value.split("/"))
    if not synth.looks_live(value):
        return value
    basic = synth.reshape_basic(value) if len(value) >= 12 else None
    if basic and len(basic) == len(value):
        return basic  # base64 of user:password: a new password, encoded again
    if value.startswith("0x"):
        return "0x" + synth.reshape(value[2:], 0)
    if value.startswith(_AGE):  # age keys are bech32: the body keeps that alphabet
        rng = synth._rng(value)
        return _AGE + "".join(rng.choice(_BECH32) for _ in value[len(_AGE):])
    crypt = re.match(r"\$[0-9a-z]{1,8}\$(?:\d{1,2}\$)?", value)
    twilio = re.match(r"(?:SK|AC)(?=[0-9a-fA-F]{32}$)", value)
    if crypt or twilio:  # a crypt scheme ($2a$10$) or Twilio's SK/AC stays as it is
        head = (crypt or twilio).group(0)  # type: ignore[union-attr]
        return head + synth.reshape(value[len(head):], 0)
    fixed = next((h for h in _FIXED_HEADS if value.startswith(h)), "")
    if fixed:  # a macaroon's fixed header (pypi.org) is not secret
        return fixed + synth.reshape(value[len(fixed):], 0)
    m = synth._PREFIX.match(value)
    keep = max(m.end() if m and m.end() < len(value) - 6 else 0, len(_known_prefix(value)))
    head, body = value[:keep], value[keep:]
    if value.startswith("eyJ"):
        return synth.reshape(value)  # a JWT: header and claims kept, a new signature
    if not re.search(r"[_.$:-]", body):
        return synth.reshape(value, keep)
    parts = re.split(r"([_.$:-])", body)
    return head + "".join(synth.reshape(p, 0) if synth.looks_live(p) else p for p in parts)


def _positive(line: str, secret: str, col: int, **fields: str) -> Iterator[dict]:
    """A positive record: the line stripped, its live-looking value synthesised."""
    rec = {"line": line, "label": "pos", "secret": secret, "start": col, **fields}
    if (adjudication._drop(rec) or _WORD_ONLY.match(secret) or _TYPED.search(secret)
            or "\\" in secret):  # an escaped fixture text is no value
        return  # an id, a placeholder (USERNAME:PASSWORD, abcdefghij..., EXAMPLE)
    url = re.search(r"://[^\s:/@]*:([^\s/@]+)@", secret)
    if url:  # a URL: only its password is synthesised
        secret_new = secret.replace(url.group(1), _reshape(url.group(1)), 1)
    else:
        secret_new = _reshape(secret)
    new = line[:col] + secret_new + line[col + len(secret):]
    stripped = new.strip()
    start = col - (len(new) - len(new.lstrip()))
    if not stripped or len(stripped) > 500 or start < 0:
        return
    yield {**rec, "line": stripped, "secret": secret_new, "start": start}


def _negative(line: str, **fields: str) -> Iterator[dict]:
    stripped = line.strip()
    if 8 <= len(stripped) <= 500 and re.search(r"[A-Za-z]{3}", stripped) \
            and not adjudication._generated_looking(stripped):
        yield {"line": stripped, "label": "neg", "kind": "", **fields}


def secretlint() -> Iterator[dict]:
    commit = _git(SECRETLINT, "rev-parse", "HEAD").decode().strip()
    paths = _git(SECRETLINT, "ls-tree", "-r", "--name-only", "HEAD",
                 "packages/@secretlint").decode().splitlines()
    cases: dict[str, list[str]] = {}
    for path in paths:
        m = re.match(r"packages/@secretlint/secretlint-rule-([^/]+)/test/snapshots/([^/]+)/", path)
        if m and m.group(1) not in _SKIP_RULES:
            cases.setdefault(m.group(0), []).append(path)
    for case_dir, files in sorted(cases.items()):
        rule = case_dir.split("secretlint-rule-")[1].split("/")[0]
        inputs = [f for f in files if f.rsplit("/", 1)[1].startswith("input")]
        outputs = [f for f in files if f.endswith("/output.json")]
        if len(inputs) != 1 or len(outputs) != 1:
            continue
        text = _text(SECRETLINT, inputs[0])
        if text is None:
            continue
        messages = json.loads(_text(SECRETLINT, outputs[0]) or "{}").get("messages", [])
        lines = text.split("\n")
        common = {"source": "secretlint rule tests", "unit": f"secretlint:{rule}",
                  "origin": f"{SECRETLINT}@{commit}:{inputs[0]}"}
        if not messages:
            for number, line in enumerate(lines, 1):
                yield from _negative(line, family="scanner fixture", **{
                    **common, "origin": f"{common['origin']}:{number}"})
            continue
        for msg in messages:
            kind = msg.get("messageId") or rule
            if _NOT_CREDENTIAL.search(kind):
                continue
            start, end = msg["loc"]["start"], msg["loc"]["end"]
            line = lines[start["line"] - 1]
            stop = end["column"] if end["line"] == start["line"] else len(line)
            secret, col = line[start["column"]: stop], start["column"]
            # the value secretlint names in its message, where the line holds it
            named = [v for v in (msg.get("data") or {}).values()
                     if isinstance(v, str) and len(v) >= 6 and v in line]
            if named:
                secret = max(named, key=len)
                col = line.index(secret)
            if not secret.strip():
                continue
            yield from _positive(line, secret, col, kind=kind,
                                 family=_FAMILY.get(rule, "provider"), **{
                                     **common, "origin": f"{common['origin']}:{start['line']}"})


_TOKEN = re.compile(r"[^\s'\"<>=`,;]+")


def _ripsecrets_secret(line: str) -> tuple[str, int] | None:
    url = re.search(r"://[^\s:/@]+:([^\s/@]+)@", line)
    if url:
        return url.group(1), url.start(1)
    op = re.search(r"=|:\s", line)  # the value after an assignment or a header's colon
    tail = op.end() if op else 0
    tokens = [(m.group(0), m.start()) for m in _TOKEN.finditer(line, tail)]
    if not tokens:
        return None
    token, at = max(tokens, key=lambda t: len(t[0]))
    name, sep, value = token.rpartition(":")
    if sep and "://" not in token and len(value) >= 8 and re.fullmatch(r"[\w.-]+", name):
        return value, at + len(name) + 1  # name:value written without a space
    return token, at


def ripsecrets() -> Iterator[dict]:
    commit = _git(RIPSECRETS, "rev-parse", "HEAD").decode().strip()
    paths = _git(RIPSECRETS, "ls-tree", "-r", "--name-only", "HEAD", "test").decode().split()
    for path in paths:
        text = _text(RIPSECRETS, path)
        if text is None:
            continue
        name = path.rsplit("/", 1)[1]
        for number, line in enumerate(text.split("\n"), 1):
            common = {"source": "ripsecrets tests", "origin": f"{RIPSECRETS}@{commit}:{path}:{number}"}
            if path.startswith("test/one_per_line/") and line.strip():
                found = _ripsecrets_secret(line)
                if found:
                    yield from _positive(line, found[0], found[1], kind=name, unit=f"ripsecrets:{name}",
                                         family="password in URL" if name == "url" else "provider",
                                         **common)
            elif path == "test/none":
                yield from _negative(line, family="scanner fixture", unit="ripsecrets:none", **common)


def _relabel(records: list[dict]) -> list[dict]:
    """late_relabel.json: lines a source lists as passing that hold a credential by
    memgit's written policy become positives (their secret synthesised like any other)."""
    table = {r["line"]: r["secret"] for r in json.loads(
        (HERE / "late_relabel.json").read_text())["lines"]}
    out = []
    for rec in records:
        secret = table.get(rec["line"]) if rec["label"] == "neg" else None
        if secret is None:
            out.append(rec)
            continue
        line, col = rec["line"], rec["line"].rindex(secret)
        new = line[:col] + _reshape(secret) + line[col + len(secret):]
        out.append({**rec, "line": new, "label": "pos", "secret": new[col: col + len(secret)],
                    "start": col, "kind": "relabelled", "relabelled": True})
    return out


def _parametrized(source: str) -> Iterator[tuple[str, bool]]:
    """(line, should_flag) pairs of ``@pytest.mark.parametrize('payload, should_flag', [...])``."""
    import ast

    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "parametrize" and len(node.args) >= 2):
            continue
        names = node.args[0]
        if not (isinstance(names, ast.Constant) and isinstance(names.value, str)
                and [n.strip() for n in names.value.split(",")][1:] == ["should_flag"]):
            continue
        if not isinstance(node.args[1], (ast.List, ast.Tuple)):
            continue
        for element in node.args[1].elts:
            try:
                value = ast.literal_eval(element)
            except ValueError:
                continue  # built with a call or a name: not a literal line
            if (isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str)
                    and isinstance(value[1], bool)):
                yield value[0], value[1]


def detect_secrets_tests() -> Iterator[dict]:
    commit = _git(DETECT_SECRETS, "rev-parse", "HEAD").decode().strip()
    paths = _git(DETECT_SECRETS, "ls-tree", "--name-only", "HEAD", "tests/plugins/").decode()
    for path in paths.split():
        plugin = path.rsplit("/", 1)[1].removesuffix("_test.py")
        if not path.endswith("_test.py") or plugin in _DS_SKIP:
            continue
        source = _text(DETECT_SECRETS, path) or ""
        for line, should_flag in _parametrized(source):
            common = {"source": "detect-secrets plugin tests", "unit": f"detect-secrets:{plugin}",
                      "origin": f"{DETECT_SECRETS}@{commit}:{path}"}
            if "\n" in line:
                continue
            if not should_flag:
                yield from _negative(line, family="scanner fixture", **common)
                continue
            found = _ripsecrets_secret(line)
            if found:
                yield from _positive(line, found[0], found[1], kind=plugin, family="provider",
                                     **common)


def semgrep() -> Iterator[dict]:
    """semgrep-rules' secret rules' test files: ``ruleid: X`` marks the next line as one
    rule X must report, ``ok: X`` as one it must pass (generic/secrets/security only: the
    generic/secrets/gitleaks rules are gitleaks' own, the independent check)."""
    commit = _git(SEMGREP, "rev-parse", "HEAD").decode().strip()
    paths = _git(SEMGREP, "ls-tree", "-r", "--name-only", "HEAD",
                 "generic/secrets/security").decode().split()
    for path in paths:
        if path.endswith((".yaml", ".yml")):
            continue
        rule = path.rsplit("/", 1)[1].split(".")[0].removeprefix("detected-")
        if rule in _SEMGREP_SKIP:
            continue
        for number, line, mark in semgrep_marked(_text(SEMGREP, path) or ""):
            common = {"source": "semgrep-rules secret tests", "unit": f"semgrep:{rule}",
                      "origin": f"{SEMGREP}@{commit}:{path}:{number}"}
            if mark == "ok":
                yield from _negative(line, family="scanner fixture", **common)
            elif mark == "ruleid":
                found = _ripsecrets_secret(line)
                if found:
                    yield from _positive(line, found[0], found[1], kind=rule, family="provider",
                                         **common)


def semgrep_marked(text: str) -> Iterator[tuple[int, str, str]]:
    """(line number, line, mark) of each line a semgrep test marks: the first non-blank
    line after ``ruleid: X`` (or ``ok:``, ``todoruleid:``, ``todook:``)."""
    mark = None
    for number, line in enumerate(text.split("\n"), 1):
        m = re.search(r"\b(ruleid|ok|todoruleid|todook):\s*[\w.-]+", line)
        if m:
            mark = m.group(1)
            continue
        if not line.strip() or mark is None:
            continue
        yield number, line, mark
        mark = None


# provider formats added in round 4 (formats.py): their near misses join the tuning half
NEW_FORMATS = ("braintree-access-token", "intra42-secret")


def late_near_misses() -> Iterator[dict]:
    """build_corpus.near_misses() for the formats added after the split (units
    ``late-nearmiss:<id>``, tuning units like every late source)."""
    for rec in build_corpus.near_misses():
        fmt = rec["unit"].removeprefix("nearmiss:")
        if fmt in NEW_FORMATS:
            yield {**rec, "unit": "late-nearmiss:" + fmt}


def late_records() -> list[dict]:
    records = adjudication.apply(build_corpus.dedupe(
        list(secretlint()) + list(ripsecrets()) + list(detect_secrets_tests())
        + list(semgrep()) + list(late_near_misses())))
    records = build_corpus.dedupe(_relabel(records))
    for rec in records:
        rec["split"] = build_corpus.split_of(rec["unit"])
        assert rec["split"] == "tune", rec["unit"]
    return records


def main() -> None:
    path = build_corpus.OUT / "dev" / "lines.jsonl"
    kept = [json.loads(x) for x in path.read_text().splitlines()]
    kept = [r for r in kept if not r["unit"].startswith(LATE_UNITS)]
    seen = {r["line"] for r in kept}
    independent = {json.loads(x)["line"] for x in
                   (build_corpus.OUT / "independent" / "lines.jsonl").read_text().splitlines()}
    late = [r for r in late_records() if r["line"] not in seen and r["line"] not in independent]
    build_corpus.write(path, kept + late)
    npos = sum(r["label"] == "pos" for r in late)
    print(f"{len(late)} late lines: {npos} positives, {len(late) - npos} negatives")


if __name__ == "__main__":
    main()
