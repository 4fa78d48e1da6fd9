"""A rule-based dream over 300 entries and 80 turns (docs/performance.md, "Dream").

Run: python bench/bench_dream.py [--repeat N] [--entries N] [--turns N]

Each round makes a fresh checkout drive with ``--entries`` entries (20 topic
files; every tenth entry has an exact duplicate and every tenth a near
duplicate elsewhere, so the proposer has merges to find) and ``--turns``
observed turns, then times:

* the whole ``dream()`` call (retention, snapshot, rule proposer, checks,
  the writer's preview, the one commit, the report) -- the figure the issue
  bounds at 1 s;
* as the baseline, side by side on a fresh copy of the same drive, one
  ``commit_facts`` that retires the same entries the dream retires (the
  writer's cost of the same commit without any consolidation work).
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

WORDS = ("payments launch owner deadline pricing website billing customer dashboard team "
         "product review metrics rollout incident runbook database staging cluster budget "
         "roadmap design feedback migration schema api rotation policy meeting weekly quarter "
         "contract vendor support escalation release mobile search ranking invoice").split()


def make_drive(path: Path, entries: int, seed: int = 11) -> None:
    from memgit.drives.create import create_drive
    from memgit.format import entries as fmt

    rng = random.Random(seed)
    create_drive(path, bare=False)
    files: dict[str, list[str]] = {f"area/topic{i:02}.md": [f"# Topic {i}\n\n"]
                                   for i in range(20)}
    texts: list[str] = []
    for n in range(entries):
        if n % 10 == 3 and texts:
            text = texts[-3].lower() + "."  # an exact duplicate (case, punctuation)
        elif n % 10 == 7 and texts:
            text = texts[-5] + " as agreed"  # a near duplicate
        else:
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 10))).capitalize()
            text += f" item {n}"
        texts.append(text)
        day = f"2026-{rng.randint(1, 9):02}-{rng.randint(1, 28):02}"
        line = fmt.format_entry(text, f"https://example.com/s/{n}", day, f"m-bench{n:05}")
        files[f"area/topic{n % 20:02}.md"].append(line + "\n")
    for name, lines in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text("".join(lines))
    memory = (path / "MEMORY.md").read_text()
    (path / "MEMORY.md").write_text(fmt.regenerate_index_section(memory, [*files, "MEMORY.md"]))
    env = ["-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    subprocess.run(["git", *env, "add", "-A"], cwd=path, check=True)
    subprocess.run(["git", *env, "commit", "-qm", "bench drive"], cwd=path, check=True)


def observe_turns(path: Path, turns: int) -> None:
    from memgit.dream.observations import observe
    from memgit.git.repository import open_drive

    drive = open_drive(path)
    for n in range(turns):
        observe(drive, f"Turn {n}: we talked about the {WORDS[n % len(WORDS)]} plan",
                session="bench", role="user" if n % 2 else "assistant")


def one_round(base: Path, entries: int, turns: int, number: int) -> tuple[float, float, int]:
    from memgit import state
    from memgit.dream.run import dream
    from memgit.git.repository import open_drive
    from memgit.policy.dream_settings import DreamConfig
    from memgit.policy.settings import Policy
    from memgit.recall.read_path import catch_up
    from memgit.write.writer import commit_facts

    pristine = base / f"pristine{number}"
    make_drive(pristine, entries)
    observe_turns(pristine, turns)
    catch_up(open_drive(pristine))
    state.close_connections()
    work = base / f"dream{number}"
    shutil.copytree(pristine, work)
    drive = open_drive(work)
    started = time.perf_counter()
    outcome = dream(drive, Policy(), DreamConfig(), no_model=True)
    dreamed = time.perf_counter() - started
    assert outcome.status == "applied", outcome.reason
    assert outcome.report["turns_shown"] == min(turns, 80)
    retired = [i for a in outcome.report["applied"] for i in a["ids"][1:]]
    baseline_dir = base / f"baseline{number}"
    shutil.copytree(pristine, baseline_dir)
    baseline = open_drive(baseline_dir)
    started = time.perf_counter()
    result = commit_facts(baseline, [], retired, "baseline")
    plain = time.perf_counter() - started
    assert result.status == "committed" and len(result.retired) == len(retired)
    state.close_connections()
    return dreamed, plain, len(retired)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--entries", type=int, default=300)
    parser.add_argument("--turns", type=int, default=80)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memgit-bench-dream-") as tmp:
        rounds = [one_round(Path(tmp), args.entries, args.turns, n)
                  for n in range(args.repeat)]
    dreams = [r[0] for r in rounds]
    plains = [r[1] for r in rounds]
    d, p = statistics.median(dreams), statistics.median(plains)
    print(f"entries {args.entries}, turns {args.turns}, rounds {args.repeat}, "
          f"entries retired per dream {rounds[0][2]}")
    print(f"dream (rule-based, whole run): median {d * 1000:.0f} ms, max "
          f"{max(dreams) * 1000:.0f} ms")
    print(f"baseline commit_facts retiring the same entries: median {p * 1000:.0f} ms")
    print(f"ratio dream / baseline: {d / p:.1f}x; under 1 s: {'yes' if max(dreams) < 1 else 'NO'}")
    return 0 if max(dreams) < 1 else 1


if __name__ == "__main__":
    sys.exit(main())
