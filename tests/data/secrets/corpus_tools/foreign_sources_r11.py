"""Round 11 (issue 29): a fourth foreign set, split once by source unit into a tuning
two-thirds and a held-out third.

    python tests/data/secrets/corpus_tools/foreign_sources_r11.py --split-only  # units.json
    python tests/data/secrets/corpus_tools/foreign_sources_r11.py               # ../foreign_r11/

Sources (mirrors brought by the ``fetch`` tool; origins ``repository@commit:path:line``
on every line). None was used by an earlier round, and none is the independent set
(gitleaks', noseyparker's and kingfisher's fixtures stay out; Bearer's secret rules are
gitleaks' and were not taken):

* Plazmaz/leaky-repo: a repository of intentionally leaked credentials across the config
  files people commit (shell profiles, ``.netrc``, ``.pgpass``, ``.npmrc``, ``.s3cfg``,
  FileZilla and DBeaver XML, Django settings, ``wp-config.php``, ``.htpasswd``, ``shadow``,
  ``.git-credentials``...), one unit a file. Its ``.leaky-meta/secrets.csv`` counts findings
  per file, not per line, so lines are labelled by the written policy.
* GitGuardian/sample_secrets (its sample files), GitGuardian/ggshield's functional test data
  (Dockerfiles and a config leaking credentials), pre-commit/pre-commit-hooks' AWS config
  fixtures, auth0/repo-supervisor's fixtures (integration files with secrets, and the word
  lists its entropy filters must pass), thoughtworks/talisman's detector tests (Go),
  awslabs/git-secrets' bats tests, deepfence/SecretScanner's ``test/keys.txt``: one unit a
  file, labelled by the written policy.
* Agent notes (``memory-bank/*.md``, ``AGENTS.md``, ``CLAUDE.md``, ``.cursor/rules``,
  ``.clinerules``) of public repositories no round used: negatives, except a line where a
  credential word and a generated-looking value meet (dropped, not judged).

**Labels** (the written policy, docs/security.md): round 6's ``label6`` (assignments in any
syntax, URL passwords, command-line options, query passwords, private-key headers), plus
three written cases it does not read: a password hash (crypt ``$id$…``, LDAP ``{SSHA}…``:
"password hash", flagged), a ``.netrc`` line's ``password X`` ("user admin pass X",
flagged) and a ``.pgpass`` line's fifth field (its documented ``host:port:db:user:password``
format); an XML element whose credential name carries attributes (``<Pass
encoding="base64">X</Pass>``) is a positive, as its attribute-free form is. A line the policy
calls clean where a credential word is followed within 40 characters by a value mixing
letters and digits is left unjudged (round 9's rule). Values are synthesised as in rounds 5,
6 and 9 (``foreign_sources._synth_positive``; a hash keeps its scheme and is reshaped), so
no real credential lands here.

**The split** is by source unit, made once from the unit names alone (sorted, shuffled with
seed 2911, every third held out) before any line was read, and stored in
``foreign_r11/units.json``: a later run reuses it; a unit not in it goes to tuning (``LATE``:
WrongSecrets, ggshield's ``conftest.py`` and earlybird's tests, added after the first build's
tuning part proved small). Label fixes made after tuning lines were read (``_not_a_value``,
AWS key ids, names ending in a password word) apply to both parts alike.
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
import foreign_sources_r9 as r9  # noqa: E402
import late_sources  # noqa: E402
import synth  # noqa: E402

OUT = HERE.parent / "foreign_r11"
SEED = 2911
LEAKY = "Plazmaz/leaky-repo"
# (repository, unit prefix, source name, which of its files are units)
FIXTURES: tuple[tuple[str, str, str, re.Pattern[str]], ...] = (
    (LEAKY, "leaky", "leaky-repo",
     re.compile(r"^(?!\.leaky-meta/|LICENSE$|\.gitattributes$).+")),
    ("GitGuardian/sample_secrets", "ggsamples", "GitGuardian sample_secrets",
     re.compile(r"^(?!\.gitignore$)[^/]+$")),
    ("GitGuardian/ggshield", "ggshield", "ggshield test data",
     re.compile(r"^tests/functional/data/[^/]+/[^/]+$")),
    ("pre-commit/pre-commit-hooks", "precommit", "pre-commit-hooks fixtures",
     re.compile(r"^testing/resources/aws_config_[^/]+\.ini$")),
    ("auth0/repo-supervisor", "reposup", "repo-supervisor fixtures",
     re.compile(r"^test/fixtures/(?:integration/dir\.with\.secrets.*/[^/]+"
                r"|unit/src/filters/entropy\.meter/pre\.filters/[^/]+\.json)$")),
    ("thoughtworks/talisman", "talisman", "talisman detector tests",
     re.compile(r"^detector/(?:pattern|filecontent)/[^/]+_test\.go$")),
    ("awslabs/git-secrets", "gitsecrets", "git-secrets tests", re.compile(r"^test/[^/]+\.bats$")),
    ("deepfence/SecretScanner", "secretscanner", "SecretScanner tests",
     re.compile(r"^test/keys\.txt$")),
)
# Late units (found after the split was stored): tuning only, as every round's late units
# (``the_split`` gives a unit missing from units.json to tuning): OWASP's deliberately
# vulnerable WrongSecrets (its Dockerfiles, Kubernetes manifests, Terraform, properties),
# ggshield's test configuration (``conftest.py``: secrets its tests scan), earlybird's Go tests
LATE: tuple[tuple[str, str, str, re.Pattern[str]], ...] = (
    ("OWASP/wrongsecrets", "wrongsecrets", "WrongSecrets",
     re.compile(r"^(?:Dockerfile[^/]*|(?:okteto/)?k8s/[^/]+\.ya?ml|[a-z]+/secrets\.tf"
                r"|src/main/resources/application\.properties|js/index\.js)$")),
    ("GitGuardian/ggshield", "ggshield", "ggshield test data",
     re.compile(r"^tests/(?:unit/)?conftest\.py$")),
    ("americanexpress/earlybird", "earlybird", "earlybird tests",
     re.compile(r"^pkg/(?:scan|postprocess)/[^/]+_test\.go$")),
)
NOTES = ("0xPier/challonge-clone", "0-sayed/dispatch", "0-CYBERDYNE-SYSTEMS-0/FFT_nano",
         "0xCosmicTofu/ui-mapper", "1amageek/app-mcp")


def unit_files() -> dict[str, tuple[str, list[str]]]:
    """unit -> (repository, its files): names (and whether a file is text) only."""
    units: dict[str, tuple[str, list[str]]] = {}
    for repo, prefix, _, wanted in FIXTURES + LATE:
        for path in r5._files(repo):
            if wanted.match(path) and r9._is_text(repo, path):
                units[f"{prefix}:{path}"] = (repo, [path])
    for repo in NOTES:
        files = [p for p in r5._files(repo) if r6._NOTE_FILE.match(p)]
        if files:
            units["notes11:" + repo] = (repo, files)
    return units


# ---- the written cases label6 does not read ---------------------------------------

_HASH = re.compile(r"(?<![\w$])(?P<v>(?P<scheme>\$(?:1|2[abxy]?|5|6|apr1|y|gy|7|md5|sha1"
                   r"|argon2(?:id|i|d)|scrypt|pbkdf2(?:-sha\d+)?)\$)[^\s:\"'<>,;]{8,}"
                   r"|(?P<ldap>\{(?:SSHA|SHA|SMD5|MD5|CRYPT|SSHA256|SSHA512)\})"
                   r"[A-Za-z0-9+/=.$]{8,})")
_NETRC = re.compile(r"(?:^|\s)(?:machine\s+\S+\s+)?(?:login\s+\S+\s+)?password\s+(?P<v>\S{3,})\s*$")
_XML_ATTR = re.compile(r"<(?P<n>[\w.:-]{1,60})\s[^<>]*>(?P<v>[^<\s]{4,200})</(?P=n)>")
# AWS's documented access key id (an IAM user's AKIA, a session's ASIA): "AWS access key ID
# alone: flagged"; AWS's own EXAMPLE ids pass
_AWS_KEY_ID = re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])")
# the last word of a name that names a password or a secret (userPassword, sshUserPassword,
# adminpwd, Pw): round 5's labeller skips every name holding "user"
_CRED_TAIL = re.compile(r"(?i)(?:password|passwd|passphrase|pwd|pw|pass|secret|token)$")


def _hash_positive(line: str, m: re.Match[str], common: dict, family: str) -> Iterator[dict]:
    """A password hash as a positive, its scheme kept and the rest reshaped."""
    value = m.group("v")
    keep = len(m.group("scheme") or m.group("ldap") or "")
    new = synth.reshape(value, keep)
    col = m.start("v")
    full = line[:col] + new + line[col + len(value):]
    stripped = full.strip()
    start = col - (len(full) - len(full.lstrip()))
    if 0 < len(stripped) <= 500:
        yield {"line": stripped, "label": "pos", "secret": new, "start": start,
               "kind": "password hash", **common, "family": family}


def _pgpass_value(line: str) -> tuple[str, int] | None:
    """The password field of a ``.pgpass`` line (``host:port:db:user:password``)."""
    if line.lstrip().startswith("#") or line.count(":") < 4:
        return None
    head = ":".join(line.split(":")[:4]) + ":"
    value = line[len(head):].strip()
    return (value, len(head)) if value and r5._literal_value(value, "password") else None


def _cred_tail_value(line: str) -> tuple[str, int] | None:
    """A literal assigned to a name whose last word names a password or a secret, with
    backticks read as quotes (Go's raw strings, JS template literals)."""
    plain = line.replace("`", '"')
    for m in r5._ASSIGN.finditer(plain):
        name, value = m.group("name"), m.group("v")
        if m.group("op") == "," or not _CRED_TAIL.search(name.rsplit(".", 1)[-1]):
            continue
        if re.search(r"(?i)(?:by|com|sur|over|tres)pass$", name):
            continue  # bypass, compass: no credential
        if r5._literal_value(value, name) and not value.endswith((")", "(")):
            return value, m.start("v")
    return None


# the policy's sentence test ("this-is-probably-a-test": a sentence, not a secret)
_SENTENCE_WORDS = frozenset("this is a an the it not no probably test please do if you see use".split())


def _not_a_value(line: str) -> str | None:
    """What the policy makes of the value the labeller would take, where the labeller reads
    it wrong (fixed after the late units were read, for both parts): a sentence of words
    joined by ``_`` or ``-`` passes ("neg"), so do a call (``f(x, y)``) and a path of names
    (a Vault path: references); a Swift or TypeScript type annotation (``let pw: T = v``)
    is no value at all ("drop": the value is what follows ``=``)."""
    found = r5.policy_value(line) or _cred_tail_value(line)
    if found is None:
        return None
    value, col = found
    words = re.split(r"[_-]", value.strip("\"'`").lower())
    if len(words) >= 3 and all(w.isalnum() for w in words) and _SENTENCE_WORDS & set(words):
        return "neg"
    if re.match(r"[\w.]+\(", value) or re.fullmatch(r"[\w.-]+(?:/[\w.-]+)+/?", value):
        return "neg"
    if re.match(r"\s*=(?!=)", line[col + len(value):]) and line[:col].rstrip().endswith(":"):
        return "drop"
    return None


def label11(line: str, common: dict, family: str, path: str = "") -> Iterator[dict]:
    """The written policy's label for a line (``label6`` and the cases above)."""
    verdict = _not_a_value(line) if not _HASH.search(line) else None
    if verdict == "drop":
        return
    if verdict == "neg":
        yield from late_sources._negative(line, family=family, **common)
        return
    pw = _pgpass_value(line) if path.endswith(".pgpass") else None
    m_hash = _HASH.search(line)
    if m_hash:
        yield from _hash_positive(line, m_hash, common, family)
        return
    found = pw
    if found is None:
        netrc = _NETRC.search(line)
        if netrc and r5._literal_value(netrc.group("v"), "password"):
            found = netrc.group("v"), netrc.start("v")
    if found is None:
        aws = _AWS_KEY_ID.search(line)
        if aws and "EXAMPLE" not in aws.group(0):
            found = aws.group(0), aws.start()
    if found is None:
        found = _cred_tail_value(line)
    if found is None:
        xml = _XML_ATTR.search(line)
        if xml and r5.CRED_NAME.search(xml.group("n")) and \
                r5._literal_value(xml.group("v"), xml.group("n")):
            found = xml.group("v"), xml.start("v")
    if found is not None:
        yield from r5._synth_positive(line, found[0], found[1], {**common, "family": family})
        return
    records = list(r6.label6(line, common, family))
    if any(r["label"] == "neg" for r in records) and r9._prose_credential(line):
        return  # a stated password the mechanical labeller cannot place: not judged
    yield from records


def fixture_lines(repo: str, unit: str, path: str, source: str) -> Iterator[dict]:
    """Every line of one fixture file (private keys' bodies left out), by the policy."""
    commit = r5._commit(repo)
    text = r5._text(repo, path)
    if text is None:
        return
    for number, line in r6.key_block_free_lines(text):
        common = {"source": source, "unit": unit,
                  "origin": f"{repo}@{commit}:{path}:{number}"}
        yield from label11(line, common, "scanner fixture", path)


def records_of(unit: str, repo: str, paths: list[str]) -> Iterator[dict]:
    """The labelled lines of one unit."""
    prefix = unit.split(":", 1)[0]
    if prefix == "notes11":
        for rec in r5.notes(repo, unit, paths):
            yield {**rec, "source": "agent notes (round 11)"}
        return
    source = next(name for _, p, name, _ in FIXTURES + LATE if p == prefix)
    yield from fixture_lines(repo, unit, paths[0], source)


def main() -> None:
    r5.build_round(unit_files(), records_of, OUT, SEED,
                   ("foreign/tuning.jsonl", "foreign/heldout.jsonl",
                    "foreign_r6/tuning.jsonl", "foreign_r6/heldout.jsonl",
                    "foreign_r9/tuning.jsonl", "foreign_r9/heldout.jsonl"))


if __name__ == "__main__":
    main()
