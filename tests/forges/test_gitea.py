"""memgit's hooks in the layout of Gitea and Forgejo (``install-hooks --layout gitea``).

Gitea writes ``hooks/pre-receive`` and ``hooks/post-receive`` itself: small scripts that
read the push's input once and run every executable regular file of
``hooks/<name>.d/`` with it, all of them, failing when any failed (its own hook is
``hooks/<name>.d/gitea``). The chain runner below does what those scripts do (as read
in go-gitea/gitea, modules/repository/hooks.go; tests/data/forges/ORIGIN.md), and a
stand-in for Gitea's own hook records that it ran.
"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tests.conftest import git
from tests.forges_support import run_memgit
from tests.githooks.test_receive import SECRET
from tests.receive_support import MAIN, base_files, entry, fast_import, ulid_like

CHAIN_RUNNER = """#!/bin/sh
# A stand-in for the hooks/<name> that Gitea and Forgejo write: read the input once,
# run each executable regular file of hooks/<name>.d/ with it, all of them, then exit
# with the first failure's status.
input=$(cat)
name=$(basename "$0")
folder="${GIT_DIR:-$(dirname "$0")/..}/hooks/$name.d"
statuses=""
for script in "$folder"/*; do
  if [ -f "$script" ] && [ -x "$script" ]; then
    printf '%s\\n' "$input" | "$script"
    statuses="$statuses $?"
  fi
done
for status in $statuses; do
  [ "$status" -eq 0 ] || exit "$status"
done
exit 0
"""

FORGE_HOOK = """#!/bin/sh
# stands in for Gitea's own hooks/<name>.d/gitea: records that it ran and its input
cat >> "$(dirname "$0")/../../gitea-{name}.log"
"""


def executable(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


@pytest.fixture
def gitea_repo(tmp_path: Path) -> Path:
    """A bare repository as Gitea lays it out, holding a small drive."""
    repo = tmp_path / "joe" / "memory.git"
    git("init", "-q", "--bare", repo)
    fast_import(repo, None, [(base_files(), "seed")], ref=MAIN)
    for name in ("pre-receive", "post-receive"):
        executable(repo / "hooks" / name, CHAIN_RUNNER)
        executable(repo / "hooks" / f"{name}.d" / "gitea", FORGE_HOOK.format(name=name))
    proc = run_memgit("install-hooks", "--server", "--layout", "gitea", str(repo),
                      cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "installed pre-receive.d/memgit, post-receive.d/memgit" in proc.stdout
    return repo


def push(tmp_path: Path, repo: Path, people_lines: list[str], message: str):
    client = tmp_path / "client"
    if not client.exists():
        git("clone", "-q", repo, client)
    git("pull", "-q", "--ff-only", cwd=client)
    with open(client / "people.md", "a", encoding="utf-8") as fh:
        fh.write("".join(line + "\n" for line in people_lines))
    git("commit", "-q", "-am", message, cwd=client)
    proc = git("push", "--porcelain", "origin", "HEAD:main", cwd=client, check=False)
    if proc.returncode != 0:
        git("reset", "-q", "--hard", "origin/main", cwd=client)
    return proc


def test_memgit_runs_in_gitea_s_chain(gitea_repo: Path, tmp_path: Path) -> None:
    hooks = gitea_repo / "hooks"
    assert (hooks / "pre-receive").read_text() == CHAIN_RUNNER  # Gitea's file untouched
    assert (hooks / "pre-receive.d" / "memgit").read_text().startswith("#!/bin/sh")
    before = git("rev-parse", MAIN, cwd=gitea_repo).stdout
    bad = push(tmp_path, gitea_repo, [entry(f"token {SECRET}", ulid_like(60))], "token")
    err = bad.stderr.decode()
    assert bad.returncode == 1 and "pre-receive hook declined" in bad.stdout.decode()
    assert "MG401 secret" in err and SECRET not in err
    assert git("rev-parse", MAIN, cwd=gitea_repo).stdout == before
    assert "refs/heads/main" in (gitea_repo / "gitea-pre-receive.log").read_text()
    good = push(tmp_path, gitea_repo, [entry("Joe moved to Porto", ulid_like(61))], "good")
    assert good.returncode == 0, good.stderr.decode()
    after = git("rev-parse", MAIN, cwd=gitea_repo).stdout.decode().strip()
    assert after != before.decode().strip()
    assert after in (gitea_repo / "gitea-post-receive.log").read_text()  # both chains ran
    from memgit.githooks.post_receive import wait_for_background
    from memgit.state import events

    assert wait_for_background(gitea_repo)
    assert events.counts(gitea_repo).get("push_accepted") == 1  # memgit's post-receive


def test_check_reinstall_and_a_foreign_file(gitea_repo: Path, tmp_path: Path) -> None:
    check = run_memgit("install-hooks", "--check", "--layout", "gitea", str(gitea_repo),
                       cwd=tmp_path)
    assert check.returncode == 0, check.stdout
    plain = run_memgit("install-hooks", "--check", str(gitea_repo), cwd=tmp_path)
    assert plain.returncode == 1 and "foreign" in plain.stdout  # Gitea's own hooks/<name>
    memgit_hook = gitea_repo / "hooks" / "pre-receive.d" / "memgit"
    text = memgit_hook.read_text()
    again = run_memgit("install-hooks", "--server", "--layout", "gitea", str(gitea_repo),
                       cwd=tmp_path)
    assert again.returncode == 0 and memgit_hook.read_text() == text
    chained = run_memgit("install-hooks", "--server", "--layout", "gitea", "--chain",
                         str(gitea_repo), cwd=tmp_path)
    assert chained.returncode == 2 and "--chain has no meaning" in chained.stderr
    executable(memgit_hook, "#!/bin/sh\nexit 0\n")
    foreign = run_memgit("install-hooks", "--server", "--layout", "gitea", str(gitea_repo),
                         cwd=tmp_path)
    assert foreign.returncode != 0 and "was not written by memgit" in foreign.stderr
    assert memgit_hook.read_text() == "#!/bin/sh\nexit 0\n"
