"""Round 5 (issue 29): new foreign material, split once by source unit into a tuning
two-thirds and a held-out third.

    python tests/data/secrets/corpus_tools/foreign_sources.py   # writes ../foreign/

Sources (mirrors brought by the ``fetch`` tool; origins on every line):

* whispers' fixtures (Skyscanner/whispers, ``tests/fixtures/*``): configuration files
  of every syntax (YAML, JSON, XML, .env, INI, .npmrc, .pypirc, pip.conf, Dockerfile,
  Java properties, jdbc/beans XML, shell, Python, JS, Go, Java, PHP, HTML...). whispers'
  tests say every value it must report contains the word ``hardcoded`` (or its base64),
  plus the keys of ``test_detection_by_key``: such a line is a positive, the value
  replaced by a synthetic password; every other line is a negative.
* semgrep-rules' language rules for hard-coded credentials (semgrep/semgrep-rules,
  not ``generic/secrets``, which round 4 used): ``ruleid:`` marks the next line as
  one the rule reports, ``ok:`` one it passes.
* docker/awesome-compose (real sample stacks: compose files, .env files, READMEs):
  a compose ``environment`` entry whose name is a credential name (``*PASSWORD*``,
  ``*SECRET*``, ``*TOKEN*``, ``*API_KEY*``...) with a literal value, and a URL with a
  password, are positives; the same value quoted in the sample's README too; lines
  about credentials that hold none are negatives.
* kubernetes/examples: ``kind: Secret`` manifests' ``data``/``stringData`` entries
  (base64 or plain), URL passwords and credential-named assignments are positives;
  an ``env`` list's ``value:`` line (whose name is on another line) is dropped, not
  judged; the other lines about credentials are negatives.
* Claude Code memory notes of public repositories (``.claude/memory/*.md``, with YAML
  front matter, ids, hashes, UUIDs): every line a negative, except a line holding
  both a credential word and a generated-looking value, which is dropped (not judged)
  unless ``foreign_relabel.json`` (tuning lines only; none so far) says otherwise.

Labels are mechanical (the rules above and ``adjudication.apply``, as for the rest of
the corpus), so the held-out third is labelled without reading it. **The split** is by
source unit (a fixture file, a rule, a sample stack, an example directory, a notes
repository), made once from the unit names alone with a fixed seed before any line
was read, and stored in ``foreign/units.json``: a later run reuses it and never
splits again. A unit not in it (a source added later) goes to tuning.
"""

from __future__ import annotations

import base64
import json
import random
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import adjudication  # noqa: E402
import build_corpus  # noqa: E402
import late_sources  # noqa: E402

MIRROR = Path("/work/.mirror")
OUT = HERE.parent / "foreign"
SEED = 29
WHISPERS = "Skyscanner/whispers"
SEMGREP = "semgrep/semgrep-rules"
COMPOSE = "docker/awesome-compose"
K8S = "kubernetes/examples"
NOTES = ("1110x/ETA", "ActorForth/ActorForth", "Akai0301/nl2sql-langgraph",
         "AlexandreRiedo/leadsheet-utility", "AnandRituraj/HOS_Dashboard")
_WHISPERS_SKIP = ("creditcards.yml", "folder/", "invalid.json", "ruleslist.yml", "paths.yml")
_WHISPERS_BY_KEY = {
    "privatekeys": ["access", "key", "rsa", "dsa", "ec", "openssh"],
    "aws": ["aws_id", "aws_key", "aws_token"],
    "jenkins": ["noncompliantApiToken", "noncompliantPasswordHash"],
    "cloudformation": ["NoncompliantDBPassword"],
}
_SEMGREP_RULES = re.compile(
    r"hardcode|static-credentials|lambda-environment-credentials|scale-set-password"
    r"|secret-in-build-arg|check-secrets|rds-insecure-password|gke-basic-auth"
    r"|exposed-credentials|session-secret|secure-parameter-for-secrets|hardcoded")
# rules about hard-coded things that are not credentials (flags, paths, conditions)
_SEMGREP_NOT = re.compile(r"hardcoded-config|gke-basic-auth|hardcoded-tmp-path|hardcoded-conditional")
# a credential name (the labelling policy of docs/security.md: what counts as one)
CRED_NAME = re.compile(
    r"(?i)(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|access[_-]?key"
    r"|private[_-]?key|credential|auth[_-]?key)(?![a-z])")
