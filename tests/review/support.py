"""The team drive of the review tests: agents add to notes.md, decisions.md takes proposals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memgit.format import entries as fmt
from tests.conftest import git, memgit, memgit_ok

# The README's team-drive policy (docs/review.md): a person (the owner's address) writes
# anything directly; anyone else may only propose to decisions.md, and no agent forgets.
TEAM_POLICY = """\
kind: team
autonomy:
  - {author: "*@people.example", decide: direct}
  - {topic: decisions.md, decide: propose}
  - {agent: "*", action: forget, topic: "*", decide: refuse}
review: {keep_rejected_days: 30, proposal_days: 7}
"""
OWNER = {"GIT_AUTHOR_NAME": "Owner", "GIT_AUTHOR_EMAIL": "owner@people.example",
         "GIT_COMMITTER_NAME": "Owner", "GIT_COMMITTER_EMAIL": "owner@people.example"}


def team_drive(new_drive: Any, policy: str = TEAM_POLICY) -> Path:
    path: Path = new_drive({"notes.md": "# Notes\n", "decisions.md": "# Decisions\n"})
    (path / ".git" / "memgit.yaml").write_text(policy)
    return path


def entries_of(path: Path, topic: str, rev: str = "HEAD") -> dict[str, fmt.Entry]:
    text = git("show", f"{rev}:{topic}", cwd=path).stdout.decode()
    return {e.id: e for _l, e in fmt.parse_document(topic, text).entries()}


def recalled_ids(path: Path, query: str) -> set[str]:
    """Ids recall finds (memgit recall exits 1 when it finds nothing)."""
    proc = memgit("-C", str(path), "recall", query, "--json")
    hits = json.loads(proc.stdout)
    assert proc.returncode == (0 if hits else 1), proc.stderr
    return {h["id"] for h in hits}


def context_text(path: Path) -> str:
    return memgit_ok("-C", str(path), "context", "--json").stdout.decode()
