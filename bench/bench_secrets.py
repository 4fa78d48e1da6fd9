"""The secret gate side by side: memgit (default and deep), detect-secrets, betterleaks.

    python bench/bench_secrets.py              # everything (a few minutes: detect-secrets is slow)
    python bench/bench_secrets.py --quick      # detect-secrets timed on a 400-line sample
    python bench/bench_secrets.py --json out.json

Corpus: tests/data/secrets/dev/lines.jsonl (issue 11), split once by source unit
into a tuning and an evaluation half; the evaluation half's figures are the ones of
record. tests/data/secrets/independent/lines.jsonl (gitleaks' and noseyparker's
rule fixtures, never tuned on) is the third figure; round 5's new foreign material
(tests/data/secrets/foreign/: whispers, semgrep-rules' language rules, awesome-compose,
kubernetes/examples, Claude Code memory notes) gives the fourth (its tuning two-thirds)
and the fifth (its held-out third, split by source unit before any detector was
written; only totals are printed); round 6's (tests/data/secrets/foreign_r6/: GitHub's
custom secret-scanning patterns, trivy's and checkov's secret fixtures, credential-digger's
test files, agent notes) the sixth and seventh, the same way; round 9's
(tests/data/secrets/foreign_r9/: CredSweeper's samples, agent notes) the eighth and ninth;
round 11's (tests/data/secrets/foreign_r11/: leaky-repo, GitGuardian's samples, ggshield,
pre-commit-hooks, repo-supervisor, talisman, git-secrets and SecretScanner fixtures, agent
notes) the tenth and eleventh; round 12's (tests/data/secrets/foreign_r12/: sonar-text's rule
examples, security-utilities' literal examples) the twelfth and thirteenth; round 13's
(tests/data/secrets/foreign_r13/: static analysers' hard-coded credential fixtures: bandit,
gosec's G101 samples, SonarSource's S2068/S6418/S6437 tests, find-sec-bugs' samples) the
fourteenth and fifteenth; round 14's (tests/data/secrets/foreign_r14/: osv-scalibr's Veles
detector tests, horusec's leaks samples, njsscan, mobsfscan, eslint-plugin-no-secrets) the
sixteenth and seventeenth; round 15's (tests/data/secrets/foreign_r15/: IBM's detect-secrets
fork, its plugin tests and test data) the eighteenth and nineteenth; round 16's
(tests/data/secrets/foreign_r16/: connection-string test tables of MongoDB's URI specification,
pgx, go-sql-driver/mysql and SQLAlchemy) the twentieth and twenty-first; round 17's
(tests/data/secrets/foreign_r17/: keyhog's per-provider detector contracts) the twenty-second and
twenty-third; round 18's (tests/data/secrets/foreign_r18/: cfn_nag's credential templates,
Bearer's and security-code-scan's hard-coded secret tests) the twenty-fourth and twenty-fifth;
round 19's (tests/data/secrets/foreign_r19/: tldr-pages' command pages with a credential's
placeholder, rendered) the twenty-sixth and twenty-seventh; round 20's
(tests/data/secrets/foreign_r20/: rclone's and telegraf's options their authors mark secret,
written in each tool's syntaxes) the twenty-eighth and twenty-ninth; round 21's
(tests/data/secrets/foreign_r21/: community.general's module parameters marked no_log) the
thirtieth and thirty-first; a second independent set
(tests/data/secrets/independent2/: kingfisher's rule
examples, never tuned on; 5 negatives, so its false-positive column says little) the last. The
table has a recall and
a false-positive column per set, in that order.
A line counts as detected when
the engine reports anything on it; the false-positive rate is over negative lines.

Engines, each on the same lines in the same run:
* memgit default: ``memgit.secrets.scan_text`` (what every hook runs);
* memgit deep: ``scan_text_deep`` (``secrets: deep``): memgit plus detect-secrets'
  plugins (without the two high-entropy ones) plus betterleaks when installed;
* detect-secrets: ``scan_line`` with its default plugins minus the two
  HighEntropyString plugins (with them it flags nearly every line of prose; that
  configuration is reported too);
* betterleaks: ``betterleaks.scan_string`` per line, its default configuration
  (the successor of gitleaks; ``pip install 'memgit[deep]'``);
* memgit + one engine: what each optional engine adds to the default rules.

Microseconds per line are CPU time of the process (wall time on a shared machine
counts the other processes' turns too) of a pass over the evaluation half after a
warm-up on the tuning half (memgit's value caches are cleared before each pass, so no
value is judged twice). Every engine gets ``--repeat`` passes (default 3), taken in
rounds with the engines in turn (side by side, so a burst of load elsewhere hits them
alike), and the lowest of each is kept. "us/note" is the same over the evaluation
half's agent-notes lines alone: ordinary lines, what a hook sees nearly always.
Hook start-up: a real pre-receive hook of a ``memgit init --bare`` repository run
with an empty push (nothing to scan), against ``python -I -S -c pass``; medians.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "secrets"

Scan = Callable[[str], bool]


def load(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def engines(all_ds: bool) -> dict[str, tuple[Callable[[], None], Scan]]:
    """name -> (prepare, scan): prepare configures the engine before its own pass."""
    from memgit.secrets import deep, scan_text, scan_text_deep

    def nothing() -> None:
        return None

    def deep_prepare() -> None:
        deep._ready.pop("ds", None)  # reconfigure detect-secrets the way deep mode does

    out: dict[str, tuple[Callable[[], None], Scan]] = {
        "memgit default": (nothing, lambda line: bool(scan_text(line))),
        "memgit deep": (deep_prepare, lambda line: bool(scan_text_deep(line))),
    }
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings, get_settings

    with default_settings() as settings:
        prose = [{"name": n} for n in settings.plugins if "HighEntropyString" not in n]
        every = [{"name": n} for n in settings.plugins]

    def ds_scan(line: str) -> bool:
        return bool(list(scan_line(line)))  # a full scan, as scan_text does

    def ds_prepare(plugins: list[dict]) -> Callable[[], None]:
        def prepare() -> None:
            settings = get_settings()
            settings.clear()  # configure_plugins adds to what is configured
            settings.configure_plugins(plugins)

        return prepare

    out["detect-secrets"] = (ds_prepare(prose), ds_scan)
    if all_ds:
        out["detect-secrets (all plugins)"] = (ds_prepare(every), ds_scan)
    if deep.betterleaks_available():
        import betterleaks

        out["betterleaks"] = (nothing, lambda line: bool(betterleaks.scan_string(line)))
        out["memgit + betterleaks"] = (nothing, lambda line: bool(
            scan_text(line) or betterleaks.scan_string(line)))
    out["memgit + detect-secrets"] = (ds_prepare(prose), lambda line: bool(
        scan_text(line) or ds_scan(line)))
    return out


def score(scan: Scan, recs: list[dict]) -> dict[str, float | int]:
    pos = [r for r in recs if r["label"] == "pos"]
    neg = [r for r in recs if r["label"] == "neg"]
    tp = sum(scan(r["line"]) for r in pos)
    fp = sum(scan(r["line"]) for r in neg)
    return {"recall": tp / len(pos), "fp_rate": fp / len(neg), "tp": tp, "pos": len(pos),
            "fp": fp, "neg": len(neg)}


def clear_caches() -> None:
    """Empty every value cache of the scanner (so no value is judged twice in a pass);
    the analysis of a keyword's name (``DB_PASSWORD``) stays cached, as in a hook."""
    from memgit.secrets import values

    for fn in vars(values).values():
        if callable(getattr(fn, "cache_clear", None)) and fn.__module__ == values.__name__:
            fn.cache_clear()


