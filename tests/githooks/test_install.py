"""Installing the server hooks: memgit init --bare, memgit install-hooks --server / --check,
chaining a foreign hook, and hooks that run in the bare environment servers give them."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memgit.githooks import install as hooks
from tests.conftest import ROOT
from tests.conftest import memgit as run_memgit
from tests.receive_support import MAIN, Drive, base_files, entry, git, people_text, ulid_like

memgit = functools.partial(run_memgit, text=True)


def bare(path: Path) -> Path:
    git("init", "-q", "--bare", "--initial-branch=main", path)
    return path


def test_init_bare_installs_hooks_and_git_defences(tmp_path: Path) -> None:
    proc = memgit("init", "--bare", str(tmp_path / "d.git"))
    assert proc.returncode == 0, proc.stderr
    git_dir = tmp_path / "d.git"
    for name in hooks.HOOKS:
        script = git_dir / "hooks" / name
        assert os.access(script, os.X_OK)
        text = script.read_text()
        assert f"# memgit-hook: {name} {hooks.HOOK_VERSION}" in text
        assert hooks.recorded_command(text)[:3] == [sys.executable, "-I", "-S"]
    for key, value in hooks.SERVER_CONFIG.items():
        assert git("config", "--get", key, cwd=git_dir).stdout.decode().strip() == value
    check = memgit("install-hooks", "--check", str(git_dir))
    assert check.returncode == 0, check.stdout + check.stderr
    assert ": ok (hooks current" in check.stdout


def test_install_hooks_into_existing_repositories(tmp_path: Path) -> None:
    repos = [bare(tmp_path / "a.git"), bare(tmp_path / "b.git")]
    check = memgit("install-hooks", "--check", *map(str, repos))
    assert check.returncode == 1
    assert "pre-receive: missing" in check.stdout
    assert "receive.fsckObjects is unset, should be true" in check.stdout
    proc = memgit("install-hooks", "--server", *map(str, repos))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("installed pre-receive, post-receive") == 2
    first = (repos[0] / "hooks" / "pre-receive").read_text()
    assert memgit("install-hooks", "--server", str(repos[0])).returncode == 0  # idempotent
    assert (repos[0] / "hooks" / "pre-receive").read_text() == first
    assert memgit("install-hooks", "--check", *map(str, repos)).returncode == 0


def test_install_refuses_a_checkout_and_a_non_repository(tmp_path: Path) -> None:
    git("init", "-q", tmp_path / "work")
    proc = memgit("install-hooks", "--server", str(tmp_path / "work"))
    assert proc.returncode == 2
    assert "is not a bare repository" in proc.stderr
    assert "memgit: error MG001: " in proc.stderr
    (tmp_path / "plain").mkdir()
    proc = memgit("install-hooks", "--server", str(tmp_path / "plain"))
    assert proc.returncode == 2
    assert "is not a git repository" in proc.stderr
    assert "memgit: error MG001: " in proc.stderr
    proc = memgit("install-hooks", str(tmp_path / "plain"))
    assert proc.returncode == 2 and "--server installs, --check reports" in proc.stderr
    assert "memgit: error MG001: " in proc.stderr


FOREIGN = """#!/bin/sh
# the site's own hook
cat > "$(dirname "$0")/../foreign-stdin"
echo "foreign hook ran" >&2
exit ${FOREIGN_EXIT:-0}
"""


def test_a_foreign_hook_is_never_overwritten_silently(tmp_path: Path) -> None:
    repo = bare(tmp_path / "r.git")
    hook = repo / "hooks" / "pre-receive"
    hook.write_text(FOREIGN)
    hook.chmod(0o755)
    proc = memgit("install-hooks", "--server", str(repo))
    assert proc.returncode != 0
    assert "exists and was not written by memgit" in proc.stderr
    assert "--chain" in proc.stderr
    assert hook.read_text() == FOREIGN
    assert not (repo / "hooks" / "post-receive").exists()  # nothing half-installed
    assert "memgit: error MG008: " in proc.stderr and proc.returncode == 2
    check = memgit("install-hooks", "--check", str(repo))
    assert check.returncode == 1, check.stderr
    assert "pre-receive: foreign (not written by memgit)" in check.stdout


def test_chain_runs_the_foreign_hook_after_memgit(tmp_path: Path) -> None:
    drive = Drive(tmp_path, files=base_files())
    hook = drive.git_dir / "hooks" / "pre-receive"
    hook.unlink()
    hook.write_text(FOREIGN)
    hook.chmod(0o755)
    proc = memgit("install-hooks", "--server", "--chain", str(drive.git_dir))
    assert proc.returncode == 0, proc.stderr
    assert "chained: pre-receive" in proc.stdout
    chained = drive.git_dir / "hooks" / "pre-receive.memgit-chained"
    assert chained.read_text() == FOREIGN
    assert memgit("install-hooks", "--check", str(drive.git_dir)).returncode == 0
    # reinstalling without --chain keeps the chain
    assert memgit("install-hooks", "--server", str(drive.git_dir)).returncode == 0
    assert '--chain "$0.memgit-chained"' in hook.read_text()
    # a good push: memgit accepts, then the foreign hook sees the same stdin
    good = drive.build(({"people.md": people_text(entry("chained", ulid_like(7)))}, "good"))
    result = drive.push("refs/heads/work")
    assert result.returncode == 0, result.stderr
    assert "foreign hook ran" in result.stderr
    stdin = (drive.git_dir / "foreign-stdin").read_text()
    assert stdin.endswith(f"{good[0]} {MAIN}\n")
    # the foreign hook can still refuse
    (drive.git_dir / "foreign-stdin").unlink()
    more = drive.build(({"people.md": people_text(entry("again", ulid_like(8)))}, "more"))
    result = drive.push("refs/heads/work", env={"FOREIGN_EXIT": "1"})
    assert result.refused_by_hook
    assert "foreign hook ran" in result.stderr and not result.codes()  # it refused, not memgit
    assert drive.main() == good[0] != more[0]
    # a bad push: memgit refuses and the foreign hook does not run
    (drive.git_dir / "foreign-stdin").unlink()
    drive.build(({"notes.txt": "x\n"}, "bad"))
    result = drive.push("refs/heads/work")
    assert result.refused_by_hook and "MG201" in result.codes()
    assert "foreign hook ran" not in result.stderr
    assert not (drive.git_dir / "foreign-stdin").exists()


def test_check_reports_outdated_broken_and_not_executable_hooks(tmp_path: Path) -> None:
    drive = Drive(tmp_path)
    pre = drive.git_dir / "hooks" / "pre-receive"
    post = drive.git_dir / "hooks" / "post-receive"
    pre.write_text(pre.read_text().replace(" -I -S ", " -I -S -B "))
    post.chmod(0o644)
    status = hooks.server_status(drive.git_dir)
    states = {h.name: h.state for h in status.hooks}
    assert states == {"pre-receive": "outdated", "post-receive": "not-executable"}
    assert not status.ok
    pre.write_text(pre.read_text().replace(sys.executable, "/nonexistent/python3"))
    status = hooks.server_status(drive.git_dir)
    broken = next(h for h in status.hooks if h.name == "pre-receive")
    assert broken.state == "broken"
    assert "cannot run memgit" in broken.detail
    git("config", "receive.denyDeletes", "false", cwd=drive.git_dir)
    proc = memgit("install-hooks", "--check", str(drive.git_dir))
    assert proc.returncode == 1
    assert "receive.denyDeletes is false, should be true" in proc.stdout
    assert memgit("install-hooks", "--server", str(drive.git_dir)).returncode == 0
    assert hooks.server_status(drive.git_dir).ok


def test_ref_lock_timeouts_are_set_and_a_longer_one_is_kept(tmp_path: Path) -> None:
    """init --bare sets git's ref lock timeouts; --check flags a shorter one (git's 100 ms
    default makes concurrent pushes fail at once) and keeps an admin's longer one."""
    git_dir = tmp_path / "d.git"
    assert memgit("init", "--bare", str(git_dir)).returncode == 0
    git("config", "core.filesRefLockTimeout", "100", cwd=git_dir)
    git("config", "core.packedRefsTimeout", "-1", cwd=git_dir)  # wait forever: fine
    proc = memgit("install-hooks", "--check", str(git_dir))
    assert proc.returncode == 1
    assert proc.stdout.count("should be") == 1
    assert "core.filesRefLockTimeout is 100, should be 10000 or more" in proc.stdout
    git("config", "core.filesRefLockTimeout", "30000", cwd=git_dir)
    assert memgit("install-hooks", "--check", str(git_dir)).returncode == 0
    assert memgit("install-hooks", "--server", str(git_dir)).returncode == 0
    got = {key: git("config", "--get", key, cwd=git_dir).stdout.decode().strip()
           for key in ("core.filesRefLockTimeout", "core.packedRefsTimeout")}
    assert got == {"core.filesRefLockTimeout": "30000", "core.packedRefsTimeout": "-1"}


