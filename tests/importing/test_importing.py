"""memgit import plan + apply over real memory folders of every supported kind.

Each sample under tests/data/realworld/<kind>/<sample>/ (origins in ORIGIN.md) is
planned and applied into a new drive made with ``memgit init``: the drive must have
no lint error under the drive profile, apply must create exactly the plan's entries
(the same ids), a second apply must add nothing, and every list item of the files
read (counted independently by markdown-it-py, and every memory of a mem0 export by
json) must be an entry in the drive, refused with a reason, or kept verbatim (or
listed as left out).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from memgit.drives.create import create_drive
from memgit.format import entries as fmt
from memgit.git.repository import open_drive
from memgit.importing.apply import ApplyResult, apply_plan
from memgit.importing.plan import Plan, build_plan, load_plan
from memgit.policy.judge import ERROR, text_digest
from memgit.policy.lint import lint_worktree
from memgit.policy.registry import PurgeRegistry
from memgit.policy.settings import Policy
from tests.conftest import git, memgit, memgit_ok, memgit_on_terminal

REALWORLD = Path(__file__).parents[1] / "data" / "realworld"
SAMPLES = sorted(p for p in REALWORLD.glob("*/*") if p.is_dir())
LARGE = {"basic-memory/specs"}  # the whole knowledge base of issue 23: slow
_MD = MarkdownIt("commonmark").enable("table").use(front_matter_plugin)
# a structure item may stand for a list item only when it is one of these
_LIST_STRUCTURE = ("empty list item", "index link", "embedded note (imported as its own topic)",
                   "embedded attachment (left out)", "import of another file")


def sample_id(p: Path) -> str:
    return f"{p.parent.name}/{p.name}"


SAMPLE_PARAMS = [pytest.param(p, id=sample_id(p),
                              marks=[pytest.mark.slow] if sample_id(p) in LARGE else [])
                 for p in SAMPLES]


def source_of(sample: Path) -> Path:
    """A mem0 sample is its JSON export; every other sample is its folder."""
    exports = list(sample.glob("*.json"))
    return exports[0] if sample.parent.name == "mem0" else sample


def list_items(path: Path) -> list[int]:
    """The first line of every list item markdown-it-py finds (outside front matter)."""
    tokens = _MD.parse(path.read_text(encoding="utf-8"))
    return [t.map[0] + 1 for t in tokens if t.type == "list_item_open" and t.map]


def tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        h.update(p.relative_to(root).as_posix().encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


def new_drive(tmp_path: Path, name: str = "drive") -> Path:
    return create_drive(tmp_path / name, bare=False)


def drive_entries(drive_path: Path) -> set[str]:
    """The texts of every entry in the drive's topic files (imports/ holds none)."""
    out: set[str] = set()
    for path in drive_path.rglob("*.md"):
        rel = path.relative_to(drive_path).as_posix()
        if ".git" in path.parts or rel.startswith("imports/"):
            continue
        out |= {e.text for _, e in fmt.parse_document(rel, path.read_text(encoding="utf-8"))
                .entries()}
    return out


def kept_text(drive_path: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in (drive_path / "imports").rglob("*.md"))


def assert_accounted(sample: Path, plan: Plan, result: ApplyResult, drive_path: Path) -> None:
    """Every list item of every Markdown file read: an entry of the drive (its first
    occurrence's, for a repeat), refused with a reason, verbatim kept or listed."""
    entries = drive_entries(drive_path)
    kept = kept_text(drive_path) if (drive_path / "imports").is_dir() else ""
    left = {o["item"] for o in result.left_out}
    first = {i.where: i for i in plan.items}
    checked = 0
    markdown = [f for f in plan.files if f.get("kind") == "markdown"]
    for info in markdown:
        source = sample / info["path"] if sample.is_dir() else sample
        items = [i for i in plan.items if i.path == info["path"]]
        for line in list_items(source):
            checked += 1
            item = next((i for i in items if i.line <= line <= i.end), None)
            assert item is not None, f"{info['path']}:{line} has no item"
            where = f"{info['path']}:{line} ({item.action}, {item.reason})"
            if item.action in ("entry", "present"):
                text = first[item.duplicate_of].text if item.duplicate_of else item.text
                assert text in entries, where
            elif item.action == "refused":
                assert item.reason.split()[0].startswith(("MG", "purged")), where
            elif item.action == "verbatim":
                assert item.where in left or item.text in kept, where
            else:
                assert item.reason in _LIST_STRUCTURE, where
    assert checked > 0 or not markdown or sample.parent.name in ("mem0", "obsidian")


