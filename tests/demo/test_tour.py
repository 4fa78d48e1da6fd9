"""memgit demo: the newcomer's first command works end to end."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import git, memgit, refused


@pytest.mark.slow
def test_demo_runs_and_catches_every_bad_entry(tmp_path: Path) -> None:
    target = tmp_path / "demo"
    proc = memgit("demo", str(target))
    out = proc.stdout.decode()
    assert proc.returncode == 0, out + proc.stderr.decode()
    assert "4 of 4 bad commits refused" in out
    assert "writer, recall and board worked" in out
    assert "dream dry run and undo shown" in out and "exactly the one before the dream" in out
    assert "offline sync converged" in out and "server refusal shown" in out
    assert "recall across a mount shown" in out and "[team] notes.md:" in out
    for code in ("MG401", "MG101", "MG204", "MG502"):
        assert code in out
    drive = target / "drive"
    assert (drive / "MEMORY.md").exists()
    assert git("status", "--porcelain", cwd=drive).stdout == b""
    assert memgit("lint", cwd=drive).returncode == 0
    server = target / "sync" / "server.git"
    agents = [target / "sync" / "agent-a", target / "sync" / "agent-b"]
    heads = {git("rev-parse", "main", cwd=p).stdout for p in [server, *agents]}
    assert len(heads) == 1  # both agents and the server end on the same commit


def test_demo_refuses_a_non_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("keep me")
    proc = memgit("demo", str(tmp_path))
    assert proc.returncode == 2 and b"not empty" in proc.stderr
    refused(proc, "MG001")
    assert (tmp_path / "x").read_text() == "keep me"