_NOT_CRED_NAME = re.compile(r"(?i)(?:_file|_path|_user(?:name)?|_name|_id|_url|_host|_length)$")
# a line about credentials (hard negatives of real notes and manifests)
_ABOUT = re.compile(r"(?i)pass|secret|token|key|auth|cred|login|user|://|[A-Za-z0-9+/_-]{20,}")


def _git(repo: str, *args: str) -> bytes:
    gitdir = MIRROR / repo.replace("/", "+") / "repo"
    return subprocess.run(["git", "--git-dir", str(gitdir), *args], capture_output=True,
                          check=True).stdout


def _files(repo: str) -> list[str]:
    return _git(repo, "ls-tree", "-r", "--name-only", "HEAD").decode().splitlines()


def _commit(repo: str) -> str:
    return _git(repo, "rev-parse", "HEAD").decode().strip()


def _text(repo: str, path: str) -> str | None:
    try:
        return _git(repo, "show", "HEAD:" + path).decode("utf-8")
    except (UnicodeDecodeError, subprocess.CalledProcessError):
        return None


# ---- units (names only) and the split -------------------------------------------------

def unit_files() -> dict[str, tuple[str, list[str]]]:
    """unit -> (repository, its files): from file names alone, no content read."""
    units: dict[str, tuple[str, list[str]]] = {}
    for path in _files(WHISPERS):
        if path.startswith("tests/fixtures/") and not any(s in path for s in _WHISPERS_SKIP):
            units["whispers:" + path.removeprefix("tests/fixtures/")] = (WHISPERS, [path])
    for path in _files(SEMGREP):
        name = path.rsplit("/", 1)[-1]
        if (path.startswith("generic/secrets/") or path.endswith((".yaml", ".yml", ".md"))
                or ".fixed." in name or not _SEMGREP_RULES.search(name)
                or _SEMGREP_NOT.search(name)):
            continue
        units["semgrep5:" + path.rsplit(".", 1)[0]] = (SEMGREP, [path])
    for path in _files(COMPOSE):
        parts = path.split("/")
        if len(parts) < 2 or parts[0].startswith("."):
            continue
        name = parts[-1]
        if (name in ("compose.yaml", "compose.yml", "docker-compose.yml", "docker-compose.yaml",
                     "README.md", ".env") or name.endswith(".env")):
            units.setdefault("compose:" + parts[0], (COMPOSE, []))[1].append(path)
    for path in _files(K8S):
        parts = path.split("/")
        if len(parts) < 3 or not path.endswith((".yaml", ".yml", ".md")):
            continue
        units.setdefault("k8s:" + "/".join(parts[:2]), (K8S, []))[1].append(path)
    for repo in NOTES:
        files = [p for p in _files(repo) if p.startswith(".claude/memory/") and p.endswith(".md")]
        if files:
            units["notes:" + repo] = (repo, files)
    return units


def split_units(units: list[str], seed: int = SEED) -> dict[str, str]:
    """Once: shuffle the sorted unit names with a fixed seed; every third is held out."""
    order = sorted(units)
    random.Random(seed).shuffle(order)
    return {u: ("heldout" if i % 3 == 0 else "tune") for i, u in enumerate(order)}


def the_split(units: list[str], out: Path = OUT, seed: int = SEED) -> dict[str, str]:
    """The split stored in ``out``/units.json (made there once); a unit added later is tuning."""
    path = out / "units.json"
    if path.exists():
        split = json.loads(path.read_text())
    else:
        split = split_units(units, seed)
        out.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(split, indent=0, sort_keys=True) + "\n")
    return {u: split.get(u, "tune") for u in units}


def write_relabel(out_dir: Path, note: str) -> None:
    """``relabel.json`` in ``out_dir``: the tuning part's relabelled lines with their
    reasons (positives the source does not flag, negatives it flags), and the held-out
    part's counts only (rounds 13 to 16)."""
    out: dict[str, object] = {"note": note}
    for name in ("tuning", "heldout"):
        recs = [json.loads(x) for x in (out_dir / f"{name}.jsonl").read_text().splitlines()]
        recs = [r for r in recs if r.get("relabel")]
        pos = [r for r in recs if r["label"] == "pos"]
        neg = [r for r in recs if r["label"] == "neg"]
        if name == "tuning":
            out["positives"] = [{"line": r["line"], "secret": r["secret"], "origin": r["origin"],
                                 "reason": r["relabel"]} for r in pos]
            out["negatives"] = [{"line": r["line"], "origin": r["origin"],
                                 "reason": r["relabel"]} for r in neg]
        else:
            out["heldout_count"] = {"positives": len(pos), "negatives": len(neg)}
    (out_dir / "relabel.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")


