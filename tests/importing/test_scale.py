"""memgit import at any size, and a refusal that costs one line (issue 23).

* notes over the file limit become parts under it, linked from the Index; parts count
  what the drive holds already;
* a source over the drive's size or file-count limit is reported by the plan with what
  to do, and apply writes nothing until the limit is raised;
* apply on a drive that changed since the plan says which items changed verdict;
* a finding on one line refuses that line (or its block) and names it, never the
  other entries of its file;
* the summaries a person reads, and the JSON.
The sources are the real samples of tests/data/realworld and folders made of their
blocks (tests/import_corpus.py).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memgit.drives.create import create_drive
from memgit.errors import RefusedError
from memgit.format import entries as fmt
from memgit.git.repository import open_drive
from memgit.importing.apply import apply_plan
from memgit.importing.layout import FILL
from memgit.importing.plan import build_plan, load_plan
from memgit.policy.judge import ERROR, text_digest
from memgit.policy.lint import lint_worktree
from memgit.policy.registry import PurgeRegistry
from memgit.policy.settings import Policy, find_policy
from memgit.write.writer import commit_facts
from tests.conftest import git, memgit
from tests.importing.corpus import make_notes
from tests.importing.test_importing import assert_accounted

REALWORLD = Path(__file__).parents[1] / "data" / "realworld"
SPECS = REALWORLD / "basic-memory" / "specs"
SPEC17 = "SPEC-17 Semantic Search with ChromaDB.md"
CREDENTIAL = "ghp_4Fq8Zr2LmN7xKc1VbT9sWd3YhJ6pQa0Ue5Gi"  # synthetic, GitHub token shape


def new_drive(tmp_path: Path, name: str = "drive", yaml: str = "") -> Path:
    path = create_drive(tmp_path / name, bare=False)
    if yaml:
        (path / ".git" / "memgit.yaml").write_text(yaml, encoding="utf-8")
    return path


def lint_errors(drive_path: Path, policy: Policy | None = None) -> list[str]:
    drive = open_drive(drive_path)
    policy = policy or find_policy(None, drive.git_dir)
    return [v.format() for v in lint_worktree(drive.git_dir, drive.workdir, policy)
            if v.severity == ERROR]


def topic_sizes(drive_path: Path) -> dict[str, int]:
    return {p.relative_to(drive_path).as_posix(): p.stat().st_size
            for p in drive_path.rglob("*.md") if ".git" not in p.parts}


# --- the file limit --------------------------------------------------------------------------


def test_a_note_over_the_file_limit_becomes_parts_linked_from_the_index(tmp_path: Path) -> None:
    source = tmp_path / "kb"
    source.mkdir()
    shutil.copy(SPECS / SPEC17, source / SPEC17)
    plan = build_plan(source)
    topics = {i.topic for i in plan.entries()}
    assert topics == {SPEC17, SPEC17[:-3] + "-part-2.md"}
    drive_path = new_drive(tmp_path)
    result = apply_plan(open_drive(drive_path), plan)
    assert sorted(result.created) == sorted(i.id for i in plan.entries())
    assert result.skipped == [] and lint_errors(drive_path) == []
    sizes = topic_sizes(drive_path)
    assert all(sizes[t] <= Policy().file_bytes * FILL for t in topics)
    index = (drive_path / "MEMORY.md").read_text(encoding="utf-8")
    assert all(f"- [[{t[:-3]}]]" in index for t in topics)


def test_parts_count_what_the_drive_holds_already(tmp_path: Path) -> None:
    """A second note imported into the same topic file goes on where the first ended."""
    drive_path = new_drive(tmp_path)
    drive = open_drive(drive_path)
    first = tmp_path / "one"
    first.mkdir()
    shutil.copy(SPECS / SPEC17, first / "spec.md")
    apply_plan(drive, build_plan(first))
    second = tmp_path / "two"
    second.mkdir()
    shutil.copy(SPECS / "SPEC-13 CLI Authentication with Subscription Validation.md",
                second / "spec.md")
    plan = build_plan(second, drive=drive)
    assert plan.judged["head"] == git("rev-parse", "HEAD", cwd=drive_path).stdout.decode().strip()
    assert "spec.md" not in {i.topic for i in plan.entries()}  # the first part is full
    assert min(i.topic for i in plan.entries()) == "spec-part-2.md"
    result = apply_plan(drive, plan)
    assert sorted(result.created) == sorted(i.id for i in plan.entries()) and not result.changed
    assert all(size <= Policy().file_bytes for size in topic_sizes(drive_path).values())
    assert lint_errors(drive_path) == []


# --- the drive's limits ----------------------------------------------------------------------


@pytest.mark.slow
def test_a_drive_overflow_is_planned_with_what_to_do_and_nothing_is_written(
        tmp_path: Path) -> None:
    """A drive of 128 KiB (its memgit.yaml) and two notes that need more."""
    notes = tmp_path / "notes"
    notes.mkdir()
    for name in (SPEC17, "SPEC-13 CLI Authentication with Subscription Validation.md"):
        shutil.copy(SPECS / name, notes / name)
    drive_path = new_drive(tmp_path, yaml="limits: {drive_bytes: 131072}\n")
    out = tmp_path / "plan.json"
    proc = memgit("-C", str(drive_path), "import", "plan", str(notes), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    said = proc.stdout.decode()
    assert "Over the drive's limits: MG206 drive-size" in said
    assert "raise limits.drive_bytes to at least" in said and "memgit fork" in said
    plan = load_plan(out)
    over = plan.overflow[0]
    assert over["code"] == "MG206" and over["needed"] > over["allowed"] == 131072
    head = git("rev-parse", "HEAD", cwd=drive_path).stdout
    proc = memgit("-C", str(drive_path), "import", "apply", str(out))
    assert proc.returncode == 1 and b"MG007" in proc.stderr and b"nothing was written" in \
        proc.stderr and b"raise limits.drive_bytes" in proc.stderr
    assert git("rev-parse", "HEAD", cwd=drive_path).stdout == head
    # raised as the plan said: the same plan applies, every entry
    (drive_path / ".git" / "memgit.yaml").write_text(
        f"limits: {{drive_bytes: {over['needed'] * 5 // 4}}}\n", encoding="utf-8")
    result = apply_plan(open_drive(drive_path), plan)
    assert sorted(result.created) == sorted(i.id for i in plan.entries())
    assert lint_errors(drive_path) == []


@pytest.mark.slow
def test_a_file_count_overflow_is_planned(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    lines = (REALWORLD / "windsurf" / "memories" / "guidelines" /
             "02_code_guidelines.md").read_text(encoding="utf-8").splitlines()
    facts = [ln for ln in lines if ln.startswith("- ")]
    for n in range(300):
        (notes / f"note-{n:03d}.md").write_text(f"{facts[n % len(facts)]} (note {n})\n",
                                                encoding="utf-8")
    plan = build_plan(notes, "plain")
    assert [o["code"] for o in plan.overflow] == ["MG207"]
    assert plan.overflow[0]["needed"] > 256 and plan.counts()["entry"] == 300
    drive = open_drive(new_drive(tmp_path))
    with pytest.raises(RefusedError, match="over its limits"):
        apply_plan(drive, plan)


@pytest.mark.slow
def test_sixty_notes_of_40_to_120_kib_import_with_no_entry_lost(tmp_path: Path) -> None:
    """Every note over the file limit, tens of thousands of entries (the 200-note figures
    of docs/compat.md come from ``python bench/bench_import.py --notes 200``)."""
    notes = tmp_path / "notes"
    written = make_notes(notes, count=60)
    assert written > 30_000
    drive_path = new_drive(tmp_path, yaml="limits: {drive_bytes: 268435456, files: 8000}\n")
    drive = open_drive(drive_path)
    policy = find_policy(None, drive.git_dir)
    plan = build_plan(notes, policy=policy, drive=drive)
    counts = plan.counts()
    assert plan.overflow == [] and counts["entry"] > 30_000
    result = apply_plan(drive, plan, policy=policy)
    assert sorted(result.created) == sorted(i.id for i in plan.entries())
    assert not [s for s in result.skipped if "MG205" in s["detail"]] and not result.changed
    sizes = topic_sizes(drive_path)
    assert max(sizes.values()) <= policy.file_bytes
    assert_accounted(notes, plan, result, drive_path)


# --- plan and apply agree ---------------------------------------------------------------------


def test_apply_says_which_items_changed_verdict_since_the_plan(tmp_path: Path) -> None:
    drive_path = new_drive(tmp_path)
    drive = open_drive(drive_path)
    plan = build_plan(REALWORLD / "claude-code" / "episteme", drive=drive)
    entries = plan.entries()
    assert plan.judged["drive"] == str(drive_path)
    commit_facts(drive, [entries[0].text], message="someone wrote it meanwhile")
    PurgeRegistry.append(drive.git_dir, [("m-gone", text_digest(entries[1].text))],
                         "2026-01-01")
    result = apply_plan(drive, plan)
    changed = {c["item"]: c for c in result.changed}
    assert set(changed) == {entries[0].where, entries[1].where}
    assert changed[entries[0].where]["now"] == "present"
    assert changed[entries[1].where]["now"] == "refused"
    assert len(result.created) == len(entries) - 2
    assert [s["reason"] for s in result.skipped] == ["purged"]


# --- a refusal costs one line -----------------------------------------------------------------


def test_a_note_with_front_matter_and_a_notebook_uuid_keeps_every_entry(tmp_path: Path) -> None:
    """Issue 23: a Claude Code note with YAML front matter and a UUID in its text lost all
    its entries to one whole-note refusal."""
    source = tmp_path / "memory"
    shutil.copytree(REALWORLD / "claude-code" / "portfolio", source)
    note = source / "reference_ux_research.md"
    text = note.read_text(encoding="utf-8").replace(
        "type: reference\n", "type: reference\nnotebook: 3f2a9c4e-7b1d-4e8a-9c2f-1a2b3c4d5e6f\n")
    text += ("\n## NotebookLM\n\nThe research notebook is "
             "3f2a9c4e-7b1d-4e8a-9c2f-1a2b3c4d5e6f in NotebookLM.\n")
    note.write_text(text, encoding="utf-8")
    plan = build_plan(source)
    mine = [i for i in plan.items if i.path == note.name]
    assert [i for i in mine if i.action == "refused"] == []
    drive_path = new_drive(tmp_path)
    result = apply_plan(open_drive(drive_path), plan)
    assert sorted(result.created) == sorted(i.id for i in plan.entries())
    assert result.skipped == [] and result.changed == []


def test_a_finding_refuses_its_own_line_and_names_it(tmp_path: Path) -> None:
    source = tmp_path / "episteme"
    shutil.copytree(REALWORLD / "claude-code" / "episteme", source)
    note = source / "browser-setup.md"
    lines = note.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "---"
    lines.insert(2, f"api_token: {CREDENTIAL}")  # front matter, line 3
    lines.append("")
    lines.append(f"## Deploy {CREDENTIAL}")
    lines.append("")
    lines.append("- The staging deploy runs from CI, every night")
    lines.append("- The token of the deploy is")
    lines.append(f"  {CREDENTIAL} and it rotates")
    lines.append("")
    lines.append("```sh")
    lines.append("make deploy")
    lines.append(f"export TOKEN={CREDENTIAL}")
    lines.append("make verify")
    lines.append("```")
    note.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = {i.where: i.action for i in build_plan(REALWORLD / "claude-code" / "episteme")
              .items if i.path == note.name}
    plan = build_plan(source)
    refused = {i.line: i.reason for i in plan.items if i.action == "refused"}
    n = len(lines)
    assert set(refused) == {3, n - 10, n - 7, n - 2}  # key, heading, wrapped item, code line
    assert refused[3].endswith("(front matter key api_token)")
    assert refused[n - 7].endswith(f"(line {n - 6})")  # the wrapped item, its second line
    # the other entries of the file are entries, as they were without the credential
    entries = {i.line for i in plan.entries() if i.path == note.name}
    assert {int(w.split(":")[1]) + 1 for w, a in before.items() if a == "entry"} <= entries
    below = next(i for i in plan.entries() if i.text.startswith("The staging deploy"))
    assert below.context == "" and CREDENTIAL not in plan.to_json()
    code = [i for i in plan.items if i.path == note.name and i.action == "verbatim"]
    assert [(i.line, i.end) for i in code] == [(n - 4, n - 3), (n - 1, n)]
    drive_path = new_drive(tmp_path)
    result = apply_plan(open_drive(drive_path), plan)
    assert sorted(result.created) == sorted(i.id for i in plan.entries())
    objects = git("cat-file", "--batch-all-objects", "--batch", cwd=drive_path).stdout
    assert CREDENTIAL.encode() not in objects


# --- what a person reads ----------------------------------------------------------------------


@pytest.mark.slow
def test_the_summary_groups_refusals_and_verbose_lists_items(tmp_path: Path) -> None:
    source = tmp_path / "kb"
    source.mkdir()
    for name in (SPEC17, "SPEC-9-1 Follow-Ups- Conflict, Sync, and Observability.md"):
        shutil.copy(SPECS / name, source / name)
    out = tmp_path / "plan.json"
    proc = memgit("import", "plan", str(source), "-o", str(out))
    assert proc.returncode == 0 and proc.stderr == b""  # no progress without a terminal
    text = proc.stdout.decode()
    assert "judged against an empty drive with the default policy" in text
    assert f"-> {SPEC17} (+1 part)" in text
    assert "refused: MG401 secret: possible credential: token assignment: line 44" in text
    assert "Total: " in text and "(1 notes split into parts under the file limit)" in text
    assert f"{SPEC17}:1-" not in text  # items only with --verbose
    verbose = memgit("import", "plan", str(source), "-o", str(out), "--verbose").stdout.decode()
    assert f"{SPEC17}:1-11: structure (front matter)" in verbose
    summary = json.loads(memgit("import", "plan", str(source), "-o", str(out), "--json").stdout)
    assert summary["split_notes"] == 1 and summary["counts"] == load_plan(out).counts()
    assert set(summary["files"][SPEC17]["files"]) == {SPEC17, SPEC17[:-3] + "-part-2.md"}
    drive = create_drive(tmp_path / "drive", bare=False)
    applied = memgit("-C", str(drive), "import", "apply", str(out))
    assert applied.returncode == 0 and applied.stderr == b""
    said = applied.stdout.decode()
    assert said.startswith("Committed ") and "Total: " in said
    again = memgit("-C", str(drive), "import", "apply", str(out)).stdout.decode()
    entries = load_plan(out).counts()["entry"]
    assert again.startswith(f"Unchanged: created 0 entries, {entries} already in the drive")
    assert f"Changed since the plan: {entries} items ({entries} entry -> present)" in again
    data = json.loads(memgit("-C", str(drive), "import", "apply", str(out), "--json").stdout)
    assert data["status"] == "unchanged" and data["summary"]["counts"]["present"] == entries
    assert fmt.MEMORY_FILE in {p.name for p in drive.iterdir()}