def us_per_line(scan: Scan, lines: list[str]) -> float:
    """CPU time of this process per line (wall time on a shared machine counts the other
    processes' turns too)."""
    clear_caches()
    start = time.process_time()
    for line in lines:
        scan(line)
    return (time.process_time() - start) / len(lines) * 1e6


def hook_startup_ms(runs: int = 15) -> tuple[float, float, bool]:
    """(pre-receive run for a push with nothing to scan, bare interpreter) medians in ms,
    and whether the run imported memgit.secrets.

    The hook is the real script ``memgit init --bare`` installs, run as git receive-pack
    runs it: GIT_DIR, a quarantine object directory with the repository's objects as
    alternates, and one ref update that changes nothing (old == new)."""
    with tempfile.TemporaryDirectory() as tmp:
        bare = Path(tmp) / "drive.git"
        subprocess.run([sys.executable, "-m", "memgit.cli.main", "init", "--bare", str(bare)],
                       check=True, capture_output=True)
        head = subprocess.run(["git", "--git-dir", str(bare), "rev-parse", "refs/heads/main"],
                              check=True, capture_output=True, text=True).stdout.strip()
        quarantine = Path(tmp) / "incoming"
        quarantine.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(GIT_DIR=str(bare), GIT_QUARANTINE_PATH=str(quarantine),
                   GIT_OBJECT_DIRECTORY=str(quarantine),
                   GIT_ALTERNATE_OBJECT_DIRECTORIES=str(bare / "objects"))
        update = f"{head} {head} refs/heads/main\n".encode()
        hook = bare / "hooks" / "pre-receive"
        from memgit.githooks.install import ASK_CALL, HOOK_CALL

        def timed(cmd: list[str]) -> float:
            # through a shell that outlives the hook only as receive-pack does: the push
            # queue's note names the hook's parent and the next hook waits (10 s at most)
            # while that parent lives and the ref has not moved; receive-pack moves the
            # ref or ends, so the parent here must end too (this process never would)
            line = " ".join(shlex.quote(c) for c in cmd) + "; exit $?"
            values = []
            for _ in range(runs):
                start = time.perf_counter()
                subprocess.run(["sh", "-c", line], input=update, env=env, check=True,
                               capture_output=True, cwd=bare)
                values.append((time.perf_counter() - start) * 1e3)
            return statistics.median(values)

        probe = hook.read_text().replace(ASK_CALL, "").replace(HOOK_CALL, "code = hook_main(); "
                                         "print(\"memgit.secrets\" in sys.modules); sys.exit(code)")
        probe_file = Path(tmp) / "probe-hook"
        probe_file.write_text(probe)
        probe_file.chmod(0o755)
        out = subprocess.run([str(probe_file)], input=update, env=env, check=True,
                             capture_output=True, cwd=bare).stdout
        return timed([str(hook)]), timed([sys.executable, "-I", "-S", "-c", "pass"]), \
            b"True" in out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="time detect-secrets on 400 lines")
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--repeat", type=int, default=3,
                    help="timed passes per engine, in rounds side by side (lowest kept)")
    args = ap.parse_args()

    hook_ms, bare_ms, hook_imports_scanner = hook_startup_ms()
    dev = load(DATA / "dev" / "lines.jsonl")
    halves = {"tuning": [r for r in dev if r["split"] == "tune"],
              "evaluation": [r for r in dev if r["split"] == "eval"],
              "independent": load(DATA / "independent" / "lines.jsonl"),
              "foreign tuning": load(DATA / "foreign" / "tuning.jsonl"),
              "held-out": load(DATA / "foreign" / "heldout.jsonl"),
              "r6 tuning": load(DATA / "foreign_r6" / "tuning.jsonl"),
              "r6 held-out": load(DATA / "foreign_r6" / "heldout.jsonl"),
              "r9 tuning": load(DATA / "foreign_r9" / "tuning.jsonl"),
              "r9 held-out": load(DATA / "foreign_r9" / "heldout.jsonl"),
              "r11 tuning": load(DATA / "foreign_r11" / "tuning.jsonl"),
              "r11 held-out": load(DATA / "foreign_r11" / "heldout.jsonl"),
              "r12 tuning": load(DATA / "foreign_r12" / "tuning.jsonl"),
              "r12 held-out": load(DATA / "foreign_r12" / "heldout.jsonl"),
              "r13 tuning": load(DATA / "foreign_r13" / "tuning.jsonl"),
              "r13 held-out": load(DATA / "foreign_r13" / "heldout.jsonl"),
              "r14 tuning": load(DATA / "foreign_r14" / "tuning.jsonl"),
              "r14 held-out": load(DATA / "foreign_r14" / "heldout.jsonl"),
              "r15 tuning": load(DATA / "foreign_r15" / "tuning.jsonl"),
              "r15 held-out": load(DATA / "foreign_r15" / "heldout.jsonl"),
              "r16 tuning": load(DATA / "foreign_r16" / "tuning.jsonl"),
              "r16 held-out": load(DATA / "foreign_r16" / "heldout.jsonl"),
              "r17 tuning": load(DATA / "foreign_r17" / "tuning.jsonl"),
              "r17 held-out": load(DATA / "foreign_r17" / "heldout.jsonl"),
              "r18 tuning": load(DATA / "foreign_r18" / "tuning.jsonl"),
              "r18 held-out": load(DATA / "foreign_r18" / "heldout.jsonl"),
              "r19 tuning": load(DATA / "foreign_r19" / "tuning.jsonl"),
              "r19 held-out": load(DATA / "foreign_r19" / "heldout.jsonl"),
              "r20 tuning": load(DATA / "foreign_r20" / "tuning.jsonl"),
              "r20 held-out": load(DATA / "foreign_r20" / "heldout.jsonl"),
              "r21 tuning": load(DATA / "foreign_r21" / "tuning.jsonl"),
              "r21 held-out": load(DATA / "foreign_r21" / "heldout.jsonl"),
              "independent 2": load(DATA / "independent2" / "lines.jsonl")}
    eng = engines(all_ds=not args.quick)
    figures: dict[str, dict] = {name: {} for name in eng}
    eval_lines = [r["line"] for r in halves["evaluation"]]
    # what a hook sees nearly always: ordinary notes (the agent-notes negatives)
    notes = [r["line"] for r in halves["evaluation"] if r["family"] == "agent notes"]
    warm = [r["line"] for r in halves["tuning"]]
    samples: dict[str, tuple[list[str], list[str]]] = {}
    for name, (prepare, scan) in eng.items():
        prepare()
        for line in warm:
            scan(line)
        sample = eval_lines
        if args.quick and name.startswith("detect-secrets"):
            sample = eval_lines[::max(1, len(eval_lines) // 400)]
        samples[name] = (sample, notes[:: 4 if args.quick else 1])
        for half, recs in halves.items():
            figures[name][half] = score(scan, recs)
    # timing: every engine the same number of passes, side by side in rounds (the order
    # turns each round, so no engine always runs first or last); the lowest of each kept
    names = list(eng)
    for round_ in range(args.repeat):
        for name in names[round_ % len(names):] + names[: round_ % len(names)]:
            prepare, scan = eng[name]
            prepare()
            sample, note_sample = samples[name]
            for key, lines in (("us_per_line", sample), ("us_per_note", note_sample)):
                value = us_per_line(scan, lines)
                figures[name][key] = min(value, figures[name].get(key, value))

    print(f"python {sys.version.split()[0]}; corpus: " + ", ".join(
        f"{half} {sum(r['label'] == 'pos' for r in recs)} positives / "
        f"{sum(r['label'] == 'neg' for r in recs)} negatives" for half, recs in halves.items()))
    print(f"timing: the lowest of {args.repeat} passes per engine, engines in turn")
    print()
    base = figures["memgit default"]["us_per_line"]
    base_note = figures["memgit default"]["us_per_note"]
    sets = list(halves)  # every set, in the order above: its recall and false-positive rate
    head = (["engine"] + [f"{h} {k}" for h in sets for k in ("recall", "FP")]
            + ["us/line", "x memgit", "us/note", "x memgit"])
    rows = [head]
    for name in eng:
        f = figures[name]
        rows.append([name] + [f"{f[h][k]:.3f}" for h in sets for k in ("recall", "fp_rate")]
                    + [f"{f['us_per_line']:.1f}", f"{f['us_per_line'] / base:.1f}",
                       f"{f['us_per_note']:.1f}", f"{f['us_per_note'] / base_note:.1f}"])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    for r in rows:
        print("| " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                for i, (c, w) in enumerate(zip(r, widths, strict=True))) + " |")
        if r is head:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    print()
    ds = figures.get("detect-secrets (all plugins)", figures["detect-secrets"])
    print(f"memgit default vs detect-secrets' default scan_line: {base:.1f} vs "
          f"{ds['us_per_line']:.1f} us/line ({ds['us_per_line'] / base:.1f}x)")
    print(f"pre-receive hook, push with nothing to scan: {hook_ms:.1f} ms "
          f"(bare python -I -S: {bare_ms:.1f} ms; imports memgit.secrets: {hook_imports_scanner})")
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"engines": figures, "hook_ms": hook_ms, "bare_python_ms": bare_ms,
             "hook_imports_scanner": hook_imports_scanner}, indent=1))


if __name__ == "__main__":
    main()
