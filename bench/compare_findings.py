"""Findings of the default scanner on every line the bench and the tests use, to prove
that a change of the engine (a speed-up) changes no result.

    PYTHONPATH=/tmp/old/src python bench/compare_findings.py --write before.json
    python bench/compare_findings.py --write after.json
    python bench/compare_findings.py --compare before.json after.json

``--write`` records, for each line of each set, the findings of ``scan_text`` as
(start, end, kind): kinds and spans only, never a line's text or a value. The sets: the
dev corpus (both halves), the independent sets, the foreign sets of rounds 5, 6, 9 and 11 to
21 (their tuning parts and held-out thirds), the regression set (positives/negatives.jsonl), every
string literal of tests/secrets/*.py (the documented forms, the identifiers, the
parametrized cases, the pathological chunks repeated), and seeded synthetic variants of
the corpus lines (cuts, joins, case changes, keyword fragments) so that a prefilter that
differs only on lines nobody wrote yet shows too. ``--trie`` runs the trie-regex keyword
finder instead of Aho-Corasick (the tests run both). ``--compare`` prints, per set, the
number of lines compared and the indexes of the lines whose findings differ (never
their text).
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "secrets"

FRAGMENTS = ["password", "token", ": ", "=", "://", "@", "-----BEGIN ", "PRIVATE KEY", "AKIA",
             "ghp_", "sk-", "eyJ", ".", "Basic ", "Bearer ", "seed phrase: ", "abandon ",
             "hunter2", "xox", "'", '"', "`", "(", "İ", "|", " -p ", "set ", "use ", "login ",
             "key=\"", "<password>", "</password>", "$2a$", "{SSHA}", "mysql ", "creds ",
             "user/", "secret ", "api key ", "ENV ", "\t", "Passwort: ", "密码：", "$", "{",
             "://u:", "md5", ":::", "machine ", "identified by "]


def _jsonl(path: Path) -> list[str]:
    return [json.loads(x)["line"] for x in path.read_text(encoding="utf-8").splitlines()]


def _literals() -> list[str]:
    out: list[str] = []
    for path in sorted((ROOT / "tests" / "secrets").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value:
                out.append(node.value)
                if len(node.value) <= 40:  # the pathological chunks, repeated
                    out.append(node.value * (400 // len(node.value)))
    return out


def _synthetic(lines: list[str], n: int, seed: int = 29) -> list[str]:
    rng = random.Random(seed)
    out: list[str] = []
    for _ in range(n):
        a = rng.choice(lines)
        op = rng.randrange(8)
        if op == 0 and len(a) > 2:  # a cut
            i, j = sorted(rng.sample(range(len(a) + 1), 2))
            out.append(a[i:j])
        elif op == 1:  # two lines joined
            out.append(a + rng.choice(["", " ", " | ", "; ", "\t"]) + rng.choice(lines))
        elif op == 2:
            out.append(a.upper())
        elif op == 3:
            out.append(a.lower())
        elif op == 4:
            out.append(a.swapcase())
        elif op == 5:  # fragments inserted at random places
            s = a
            for _k in range(rng.randrange(1, 4)):
                i = rng.randrange(len(s) + 1)
                s = s[:i] + rng.choice(FRAGMENTS) + s[i:]
            out.append(s)
        elif op == 6:  # fragments and pieces of lines
            parts = [rng.choice(FRAGMENTS) if rng.random() < 0.5 else
                     (lambda x: x[rng.randrange(len(x) + 1):][: rng.randrange(1, 30)])(
                         rng.choice(lines)) for _k in range(rng.randrange(1, 12))]
            out.append("".join(parts))
        else:  # a character replaced or deleted
            if a:
                i = rng.randrange(len(a))
                c = rng.choice(["", " ", "=", ":", "_", "-", "A", "z", "9", "\"", "'"])
                out.append(a[:i] + c + a[i + 1:])
            else:
                out.append(a)
    return out


def sets(synthetic: int) -> dict[str, list[str]]:
    dev = [json.loads(x) for x in (DATA / "dev" / "lines.jsonl").read_text().splitlines()]
    out = {
        "dev-tuning": [r["line"] for r in dev if r["split"] == "tune"],
        "dev-evaluation": [r["line"] for r in dev if r["split"] == "eval"],
        "independent": _jsonl(DATA / "independent" / "lines.jsonl"),
        "independent2": _jsonl(DATA / "independent2" / "lines.jsonl"),
        "regression": _jsonl(DATA / "positives.jsonl") + _jsonl(DATA / "negatives.jsonl"),
        "foreign-tuning": _jsonl(DATA / "foreign" / "tuning.jsonl"),
        "foreign-heldout": _jsonl(DATA / "foreign" / "heldout.jsonl"),
        "r6-tuning": _jsonl(DATA / "foreign_r6" / "tuning.jsonl"),
        "r6-heldout": _jsonl(DATA / "foreign_r6" / "heldout.jsonl"),
        "r9-tuning": _jsonl(DATA / "foreign_r9" / "tuning.jsonl"),
        "r9-heldout": _jsonl(DATA / "foreign_r9" / "heldout.jsonl"),
        "r11-tuning": _jsonl(DATA / "foreign_r11" / "tuning.jsonl"),
        "r11-heldout": _jsonl(DATA / "foreign_r11" / "heldout.jsonl"),
        "r12-tuning": _jsonl(DATA / "foreign_r12" / "tuning.jsonl"),
        "r12-heldout": _jsonl(DATA / "foreign_r12" / "heldout.jsonl"),
        "r13-tuning": _jsonl(DATA / "foreign_r13" / "tuning.jsonl"),
        "r13-heldout": _jsonl(DATA / "foreign_r13" / "heldout.jsonl"),
        "r14-tuning": _jsonl(DATA / "foreign_r14" / "tuning.jsonl"),
        "r14-heldout": _jsonl(DATA / "foreign_r14" / "heldout.jsonl"),
        "r15-tuning": _jsonl(DATA / "foreign_r15" / "tuning.jsonl"),
        "r15-heldout": _jsonl(DATA / "foreign_r15" / "heldout.jsonl"),
        "r16-tuning": _jsonl(DATA / "foreign_r16" / "tuning.jsonl"),
        "r16-heldout": _jsonl(DATA / "foreign_r16" / "heldout.jsonl"),
        "r17-tuning": _jsonl(DATA / "foreign_r17" / "tuning.jsonl"),
        "r17-heldout": _jsonl(DATA / "foreign_r17" / "heldout.jsonl"),
        "r18-tuning": _jsonl(DATA / "foreign_r18" / "tuning.jsonl"),
        "r18-heldout": _jsonl(DATA / "foreign_r18" / "heldout.jsonl"),
        "r19-tuning": _jsonl(DATA / "foreign_r19" / "tuning.jsonl"),
        "r19-heldout": _jsonl(DATA / "foreign_r19" / "heldout.jsonl"),
        "r20-tuning": _jsonl(DATA / "foreign_r20" / "tuning.jsonl"),
        "r20-heldout": _jsonl(DATA / "foreign_r20" / "heldout.jsonl"),
        "r21-tuning": _jsonl(DATA / "foreign_r21" / "tuning.jsonl"),
        "r21-heldout": _jsonl(DATA / "foreign_r21" / "heldout.jsonl"),
        "test-literals": _literals(),
    }
    every = [x for v in out.values() for x in v]
    out["synthetic"] = _synthetic(every, synthetic)
    return out


def write(path: str, trie: bool, synthetic: int) -> None:
    from memgit.secrets import engine, scan_text

    if trie:
        engine.use_trie_finder(True)
    result = {name: [[(f.start, f.end, f.kind) for f in scan_text(line)] for line in lines]
              for name, lines in sets(synthetic).items()}
    Path(path).write_text(json.dumps(result))
    total = sum(len(v) for v in result.values())
    flagged = sum(bool(x) for v in result.values() for x in v)
    findings = sum(len(x) for v in result.values() for x in v)
    print(f"{total} lines, {flagged} with findings, {findings} findings -> {path}")


def compare(a_path: str, b_path: str) -> int:
    a = json.loads(Path(a_path).read_text())
    b = json.loads(Path(b_path).read_text())
    total = differ = 0
    for name in sorted(set(a) | set(b)):
        la, lb = a.get(name, []), b.get(name, [])
        if len(la) != len(lb):
            print(f"{name}: {len(la)} vs {len(lb)} lines (different sets)")
            differ += 1
            continue
        bad = [i for i, (x, y) in enumerate(zip(la, lb, strict=True)) if x != y]
        total += len(la)
        differ += len(bad)
        flagged = sum(bool(x) for x in la)
        print(f"{name}: {len(la)} lines ({flagged} with findings), {len(bad)} differ"
              + (f" (indexes {bad[:20]})" if bad else ""))
    print(f"total: {total} lines compared, {differ} differ")
    return 1 if differ else 0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--write")
    ap.add_argument("--trie", action="store_true")
    ap.add_argument("--synthetic", type=int, default=60000)
    ap.add_argument("--compare", nargs=2)
    args = ap.parse_args()
    if args.write:
        write(args.write, args.trie, args.synthetic)
    if args.compare:
        sys.exit(compare(*args.compare))


if __name__ == "__main__":
    main()
