"""memgit audit judges what history records besides its files' lines (commit and tag
messages and people, the names of paths and refs) with the rules pre-receive and memgit
check apply, says how to fix each (git's way where memgit has no command) and never shows
the credential. Real repositories, the real command line, a generated GitHub-shaped
token (never a real one)."""

from __future__ import annotations

import json
import secrets
import string
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import git, memgit, memgit_ok

ALNUM = string.ascii_letters + string.digits


def _token() -> str:
    return "ghp_" + "".join(secrets.choice(ALNUM) for _ in range(36))


def _audit(path: Path, token: str) -> tuple[int, dict[str, Any]]:
    """The audit's exit status and JSON report, its text output checked for ``token``."""
    text = memgit("-C", str(path), "audit")
    as_json = memgit("-C", str(path), "audit", "--json")
    for proc in (text, as_json):
        assert token not in proc.stdout.decode() + proc.stderr.decode()
    assert text.returncode == as_json.returncode
    return as_json.returncode, json.loads(as_json.stdout)


def _commit(path: Path, message: str) -> str:
    git("add", "-A", cwd=path)
    git("commit", "-qm", message, "--no-verify", cwd=path)
    return git("rev-parse", "HEAD", cwd=path).stdout.decode().strip()


def _secret_findings(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["check"] == "secret"]


def test_a_token_in_a_commit_subject_outlives_the_purge_and_audit_says_so(
        new_drive: Any) -> None:
    token = _token()
    path = new_drive({"notes.md": "# Notes\n"})
    with (path / "notes.md").open("a") as f:
        f.write(f"- The bot deploys with {token} [source: codex:session/1; "
                "added: 2026-11-01]\n")
    _commit(path, f"add {token} to notes")
    status, report = _audit(path, token)
    found = _secret_findings(report)
    assert status == 1 and len(found) == 2, found
    (entry,) = [f for f in found if f["ids"]]
    assert entry["fix"].startswith(f"memgit purge {entry['ids'][0]}")
    memgit_ok("-C", str(path), "purge", entry["ids"][0], "--yes")
    head = git("rev-parse", "HEAD", cwd=path).stdout.decode().strip()
    assert token in git("log", "-1", "--format=%s", cwd=path).stdout.decode()

    status, report = _audit(path, token)
    (left,) = report["findings"]
    assert status == 1 and left["level"] == "error" and left["commit"] == head
    assert "MG403" in left["message"] and "commit message" in left["message"]
    assert "no memgit command" in left["fix"] and "--replace-message" in left["fix"]
    check = memgit("-C", str(path), "check", f"{head}^..{head}")
    assert check.returncode == 1 and "MG403" in check.stdout.decode()

    # the fix the audit suggests, done as it says: then nothing is left
    (path.parent / "expressions").write_text("regex:ghp_[A-Za-z0-9]{36}==>[redacted]\n")
    subprocess.run([sys.executable, "-m", "git_filter_repo", "--force", "--quiet",
                    "--replace-message", str(path.parent / "expressions")],
                   cwd=path, check=True, capture_output=True)
    status, report = _audit(path, token)
    assert status == 0 and report["findings"] == []


def test_people_tags_paths_and_refs_are_judged_too(new_drive: Any) -> None:
    token = _token()
    path = new_drive({"notes.md": "# Notes\n"})
    (path / "folder").mkdir()
    (path / "folder" / f"{token}.md").write_text("# Kept\n")
    _commit(path, "a file whose name holds it")
    git("rm", "-q", f"folder/{token}.md", cwd=path)
    git("commit", "-qm", "gone from the head", "--no-verify", cwd=path,
        env={"GIT_COMMITTER_NAME": token})
    git("tag", "-a", "v1", "-m", f"release {token}", cwd=path)
    git("update-ref", f"refs/heads/{token}", "HEAD", cwd=path)

    status, report = _audit(path, token)
    found = _secret_findings(report)
    assert status == 1
    assert {f["message"].split(" ")[0] for f in found} == {"commit", "tag", "path", "ref"}
    people = [f for f in found if "committer name" in f["message"]]
    assert len(people) == 1 and "--mailmap" in people[0]["fix"]
    tag = [f for f in found if f["message"].startswith("tag ")]
    assert len(tag) == 1 and "line 1 of the commit message" in tag[0]["message"]
    named = [f for f in found if f["message"].startswith("path ")]
    assert len(named) == 1 and named[0]["path"].startswith("folder/<redacted")
    assert "--path-rename" in named[0]["fix"]
    ref = [f for f in found if f["message"].startswith("ref ")]
    assert len(ref) == 1 and "git update-ref -d" in ref[0]["fix"]
    assert all(f["level"] == "error" for f in found)


def test_the_same_rules_as_memgit_check(new_drive: Any) -> None:
    """A commit check accepts is no finding (memgit's own commits, a clean message), and
    every commit check refuses for its message is one."""
    token = _token()
    path = new_drive({"notes.md": "# Notes\n"})
    memgit_ok("-C", str(path), "remember", "The staging host is slow on Mondays",
              "--source", "codex:session/2", "--topic", "notes")
    base = git("rev-parse", "HEAD", cwd=path).stdout.decode().strip()
    status, report = _audit(path, token)
    assert status == 0 and _secret_findings(report) == []
    (path / "notes.md").write_text("# Notes\n")
    bad = _commit(path, f"clean up\n\nthe old key was {token}")
    check = memgit("-C", str(path), "check", f"{base}..{bad}")
    assert check.returncode == 1 and "line 3 of the commit message" in check.stdout.decode()
    status, report = _audit(path, token)
    (found,) = _secret_findings(report)
    assert status == 1 and found["commit"] == bad
    assert "line 3 of the commit message" in found["message"]


def test_a_token_in_another_commit_header_is_found(new_drive: Any) -> None:
    """A header git does not know (and a gpgsig block) is carried by every clone: audit
    judges a commit's other headers as pre-receive does (hostile sweep, branch hostile42)."""
    token = _token()
    path = new_drive({"notes.md": "# Notes\n"})
    raw = git("cat-file", "commit", "HEAD", cwd=path).stdout.decode()
    head, _sep, message = raw.partition("\n\n")
    new = git("hash-object", "-t", "commit", "-w", "--stdin", "--literally", cwd=path,
              input=f"{head}\nx-deploy {token}\n\n{message}".encode()).stdout.decode().strip()
    git("update-ref", "refs/heads/main", new, cwd=path)
    status, report = _audit(path, token)
    found = _secret_findings(report)
    assert status == 1
    assert any("the unknown header holds a possible credential" in f["message"] for f in found)
