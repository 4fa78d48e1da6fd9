"""Caps at the server: pre-receive warns (MG291, MG290) when a push leaves the drive over or
near a cap, counting the files already there from the census post-receive keeps."""

from __future__ import annotations

import re
from pathlib import Path

from memgit.drives.create import create_drive
from memgit.githooks.post_receive import wait_for_background
from memgit.policy.census import census_path, read_census, update_census
from memgit.policy.settings import Policy, policy_from_mapping
from memgit.state import events
from tests.conftest import commit_all, git, memgit


def entries(prefix: str, n: int, added: str = "2026-11-01") -> str:
    return "".join(f"- {prefix} fact number {i} [source: claude-code:session/{i}; "
                   f"added: {added}; id: m-{prefix}-{i}]\n" for i in range(n))


def server_and_work(tmp_path: Path, policy: str) -> tuple[Path, Path]:
    bare = create_drive(tmp_path / "server.git", bare=True)
    (bare / "memgit.yaml").write_text(policy)
    work = tmp_path / "work"
    git("clone", "-q", str(bare), str(work))
    return bare, work


def push(work: Path, files: dict[str, str], message: str) -> tuple[int, list[str]]:
    for name, text in files.items():
        (work / name).write_text(text)
    commit_all(work, message)
    proc = git("push", "origin", "main", cwd=work, check=False)
    found = re.findall(r"MG29\d [a-z-]+ \(warning\): [^\n]*", proc.stderr.decode())
    return proc.returncode, [w.rstrip() for w in found]  # git pads remote: lines


def test_a_push_over_the_entry_cap_is_accepted_with_a_warning(tmp_path: Path) -> None:
    bare, work = server_and_work(tmp_path, "limits: {max_entries: 10}\n")
    status, warnings = push(work, {"a.md": "# A\n\n" + entries("a", 7)}, "seven")
    assert status == 0 and warnings == []
    wait_for_background(bare)
    census = read_census(bare)
    assert sorted(census.values()) == [(7, "2026-11-01")]  # post-receive counted a.md
    status, warnings = push(work, {"b.md": "# B\n\n" + entries("b", 2)}, "nine")
    assert status == 0
    assert warnings == ["MG290 near-limit (warning): 9 of 10 entries (limits.max_entries)"]
    wait_for_background(bare)
    status, warnings = push(work, {"c.md": "# C\n\n" + entries("c", 3)}, "twelve")
    assert status == 0
    assert warnings == ["MG291 over-cap (warning): 12 entries in topic files, cap 10 "
                        "(limits.max_entries)"]
    wait_for_background(bare)
    assert events.counts(bare)["near_limit"] == 2
    # MEMORY.md and the board do not count toward the cap
    memory = (work / "MEMORY.md").read_text().replace(
        "## Index", entries("mem", 5) + "\n## Index")
    status, warnings = push(work, {"MEMORY.md": memory}, "memory entries")
    assert status == 0 and warnings[0].startswith("MG291 over-cap (warning): 12 entries")


def test_old_files_are_counted_from_the_census(tmp_path: Path) -> None:
    """The census is what pre-receive reads for files it does not parse: a census that
    says a.md holds 50 entries makes the next push over the cap (and without a census the
    hook parses a.md and finds its true count)."""
    bare, work = server_and_work(tmp_path, "limits: {max_entries: 20}\n")
    push(work, {"a.md": "# A\n\n" + entries("a", 5)}, "five")
    wait_for_background(bare)
    [(a_blob, tally)] = read_census(bare).items()
    assert tally == (5, "2026-11-01")
    census_path(bare).write_text(f"{a_blob} 50 2026-11-01\n")
    _status, warnings = push(work, {"b.md": "# B\n\n" + entries("b", 1)}, "one more")
    assert warnings == ["MG291 over-cap (warning): 51 entries in topic files, cap 20 "
                        "(limits.max_entries)"]
    wait_for_background(bare)  # post-receive rewrites the census: a.md is still a_blob
    assert read_census(bare)[a_blob] == (50, "2026-11-01")  # a known blob is not re-read
    census_path(bare).unlink()
    _status, warnings = push(work, {"c.md": "# C\n\n" + entries("c", 1)}, "and one more")
    assert warnings == []  # 7 entries, parsed from the objects
    wait_for_background(bare)
    assert sorted(n for n, _o in read_census(bare).values()) == [1, 1, 5]


def test_the_age_cap_warns_on_the_oldest_dated_entry(tmp_path: Path) -> None:
    bare, work = server_and_work(tmp_path, "limits: {max_age_days: 30}\n")
    _status, warnings = push(work, {"a.md": "# A\n\n" + entries("a", 2, added="2020-02-29")
                                    + "- An undated fact [source: claude-code:session/9; "
                                    "id: m-undated]\n"}, "old")
    assert len(warnings) == 1
    assert re.fullmatch(r"MG291 over-cap \(warning\): an entry added 2020-02-29 is \d+ days "
                        r"old, cap 30 \(limits.max_age_days\)", warnings[0])
    wait_for_background(bare)
    lint = memgit("lint", "--rev", "main", "--policy", str(bare / "memgit.yaml"), cwd=work)
    assert lint.returncode == 0 and lint.stdout.decode().count("MG291") == 1


def test_a_drive_without_caps_keeps_no_census(tmp_path: Path) -> None:
    bare, work = server_and_work(tmp_path, "branch: main\n")
    _status, warnings = push(work, {"a.md": "# A\n\n" + entries("a", 3)}, "three")
    assert warnings == []
    wait_for_background(bare)
    assert not census_path(bare).exists()
    assert update_census(bare, Policy()) == 0
    assert update_census(bare, policy_from_mapping({"limits": {"max_entries": 5}})) == 1
    assert read_census(bare) != {}
