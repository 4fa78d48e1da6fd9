"""Shared fixtures: an isolated git identity and config, real drives, the memgit CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent

pytest_plugins = ["servers"]

# CI runs every property test on the same examples (derandomized, no example
# database), so a green run stays green; locally hypothesis explores afresh.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(autouse=True)
def git_isolation(tmp_path_factory: pytest.TempPathFactory,
                  monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No user's or system's git config leaks into a test."""
    home = tmp_path_factory.mktemp("home")
    config = home / ".gitconfig"
    config.write_text("[user]\n\tname = Test Agent\n\temail = agent@example.com\n"
                      "[init]\n\tdefaultBranch = main\n[protocol \"file\"]\n\tallow = always\n"
                      "[advice]\n\tdetachedHead = false\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
                "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_QUARANTINE_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test Agent")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "agent@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test Agent")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "agent@example.com")
    yield


def git(*args: str, cwd: Path | str, check: bool = True,
        input: bytes | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, input=input)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr.decode()}")
    return proc


def memgit(*args: str, cwd: Path | str | None = None,
           input: bytes | None = None) -> subprocess.CompletedProcess:
    """Run the real memgit command line in a subprocess."""
    return subprocess.run([sys.executable, "-m", "memgit", *args], cwd=cwd,
                          capture_output=True, input=input,
                          env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))


def committed_copy(source: Path, dest: Path, message: str = "labelled drive") -> Path:
    """A copy of the folder ``source`` at ``dest``, made a git checkout with one commit."""
    import shutil

    shutil.copytree(source, dest)
    git("init", "-q", "-b", "main", cwd=dest)
    git("add", "-A", cwd=dest)
    git("commit", "-qm", message, cwd=dest)
    return dest


@pytest.fixture
def new_drive(tmp_path: Path):
    """Factory: a real drive checkout holding ``files`` (MEMORY.md's Index made current)."""
    from memgit import format as fmt
    from memgit.commands.init import create_drive

    counter = iter(range(1000))

    def make(files: dict[str, str | bytes] | None = None, *, commit: bool = True,
             index: bool = True) -> Path:
        path = tmp_path / f"drive{next(counter)}"
        create_drive(path, bare=False)
        files = dict(files or {})
        for name, content in files.items():
            full = path / name
            full.parent.mkdir(parents=True, exist_ok=True)
            full.write_bytes(content.encode() if isinstance(content, str) else content)
        if index and "MEMORY.md" not in files:
            memory = (path / "MEMORY.md").read_text()
            (path / "MEMORY.md").write_text(
                fmt.regenerate_index(memory, list(files) + ["MEMORY.md"]))
        if commit and files:
            git("add", "-A", cwd=path)
            git("commit", "-qm", "files", "--no-verify", cwd=path)
        return path

    return make
