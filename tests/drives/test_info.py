"""memgit info and memgit metrics read like every other read: the index is repaired first."""

from __future__ import annotations

from pathlib import Path

from memgit import state
from memgit.drives import info as overview
from memgit.format import entries as fmt
from memgit.git.repository import init_bare, open_drive, ref_target
from memgit.policy.settings import Policy
from memgit.state import facts
from tests.conftest import git


def _drive_with_entries(tmp_path: Path) -> Path:
    people = ("# People\n\n- Ada writes the compiler [source: imported:unknown; id: p-ada]\n"
              "- Bo runs the build farm [source: imported:unknown; id: p-bo]\n")
    memory = fmt.regenerate_index_section(fmt.initial_memory(), ["MEMORY.md", "people.md"])
    return init_bare(tmp_path / "d.git", {"MEMORY.md": memory.encode(),
                                         "people.md": people.encode()}, "Create").git_dir


def test_metrics_repair_a_stale_index_before_counting_entries(tmp_path: Path) -> None:
    git_dir = _drive_with_entries(tmp_path)  # made without the writer: nothing indexed yet
    label, counts, gauges = overview.drive_metrics(str(git_dir))
    assert label == str(git_dir.resolve())
    listed = git("ls-tree", "-r", "-l", "main", cwd=git_dir).stdout.decode().splitlines()
    size = sum(int(line.split()[3]) for line in listed)  # the blobs' sizes, as git lists them
    assert len(listed) == 2 and size > 0
    assert gauges == {"pending_writes": 0, "entries": 2, "drive_bytes": size, "files": 2}
    assert counts["commit"] == 0
    stats = facts.stats(state.connection(git_dir))
    assert stats.indexed_rev == ref_target(open_drive(git_dir), "refs/heads/main")


def test_info_reports_the_repair(tmp_path: Path) -> None:
    drive = open_drive(_drive_with_entries(tmp_path))
    first = overview.drive_info(drive, Policy())
    assert (first["index_repaired"], first["entries"], first["files"]) == (True, 2, 2)
    again = overview.drive_info(drive, Policy())
    assert (again["index_repaired"], again["indexed_revision"]) == (False, again["head"])