@pytest.mark.parametrize(("version", "call"), [
    (2, "from memgit.server_hook import hook_main; sys.exit(hook_main())"),
    (3, "from memgit.githooks.entry import hook_main; sys.exit(hook_main())"),
    (4, "from memgit.githooks.entry import exit_now, hook_main; exit_now(hook_main())")])
def test_hooks_installed_by_older_versions_still_judge_and_are_named_outdated(
        tmp_path: Path, version: int, call: str) -> None:
    """A server upgraded with pip before its hooks are reinstalled: the scripts of version
    2 call memgit.server_hook, those of version 3 end by sys.exit rather than
    entry.exit_now, those of version 4 do not ask the warm judge; all still judge every
    push; --check names them outdated."""
    drive = Drive(tmp_path, files=base_files())
    for name in hooks.HOOKS:
        script = drive.git_dir / "hooks" / name
        current = (f"{hooks.ASK_CALL}from memgit.githooks.entry import exit_now, hook_main; "
                   f"{hooks.HOOK_CALL}")
        old = script.read_text().replace(current, call).replace(
            f"# memgit-hook: {name} {hooks.HOOK_VERSION}", f"# memgit-hook: {name} {version}")
        assert call in old and current not in old
        script.write_text(old)
    states = {h.name: h.state for h in hooks.server_status(drive.git_dir).hooks}
    assert states == {"pre-receive": "outdated", "post-receive": "outdated"}
    good = drive.build(({"people.md": people_text(entry("kept", ulid_like(9)))}, "good"))
    result = drive.push("refs/heads/work")
    assert result.returncode == 0, result.stderr
    assert drive.main() == good[0]
    drive.build(({"notes.txt": "x\n"}, "bad"))
    result = drive.push("refs/heads/work")
    assert result.refused_by_hook and "MG201" in result.codes()
    assert drive.main() == good[0]


