"""memgit compact over a generated drive: what exceeds the caps goes, in the documented
order, as one revertable writer commit; recently retrieved entries stay."""

from __future__ import annotations

import datetime as _dt
import json
import random
from pathlib import Path

import pytest

from memgit.drives.compact import RECENT_DAYS, compact, plan_compaction
from memgit.format import entries as fmt
from memgit.git.repository import open_drive
from memgit.policy.settings import policy_from_mapping
from memgit.recall.read_path import recall
from memgit.state import events
from memgit.write.writer import commit_facts
from tests.conftest import git, memgit, memgit_ok

AGE = 900
CAPS = {"limits": {"max_entries": 80, "max_age_days": AGE}}
TODAY = _dt.date.today()


def generate(path: Path, n: int = 120, seed: int = 16) -> dict[str, str]:
    """A drive checkout of ``n`` entries over 6 topic files, dated over three years (about
    a sixth older than AGE days), each with one word of its own (``kNNN``) so a recall can
    find exactly it. Returns id -> added date."""
    rng = random.Random(seed)
    dates: dict[str, str] = {}
    files: dict[str, list[str]] = {}
    for i in range(n):
        added = (TODAY - _dt.timedelta(days=rng.randint(1, 3 * 365))).isoformat()
        entry_id = f"m-gen{i:03}"
        dates[entry_id] = added
        line = fmt.format_entry(f"Generated fact k{i:03} about {rng.choice(['cats', 'dogs'])}",
                                f"claude-code:session/{i}", added, entry_id)
        files.setdefault(f"topics/t{i % 6}.md", [f"# Topic {i % 6}", ""]).append(line)
    memgit("init", str(path))
    for name, lines in files.items():
        (path / name).parent.mkdir(exist_ok=True)
        (path / name).write_text("\n".join(lines) + "\n")
    memory = (path / "MEMORY.md").read_text()
    (path / "MEMORY.md").write_text(fmt.regenerate_index_section(memory, [*files, "MEMORY.md"]))
    git("add", "-A", cwd=path)
    git("commit", "-qm", "generated drive", cwd=path)
    (path / ".git" / "memgit.yaml").write_text(json.dumps(CAPS))
    return dates


def expected_removals(dates: dict[str, str], retrieved: set[str], now: _dt.date,
                      recent: set[str]) -> list[str]:
    """The documented order, computed from the generated data alone."""
    cutoff = (now - _dt.timedelta(days=AGE)).isoformat()
    by_age = [i for i, d in dates.items() if d < cutoff and i not in recent]
    rest = [i for i in dates if i not in by_age]
    excess = len(rest) - 80
    order = sorted((i for i in rest if i not in recent),
                   key=lambda i: (i in retrieved, dates[i], i))
    return sorted(by_age + order[:max(excess, 0)])


@pytest.fixture
def drive_path(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    path = tmp_path / "gen"
    return path, generate(path)


def test_compaction_removes_what_exceeds_the_caps_in_order(drive_path) -> None:
    path, dates = drive_path
    drive = open_drive(path)
    policy = policy_from_mapping(CAPS)
    old = sorted(i for i, d in dates.items() if d < (TODAY - _dt.timedelta(days=AGE)).isoformat())
    young = sorted((i for i in dates if i not in old), key=lambda i: dates[i])
    retrieved = {old[0], old[1], young[0], young[1]}  # two over the age cap, two oldest young
    for entry_id in sorted(retrieved):
        [hit] = recall(drive, f"k{entry_id[-3:]}", 1, policy=policy)
        assert hit.entry_id == entry_id
    before = git("rev-parse", "HEAD^{tree}", cwd=path).stdout
    head = git("rev-parse", "HEAD", cwd=path).stdout.decode().strip()

    dry = compact(drive, policy, dry_run=True)
    want = expected_removals(dates, retrieved, TODAY, recent=retrieved)
    assert sorted(r.entry_id for r in dry.removals) == want
    assert {r.reason for r in dry.removals if r.entry_id in old} == {"age"}
    assert git("rev-parse", "HEAD", cwd=path).stdout.decode().strip() == head  # nothing written
    assert dry.protected == 2 and dry.after == 80

    done = compact(drive, policy)
    assert done.result is not None and done.result.status == "committed"
    assert sorted(done.result.retired) == want
    assert git("rev-list", "--count", f"{head}..HEAD", cwd=path).stdout.strip() == b"1"
    message = git("log", "-1", "--format=%B", cwd=path).stdout.decode()
    assert message.startswith(f"Compact: {len(want)} entries over the caps")
    assert "Generated fact" not in message  # ids, never texts
    remaining = {e.id for f in path.glob("topics/*.md")
                 for _l, e in fmt.parse_document(f.name, f.read_text()).entries()}
    assert len(remaining) == 80 and retrieved <= remaining
    assert plan_compaction(drive, policy).removals == []  # within the caps now

    git("revert", "--no-edit", "HEAD", cwd=path)
    assert git("rev-parse", "HEAD^{tree}", cwd=path).stdout == before  # byte for byte back


def test_an_old_retrieval_protects_no_more_but_still_orders_last(drive_path) -> None:
    path, dates = drive_path
    drive = open_drive(path)
    policy = policy_from_mapping(CAPS)
    later = _dt.datetime.now(_dt.UTC) + _dt.timedelta(days=RECENT_DAYS + 1)
    young = sorted((i for i in dates
                    if dates[i] >= (later.date() - _dt.timedelta(days=AGE)).isoformat()),
                   key=lambda i: dates[i])
    [hit] = recall(drive, f"k{young[0][-3:]}", 1, policy=policy)
    plan = plan_compaction(drive, policy, now=later)
    want = expected_removals(dates, {hit.entry_id}, later.date(), recent=set())
    assert sorted(r.entry_id for r in plan.removals) == want and plan.protected == 0
    assert hit.entry_id not in want  # retrieved once: after every never-retrieved entry


def test_the_command_and_the_writer_report_the_caps(drive_path) -> None:
    path, _dates = drive_path
    drive = open_drive(path)
    result = commit_facts(drive, ["One more generated fact"], policy=policy_from_mapping(CAPS))
    assert result.status == "committed"
    assert any("MG291 over-cap" in w and "121 entries" in w for w in result.warnings)
    assert events.counts(drive.git_dir)["near_limit"] == 1
    info = json.loads(memgit_ok("info", "--json", cwd=path).stdout)
    assert info["caps"]["entries"] == 121 and info["caps"]["max_entries"] == 80
    metrics = memgit_ok("metrics", cwd=path).stdout.decode()
    assert "memgit_over_cap{" in metrics and "memgit_cap_entries{" in metrics
    dry = memgit("compact", "--dry-run", cwd=path)
    assert dry.returncode == 0 and dry.stdout.decode().count("would remove") > 0
    data = json.loads(memgit_ok("compact", "--json", cwd=path).stdout)
    assert data["status"] == "committed" and data["after"] == 80
    assert memgit_ok("compact", cwd=path).stdout.decode().endswith("nothing to remove\n80 "
                                                                    "entries remain\n")
    (path / ".git" / "memgit.yaml").unlink()
    assert "sets no caps" in memgit_ok("compact", cwd=path).stdout.decode()
