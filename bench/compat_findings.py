"""What memgit says today about the memory people already keep (docs/compat.md).

Run: python bench/compat_findings.py

For every real sample (tests/data/realworld/<kind>/<sample>/) copied into a git
repository, prints:
  * lint findings under `profile: amr` and under the drive profile, by rule code;
  * where format.py's reading differs from CommonMark's (memgit.format.blocks, checked
    against markdown-it-py): entries read inside front matter, inside code blocks
    (e.g. a fence indented four spaces in a list item), list items it does not see
    (`+` bullets, ordered items), `[[...]]` links taken from inside code spans,
    derived-id collisions behind MG103;
  * how many entries `memgit index` finds when the repository's branch is master;
  * the import plan's counts (entries, duplicates, refused, verbatim, structure).
Then runs the probe lines of issue 12 (the examples it names) through lint and prints
what each rule says. Nothing is timed; every figure is a count.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

from memgit import state
from memgit.drives.create import create_drive
from memgit.errors import MemgitError
from memgit.format import blocks as bl
from memgit.format import entries as fmt
from memgit.git.repository import open_drive
from memgit.importing import report
from memgit.importing.apply import apply_plan
from memgit.importing.plan import Plan, build_plan
from memgit.index import reindex as recall_index
from memgit.policy.lint import lint_worktree
from memgit.policy.settings import Policy, policy_from_mapping
from memgit.state import facts

ROOT = Path(__file__).resolve().parent.parent
REALWORLD = ROOT / "tests" / "data" / "realworld"
AMR = policy_from_mapping({"profile": "amr"})
DRIVE = Policy()
_SPAN_RE = re.compile(r"(`+)(?:(?!\1).)+?\1")

PROBES = {
    "notes.md": "# Notes\n\n- User: alice\n- Model: v5\n",
    "prefs.md": "- Prefers tea [kind: preference; source: thread/ab12cd34#m9]\n"
                "- Ship the beta [status: done; parent: the launch plan; source: note/n-17]\n"
                "- Seen on the board [source: backspace://board/42]\n",
    "dups.md": "- Run the tests before pushing\n\n## Later\n\n- Run the tests before pushing\n",
    "code.md": "1. Run the example:\n\n    ```md\n    - an example bullet\n    ```\n\n"
               "- The link syntax is `[[path]]`\n",
    "fm.md": "---\ntags:\n- branding\n- design\n---\n\n# Front matter\n",
    "audio-transcription.md": "- Local whisper is unreliable for voice memos\n",
    "MEMORY.md": "# Memory\n\n## Index\n- [[prefs]]\n- [[notes]]\n- [[fm]]\n- [[dups]]\n"
                 "- [[code]]\n- [[audio-transcription]]\n",
}


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", "-c", "user.name=compat", "-c", "user.email=compat@example.com",
                    *args], cwd=cwd, check=True, capture_output=True)


def repo_of(files: Path | dict[str, str], where: Path, branch: str = "main") -> Path:
    where.mkdir(parents=True)
    if isinstance(files, Path):
        shutil.copytree(files, where, dirs_exist_ok=True)
    else:
        for name, text in files.items():
            (where / name).write_text(text, encoding="utf-8")
    git("init", "-q", "-b", branch, ".", cwd=where)
    git("add", "-A", cwd=where)
    git("commit", "-qm", "sample", cwd=where)
    return where


def lint_codes(path: Path, policy: Policy) -> Counter[str]:
    found = lint_worktree(*_dirs(open_drive(path)), policy)
    return Counter(v.code + ("" if v.severity == "error" else "w") for v in found)


def misreadings(path: Path) -> Counter[str]:
    """Where format.py's entries differ from CommonMark's list items."""
    out: Counter[str] = Counter()
    derived: Counter[str] = Counter()  # derived ids over the whole drive, as MG103 counts
    for md in sorted(path.rglob("*.md")):
        if ".git" in md.parts:
            continue
        rel = md.relative_to(path).as_posix()
        text = md.read_text(encoding="utf-8")
        entries = {line.number for line, _ in fmt.parse_document(rel, text).entries()}
        blocks = fmt.read_blocks(text)
        front = {n for b in blocks if b.kind == bl.FRONT_MATTER
                 for n in range(b.start, b.end + 1)}
        code = {n for b in blocks if b.kind in (bl.FENCE, bl.CODE, bl.HTML)
                for n in range(b.start, b.end + 1)}
        items: dict[int, tuple[bl.ListItem, bool]] = {}
        for b in blocks:
            item = b.item
            while item is not None:
                items.setdefault(item.line, (item, b.quoted))
                item = item.parent
        index_lines = {line.number for line in fmt.parse_document(rel, text).lines
                       if line.in_index_section}
        out["front matter lines read as entries"] += len(entries & front)
        out["code/HTML lines read as entries"] += len(entries & code)
        for line, (item, quoted) in items.items():
            if line in entries or line in index_lines:
                continue  # format.py leaves the Index's links out on purpose
            kind = ("ordered items" if item.marker[0].isdigit() else
                    "items in block quotes" if quoted else f"'{item.marker}' items")
            out[f"{kind} not read as entries"] += 1
        for number, line in enumerate(text.splitlines(), start=1):
            spans = [m.group(0) for m in _SPAN_RE.finditer(line) if "[[" in m.group(0)]
            taken = list(fmt.iter_links(line))
            if spans and number not in code and any(
                    t in span for t in taken for span in spans):
                out["[[..]] inside code spans taken as links"] += 1
        for _, entry in fmt.parse_document(rel, text).entries():
            if not entry.has_explicit_id:
                derived[entry.id] += 1
    out["id-less repeats (one derived id: MG108, a warning)"] += \
        sum(n - 1 for n in derived.values())
    return out


def _dirs(drive):  # type: ignore[no-untyped-def]
    return drive.git_dir, drive.workdir


def master_entries(sample: Path, tmp: Path) -> tuple[str, str]:
    """Indexed entries with the branch named main, and named master (default policy):
    a count, or the error code memgit answers with."""
    counts = []
    for branch in ("main", "master"):
        path = repo_of(sample, tmp / f"idx-{branch}", branch)
        drive = open_drive(path)
        try:
            recall_index.ensure_current(drive, policy=DRIVE)
        except MemgitError as exc:
            counts.append(exc.code)
            continue
        counts.append(str(facts.stats(state.connection(drive.git_dir)).rows))
    state.close_connections()
    return counts[0], counts[1]


def applied(plan: Plan, tmp: Path) -> str:
    """Apply ``plan`` into a new drive: entries created / items whose verdict changed /
    verbatim kept in / left out, and the drive profile's errors on the result."""
    drive_path = create_drive(tmp, bare=False)
    drive = open_drive(drive_path)
    result = apply_plan(drive, plan)
    kept = len(result.kept)
    errors = [v for v in lint_worktree(drive.git_dir, drive.workdir, DRIVE)
              if v.severity == "error"]
    return (f"{len(result.created)} / {len(result.changed)} / {kept} file(s) / "
            f"{len(result.left_out)} / {len(errors)}")


