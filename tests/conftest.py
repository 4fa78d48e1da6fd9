"""Shared fixtures: an isolated git identity and config, real drives, the memgit CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings

if TYPE_CHECKING:
    from memgit.git.repository import Drive

ROOT = Path(__file__).resolve().parent.parent

pytest_plugins = ["tests.servers"]

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
    # memgit's personal drive (drives.choose) goes under a fresh data folder, never the
    # user's; MEMGIT_DRIVE from the environment would name a drive for every command.
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.delenv("MEMGIT_DRIVE", raising=False)
    yield


def git(*args: str | os.PathLike[str], cwd: Path | str | None = None, check: bool = True,
        input: bytes | None = None, env: Mapping[str, str] | None = None
        ) -> subprocess.CompletedProcess:
    """Run the real git (``env``: variables added to the environment)."""
    proc = subprocess.run(["git", *map(str, args)], cwd=cwd, capture_output=True, input=input,
                          env={**os.environ, **env} if env else None)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(map(str, args))} failed: "
                             f"{proc.stderr.decode(errors='replace')}")
    return proc


def memgit(*args: str, cwd: Path | str | None = None, input: bytes | None = None,
           text: bool = False) -> subprocess.CompletedProcess:
    """Run the real memgit command line in a subprocess."""
    return subprocess.run([sys.executable, "-m", "memgit", *args], cwd=cwd,
                          capture_output=True, input=input, text=text,
                          env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))


def memgit_ok(*args: str, cwd: Path | str | None = None, input: bytes | None = None,
              text: bool = False) -> subprocess.CompletedProcess:
    """:func:`memgit` that must exit 0: a check of its output then means the command ran
    (a command that died prints nothing, and nothing is what an absence check wants)."""
    proc = memgit(*args, cwd=cwd, input=input, text=text)
    assert proc.returncode == 0, (args, _text(proc.stdout), _text(proc.stderr))
    return proc


def memgit_on_terminal(*args: str, cwd: Path | str | None = None
                       ) -> tuple[int, bytes, bytes]:
    """Run the real memgit command line with its stderr on a real pseudo-terminal (stdout
    a file): (exit status, stdout, what the terminal received). The terminal is read while
    the command runs: a bar redrawn thousands of times fills a pty's buffer, and a child
    writing to a full pty waits for a reader."""
    import pty
    import tempfile

    leader, follower = pty.openpty()
    with tempfile.TemporaryFile() as stdout:
        try:
            proc = subprocess.Popen([sys.executable, "-m", "memgit", *args], cwd=cwd,
                                    stdout=stdout, stderr=follower,
                                    env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
            os.close(follower)
            shown = b""
            while True:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # EIO: every writer of the terminal has closed it
                    break
                if not chunk:
                    break
                shown += chunk
            status = proc.wait()
        finally:
            os.close(leader)
        stdout.seek(0)
        return status, stdout.read(), shown


def refused(proc: subprocess.CompletedProcess, code: str, status: int = 2) -> str:
    """Assert that ``proc`` (a memgit run) stopped with exit ``status`` on the error of
    ``code`` (cli.main prints ``memgit: error MGnnn: message``); return its stderr."""
    err = _text(proc.stderr)
    assert proc.returncode == status, (proc.returncode, _text(proc.stdout), err)
    assert f"memgit: error {code}: " in err, err
    return err


def _text(data: bytes | str | None) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else data or ""


# --- drives ---------------------------------------------------------------------------------


def bare_drive(path: Path, title: str = "Memory") -> Drive:
    """A bare drive made in process (pygit2, no hooks): main holds a MEMORY.md."""
    from memgit.format import entries as fmt
    from memgit.git.repository import init_bare, open_drive

    init_bare(path, {"MEMORY.md": fmt.initial_memory(title).encode()}, "Create drive")
    return open_drive(path)


def commit_all(work: Path, message: str = "edit", date: str | None = None) -> str:
    """Make the Index section current, stage everything and commit with plain git,
    bypassing the hooks (as an agent that skips them would); returns the new head."""
    from memgit.format import entries as fmt

    memory = (work / fmt.MEMORY_FILE).read_text()
    paths = [p.relative_to(work).as_posix() for p in work.rglob("*.md") if ".git" not in p.parts]
    (work / fmt.MEMORY_FILE).write_text(fmt.regenerate_index_section(memory, paths))
    git("add", "-A", cwd=work)
    dates = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date} if date else None
    git("commit", "-q", "--no-verify", "-m", message, cwd=work, env=dates)
    return git("rev-parse", "HEAD", cwd=work).stdout.decode().strip()


def entry_ids_at(git_dir: Path, rev: str = "main") -> list[str]:
    """Every entry id in the tree at ``rev``, in path and line order, read with plain git."""
    from memgit.format import entries as fmt

    names = git("ls-tree", "-r", "--name-only", rev, cwd=git_dir).stdout.decode().split()
    ids: list[str] = []
    for name in names:
        text = git("show", f"{rev}:{name}", cwd=git_dir).stdout.decode()
        ids.extend(e.id for _l, e in fmt.parse_document(name, text).entries())
    return ids


def head_entries(path: Path) -> dict[str, tuple[str, str]]:
    """entry id -> (path, line) of the drive's head (a checkout or a bare repository)."""
    from memgit.git.repository import open_drive, tree_texts
    from memgit.sync.replay import entry_map

    drive = open_drive(path)
    head = drive.head_commit()
    assert head is not None
    return entry_map(tree_texts(drive, str(head.tree_id)))


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
    from memgit.drives.create import create_drive
    from memgit.format import entries as fmt

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
                fmt.regenerate_index_section(memory, list(files) + ["MEMORY.md"]))
        if commit and files:
            git("add", "-A", cwd=path)
            git("commit", "-qm", "files", "--no-verify", cwd=path)
        return path

    return make
