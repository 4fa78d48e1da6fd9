"""Round 9 (issue 29): a third foreign set, split once by source unit into a tuning
two-thirds and a held-out third.

    python tests/data/secrets/corpus_tools/foreign_sources_r9.py   # writes ../foreign_r9/

Sources (mirrors brought by the ``fetch`` tool; origins ``repository@commit:path:line``
on every line). None was used by an earlier round, and none is the independent set
(gitleaks', noseyparker's and kingfisher's fixtures stay out):

* CredSweeper's sample files (Samsung/CredSweeper, ``tests/samples/*``, the text ones:
  archives, images, office documents and other binaries are left out by their bytes).
  The source's annotation is what its two runs over the samples report
  (``tests/data/output.json``, the default run with its model, and ``tests/data/doc.json``,
  its mode for documentation, whose rules read "ID/PW: u/X" and "password is X"): a
  line either reports is a positive, its value the secret, unless the rule names no
  credential by this project's policy (UUIDs, salts, nonces, bucket names, domains,
  application ids) or the value is a placeholder (``EXAMPLE``; not judged); a private
  key's findings leave its header line to the policy and its body lines unjudged; a line
  neither reports is labelled by the written policy (round 6's ``label6``), as round 6 did
  for files without an annotation. Its ``*_n`` samples are written to hold no credential;
  the policy still judges them line by line, like every other file.
* Agent notes (``memory-bank/*.md``, ``AGENTS.md``, ``CLAUDE.md``, ``.cursor/rules``,
  ``.clinerules``) of public repositories no round used: negatives, except a line where a
  credential word and a generated-looking value meet (dropped, not judged).

Values are synthesised as in rounds 5 and 6 (``foreign_sources._synth_positive``), so no
real credential lands here.

**The split** is by source unit (a sample file, a notes repository), made once from the
unit names alone (sorted, shuffled with seed 2909, every third held out) before any line
was read, and stored in ``foreign_r9/units.json``: a later run reuses it; a unit not in it
goes to tuning.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import foreign_sources as r5  # noqa: E402
import foreign_sources_r6 as r6  # noqa: E402

OUT = HERE.parent / "foreign_r9"
SEED = 2909
CREDSWEEPER = "Samsung/CredSweeper"
NOTES = ("AIGeekSquad/neo4j-on-azure", "217th/tda_large_collector", "0xBigBoss/vibe-station",
         "7Spade/Twilight-Hub", "A1doranM/passivbot")
_SAMPLES = "tests/samples/"
# CredSweeper's rules whose findings are no credential by this project's policy
_NOT_CREDENTIAL = frozenset({"UUID", "Salt", "Nonce", "AWS S3 Bucket", "Firebase Domain",
                             "Tencent WeChat API App ID"})
# rules that report a key block (its header line is the policy's, its body not judged)
_KEY_BLOCK = ("PEM Private Key", "BASE64 encoded PEM Private Key", "BASE64 Private Key", "PKCS",
              "JKS", "Strong Name Key")
_RUNS = ("tests/data/output.json", "tests/data/doc.json")


def _is_text(repo: str, path: str) -> bool:
    """A file of text: UTF-8 without NUL bytes (its bytes are read, not its lines)."""
    try:
        data = r5._git(repo, "show", "HEAD:" + path)
    except subprocess.CalledProcessError:  # a path git cannot show is no unit
        return False
    if b"\0" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def unit_files() -> dict[str, tuple[str, list[str]]]:
    """unit -> (repository, its files): names (and whether a file is text) only."""
    units: dict[str, tuple[str, list[str]]] = {}
    for path in r5._files(CREDSWEEPER):
        if path.startswith(_SAMPLES) and "/" not in path.removeprefix(_SAMPLES):
            if _is_text(CREDSWEEPER, path):
                units["credsweeper:" + path.removeprefix(_SAMPLES)] = (CREDSWEEPER, [path])
    for repo in NOTES:
        files = [p for p in r5._files(repo) if r6._NOTE_FILE.match(p)]
        if files:
            units["notes9:" + repo] = (repo, files)
    return units


@functools.cache
def _findings() -> dict[tuple[str, int], list[tuple[str, str]]]:
    """(path, line number) -> [(rule, value)] of CredSweeper's own runs on its samples."""
    out: dict[tuple[str, int], list[tuple[str, str]]] = {}
    for run in _RUNS:
        for finding in json.loads(r5._git(CREDSWEEPER, "show", "HEAD:" + run)):
            for where in finding["line_data_list"]:
                path = where["path"].removeprefix("./")
                out.setdefault((path, where["line_num"]), []).append(
                    (finding["rule"], where.get("value") or ""))
    return out


