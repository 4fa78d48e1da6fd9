"""memgit init --adopt: real memory repositories and folders made drives in place.

The inputs are the real samples of tests/data/realworld/ (origins in their ORIGIN.md),
committed with plain git the way their owners keep them (a Letta MemFS repository on
master with two commits, a Claude Code folder that is no repository at all, an
OpenClaw workspace whose MEMORY.md has no Index, a Cline memory bank that still fails).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from memgit.format import entries as fmt
from memgit.git.repository import open_drive
from memgit.recall.read_path import recall
from tests.conftest import git, memgit, refused

REALWORLD = Path(__file__).parents[1] / "data" / "realworld"


def repo_of(sample: str, where: Path, branch: str = "master") -> Path:
    """The sample as a git repository on ``branch`` with two commits (a history)."""
    shutil.copytree(REALWORLD / sample, where)
    git("init", "-q", "-b", branch, cwd=where)
    files = sorted(p for p in where.rglob("*") if p.is_file() and ".git" not in p.parts)
    git("add", "--", *map(str, files[:1]), cwd=where)
    git("commit", "-qm", "first note", cwd=where)
    git("add", "-A", cwd=where)
    git("commit", "-qm", "the rest", cwd=where)
    return where


def log(path: Path) -> list[str]:
    return git("log", "--format=%s", cwd=path).stdout.decode().splitlines()


def test_a_letta_repository_on_master_is_adopted_keeping_its_history(tmp_path: Path) -> None:
    path = repo_of("letta/launchmate", tmp_path / "launchmate")
    before = git("rev-parse", "HEAD", cwd=path).stdout.decode().strip()
    proc = memgit("init", "--adopt", str(path))
    out = proc.stdout.decode()
    assert proc.returncode == 0, out + proc.stderr.decode()
    assert "Adopted" in out and "branch master: created MEMORY.md" in out
    assert "wrote 'branch: master'" in out and "git branch -m master main" in out
    assert log(path) == ["Adopt as a memgit drive: create MEMORY.md", "the rest", "first note"]
    assert git("rev-parse", "HEAD~1", cwd=path).stdout.decode().strip() == before
    assert (path / ".git" / "memgit.yaml").read_text() == "branch: master\n"
    memory = (path / "MEMORY.md").read_text()
    assert memory.startswith("# Memory\n\n## Index\n- [[system/human]]\n")
    assert git("status", "--porcelain", cwd=path).stdout == b""
    assert (path / ".git" / "hooks" / "pre-commit").exists()
    # a drive now: lint is clean, recall reads the branch, the writer writes on it
    assert memgit("lint", cwd=path).returncode == 0
    assert recall(open_drive(path), "Supabase client", 3, count=False)
    assert memgit("remember", "Adopted drives keep their history", cwd=path).returncode == 0
    assert log(path)[-2:] == ["the rest", "first note"]
    # adopting again changes nothing
    again = memgit("init", "--adopt", str(path))
    assert again.returncode == 0 and "were right already" in again.stdout.decode()
    assert len(log(path)) == 4


def test_a_folder_that_is_no_repository_becomes_one(tmp_path: Path) -> None:
    path = tmp_path / "episteme"
    shutil.copytree(REALWORLD / "claude-code" / "episteme", path)
    proc = memgit("init", "--adopt", str(path))
    # adopted; two wrapped list items remain to fix (MG105), and it says so
    assert proc.returncode == 1 and proc.stdout.count(b"MG105 entry-multiline") == 2
    assert log(path) == ["Adopt as a memgit drive: regenerate the ## Index of MEMORY.md",
                         "Memory folder as it was (memgit init --adopt)"]
    assert not (path / ".git" / "memgit.yaml").exists()  # main: the default branch
    memory = (path / "MEMORY.md").read_text()
    original = (REALWORLD / "claude-code" / "episteme" / "MEMORY.md").read_text()
    assert memory.startswith(original)  # its own lines kept, the Index appended
    assert "## Index\n- [[browser-setup]]\n" in memory


def test_what_still_fails_is_printed_with_the_way_to_fix_it(tmp_path: Path) -> None:
    path = repo_of("cline/csv-date-expander", tmp_path / "bank", branch="main")
    proc = memgit("init", "--adopt", str(path))
    out = proc.stdout.decode()
    assert proc.returncode == 1
    assert "Still failing the drive policy (23 errors, 4 warnings in 3 files)" in out
    assert "MG105 entry-multiline" in out and "memgit import joins wrapped lines" in out
    assert f"memgit import plan {path} -o plan.json" in out
    assert log(path)[0] == "Adopt as a memgit drive: create MEMORY.md"  # adopted anyway


def test_a_bare_repository_and_a_policy_that_names_its_branch(tmp_path: Path) -> None:
    work = repo_of("openclaw/erbing", tmp_path / "erbing")
    bare = tmp_path / "erbing.git"
    git("clone", "-q", "--bare", str(work), str(bare))
    (bare / "memgit.yaml").write_text("# the admin's policy\nbranch: main\n")
    proc = memgit("init", "--adopt", str(bare))
    out = proc.stdout.decode()
    assert proc.returncode == 0, out + proc.stderr.decode()
    assert "regenerated the ## Index of MEMORY.md" in out  # it had none
    assert "names branch main: change it to 'branch: master'" in out
    assert "memgit install-hooks --server" in out
    assert (bare / "memgit.yaml").read_text() == "# the admin's policy\nbranch: main\n"
    memory = git("show", "master:MEMORY.md", cwd=bare).stdout.decode()
    assert fmt.index_section_is_current(memory, ["MEMORY.md", "memory/2026-03-18.md"])


def test_what_cannot_be_adopted_is_refused_and_left_alone(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = memgit("init", "--adopt", str(empty))
    assert proc.returncode == 2 and "memgit init" in proc.stderr.decode()
    assert "there is no memory to adopt" in refused(proc, "MG001")
    assert not (empty / ".git").exists()
    outer = repo_of("plain/portfolio", tmp_path / "project")
    inner = outer / "notes"
    inner.mkdir()
    (inner / "a.md").write_text("- a note\n")
    proc = memgit("init", "--adopt", str(inner))
    assert proc.returncode == 2 and "inside the repository" in proc.stderr.decode()
    refused(proc, "MG001")
    assert not (inner / ".git").exists()
    head = git("rev-parse", "HEAD", cwd=outer).stdout
    (outer / "MEMORY.md").write_text("# Mine, not committed\n")
    proc = memgit("init", "--adopt", str(outer))
    assert proc.returncode == 2 and "MEMORY.md has uncommitted changes" in proc.stderr.decode()
    refused(proc, "MG001")
    assert git("rev-parse", "HEAD", cwd=outer).stdout == head
    (outer / "MEMORY.md").unlink()
    git("checkout", "-q", "--detach", cwd=outer)
    proc = memgit("init", "--adopt", str(outer))
    assert proc.returncode == 2 and "HEAD is detached" in proc.stderr.decode()
    refused(proc, "MG001")
    assert memgit("init", "--adopt", "--bare", str(outer)).returncode == 2
    bare = memgit("init", "--adopt", "--bare", str(outer))
    assert "--adopt takes the repository as it is" in refused(bare, "MG001")


def test_two_new_drives_never_share_a_drive_id(tmp_path: Path) -> None:
    """The drive id is the first commit's id; one identity creating two drives in one
    second would make the same commit but for the first commit's nonce."""
    from memgit.index.reindex import drive_id

    ids, messages = [], []
    for name, bare in (("a", False), ("b", False), ("c.git", True)):
        memgit("init", *(["--bare"] if bare else []), str(tmp_path / name))
        drive = open_drive(tmp_path / name)
        ids.append(drive_id(drive))
        messages.append(git("log", "-1", "--format=%B", "main", cwd=tmp_path / name).stdout)
    assert len(set(ids)) == 3
    assert len(set(messages)) == 3
    assert all(m.startswith(b"Create drive\n\nDrive-Nonce: ") for m in messages)
    clone = tmp_path / "clone"
    memgit("clone", str(tmp_path / "c.git"), str(clone))
    assert drive_id(open_drive(clone)) == ids[2]