def test_there_are_samples_of_every_kind() -> None:
    kinds = {p.parent.name for p in SAMPLES}
    assert kinds == {"amr", "claude-code", "letta", "openclaw", "cline", "basic-memory",
                     "plain", "mem0", "cursor", "windsurf", "copilot", "gemini", "agents",
                     "obsidian"}
    assert len(SAMPLES) >= 29
    assert all((REALWORLD / kind / "ORIGIN.md").exists() for kind in kinds)


@pytest.mark.parametrize("sample", SAMPLE_PARAMS)
def test_plan_and_apply_a_real_sample(sample: Path, tmp_path: Path) -> None:
    before = tree_digest(sample)
    plan = build_plan(source_of(sample))
    assert tree_digest(sample) == before, "planning changed the source"
    assert plan.tool == sample.parent.name, "auto-detection named another tool"
    counts = plan.counts()
    assert plan.files and plan.items  # the loops below have something to check
    # every line of every file read is covered by exactly one item (a file not read as
    # text, an attachment say, has one item with line 0)
    for info in plan.files:
        mine = [i for i in plan.items if i.path == info["path"]]
        if mine and mine[0].line == 0:
            assert len(mine) == 1 and info["lines"] == 0, info["path"]
            continue
        lines = sorted(n for i in mine for n in range(i.line, i.end + 1))
        assert lines == list(range(1, info["lines"] + 1)), info["path"]
    if sample.parent.name == "mem0":
        data = json.loads(source_of(sample).read_text(encoding="utf-8"))
        assert counts["entry"] + counts["refused"] + counts["duplicate"] == len(data["results"])

    drive_path = new_drive(tmp_path)
    drive = open_drive(drive_path)
    result = apply_plan(drive, plan)
    assert result.status == "committed"
    # apply creates exactly the plan's entries, with the ids the plan judged
    assert sorted(result.created) == sorted(i.id for i in plan.entries())
    assert len(result.created) == counts["entry"] and result.changed == []
    errors = [v.format() for v in lint_worktree(drive.git_dir, drive.workdir, Policy())
              if v.severity == ERROR]
    assert errors == []
    assert_accounted(source_of(sample), plan, result, drive_path)
    # the receipt lists every created id; reference files are never entries nor indexed
    receipt = "".join(p.read_text(encoding="utf-8")
                      for p in (drive_path / "imports").glob(f"{plan.created}-{plan.name}*.md"))
    assert all(i in receipt for i in result.created)
    assert all(path.startswith(f"imports/{plan.created[:4]}") for path in result.kept)
    for path in result.kept + [result.receipt]:  # never entries, never in the Index
        text = (drive_path / path).read_text(encoding="utf-8")
        assert list(fmt.parse_document(path, text).entries()) == []
        assert path[:-3] not in (drive_path / "MEMORY.md").read_text(encoding="utf-8")
    # a second apply adds nothing
    head = git("rev-parse", "HEAD", cwd=drive_path).stdout
    again = apply_plan(drive, plan)
    assert (again.status, again.created, again.present) == ("unchanged", [], counts["entry"])
    assert git("rev-parse", "HEAD", cwd=drive_path).stdout == head