def test_core_hooks_path_is_honoured(tmp_path: Path) -> None:
    repo = bare(tmp_path / "r.git")
    git("config", "core.hooksPath", "custom-hooks", cwd=repo)
    assert memgit("install-hooks", "--server", str(repo)).returncode == 0
    assert (repo / "custom-hooks" / "pre-receive").exists()
    assert not (repo / "hooks" / "pre-receive").exists()


def test_hook_templates_in_the_repository_are_current() -> None:
    for name in hooks.HOOKS:
        path = ROOT / "hooks" / name
        assert path.read_text() == hooks.render_hook(name, None)
        assert os.access(path, os.X_OK)


def test_generic_template_runs_with_memgit_python(tmp_path: Path) -> None:
    """The hooks/ scripts as a Gitea or GitLab admin would copy them."""
    drive = Drive(tmp_path, files=base_files())
    for name in hooks.HOOKS:
        shutil.copy(ROOT / "hooks" / name, drive.git_dir / "hooks" / name)
    drive.build(({"notes.txt": "x\n"}, "bad"))
    result = drive.push("refs/heads/work", env={"MEMGIT_PYTHON": sys.executable})
    assert result.refused_by_hook and "MG201" in result.codes()
    good = drive.build(({"people.md": people_text(entry("ok", ulid_like(501)))}, "good"))
    result = drive.push("refs/heads/work", env={"MEMGIT_PYTHON": sys.executable})
    assert result.returncode == 0, result.stderr
    assert drive.main() == good[0]


def test_hooks_work_in_an_empty_environment(tmp_path: Path) -> None:
    """No PATH, HOME, LANG or PYTHON* variables: what a bare daemon gives a hook."""
    drive = Drive(tmp_path, files=base_files())
    git_exe = shutil.which("git")
    assert git_exe is not None

    def push(src: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([git_exe, "push", "--porcelain", drive.url, f"{src}:{MAIN}"],
                              cwd=drive.client, capture_output=True, text=True,
                              env={"PYTHONPATH": "/nonexistent", "PYTHONHOME": "/nonexistent"})

    drive.build(({"people.md": people_text("- <b>bold</b> [source: imported:unknown]")}, "bad"))
    proc = push("refs/heads/work")
    assert proc.returncode != 0 and "MG303 raw-html" in proc.stderr, proc.stderr
    good = drive.build(({"people.md": people_text("- plain [source: imported:unknown]")},
                        "good"))
    proc = push("refs/heads/work")
    assert proc.returncode == 0, proc.stderr
    assert drive.main() == good[0]
    assert drive.event_counts()["push_accepted"] == 1
    assert drive.event_counts()["push_refused"] == 1


def test_post_receive_chain_and_count(tmp_path: Path) -> None:
    drive = Drive(tmp_path, files=base_files())
    post = drive.git_dir / "hooks" / "post-receive"
    post.unlink()
    post.write_text("#!/bin/sh\ncat > \"$(dirname \"$0\")/../post-stdin\"\n")
    post.chmod(0o755)
    assert memgit("install-hooks", "--server", "--chain", str(drive.git_dir)).returncode == 0
    good = drive.build(({"people.md": people_text(entry("post", ulid_like(502)))}, "good"))
    result = drive.push("refs/heads/work")
    assert result.returncode == 0, result.stderr
    assert (drive.git_dir / "post-stdin").read_text().endswith(f"{good[0]} {MAIN}\n")
    assert drive.event_counts()["push_accepted"] == 1


@pytest.mark.parametrize("name", hooks.HOOKS)
def test_render_quotes_odd_interpreter_paths(name: str) -> None:
    odd = "/opt/my python's/bin/python3"
    script = hooks.render_hook(name, odd, paths=["/src dir/it's", "/site"])
    command = hooks.recorded_command(script)
    assert command is not None
    assert command[0] == odd
    assert '"/src dir/it\'s"' in command[6]
    assert command[7] == name