# ---- synthetic values --------------------------------------------------------------

_SYLL = ["ka", "to", "ri", "mel", "dan", "vo", "sur", "pil", "ne", "gra", "bo", "lin", "tas"]


def synthetic_password(seed: str) -> str:
    """A password of a shape people use: random mixed characters, or syllables and digits
    (deterministic per seed)."""
    rng = random.Random("pw:" + seed)
    if rng.random() < 0.5:
        alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
        body = "".join(rng.choice(alphabet) for _ in range(rng.randint(10, 18)))
        return body + (rng.choice("!#%&*") if rng.random() < 0.4 else "") + str(rng.randint(0, 9))
    word = "".join(rng.choice(_SYLL) for _ in range(rng.randint(2, 4)))
    return word + str(rng.randint(10, 9999))


# ---- the labelling policy (docs/security.md: what counts as a credential) -------------

_ASSIGN = re.compile(
    r"(?P<name>[A-Za-z_@][A-Za-z0-9_.@-]{0,60})(?P<qn>[\"']?)\s*(?P<op>:=|=>|==|=|:|,)\s*"
    r"(?P<q>[\"']?)(?P<v>[^\s\"'#,;}\]<>]{1,200})(?P=q)")
_CLI = re.compile(r"(?:^|\s)--?(?:password|passwd|pass|token|secret|api-key|apikey|client-secret"
                  r"|auth-token)[= ](?P<q>[\"']?)(?P<v>[^\s\"']{3,})(?P=q)")
_WORDS = frozenset("""true false null none nil yes no on off required optional empty changeme
    secret password token undefined prompt hidden redacted""".split())


