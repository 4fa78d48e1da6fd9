"""memgit fork: history copied, a new drive id, the parent recorded; the two diverge; a
parent's later purge reaches the fork through memgit purge --from-registry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memgit.drives.create import create_drive
from memgit.drives.fork import PARENT_COMMIT, PARENT_DRIVE, registry_lines
from memgit.errors import UsageError
from memgit.policy.registry import REGISTRY_FILE
from tests.conftest import commit_all, entry_ids_at, git, memgit, memgit_ok, refused

SECRET_TEXT = "The vault PIN is kept by Marta in the blue binder"


def parent_drive(tmp_path: Path) -> Path:
    bare = create_drive(tmp_path / "parent.git", bare=True)
    (bare / "memgit.yaml").write_text("kind: project\n")
    work = tmp_path / "parent-work"
    git("clone", "-q", str(bare), str(work))
    for i, text in enumerate(("Builds run on the Lyra cluster", SECRET_TEXT,
                              "The release train leaves on Tuesdays")):
        (work / "notes.md").write_text((work / "notes.md").read_text() if i else "# Notes\n\n")
        with open(work / "notes.md", "a") as fh:
            fh.write(f"- {text} [source: claude-code:session/{i}; id: m-p{i}]\n")
        commit_all(work, f"fact {i}")
    git("push", "-q", "origin", "main", cwd=work)
    return bare


def commits(git_dir: Path, rev: str = "main") -> list[str]:
    return git("rev-list", rev, cwd=git_dir).stdout.decode().split()


def test_a_fork_copies_history_and_diverges(tmp_path: Path) -> None:
    parent = parent_drive(tmp_path)
    parent_info = json.loads(memgit_ok("info", "--json", cwd=parent).stdout)
    proc = memgit("fork", "--json", str(parent), str(tmp_path / "child.git"), "--bare")
    assert proc.returncode == 0, proc.stderr.decode()
    child = tmp_path / "child.git"
    result = json.loads(proc.stdout)
    assert commits(child) == commits(parent)  # the whole history, the same commits
    info = json.loads(memgit_ok("info", "--json", cwd=child).stdout)
    assert info["drive_id"] == result["drive_id"] != parent_info["drive_id"]
    assert info["drive_id"].startswith("d-")
    assert info["parent"]["drive_id"] == parent_info["drive_id"]
    assert info["parent"]["commit"] == commits(parent)[0] == result["parent_commit"]
    assert info["kind"] == "project" and info["entries"] == 3  # the policy came along
    assert "parent:" in memgit_ok("info", cwd=child).stdout.decode()
    assert git("remote", cwd=child).stdout == b""  # nothing to push back into the parent
    assert (child / "hooks" / "pre-receive").is_file()
    objects = child / "objects"
    copied = [p for p in objects.rglob("*") if p.is_file()]
    assert copied and all(p.stat().st_nlink == 1 for p in copied)  # copies, not hard links
    # diverge: a push to the child does not reach the parent, and the other way round
    work = tmp_path / "child-work"
    assert memgit("clone", str(child), str(work)).returncode == 0
    with open(work / "notes.md", "a") as fh:
        fh.write("- Only the child knows this [source: codex:session/c; id: m-c1]\n")
    commit_all(work, "child fact")
    assert git("push", "-q", "origin", "main", cwd=work, check=False).returncode == 0
    assert "m-c1" in entry_ids_at(child) and "m-c1" not in entry_ids_at(parent)
    parent_work = tmp_path / "parent-work"
    with open(parent_work / "notes.md", "a") as fh:
        fh.write("- Only the parent knows this [source: codex:session/p; id: m-p9]\n")
    commit_all(parent_work, "parent fact")
    git("push", "-q", "origin", "main", cwd=parent_work)
    assert "m-p9" in entry_ids_at(parent) and "m-p9" not in entry_ids_at(child)
    assert git("config", PARENT_COMMIT, cwd=child).stdout.decode().strip() == \
        result["parent_commit"]  # what was copied, not where the parent is now


def test_a_checkout_fork_and_refusals(tmp_path: Path) -> None:
    parent = parent_drive(tmp_path)
    child = tmp_path / "child"
    assert memgit("fork", str(parent), str(child)).returncode == 0
    assert (child / "notes.md").is_file() and git("status", "--porcelain", cwd=child).stdout \
        == b""
    assert (child / ".git" / "hooks" / "pre-commit").is_file()
    wrote = memgit("remember", "--source", "codex:session/x", "A child's own fact", cwd=child)
    assert wrote.returncode == 0
    assert git("config", PARENT_DRIVE, cwd=child).returncode == 0
    again = memgit("fork", str(parent), str(child))
    assert again.returncode == 2 and b"not empty" in again.stderr
    refused(again, "MG001")
    not_drive = tmp_path / "plain"
    not_drive.mkdir()
    plain = memgit("fork", str(not_drive), str(tmp_path / "other"))
    assert plain.returncode == 2 and not (tmp_path / "other").exists()
    assert "is not a git repository, so not a drive" in refused(plain, "MG002")
    assert not [p for p in tmp_path.iterdir() if ".fork-" in p.name]  # no leftovers


def test_a_parents_purge_reaches_the_fork_through_its_registry(tmp_path: Path) -> None:
    parent = parent_drive(tmp_path)
    child = tmp_path / "child.git"
    assert memgit("fork", str(parent), str(child), "--bare").returncode == 0
    # the parent purges an entry after the fork, and one the fork never had
    work = tmp_path / "parent-work"
    with open(work / "notes.md", "a") as fh:
        fh.write("- A later parent fact about the Vega printer [source: codex:session/v; "
                 "id: m-p-late]\n")
    commit_all(work, "late fact")
    git("push", "-q", "origin", "main", cwd=work)
    purged = memgit("purge", "--repo", str(parent), "--yes", "m-p1", "m-p-late")
    assert purged.returncode == 0, purged.stderr.decode()
    assert "m-p1" in entry_ids_at(child)  # a fork keeps what its parent purges later
    dry = memgit("purge", "--from-registry", str(parent), "--dry-run", "--json", cwd=child)
    assert dry.returncode == 0, dry.stderr.decode()
    assert (json.loads(dry.stdout)["purged"], json.loads(dry.stdout)["adopted"]) == \
        (["m-p1"], ["m-p-late"])
    assert "m-p1" in entry_ids_at(child)
    applied = memgit("purge", "--from-registry", str(parent / REGISTRY_FILE), "--yes",
                     "--json", cwd=child)
    assert applied.returncode == 0, applied.stderr.decode()
    data = json.loads(applied.stdout)
    assert data["purged"] == ["m-p1"] and data["adopted"] == ["m-p-late"]
    assert "m-p1" not in entry_ids_at(child)
    objects = git("cat-file", "--batch-all-objects", "--batch", cwd=child).stdout
    assert SECRET_TEXT.encode() not in objects
    assert {i for i, _d, _t in registry_lines(child)} == {"m-p1", "m-p-late"}
    # from now on the fork refuses the purged text, under any id
    work = tmp_path / "child-work"
    assert memgit("clone", str(child), str(work)).returncode == 0
    with open(work / "notes.md", "a") as fh:
        fh.write(f"- {SECRET_TEXT} [source: codex:session/z; id: m-again]\n")
    commit_all(work, "put it back")
    push = git("push", "origin", "main", cwd=work, check=False)
    assert push.returncode != 0 and b"MG607" in push.stderr
    # applying the same registry again finds nothing to do
    again = json.loads(memgit_ok("purge", "--from-registry", str(parent), "--yes", "--json",
                                 cwd=child).stdout)
    assert again["purged"] == [] and again["adopted"] == []


def test_a_bad_registry_is_refused(tmp_path: Path) -> None:
    parent = parent_drive(tmp_path)
    bad = tmp_path / "memgit-purged"
    bad.write_text("not a registry line\n")
    proc = memgit("purge", "--from-registry", str(bad), "--yes", cwd=parent)
    assert proc.returncode == 2 and b"MG005" in proc.stderr
    both = memgit("purge", "--from-registry", str(bad), "--yes", "m-p1", cwd=parent)
    assert both.returncode == 2 and b"not both" in both.stderr
    refused(both, "MG001")
    with pytest.raises(UsageError, match="does not exist"):
        registry_lines(tmp_path / "missing")
