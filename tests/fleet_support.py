"""Real fleets for the fleet tests: bare drives made by memgit (hooks installed) under a
root, entries written through memgit's writer or pushed with the real git."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import memgit


def make_drive(root: Path, name: str, entries: list[str] | None = None, *,
               policy: str | None = None, topic: str | None = None) -> Path:
    """A server drive ``ROOT/NAME`` (memgit init --bare) holding ``entries``."""
    from memgit.drives.create import create_drive
    from memgit.git.repository import open_drive
    from memgit.write.ops import NewFact
    from memgit.write.writer import commit_facts

    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    create_drive(path, bare=True)
    if policy is not None:
        (path / "memgit.yaml").write_text(policy)
    if entries:
        result = commit_facts(open_drive(path), [NewFact(t, topic=topic) for t in entries])
        assert result.status == "committed", result
    return path


def add_entries(path: Path, entries: list[str], topic: str | None = None) -> str:
    from memgit.git.repository import open_drive
    from memgit.write.ops import NewFact
    from memgit.write.writer import commit_facts

    result = commit_facts(open_drive(path), [NewFact(t, topic=topic) for t in entries])
    assert result.status == "committed", result
    return result.commit or ""


def fleet(*args: str) -> tuple[int, dict | str, str]:
    """``memgit fleet ARGS`` in a subprocess: (exit status, JSON or text output, stderr)."""
    proc = memgit("fleet", *args, text=True)
    out: dict | str = proc.stdout
    if "--json" in args and proc.stdout.strip().startswith("{"):
        out = json.loads(proc.stdout)
    return proc.returncode, out, proc.stderr


def everything_in(path: Path) -> bytes:
    """Every byte of every object of a repository, inflated (git cat-file --batch)."""
    import subprocess

    ids = subprocess.run(["git", "--git-dir", str(path), "cat-file", "--batch-all-objects",
                          "--batch-check=%(objectname)"], capture_output=True, check=True
                         ).stdout
    return subprocess.run(["git", "--git-dir", str(path), "cat-file", "--batch"], input=ids,
                          capture_output=True, check=True).stdout