def fmt_counter(c: Counter[str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(c.items())) or "none"


def main() -> None:
    samples = sorted(p for p in REALWORLD.glob("*/*") if p.is_dir())
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        print("| sample | lint, profile amr | lint, drive profile | index rows main/master |")
        print("|---|---|---|---|")
        rows = []
        for n, sample in enumerate(samples):
            name = f"{sample.parent.name}/{sample.name}"
            path = repo_of(sample, tmp / f"s{n}")
            main_rows, master_rows = master_entries(sample, tmp / f"m{n}")
            print(f"| {name} | {fmt_counter(lint_codes(path, AMR))} | "
                  f"{fmt_counter(lint_codes(path, DRIVE))} | {main_rows}/{master_rows} |")
            rows.append((name, sample, path))
        print("\n| sample | format.py vs CommonMark |")
        print("|---|---|")
        for name, _sample, path in rows:
            found = Counter({k: v for k, v in misreadings(path).items() if v})
            print(f"| {name} | {fmt_counter(found)} |")
        print("\n| sample | import plan: entries / repeated / refused / verbatim / "
              "structure / topic files (split) | import apply: created / changed verdicts / "
              "verbatim kept in / left out / drive errors after |")
        print("|---|---|---|")
        for n, (name, sample, _path) in enumerate(rows):
            source = next(sample.glob("*.json")) if sample.parent.name == "mem0" else sample
            plan = build_plan(source)
            c, said = plan.counts(), report.summary(plan)
            print(f"| {name} | {c['entry']} / {c['duplicate']} / {c['refused']} / "
                  f"{c['verbatim']} / {c['structure']} / {said['topic_files']} "
                  f"({said['split_notes']}) | {applied(plan, tmp / f'a{n}')} |")
        probes = repo_of(PROBES, tmp / "probes")
        for label, policy in (("amr", AMR), ("drive", DRIVE)):
            print(f"\nprobes under profile {label}:")
            for v in lint_worktree(*_dirs(open_drive(probes)), policy):
                if v.path in PROBES:
                    print(f"  {v.format()} [{v.severity}]")
        print(f"\nprobe misreadings: {fmt_counter(misreadings(probes))}")


if __name__ == "__main__":
    main()