def _literal_value(value: str, name: str) -> bool:
    """A value as written, not a reference to one (the policy's placeholders and
    references: templates, variables, calls, dotted names, ENV_NAMES, paths, words of
    the name itself)."""
    v = value.strip()
    if len(v) < 4 or _template(v) or v[0] in "$%{<[(&*!@" or v.endswith(("(", ")")):
        return False
    if v.lower() in _WORDS or v.lower() in re.split(r"[^a-z0-9]+", name.lower()):
        return False
    if re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+", v) and not re.search(r"\d", v):
        return False  # a dotted name: settings.DB_PASSWORD
    if re.fullmatch(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+", v) or v.startswith(("~", "./", "../")):
        return False  # an environment variable's name, a path
    return "://" not in v and not v.isdigit()


def policy_value(line: str) -> tuple[str, int] | None:
    """(value, column) of a credential on a line by the written policy: a credential-named
    assignment of a literal in any syntax, a URL's password, a command-line credential
    option. A bare English name with a letters-only value after a colon (``Password:
    hunter``) is prose: see ``ambiguous_prose``."""
    url = _URL_PW.search(line)
    if url and not _template(url.group(1)) and len(url.group(1)) >= 3:
        return url.group(1), url.start(1)
    cli = _CLI.search(line)
    if cli and _literal_value(cli.group("v"), "") and not cli.group("v").startswith("-"):
        return cli.group("v"), cli.start("v")
    xml = re.search(r"<([\w.:-]{1,60})>([^<\s]{4,200})</\1>", line)
    if xml and CRED_NAME.search(xml.group(1)) and _literal_value(xml.group(2), xml.group(1)):
        return xml.group(2), xml.start(2)
    for m in _ASSIGN.finditer(line):
        name, v = m.group("name"), m.group("v")
        if not CRED_NAME.search(name) or _NOT_CRED_NAME.search(name) or re.search(
                r"(?i)user|name|_id$|url|host|file|path|length|policy|hint", name):
            continue
        if m.group("op") == "," and not m.group("q"):
            continue
        if _literal_value(v, name):
            return v, m.start("v")
    return None


def ambiguous_prose(line: str) -> bool:
    """``Password: hunter`` (a plain word name, a colon, letters only): prose by the policy
    when it stands alone, a literal in a YAML file; not judged mechanically."""
    return re.search(r"(?i)(?<![\w-])(?:password|passwd|pass|pwd|secret|token)\s*:\s*[A-Za-z]{4,}"
                     r"\s*$", line) is not None


def _named(line: str, start: int) -> bool:
    """The value at ``start`` has a name on its line (``name = X``, ``"name": X``,
    ``<name>X``, ``f(name="X")``), not a bare list item or a ``<value>`` element whose
    name is on another line; and it is not inside a template's braces."""
    before = line[:start]
    if before.rstrip("\"' ").endswith("{") or re.search(r"<(?:value|item|string|entry)>$", before):
        return False
    return re.search(r"[A-Za-z_][\w.-]*[\"'>]?\s*(?:[:=,>]|==)?\s*[\"'(]?$", before) is not None \
        and re.search(r"[\w\"'>]\s*(?:[:=,>(]|==)\s*[\"']?$|<[\w.-]+>$", before) is not None


_RANDOM_RUN = re.compile(r"[A-Za-z0-9+/_-]{20,}")


def unjudged_random(line: str) -> bool:
    """A run of 20+ token characters mixing both cases and digits (not hex): the policy
    flags such a generated token alone, and a source that lists the line as clean says
    only that its own rules pass it (the rule used for documentation lines)."""
    for run in _RANDOM_RUN.findall(line):
        if (re.search(r"[a-z]", run) and re.search(r"[A-Z]", run) and re.search(r"\d", run)
                and not re.fullmatch(r"[0-9a-fA-F-]+", run)):
            return True
    return False


def _label_line(line: str, common: dict, family: str) -> Iterator[dict]:
    """The policy's label for a line no source annotation judged."""
    found = policy_value(line)
    if found:
        yield from _synth_positive(line, found[0], found[1], {**common, "family": family})
    elif not ambiguous_prose(line) and not unjudged_random(line):
        yield from late_sources._negative(line, family=family, **common)


# ---- whispers ------------------------------------------------------------------------

_HC = re.compile(r"(?i)[A-Za-z0-9_+/.-]*hardcoded[A-Za-z0-9_+/.-]*={0,2}")
_B64 = re.compile(r"[A-Za-z0-9+/]{12,}={0,2}")


def _is_key_at(line: str, end: int) -> bool:
    return re.match(r"[\"']?\s*(?::(?!//)|=(?!=)|>)", line[end:]) is not None or \
        line[:end].rstrip().endswith("<")


def _whispers_value(line: str) -> tuple[int, int, str] | None:
    """(start, end, replacement) of the value whispers' tests expect on this line."""
    for m in _HC.finditer(line):
        if _is_key_at(line, m.end()) or line[max(0, m.start() - 1)] in "<":
            continue
        new = re.sub(r"(?i)hardcoded", synthetic_password(line), m.group(0), count=1)
        return m.start(), m.end(), new
    for m in _B64.finditer(line):
        try:
            raw = base64.b64decode(m.group(0) + "=" * (-len(m.group(0)) % 4))
        except ValueError:
            continue
        if b"hardcoded" in raw.lower():
            text = raw.decode("latin-1")
            new_text = re.sub(r"(?i)hardcoded", synthetic_password(line), text, count=1)
            return m.start(), m.end(), base64.b64encode(new_text.encode("latin-1")).decode()
    return None


def whispers(unit: str, path: str) -> Iterator[dict]:
    commit = _commit(WHISPERS)
    text = _text(WHISPERS, path) or ""
    stem = path.rsplit("/", 1)[-1].split(".")[0]
    by_key = _WHISPERS_BY_KEY.get(stem, [])
    in_pem = False
    for number, line in enumerate(text.split("\n"), 1):
        common = {"source": "whispers fixtures", "unit": unit,
                  "origin": f"{WHISPERS}@{commit}:{path}:{number}"}
        if "-----BEGIN" in line:
            in_pem = "-----END" not in line
        elif in_pem:
            in_pem = "-----END" not in line
            continue  # the body of a key block: a line alone holds part of one
        found = _whispers_value(line)
        if found:
            start, end, new = found
            if ("://" in line[start:end] or re.search(r"://\S*$", line[:start])
                    or not _named(line, start)):
                continue  # a value without its name on the line: not judged
            yield from late_sources._positive(line[:start] + new + line[end:], new, start,
                                              kind="whispers", family="assignment", **common)
            continue
        keyed = next((k for k in by_key if re.search(
            r"(?<![\w-])[\"']?" + re.escape(k) + r"[\"']?\s*(?:[:=]|>)", line)), None)
        if keyed:
            m = re.search(re.escape(keyed) + r"[\"']?\s*(?:[:=]|>)\s*[\"']?([^\"'<\s,]+)", line)
            if m and len(m.group(1)) >= 6:
                yield from late_sources._positive(line, m.group(1), m.start(1), kind="whispers",
                                                  family="assignment", **common)
            continue
        yield from _label_line(line, common, "scanner fixture")


# ---- semgrep language rules ------------------------------------------------------------

def semgrep(unit: str, path: str) -> Iterator[dict]:
    commit = _commit(SEMGREP)
    for number, line, mark in late_sources.semgrep_marked(_text(SEMGREP, path) or ""):
        common = {"source": "semgrep-rules language secrets", "unit": unit,
                  "origin": f"{SEMGREP}@{commit}:{path}:{number}"}
        if mark == "ok":
            yield from late_sources._negative(line, family="scanner fixture", **common)
        elif mark == "ruleid":
            lit = _literal(line)
            if lit and not re.search(r"(?i)x{4}", lit[0]):
                yield from late_sources._positive(line, lit[0], lit[1], kind=unit,
                                                  family="code literal", **common)


def _literal(line: str) -> tuple[str, int] | None:
    """The longest string literal of a code line (the hard-coded value), or None."""
    best = None
    for m in re.finditer(r"\"([^\"\n]{4,})\"|'([^'\n]{4,})'", line):
        value = m.group(1) if m.group(1) is not None else m.group(2)
        at = m.start(1) if m.group(1) is not None else m.start(2)
        if "://" in value and re.search(r"://[^\s:/@]+:([^\s/@]+)@", value):
            url = re.search(r"://[^\s:/@]+:([^\s/@]+)@", value)
            assert url is not None
            return url.group(1), at + url.start(1)
        if best is None or len(value) > len(best[0]):
            best = (value, at)
    return best


# ---- manifests and compose files -------------------------------------------------------

_URL_PW = re.compile(r"[a-z][a-z0-9+.-]*://[^\s:/@\"']+:([^\s/@\"']+)@")


def _template(value: str) -> bool:
    return bool(re.search(r"\$\{|\{\{|^\$|^<.*>$|^\*+$|/run/secrets|^/|^\./|^\s*$", value))


def _cred_pairs(doc: object, out: list[tuple[str, str]]) -> None:
    """(name, literal value) of every credential-named entry of a parsed YAML document,
    compose ``environment`` lists (``NAME=value``) included."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            if isinstance(value, (str, int)) and not isinstance(value, bool):
                if CRED_NAME.search(str(key)) and not _NOT_CRED_NAME.search(str(key)):
                    out.append((str(key), str(value)))
            else:
                _cred_pairs(value, out)
    elif isinstance(doc, list):
        for item in doc:
            if isinstance(item, str) and "=" in item:
                name, _, value = item.partition("=")
                if CRED_NAME.search(name) and not _NOT_CRED_NAME.search(name):
                    out.append((name, value))
            else:
                _cred_pairs(item, out)


def _secret_pairs(doc: object, out: list[tuple[str, str]]) -> None:
    """A Kubernetes Secret's data and stringData entries: every value is a credential."""
    if isinstance(doc, dict) and doc.get("kind") == "Secret":
        for field in ("data", "stringData"):
            entries = doc.get(field) or {}
            if isinstance(entries, dict):
                out.extend((str(k), str(v)) for k, v in entries.items()
                           if isinstance(v, (str, int)))


def _manifest_lines(repo: str, unit: str, paths: list[str], source: str) -> Iterator[dict]:
    commit = _commit(repo)
    values: set[str] = set()  # credential values named somewhere in the unit (digits in them)
    secret_data: set[tuple[str, str]] = set()  # a Secret's data entries
    texts = {p: _text(repo, p) or "" for p in paths}
    for path, text in texts.items():
        if not path.endswith((".yaml", ".yml")):
            continue
        pairs: list[tuple[str, str]] = []
        data: list[tuple[str, str]] = []
        try:
            for doc in yaml.safe_load_all(text):
                _cred_pairs(doc, pairs)
                _secret_pairs(doc, data)
        except yaml.YAMLError:
            continue
        values.update(v for k, v in pairs if _literal_value(v, k) and re.search(r"\d", v))
        secret_data.update((k, v) for k, v in data if len(v) >= 4 and not _template(v)
                           and not re.search(r"(?i)user|name|_id$|host|url|port|address|endpoint"
                                             r"|server", k))
    previous = ""
    for path, text in texts.items():
        for number, line in enumerate(text.split("\n"), 1):
            common = {"source": source, "unit": unit, "origin": f"{repo}@{commit}:{path}:{number}"}
            stripped = line.strip()
            prev, previous = previous, stripped
            data_entry = re.match(r"\s*-?\s*([\w.-]+)\s*:\s*[\"']?([^\s\"']+)", line)
            if data_entry and (data_entry.group(1), data_entry.group(2)) in secret_data:
                yield from _synth_positive(line, data_entry.group(2), data_entry.start(2),
                                           {**common, "family": "real notes"})
                continue
            if re.match(r"-?\s*value\s*:", stripped) and CRED_NAME.search(prev):
                continue  # an env list's value: its name is on the line before
            found = policy_value(line)
            hit = next((v for v in sorted(values, key=len, reverse=True)
                        if re.search(r"(?<![A-Za-z0-9])" + re.escape(v) + r"(?![A-Za-z0-9])",
                                     line)), None)
            if hit and not found:
                if not CRED_NAME.search(line):
                    continue  # a credential's value without its name on the line: not judged
                yield from _synth_positive(line, hit, line.index(hit),
                                           {**common, "family": "real notes"})
            elif found or _ABOUT.search(line):
                yield from _label_line(line, common, "real notes")


def _synth_positive(line: str, secret: str, col: int, common: dict) -> Iterator[dict]:
    """A positive whose value becomes a synthetic one of its shape (a word password
    becomes another of the same kind; base64 is re-encoded)."""
    new = _synth_value(secret)
    rec = {"line": line[:col] + new + line[col + len(secret):], "label": "pos",
           "secret": new, "start": col, "kind": "assignment", "family": "real notes", **common}
    if (adjudication._drop(rec) or late_sources._WORD_ONLY.match(secret)
            or re.search(r"(?i)x{4}", secret)):
        return
    stripped = rec["line"].strip()
    start = col - (len(rec["line"]) - len(rec["line"].lstrip()))
    if 0 <= start and 0 < len(stripped) <= 500:
        yield {**rec, "line": stripped, "start": start}


def _synth_value(secret: str) -> str:
    if re.fullmatch(r"[A-Za-z0-9+/]{8,}={0,2}", secret) and len(secret) % 4 == 0:
        try:
            raw = base64.b64decode(secret, validate=True).decode("ascii")
        except (ValueError, UnicodeDecodeError):
            raw = None
        if raw is not None and raw.isprintable():
            return base64.b64encode(synthetic_password(secret).encode()).decode()
    if late_sources.synth.looks_live(secret):
        return late_sources._reshape(secret)
    return synthetic_password(secret)


# ---- notes ----------------------------------------------------------------------------

_CRED_WORD = re.compile(r"(?i)pass|secret|token|key|auth|cred|pwd|bearer")


def notes(repo: str, unit: str, paths: list[str]) -> Iterator[dict]:
    commit = _commit(repo)
    relabel = _relabel()
    for path in paths:
        text = _text(repo, path) or ""
        for number, line in enumerate(text.split("\n"), 1):
            stripped = line.strip()
            if len(stripped) < 8:
                continue
            common = {"source": "agent memory notes", "unit": unit,
                      "origin": f"{repo}@{commit}:{path}:{number}"}
            if stripped in relabel:
                yield {"line": stripped, "label": relabel[stripped], "kind": "relabelled",
                       "family": "agent notes", **common}
            elif _CRED_WORD.search(stripped) and adjudication._generated_looking(stripped):
                continue  # not judged mechanically
            else:
                yield {"line": stripped, "label": "neg", "kind": "", "family": "agent notes",
                       **common}


def _relabel() -> dict[str, str]:
    path = HERE / "foreign_relabel.json"
    return json.loads(path.read_text())["lines"] if path.exists() else {}


# ---- build ----------------------------------------------------------------------------

def records_of(unit: str, repo: str, paths: list[str]) -> Iterator[dict]:
    if unit.startswith("whispers:"):
        yield from whispers(unit, paths[0])
    elif unit.startswith("semgrep5:"):
        yield from semgrep(unit, paths[0])
    elif unit.startswith("compose:"):
        yield from _manifest_lines(repo, unit, paths, "awesome-compose samples")
    elif unit.startswith("k8s:"):
        yield from _manifest_lines(repo, unit, paths, "kubernetes examples")
    elif unit.startswith("notes:"):
        yield from notes(repo, unit, paths)


def read_guarded(read: Callable[[], Iterable[dict]], part: str, left_out: Counter[str],
                 what: str = "file") -> list[dict]:
    """``read()``'s records. An error while reading a held-out unit is counted by its type
    only (its message could quote the unit's text) and leaves nothing; a tuning unit's is
    raised (rounds 15 to 19)."""
    try:
        return list(read())
    except Exception as err:  # noqa: BLE001
        if part == "tune":
            raise
        left_out[f"heldout: a {what} the builder failed on ({type(err).__name__})"] += 1
        return []


def known_lines(*sets: str) -> set[str]:
    """The lines of these sets (paths under tests/data/secrets/): a new set leaves them out."""
    return {json.loads(x)["line"] for rel in sets
            for x in (HERE.parent / rel).read_text().splitlines()}


def write_sets(units: dict, split: dict[str, str], records_of: Callable, known: set[str],
               out_dir: Path) -> None:
    """Each unit's labelled lines (``records_of(unit, repo, paths)``, adjudicated, those
    in ``known`` left out) into ``out_dir``'s tuning.jsonl or heldout.jsonl by the split;
    only the counts are printed."""
    out: dict[str, list[dict]] = {"tune": [], "heldout": []}
    for unit in sorted(units):
        repo, paths = units[unit]
        recs = [r for r in adjudication.apply(list(records_of(unit, repo, paths)))
                if r["line"] not in known]
        for rec in recs:
            rec["split"] = split[unit]
        out[split[unit]].extend(recs)
    write_parts(out, out_dir)


def write_parts(out: dict[str, list[dict]], out_dir: Path) -> dict[str, list[dict]]:
    """The two parts (``out["tune"]``, ``out["heldout"]``), deduplicated, into ``out_dir``'s
    tuning.jsonl and heldout.jsonl; prints each part's counts only, returns what it wrote."""
    written = {}
    for name, recs in out.items():
        recs = written[name] = build_corpus.dedupe(recs)
        path = out_dir / ("tuning.jsonl" if name == "tune" else "heldout.jsonl")
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs))
        pos = sum(r["label"] == "pos" for r in recs)
        print(f"{name}: {len({r['unit'] for r in recs})} units, {pos} positives, "
              f"{len(recs) - pos} negatives")
    return written