def credsweeper(unit: str, path: str) -> Iterator[dict]:
    commit = r5._commit(CREDSWEEPER)
    text = r5._text(CREDSWEEPER, path)
    if text is None:
        return
    found = _findings()
    for number, line in r6.key_block_free_lines(text):
        common = {"source": "CredSweeper samples", "unit": unit,
                  "origin": f"{CREDSWEEPER}@{commit}:{path}:{number}"}
        hits = found.get((path, number), [])
        if any(rule.startswith(_KEY_BLOCK) for rule, _ in hits):
            if "-----BEGIN" in line:
                yield from r6.label6(line, common, "scanner fixture")
            continue  # a key block's body in code or a log: not judged
        if any("EXAMPLE" in value for _, value in hits):
            continue  # a placeholder the sample itself calls negative: not judged
        credential = [(rule, value) for rule, value in hits
                      if rule not in _NOT_CREDENTIAL and value and value in line]
        if credential:
            rule, value = max(credential, key=lambda h: len(h[1]))
            col = line.index(value)
            narrowed = r6._narrow(line, value, col)
            if narrowed is not None:
                yield from r5._synth_positive(line, narrowed[0], narrowed[1],
                                              {**common, "kind": rule,
                                               "family": "scanner fixture"})
            continue
        if hits and not any(rule in _NOT_CREDENTIAL for rule, _ in hits):
            continue  # reported, but its value is not on the line as written: not judged
        if _prose_credential(line) and not r5.policy_value(line):
            continue  # a password stated in prose: the written policy's, not judged here
        yield from r6.label6(line, common, "scanner fixture")


_PROSE_WORD = re.compile(r"(?i)(?:pass(?:word)?|passwd|pwd?|p/w|secret|token|비밀번호|비번|암호|패스워드)"
                         r"(?P<rest>.{0,40})")
_PROSE_VALUE = re.compile(r"[^\s:/(]*(?=[^\s]*\d)(?=[^\s]*[A-Za-z])[^\s]{6,}")


def _prose_credential(line: str) -> bool:
    """A credential word followed within 40 characters by a value of six or more
    characters that mixes letters and digits (``Password Prl23Db#@``, ``pwd of master is
    X``): the written policy flags such a stated password (docs/security.md, borderline
    cases), but its mechanical labeller reads only assignments, so such a line the
    source does not report is left unjudged rather than called clean."""
    for m in _PROSE_WORD.finditer(line):
        if _PROSE_VALUE.search(m.group("rest")):
            return True
    return False


def records_of(unit: str, repo: str, paths: list[str]) -> Iterator[dict]:
    if unit.startswith("credsweeper:"):
        yield from credsweeper(unit, paths[0])
    elif unit.startswith("notes9:"):
        for rec in r5.notes(repo, unit, paths):
            yield {**rec, "source": "agent notes (round 9)"}


def main() -> None:
    r5.build_round(unit_files(), records_of, OUT, SEED,
                   ("foreign/tuning.jsonl", "foreign/heldout.jsonl",
                    "foreign_r6/tuning.jsonl", "foreign_r6/heldout.jsonl"))


if __name__ == "__main__":
    main()
