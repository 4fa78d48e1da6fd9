"""Moving an existing history onto a server drive: the first push to an empty drive
(``memgit init --bare --empty``) is judged at its tip by every rule and in its older
commits by the history rules only (docs/server.md). Real pushes over file:// into real
bare drives with memgit's hooks, of a real Letta memory repository whose early commits
fail today's policy (no MEMORY.md, wrapped list items, a plain-text file)."""

from __future__ import annotations

import shutil
from pathlib import Path

from memgit.format import entries as fmt
from memgit.git.repository import open_drive
from memgit.githooks.post_receive import wait_for_background
from memgit.recall.read_path import recall
from tests.conftest import git, memgit

REALWORLD = Path(__file__).parents[1] / "data" / "realworld"
TOKEN = "ghp_4Fq8Zr2LmN7xKc1VbT9sWd3YhJ6pQa0Ue5Gi"  # synthetic, GitHub token shape


def history(tmp_path: Path, *, secret_in_the_past: bool = False) -> Path:
    """A Letta repository built up over four commits on main; the first three would each
    be refused by today's drive policy."""
    work = tmp_path / "emmabot"
    sample = REALWORLD / "letta" / "emmabot"
    work.mkdir()
    git("init", "-q", "-b", "main", cwd=work)
    shutil.copytree(sample / "system", work / "system")
    (work / "notes.txt").write_text("scratch notes kept next to the memory\n")
    git("add", "-A", cwd=work)
    git("commit", "-qm", "system blocks", cwd=work)
    persona = work / "system" / "persona.md"
    persona.write_text(persona.read_text() + "\n- a wrapped item\n  continued here\n")
    if secret_in_the_past:
        (work / "system" / "deploy.md").write_text(f"- the deploy token is {TOKEN}\n")
    git("add", "-A", cwd=work)
    git("commit", "-qm", "persona grows", cwd=work)
    shutil.copytree(sample / "reference", work / "reference")
    (work / "system" / "deploy.md").unlink(missing_ok=True)
    git("add", "-A", cwd=work)
    git("commit", "-qm", "reference notes", cwd=work)
    persona.write_text(persona.read_text().replace("- a wrapped item\n  continued here\n",
                                                   "- a wrapped item, now on one line\n"))
    (work / "notes.txt").unlink()
    git("commit", "-qam", "tidy up", cwd=work)
    return work


def push(work: Path, server: Path, refspec: str = "main:main") -> tuple[int, str]:
    proc = git("push", "--porcelain", str(server), refspec, cwd=work, check=False)
    return proc.returncode, proc.stderr.decode() + proc.stdout.decode()


def test_an_existing_history_lands_on_an_empty_drive_judged_at_its_tip(tmp_path: Path) -> None:
    work = history(tmp_path)
    assert memgit("init", "--adopt", str(work)).returncode == 0  # the tip becomes a drive
    server = tmp_path / "server.git"
    made = memgit("init", "--bare", "--empty", str(server))
    assert made.returncode == 0, made.stderr
    assert git("for-each-ref", cwd=server).stdout == b""
    code, out = push(work, server)
    assert code == 0, out
    assert "memgit: note: first push to an empty drive" in out
    tip = git("rev-parse", "main", cwd=work).stdout
    assert git("rev-parse", "main", cwd=server).stdout == tip
    assert git("rev-list", "--count", "main", cwd=server).stdout.strip() == b"5"
    # agents take it from there: the index has it, and later pushes meet every rule
    wait_for_background(server)
    assert recall(open_drive(server), "Slack voice memos", 3, count=False)
    agent = tmp_path / "agent"
    assert memgit("clone", server.as_uri(), str(agent)).returncode == 0
    (agent / "system" / "persona.md").write_text(
        (agent / "system" / "persona.md").read_text() + "- wrapped again\n  on two lines\n")
    git("commit", "-q", "--no-verify", "-am", "skip the hook", cwd=agent)
    code, out = push(agent, server)
    assert code != 0 and "MG105 entry-multiline" in out
    assert "first push" not in out


def test_the_old_commits_are_still_checked_for_credentials(tmp_path: Path) -> None:
    work = history(tmp_path, secret_in_the_past=True)
    assert memgit("init", "--adopt", str(work)).returncode == 0
    server = tmp_path / "server.git"
    assert memgit("init", "--bare", "--empty", str(server)).returncode == 0
    code, out = push(work, server)
    assert code != 0 and "pre-receive hook declined" in out
    persona_commit = git("rev-parse", "main~3", cwd=work).stdout.decode()[:10]
    assert f"commit {persona_commit} persona grows" in out
    assert "system/deploy.md:1: MG401 secret" in out and TOKEN not in out
    assert "MG105" not in out and "MG201" not in out and "MG501" not in out
    assert git("for-each-ref", cwd=server).stdout == b""  # nothing landed
    objects = git("cat-file", "--batch-all-objects", "--batch-check", cwd=server).stdout
    assert objects == b""


def test_a_tip_that_fails_the_policy_is_refused_with_the_way_to_adopt(tmp_path: Path) -> None:
    work = history(tmp_path)  # not adopted: no MEMORY.md at the tip
    server = tmp_path / "server.git"
    assert memgit("init", "--bare", "--empty", str(server)).returncode == 0
    code, out = push(work, server)
    assert code != 0
    tip = git("rev-parse", "main", cwd=work).stdout.decode()[:10]
    assert f"commit {tip} tidy up" in out and "MG501 memory-missing" in out
    assert "memgit init --adopt" in out
    assert out.count("MG501") == 1  # the older commits are not judged by it
    # the same history cannot go to a drive made with a first commit of its own
    normal = tmp_path / "normal.git"
    assert memgit("init", "--bare", str(normal)).returncode == 0
    assert memgit("init", "--adopt", str(work)).returncode == 0
    code, out = push(work, normal)
    assert code != 0 and "main" in git("branch", cwd=normal).stdout.decode()
    assert "main:refs/heads/main\t[rejected] (fetch first)" in out  # git's refusal: unrelated
    memory = git("show", "main:MEMORY.md", cwd=normal).stdout.decode()
    assert memory == fmt.initial_memory()