def build_round(units: dict, records_of: Callable, out_dir: Path, seed: int,
                earlier: tuple[str, ...]) -> None:
    """A later round's builder: its split (this round's rule, the round's seed; with
    ``--split-only`` only the split is made and counted), then its sets, the lines of the
    corpus, the independent set and the ``earlier`` rounds' sets left out."""
    split = the_split(list(units), out_dir, seed)
    if "--split-only" in sys.argv:
        held = sum(v == "heldout" for v in split.values())
        print(f"{len(split)} units, {held} held out")
        return
    known = known_lines("dev/lines.jsonl", "independent/lines.jsonl", *earlier)
    write_sets(units, split, records_of, known, out_dir)


def build_and_report(units: dict, records_of: Callable, out_dir: Path, seed: int,
                     earlier: tuple[str, ...], note: str,
                     left_out: tuple[Counter[str], ...]) -> None:
    """A later round's whole run (rounds 13 to 17): ``build_round``, then, unless only the
    split was asked for, its ``relabel.json`` with ``note`` and the counts of what it left out,
    by reason (never a line), summed over the builders' ``left_out`` counters once built."""
    build_round(units, records_of, out_dir, seed, earlier)
    if "--split-only" not in sys.argv:
        write_relabel(out_dir, note)
        for reason, count in sorted(sum(left_out, Counter()).items()):
            print(f"left out: {reason}: {count}")


def main() -> None:
    units = unit_files()
    write_sets(units, the_split(list(units)), records_of,
               known_lines("dev/lines.jsonl", "independent/lines.jsonl"), OUT)


if __name__ == "__main__":
    main()
