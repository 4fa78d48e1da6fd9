"""Real fleets for the fleet tests: bare drives made by memgit (hooks installed) under a
root, entries written through memgit's writer or pushed with the real git."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import git, memgit


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


JANE = ["Jane Roe prefers tea in the morning", "Call Jane Roe about the Q3 budget"]


def jane_root(tmp_path: Path) -> Path:
    """alice (Jane twice), team/bob (Jane once, and 'jane ... roe' apart), carol (none),
    a gitolite-style admin repository (no branch main) and a checkout."""
    root = tmp_path / "root"
    make_drive(root, "alice.git", JANE + ["The build uses make"])
    make_drive(root, "team/bob.git", ["Met Jane Roe at the conference",
                                      "jane likes roe fish", "Deploys happen on Tuesdays"],
               topic="people")
    make_drive(root, "carol.git", ["Carol keeps the release notes"])
    admin = root / "gitolite-admin.git"
    git("init", "-q", "--bare", "-b", "master", str(admin))
    git("init", "-q", str(root / "users" / "checkout"))
    return root


def ids(found: dict, key: str = "hits") -> list[tuple[str, str]]:
    """(drive, text) of each hit of a ``fleet find --json`` answer."""
    return [(h["drive"], h["text"]) for h in found[key]]


def found_hits(root: Path, query: str) -> list[dict]:
    """The head hits of ``memgit fleet find ROOT QUERY --json``."""
    _status, found, _err = fleet("find", str(root), query, "--json")
    assert isinstance(found, dict)
    return found["hits"]


def receipt_without_text(receipt_path: Path, texts: list[str]) -> dict:
    """The receipt, once checked private (0600) and free of every word of ``texts``."""
    raw = receipt_path.read_text()
    for text in texts:
        for word in text.split():
            if len(word) > 3:
                assert word.lower() not in raw.lower(), word
    assert oct(receipt_path.stat().st_mode & 0o777) == "0o600"
    return json.loads(raw)
