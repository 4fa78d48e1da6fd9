"""The hooks of .pre-commit-hooks.yaml, installed and run by the real pre-commit framework."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT, git

pytestmark = pytest.mark.skipif(
    shutil.which("pre-commit") is None,
    reason="pre-commit is not installed (pip install -e '.[test]')")


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """This project as it is now (committed or not), as a git repo at one commit.

    pre-commit clones hook repositories at a rev, so the working state is
    copied into a fresh repository and committed, as ``pre-commit try-repo`` does.
    """
    repo = tmp_path_factory.mktemp("hookrepo")
    listed = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.split(b"\0")
    for raw in listed:
        if not raw:
            continue
        rel = raw.decode()
        src = ROOT / rel
        if not src.is_file() or rel.startswith("tests/"):
            continue
        dst = repo / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(src.read_bytes())
        dst.chmod(src.stat().st_mode)
    env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_AUTHOR_NAME="t",
               GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "under test"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, env=env, check=True,
                         capture_output=True).stdout.decode().strip()
    return repo, rev


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def checkout(new_drive, hook_repo: tuple[Path, str], pre_commit_home: Path,
             monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PRE_COMMIT_HOME", str(pre_commit_home))
    repo, rev = hook_repo
    d = new_drive()
    (d / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {repo}\n  rev: {rev}\n  hooks:\n"
        "  - id: memgit-index\n  - id: memgit-lint\n")
    # A drive holds Markdown only: the config stays untracked, excluded locally.
    with open(d / ".git" / "info" / "exclude", "a") as fh:
        fh.write(".pre-commit-config.yaml\n")
    proc = subprocess.run(["pre-commit", "install"], cwd=d, capture_output=True)
    assert proc.returncode == 0, proc.stderr
    return d


def commit(d: Path, message: str) -> subprocess.CompletedProcess:
    git("add", "-A", cwd=d)
    return git("commit", "-m", message, cwd=d, check=False)


def index_for(d: Path, *paths: str) -> None:
    from memgit.format import entries as fmt

    memory = (d / "MEMORY.md").read_text()
    (d / "MEMORY.md").write_text(fmt.regenerate_index_section(memory, ["MEMORY.md", *paths]))


def test_clean_commit_goes_through(checkout: Path) -> None:
    (checkout / "people.md").write_text("- Joe leads the product team "
                                        "[source: https://example.com/sessions/100]\n")
    index_for(checkout, "people.md")
    proc = commit(checkout, "add people")
    assert proc.returncode == 0, proc.stdout.decode() + proc.stderr.decode()
    assert git("log", "--oneline", cwd=checkout).stdout.count(b"\n") == 2


@pytest.mark.parametrize("name,content,executable,code", [
    ("ops.md", "- DB is postgres://app:Sup3rS3cretPw@db.internal/app\n", False, "MG401"),
    ("ops.md", "- Dashboard [source: javascript:alert(1)]\n", False, "MG101"),
    ("run.md", "- run it [source: imported:unknown]\n", True, "MG204"),
])
def test_bad_commit_is_refused_with_its_code(checkout: Path, name: str, content: str,
                                             executable: bool, code: str) -> None:
    (checkout / name).write_text(content)
    if executable:
        (checkout / name).chmod(0o755)
    index_for(checkout, name)
    head = git("rev-parse", "HEAD", cwd=checkout).stdout
    proc = commit(checkout, "bad")
    output = proc.stdout.decode() + proc.stderr.decode()
    assert proc.returncode != 0 and code in output, output
    assert git("rev-parse", "HEAD", cwd=checkout).stdout == head
    assert "Sup3rS3cretPw" not in output


def test_stale_index_is_rewritten_and_the_commit_fails(checkout: Path) -> None:
    (checkout / "topic.md").write_text("- a new topic [source: imported:unknown]\n")
    proc = commit(checkout, "stale")
    output = proc.stdout.decode() + proc.stderr.decode()
    assert proc.returncode != 0 and "MG502" in output, output
    assert "files were modified by this hook" in output
    assert "- [[topic]]" in (checkout / "MEMORY.md").read_text()
    proc = commit(checkout, "fixed")  # the rewritten Index is staged and goes through
    assert proc.returncode == 0, proc.stdout.decode() + proc.stderr.decode()


def test_commit_all_is_judged_too(checkout: Path) -> None:
    """git commit -a stages into a temporary index (GIT_INDEX_FILE) that the hook must read."""
    (checkout / "people.md").write_text("- Joe [source: https://example.com/s/1]\n")
    index_for(checkout, "people.md")
    assert commit(checkout, "people").returncode == 0
    (checkout / "people.md").write_text("- Joe [source: javascript:alert(1)]\n")
    head = git("rev-parse", "HEAD", cwd=checkout).stdout
    proc = git("commit", "-a", "-m", "sneaky", cwd=checkout, check=False)
    output = proc.stdout.decode() + proc.stderr.decode()
    assert proc.returncode != 0 and "MG101" in output, output
    assert git("rev-parse", "HEAD", cwd=checkout).stdout == head