def test_the_command_line_round_trip(tmp_path: Path) -> None:
    sample = REALWORLD / "cline" / "nftbk"
    drive = tmp_path / "drive"
    assert memgit("init", str(drive)).returncode == 0
    plan_file = tmp_path / "plan.json"
    proc = memgit("import", "plan", str(sample), "-o", str(plan_file), "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["tool"] == "cline" and summary["counts"]["entry"] > 100
    assert proc.stderr == b""  # no progress without a terminal
    dry = memgit("-C", str(drive), "import", "apply", str(plan_file), "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    head = git("rev-parse", "HEAD", cwd=drive).stdout
    assert json.loads(dry.stdout)["status"] == "dry-run"
    assert len(json.loads(dry.stdout)["created"]) == summary["counts"]["entry"]
    applied = memgit("-C", str(drive), "import", "apply", str(plan_file), "--json")
    result = json.loads(applied.stdout)
    assert applied.returncode == 0 and result["status"] == "committed"
    assert git("rev-parse", "HEAD~1", cwd=drive).stdout == head  # one commit
    assert git("status", "--porcelain", cwd=drive).stdout == b""
    recall = memgit("-C", str(drive), "recall", "Tezos blockchain support", "--json")
    assert recall.returncode == 0, recall.stderr
    assert any("Tezos" in hit["text"] for hit in json.loads(recall.stdout))
    lint = memgit("-C", str(drive), "lint")
    assert lint.returncode == 0, lint.stdout


def test_applying_twice_adds_nothing(tmp_path: Path) -> None:
    plan = build_plan(REALWORLD / "claude-code" / "episteme")
    drive = open_drive(new_drive(tmp_path))
    first = apply_plan(drive, plan)
    head = git("rev-parse", "HEAD", cwd=drive.workdir).stdout
    second = apply_plan(drive, plan)
    assert first.status == "committed" and len(first.created) == plan.counts()["entry"]
    assert second.status == "unchanged" and second.created == []
    assert second.present == plan.counts()["entry"] and second.receipt == ""
    assert git("rev-parse", "HEAD", cwd=drive.workdir).stdout == head


def test_dry_run_changes_nothing(tmp_path: Path) -> None:
    plan = build_plan(REALWORLD / "openclaw" / "erbing")
    path = new_drive(tmp_path)
    drive = open_drive(path)
    head = git("rev-parse", "HEAD", cwd=path).stdout
    before = tree_digest(path / ".git" / "refs"), tree_digest(path)
    result = apply_plan(drive, plan, dry_run=True)
    assert result.status == "dry-run" and len(result.created) == plan.counts()["entry"]
    assert result.receipt.startswith("imports/")
    assert git("rev-parse", "HEAD", cwd=path).stdout == head
    assert git("status", "--porcelain", cwd=path).stdout == b""
    assert tree_digest(path / ".git" / "refs") == before[0]


CREDENTIAL = "ghp_4Fq8Zr2LmN7xKc1VbT9sWd3YhJ6pQa0Ue5Gi"  # synthetic, GitHub token shape


def test_a_planted_credential_is_refused_and_never_copied(tmp_path: Path) -> None:
    source = tmp_path / "episteme"
    shutil.copytree(REALWORLD / "claude-code" / "episteme", source)
    topic = source / "testing-small-batches.md"
    text = topic.read_text(encoding="utf-8")
    text = text.replace("e.g. `POST /api/jobs/defer/write?limit=2`",
                        f"e.g. `POST /api/jobs/defer/write?limit=2` with {CREDENTIAL}")
    text += f"\n## Deploy {CREDENTIAL}\n\n- the staging deploy token is\n  {CREDENTIAL}\n"
    topic.write_text(text, encoding="utf-8")
    (source / "notes.sql").write_text(f"-- token {CREDENTIAL}\nselect 1;\n", encoding="utf-8")
    plan = build_plan(source)
    refused = [i for i in plan.items if i.action == "refused"]
    assert {(i.path, i.reason.split()[0]) for i in refused} == {
        ("testing-small-batches.md", "MG401"), ("notes.sql", "MG401")}
    assert len(refused) == 4  # the paragraph, the heading, the list item, the .sql file
    assert all("GitHub token" in i.reason for i in refused)
    out = tmp_path / "plan.json"
    proc = memgit("import", "plan", str(source), "-o", str(out))
    assert proc.returncode == 0 and CREDENTIAL not in out.read_text(encoding="utf-8")
    assert CREDENTIAL.encode() not in proc.stdout + proc.stderr
    # the heading that held it gives no context to the entries below it
    below = [i for i in plan.entries() if i.path == "testing-small-batches.md"]
    assert below  # the entries the check below is about
    assert all(CREDENTIAL not in i.context and CREDENTIAL not in i.text for i in below)
    drive_path = new_drive(tmp_path)
    result = apply_plan(open_drive(drive_path), load_plan(out))
    assert result.status == "committed"
    objects = git("cat-file", "--batch-all-objects", "--batch", cwd=drive_path).stdout
    assert CREDENTIAL.encode() not in objects


def test_a_transcript_is_refused_with_its_code(tmp_path: Path) -> None:
    source = tmp_path / "erbing"
    shutil.copytree(REALWORLD / "openclaw" / "erbing", source)
    note = source / "memory" / "2026-03-18.md"
    note.write_text(note.read_text(encoding="utf-8")
                    + "\n## Chat\n\nUser: what is the context size?\n"
                    "Assistant: 33k tokens, 99% used.\n", encoding="utf-8")
    plan = build_plan(source)
    refused = [i.as_dict() for i in plan.items if i.action == "refused"]
    assert refused and all(r["reason"].startswith("MG305") for r in refused)
    assert all(set(r) == {"path", "line", "end", "action", "reason"} for r in refused)
    assert "33k tokens, 99% used" not in plan.to_json()


def test_bad_plans_and_sources_are_named(tmp_path: Path) -> None:
    drive = new_drive(tmp_path)
    missing = memgit("import", "plan", str(tmp_path / "nope"))
    assert missing.returncode == 2 and b"does not exist" in missing.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}')
    proc = memgit("-C", str(drive), "import", "apply", str(bad))
    assert proc.returncode == 2 and b"not a memgit import plan" in proc.stderr
    plan = json.loads(build_plan(REALWORLD / "amr" / "skill-trial").to_json())
    plan["items"][0]["line"] = "one"
    bad.write_text(json.dumps(plan))
    proc = memgit("-C", str(drive), "import", "apply", str(bad))
    assert proc.returncode == 2 and b"item 1: line must be a line number" in proc.stderr
    notmem0 = tmp_path / "x.json"
    notmem0.write_text('{"results": [{"text": "no memory key"}]}')
    proc = memgit("import", "plan", str(notmem0), "--from", "mem0")
    assert proc.returncode == 2 and b"not a mem0 export" in proc.stderr


def test_symbolic_links_are_listed_and_never_followed(tmp_path: Path) -> None:
    source = tmp_path / "notes"
    shutil.copytree(REALWORLD / "amr" / "skill-trial", source)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(f"- {CREDENTIAL}\n", encoding="utf-8")
    (source / "linked.md").symlink_to(outside / "secret.md")
    (source / "folder").symlink_to(outside)
    plan = build_plan(source)
    listed = {i.path: i for i in plan.items if i.path in ("linked.md", "folder")}
    assert set(listed) == {"linked.md", "folder"}
    assert all(i.action == "verbatim" and "not followed" in i.reason and i.line == 0
               for i in listed.values())
    assert CREDENTIAL not in plan.to_json() and not any("secret" in i.path for i in plan.items)


def test_progress_shows_on_a_terminal_and_not_with_json(tmp_path: Path) -> None:
    def run(*extra: str) -> bytes:
        status, _out, shown = memgit_on_terminal(
            "import", "plan", str(REALWORLD / "cline" / "nftbk"), "-o", str(tmp_path / "p.json"),
            *extra)
        assert status == 0
        return shown

    shown = run()
    assert b"reading" in shown and b"] 6/6" in shown and b"judging" in shown
    assert run("--json") == b""


def test_verbatim_blocks_are_kept_byte_for_byte_in_a_fence(tmp_path: Path) -> None:
    sample = REALWORLD / "plain" / "portfolio"
    plan = build_plan(sample)
    blocks = [i for i in plan.items if i.action == "verbatim"]
    assert {i.reason for i in blocks} >= {"code block"}
    drive_path = new_drive(tmp_path)
    result = apply_plan(open_drive(drive_path), plan)
    assert result.kept and not result.left_out
    for item in blocks:
        source = (sample / item.path).read_text(encoding="utf-8").splitlines()
        original = "\n".join(source[item.line - 1:item.end])
        kept = (drive_path / f"imports/{plan.created}-{plan.name}/{item.path}")
        text = kept.read_text(encoding="utf-8")
        assert f"\n{original}\n" in text  # the lines as they were
    receipt = (drive_path / result.receipt).read_text(encoding="utf-8")
    assert all(path in receipt for path in result.kept)


def test_the_receipt_lists_what_the_writer_really_created(tmp_path: Path) -> None:
    """An entry the writer skips at apply time (its text was purged from this drive)
    is neither counted nor listed as created."""
    plan = build_plan(REALWORLD / "claude-code" / "episteme")
    drive_path = new_drive(tmp_path)
    drive = open_drive(drive_path)
    purged = plan.entries()[0]
    PurgeRegistry.append(drive.git_dir, [("m-purged", text_digest(purged.text))], "2026-01-01")
    result = apply_plan(drive, plan)
    assert len(result.created) == len(plan.entries()) - 1
    assert [s["reason"] for s in result.skipped] == ["purged"]
    receipt = (drive_path / result.receipt).read_text(encoding="utf-8")
    assert f"Created {len(result.created)} entries." in receipt
    listed = [i for line in receipt.split("## Created entries", 1)[1].splitlines()
              for i in line.split(", ") if i]
    assert listed == result.created
    assert purged.text not in (drive_path / "MEMORY.md").read_text(encoding="utf-8")


def bring_your_memory_commands() -> list[str]:
    """The commands of the README's "Bring your memory" section, as written there."""
    from tests.conftest import ROOT

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Bring your memory", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def test_the_readme_brings_a_claude_code_folder_to_a_server_drive(tmp_path: Path) -> None:
    """The three commands, run as written (paths moved under tmp_path), on a real Claude
    Code memory folder; then two agents clone the server drive, write and sync."""
    import shlex

    commands = bring_your_memory_commands()
    assert len(commands) == 3 and all(c.startswith("memgit ") for c in commands)
    folder = REALWORLD / "claude-code" / "portfolio"
    server = tmp_path / "srv" / "memgit" / "me.git"
    server.parent.mkdir(parents=True)
    for command in commands:
        command = command.replace("~/.claude/projects/-home-me-app/memory", str(folder))
        command = command.replace("/srv/memgit/me.git", str(server))
        proc = memgit(*shlex.split(command)[1:], cwd=tmp_path)
        assert proc.returncode == 0, (command, proc.stdout, proc.stderr)
    plan = load_plan(tmp_path / "memory-plan.json")
    # a server drive with memgit's hooks, holding every planned entry, clean
    assert memgit("install-hooks", "--check", str(server)).returncode == 0
    proc = memgit("-C", str(server), "lint", "--rev", "main")
    assert proc.returncode == 0, proc.stdout
    agents = [tmp_path / "agent-a", tmp_path / "agent-b"]
    for agent in agents:
        assert memgit("clone", server.as_uri(), str(agent)).returncode == 0
    hits = json.loads(memgit_ok("-C", str(agents[0]), "recall", "bento grid", "--json").stdout)
    assert hits and all(h["source"].startswith("imported:claude-code/") for h in hits)
    texts = "".join(p.read_text(encoding="utf-8") for p in agents[0].rglob("*.md")
                    if ".git" not in p.parts)
    assert all(item.text in texts for item in plan.entries())
    # the agents write and sync through the server drive's hooks
    assert memgit("-C", str(agents[0]), "remember", "The bento grid ships in May",
                  "--topic", "feedback_bento_grid").returncode == 0
    assert memgit("-C", str(agents[0]), "sync").returncode == 0
    assert memgit("-C", str(agents[1]), "sync").returncode == 0
    hits = json.loads(memgit_ok("-C", str(agents[1]), "recall", "bento ships May",
                                "--json").stdout)
    assert hits[0]["text"] == "The bento grid ships in May"


def test_a_team_drive_takes_the_import_because_its_sources_name_the_tool(
        tmp_path: Path) -> None:
    """A drive of kind team asks every entry to name who wrote it (MG109); an imported
    entry's provenance ``imported:TOOL/PATH#LN`` does, ``imported:unknown`` does not."""
    plan = build_plan(REALWORLD / "claude-code" / "episteme")
    drive_path = new_drive(tmp_path)
    (drive_path / ".git" / "memgit.yaml").write_text("kind: team\n")
    drive = open_drive(drive_path)
    result = apply_plan(drive, plan)
    assert result.status == "committed" and result.skipped == []
    assert len(result.created) == len(plan.entries())
    policy = Policy(require_source=True)
    assert [v.format() for v in lint_worktree(drive.git_dir, drive.workdir, policy)
            if v.severity == ERROR] == []
    (drive_path / "notes.md").write_text("# Notes\n\n- Otters hold hands "
                                         "[source: imported:unknown]\n")
    assert [(v.path, v.line) for v in lint_worktree(drive.git_dir, drive.workdir, policy)
            if v.code == "MG109"] == [("notes.md", 3)]
