"""drives.choose: which drive a command works on, and the personal drive it falls back to."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memgit.drives import choose as ch
from tests.conftest import git, memgit, memgit_ok


def test_the_personal_drive_lives_under_the_xdg_data_folder(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert ch.personal_drive() == str(tmp_path / "xdg" / "memgit" / "drive")
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")  # the XDG rule
    monkeypatch.setenv("HOME", str(tmp_path))
    if os.name == "posix" and os.uname().sysname == "Linux":
        assert ch.personal_drive() == str(tmp_path / ".local" / "share" / "memgit" / "drive")


def test_the_order_is_c_env_folder_project_then_personal(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    verdicts = {str(project / "src"): False, str(tmp_path / "drive"): True}

    def verdict(folder: str) -> bool | None:
        return verdicts.get(folder)

    assert ch.choose("/c", str(project), verdict).why == "named with -C"
    monkeypatch.setenv(ch.DRIVE_ENV, "/env")
    assert ch.choose(None, str(project), verdict).path == "/env"
    monkeypatch.delenv(ch.DRIVE_ENV)
    assert ch.choose(None, str(tmp_path / "drive"), verdict).path == str(tmp_path / "drive")
    fallback = ch.choose(None, str(project / "src"), verdict)
    assert fallback.personal and fallback.passed_over == str(project / "src")
    (project / ".memgit").mkdir()
    (project / ".memgit" / "drive").write_text("# the team's drive\n\n../team\n")
    named = ch.choose(None, str(project / "src"), verdict)
    assert named.path == str(tmp_path / "team") and not named.personal
    assert named.why.endswith(str(project / ".memgit" / "drive"))


def test_outside_git_the_personal_drive_is_made_once_with_one_line(tmp_path: Path) -> None:
    first = memgit("remember", "Joe leads payments", cwd=tmp_path, text=True)
    assert first.returncode == 0, first.stderr
    where = ch.personal_drive()
    assert first.stderr.count("created your personal drive") == 1 and where in first.stderr
    again = memgit_ok("recall", "payments", cwd=tmp_path, text=True)
    assert "Joe leads payments" in again.stdout and "created" not in again.stderr
    assert git("status", "--porcelain", cwd=where).stdout == b""
    assert not [p for p in Path(where).parent.iterdir() if p.name.startswith(".drive-")]


def test_in_a_code_repository_writes_refuse_and_reads_fall_back(tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    git("init", "-q", cwd=code)
    refused = memgit("remember", "A fact", cwd=code, text=True)
    assert refused.returncode == 2 and "MG002" in refused.stderr
    assert "not a drive" in refused.stderr and "nothing was written" in refused.stderr
    assert not os.path.exists(ch.personal_drive())  # a refused write makes nothing
    memgit_ok("remember", "Ana owns billing", cwd=tmp_path, text=True)  # outside git
    info = memgit_ok("info", cwd=code, text=True).stdout
    assert ch.personal_drive() in info
    assert "is in a git repository that is not a drive" in info
    quick = memgit_ok("recall", "billing", cwd=code)
    full = subprocess_full("recall", "billing", cwd=code)
    assert quick.stdout == full.stdout and b"Ana owns billing" in quick.stdout
    assert b"not a drive" not in quick.stderr  # a recall from a code project stays quiet
    # a report on "the drive" says which one it is: its lines alone read as the folder's
    note = f"memgit: {code} is not a drive; this is your personal drive at " \
           f"{ch.personal_drive()}"
    for proc in (memgit_ok("status", cwd=code, text=True),
                 subprocess_full("status", "--json", cwd=code),
                 memgit_ok("audit", cwd=code, text=True)):
        err = proc.stderr.decode() if isinstance(proc.stderr, bytes) else proc.stderr
        assert err.startswith(note), err
    assert not memgit_ok("status", cwd=tmp_path, text=True).stderr  # outside git: no note


def test_info_says_why_for_each_way_of_naming(new_drive, tmp_path: Path) -> None:
    drive = new_drive()
    assert "named with -C" in memgit_ok("-C", str(drive), "info", text=True).stdout
    data = memgit_ok("info", "--json", cwd=drive, text=True).stdout
    assert '"why": "the current folder is in it"' in data
    project = tmp_path / "p"
    (project / ".memgit").mkdir(parents=True)
    (project / ".memgit" / "drive").write_text(str(drive) + "\n")
    out = memgit_ok("info", cwd=project, text=True).stdout
    assert str(drive) in out and ".memgit/drive" in out


def subprocess_full(*args: str, cwd: Path):  # type: ignore[no-untyped-def]
    """memgit with the quick path off: the full path's answer."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    return subprocess.run([sys.executable, "-m", "memgit", *args], cwd=cwd,
                          capture_output=True,
                          env=dict(os.environ, MEMGIT_QUICK="0", PYTHONPATH=str(ROOT / "src")))
