"""The Agent Memory Repo spec's own examples, under both profiles."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import git, memgit

EXAMPLE = Path(__file__).parents[1] / "data" / "amr_example"


def example_drive(tmp_path: Path) -> Path:
    d = tmp_path / "memory-joe"
    shutil.copytree(EXAMPLE, d)
    git("init", "-q", "-b", "main", cwd=d)
    git("add", "-A", cwd=d)
    git("commit", "-qm", "spec example", cwd=d)
    return d


def test_spec_examples_lint_clean_under_amr(tmp_path: Path) -> None:
    d = example_drive(tmp_path)
    amr = tmp_path / "amr.yaml"
    amr.write_text("profile: amr\n")
    proc = memgit("lint", "--strict", "--policy", str(amr), "--json", cwd=d)
    assert json.loads(proc.stdout) == [] and proc.returncode == 0


def test_drive_profile_finds_only_the_drive_rules(tmp_path: Path) -> None:
    d = example_drive(tmp_path)
    proc = memgit("lint", "--json", "--rev", "main", cwd=d)
    found = [(v["code"], v["path"]) for v in json.loads(proc.stdout)]
    # a non-Markdown file, and an Index that does not list every topic file
    assert sorted(found) == [("MG201", "billing/count_paying_customers.sql"),
                             ("MG502", "MEMORY.md")]
    assert proc.returncode == 1
