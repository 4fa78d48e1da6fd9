"""Round 6 (issue 29): more foreign material, split once by source unit into a tuning
two-thirds and a held-out third.

    python tests/data/secrets/corpus_tools/foreign_sources_r6.py   # writes ../foreign_r6/

Sources (mirrors brought by the ``fetch`` tool; origins ``repository@commit:path:line``
on every line). None of them was used by an earlier round, and none is the independent
set (gitleaks', noseyparker's and kingfisher's fixtures stay out):

* GitHub's custom secret-scanning patterns (advanced-security/secret-scanning-custom-patterns):
  every pattern's ``test.data`` sample (the value between ``start_offset`` and
  ``end_offset``, or the token at ``start_offset``) is a positive of a credential
  pattern and a negative of a pattern that names no credential (IP addresses, e-mail
  addresses, internal URLs, UUIDs, action pins, public keys); the sample data files
  (``configs/``, ``database/``, ``generic/``, ``jwt/``, ``vendors/``...): a line that holds
  an ``expected`` offset of a credential pattern is a positive, the other lines are
  labelled by the written policy (below).
* trivy's secret scanner fixtures (aquasecurity/trivy, ``pkg/fanal/secret/testdata``):
  ``scanner_test.go`` gives each finding's ``Match`` (the line with the secret masked by
  ``*``); a fixture line that equals a ``Match`` outside its mask is a positive whose
  secret is the masked span; other lines by the policy.
* checkov's secret-scanning test resources (bridgecrewio/checkov, ``tests/secrets``: IaC,
  Dockerfiles, JSON, YAML, logs) and credential-digger's scanner test files
  (SAP/credential-digger): by the policy.
* Agent notes of public repositories not used before (``memory-bank/*.md``, ``AGENTS.md``,
  ``CLAUDE.md``, ``.cursor/rules``, ``.clinerules``): negatives, except a line where a
  credential word and a generated-looking value meet (dropped, not judged).

The written policy is round 5's (``foreign_sources.policy_value``: a credential-named
assignment of a literal in any syntax, a URL's password, a command-line credential
option; a plain-word ``Password: hunter`` and a line holding an unlabelled random token
are dropped, not judged). Values are synthesised (``foreign_sources._synth_value``: a
password of the same kind, base64 re-encoded, tokens reshaped segment by segment), so no
real credential lands here.

**The split** is by source unit (a pattern, a sample file, a fixture file, a resource
directory, a notes repository), made once from the unit names alone (sorted, shuffled
with seed 2906, every third held out) before any line was read, and stored in
``foreign_r6/units.json``: a later run reuses it; a unit not in it goes to tuning.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import foreign_sources as r5  # noqa: E402
import late_sources  # noqa: E402

OUT = HERE.parent / "foreign_r6"
SEED = 2906
SSCP = "advanced-security/secret-scanning-custom-patterns"
TRIVY = "aquasecurity/trivy"
CHECKOV = "bridgecrewio/checkov"
CDIGGER = "SAP/credential-digger"
NOTES = ("00wz/DesktopAssistant", "0ut5ider/DM-Player", "0x4007/dao.ubq.fi", "270aldo/ngx.agents",
         "40min/flocus", "3WGhostDGit/pigi_saas", "2naive/website-checker", "0-don/new-api",
         "1KHA/dhwmk")
# the custom patterns that name no credential: their samples are negatives
_SSCP_NOT_CREDENTIAL = {"hardcoded_internal_emails", "hardcoded_internal_urls", "any_ipv4_addresses",
                        "ghcr_typos", "uuids", "github_actions_sha_checker", "ssh_public_key",
                        "common_passwords_shortlist"}
_SSCP_DIRS = ("configs", "database", "generic", "jwt", "password_store", "rsa", "uri", "vendors")
_TRIVY_DIR = "pkg/fanal/secret/testdata/"
_TRIVY_CONFIG = re.compile(r"^(?:config|allow|global|exclude|multi-line-o|skip|multiple-secret)")
_NOTE_FILE = re.compile(r"^(?:memory-bank/[^/]+\.md|AGENTS\.md|CLAUDE\.md|\.clinerules(?:/.*)?"
                        r"|\.cursor/rules/.+\.mdc?|\.cursorrules)$")


def _files(repo: str) -> list[str]:
    return r5._files(repo)


# ---- units (names only) and the split -------------------------------------------------

def unit_files() -> dict[str, tuple[str, list[str]]]:
    """unit -> (repository, its files or its pattern file and type): names only."""
    units: dict[str, tuple[str, list[str]]] = {}
    sscp = _files(SSCP)
    for path in sscp:
        top = path.split("/", 1)[0]
        if top not in _SSCP_DIRS and top != "common":
            continue
        if path.endswith("patterns.yml"):
            text = r5._text(SSCP, path) or ""
            for p in (yaml.safe_load(text) or {}).get("patterns", []):  # the names only
                units.setdefault(f"sscp:{top}/{p['type']}", (SSCP, [path, p["type"]]))
        elif ("__snapshots__" not in path and not path.endswith((".md", ".keystore", ".html"))
              and top in _SSCP_DIRS and "generate" not in path):
            units["sscp-file:" + path] = (SSCP, [path])
    for path in _files(TRIVY):
        if path.startswith(_TRIVY_DIR):
            name = path.removeprefix(_TRIVY_DIR)
            if not _TRIVY_CONFIG.match(name) and "/" not in name:
                units["trivy:" + name] = (TRIVY, [path])
    for path in _files(CHECKOV):
        if (path.startswith("tests/secrets/") and "git_history" not in path
                and not path.endswith((".py", ".png", ".pyc")) and path.count("/") >= 3):
            units.setdefault("checkov:" + path.rsplit("/", 1)[0], (CHECKOV, []))[1].append(path)
    for path in _files(CDIGGER):
        if path.startswith("tests/file_scanner_tests_folder/") and not path.endswith(".png"):
            units.setdefault("cdigger:scanner-files", (CDIGGER, []))[1].append(path)
    for repo in NOTES:
        files = [p for p in _files(repo) if _NOTE_FILE.match(p)]
        if files:
            units["notes6:" + repo] = (repo, files)
    return units


# ---- custom secret-scanning patterns ----------------------------------------------------

def _sscp_patterns() -> dict[str, dict]:
    out: dict[str, dict] = {}
    for path in _files(SSCP):
        if path.endswith("patterns.yml"):
            for p in (yaml.safe_load(r5._text(SSCP, path) or "") or {}).get("patterns", []):
                out.setdefault(p["type"], {**p, "_dir": path.rsplit("/", 1)[0]})
    return out


def _span(data: str, start: int | None, end: int | None) -> tuple[int, int] | None:
    """The secret's span in ``data``: the offsets, or the token at ``start``, or the longest
    token-like run when the pattern names none."""
    if start is not None and end is not None and 0 <= start < end <= len(data):
        return start, end
    if start is not None and 0 <= start < len(data):
        m = re.match(r"[^\s\"'`,;]+", data[start:])
        return (start, start + m.end()) if m else None
    runs = [m for m in re.finditer(r"[A-Za-z0-9+/=_.~-]{8,}", data)]
    if not runs:
        return None
    m = max(runs, key=lambda x: len(x.group(0)))
    return m.start(), m.end()


def _line_positive(text: str, s: int, e: int, common: dict, family: str) -> Iterator[dict]:
    """The line of ``text`` that holds the span [s, e) (one line only) as a positive."""
    if "\n" in text[s:e].strip("\n"):
        return  # a multi-line value (a key block): a memory line holds one line
    line_start = text.rfind("\n", 0, s) + 1
    line_end = text.find("\n", s)
    line = text[line_start:] if line_end < 0 else text[line_start:line_end]
    secret = text[s:e].strip("\n")
    col = s - line_start
    if line.endswith("\r"):
        line = line[:-1]
    narrowed = _narrow(line, secret, col)
    if narrowed is None:
        return  # a connection string whose password the policy cannot place: not judged
    secret, col = narrowed
    yield from r5._synth_positive(line, secret, col, {**common, "family": family})


def _narrow(line: str, secret: str, col: int) -> tuple[str, int] | None:
    """A pattern's span may cover a whole URL or connection string: the secret is its
    password (a URL's, or a credential-named ``key=value`` inside it)."""
    end = col + len(secret)
    url = r5._URL_PW.search(line)
    if url and url.start(1) < end and col < url.end(1):
        return url.group(1), url.start(1)
    inner = r5.policy_value(secret)
    if inner and len(inner[0]) < len(secret):
        return inner[0], col + inner[1]
    if re.search(r"[;&]\s*[\w ]+=", secret):
        return None
    return secret, col


def sscp_pattern(unit: str, ptype: str) -> Iterator[dict]:
    commit = r5._commit(SSCP)
    p = _sscp_patterns()[ptype]
    test = p.get("test") or {}
    data = test.get("data") if isinstance(test, dict) else None
    if not isinstance(data, str):
        return
    common = {"source": "custom secret-scanning patterns", "unit": unit,
              "origin": f"{SSCP}@{commit}:{p['_dir']}/patterns.yml:{ptype}"}
    if ptype in _SSCP_NOT_CREDENTIAL:
        for line in data.split("\n"):
            yield from late_sources._negative(line, family="scanner fixture", **common)
        return
    span = _span(data, test.get("start_offset"), test.get("end_offset"))
    if span:
        yield from _line_positive(data, span[0], span[1], {**common, "kind": ptype},
                                  "scanner fixture")


def sscp_file(unit: str, path: str) -> Iterator[dict]:
    commit = r5._commit(SSCP)
    text = r5._text(SSCP, path)
    if text is None:
        return
    name = path.rsplit("/", 1)[-1]
    top = path.split("/", 1)[0]
    spans: list[tuple[int, int]] = []
    not_cred_lines: set[int] = set()
    for ptype, p in _sscp_patterns().items():
        if not p["_dir"].startswith(top):
            continue
        for exp in p.get("expected") or []:
            if exp.get("name") != name:
                continue
            span = _span(text, exp.get("start_offset"), exp.get("end_offset"))
            if span is None:
                continue
            if ptype in _SSCP_NOT_CREDENTIAL:
                not_cred_lines.add(text.count("\n", 0, span[0]) + 1)
            else:
                spans.append(span)
    by_line: dict[int, tuple[int, int]] = {}
    for s, e in spans:
        by_line.setdefault(text.count("\n", 0, s) + 1, (s, e))
    offset = 0
    in_pem = False
    for number, line in enumerate(text.split("\n"), 1):
        common = {"source": "custom secret-scanning patterns", "unit": unit,
                  "origin": f"{SSCP}@{commit}:{path}:{number}"}
        begin, offset = offset, offset + len(line) + 1
        if "-----BEGIN" in line:
            in_pem = "-----END" not in line
        elif in_pem:
            in_pem = "-----END" not in line
            continue  # a key block's body: part of one key
        if number in by_line:
            s, e = by_line[number]
            if begin <= s < offset:
                yield from _line_positive(text, s, e, {**common, "kind": "custom pattern"},
                                          "scanner fixture")
            continue
        yield from label6(line.rstrip("\r"), common, "scanner fixture")


def key_block_free_lines(text: str) -> Iterator[tuple[int, str]]:
    """(1-based number, line without its CR) of each line of ``text`` that is not inside a
    private key's block: a block's body is one key, its header line stands for it."""
    in_pem = False
    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.rstrip("\r")
        if "-----BEGIN" in line:
            in_pem = "-----END" not in line
        elif in_pem:
            in_pem = "-----END" not in line
            continue
        yield number, line


# ---- trivy --------------------------------------------------------------------------

def _trivy_matches() -> list[tuple[str, str, int]]:
    """(prefix, suffix, masked length) of every ``Match`` in trivy's scanner tests."""
    text = r5._text(TRIVY, "pkg/fanal/secret/scanner_test.go") or ""
    out = []
    for m in re.finditer(r'Match:\s+"((?:[^"\\]|\\.)*)"', text):
        try:
            value = json.loads('"' + m.group(1) + '"')
        except ValueError:
            continue
        star = re.search(r"\*{3,}", value)
        if star:
            out.append((value[:star.start()], value[star.end():], star.end() - star.start()))
    return out


def trivy(unit: str, path: str) -> Iterator[dict]:
    commit = r5._commit(TRIVY)
    text = r5._text(TRIVY, path)
    if text is None:
        return
    matches = _trivy_matches()
    for number, line in key_block_free_lines(text):
        common = {"source": "trivy secret fixtures", "unit": unit,
                  "origin": f"{TRIVY}@{commit}:{path}:{number}"}
        hit = next(((pre, n) for pre, suf, n in matches
                    if len(line) == len(pre) + n + len(suf) and line.startswith(pre)
                    and line.endswith(suf) and (pre or suf)), None)
        if hit:
            pre, n = hit
            yield from r5._synth_positive(line, line[len(pre):len(pre) + n], len(pre),
                                          {**common, "kind": "trivy", "family": "scanner fixture"})
            continue
        yield from label6(line, common, "scanner fixture")


# ---- policy-labelled files -------------------------------------------------------------

_PEM_HEADER = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_QUERY_PW = re.compile(r"[?&;](?:password|passwd|pwd|pass)=([^&;\s\"'#]{3,})", re.I)


def label6(line: str, common: dict, family: str) -> Iterator[dict]:
    """Round 5's policy, plus two of its written cases it did not label: a private key's
    header alone on a line is a positive, and so is a password in a URL's query
    (``?user=u&password=X``)."""
    header = _PEM_HEADER.search(line)
    if header:
        yield {"line": line.strip(), "label": "pos", "secret": header.group(0),
               "start": header.start() - (len(line) - len(line.lstrip())), "kind": "private key",
               **common, "family": family}
        return
    query = _QUERY_PW.search(line)
    if query and r5._literal_value(query.group(1), "password") and not r5._URL_PW.search(line):
        yield from r5._synth_positive(line, query.group(1), query.start(1),
                                      {**common, "family": family})
        return
    yield from r5._label_line(line, common, family)


def policy_files(repo: str, unit: str, paths: list[str], source: str) -> Iterator[dict]:
    commit = r5._commit(repo)
    for path in paths:
        text = r5._text(repo, path)
        if text is None:
            continue
        for number, line in key_block_free_lines(text):
            common = {"source": source, "unit": unit,
                      "origin": f"{repo}@{commit}:{path}:{number}"}
            yield from label6(line, common, "scanner fixture")


# ---- build ----------------------------------------------------------------------------

def records_of(unit: str, repo: str, paths: list[str]) -> Iterator[dict]:
    if unit.startswith("sscp:"):
        yield from sscp_pattern(unit, paths[1])
    elif unit.startswith("sscp-file:"):
        yield from sscp_file(unit, paths[0])
    elif unit.startswith("trivy:"):
        yield from trivy(unit, paths[0])
    elif unit.startswith("checkov:"):
        yield from policy_files(repo, unit, paths, "checkov secret tests")
    elif unit.startswith("cdigger:"):
        yield from policy_files(repo, unit, paths, "credential-digger tests")
    elif unit.startswith("notes6:"):
        for rec in r5.notes(repo, unit, paths):
            yield {**rec, "source": "agent notes (round 6)"}


def main() -> None:
    r5.build_round(unit_files(), records_of, OUT, SEED,
                   ("foreign/tuning.jsonl", "foreign/heldout.jsonl"))


if __name__ == "__main__":
    main()
