"""The newcomer's tour ``memgit demo`` runs, on an embedded default drive.

:func:`run_demo` makes a drive checkout with the pre-commit check as its git pre-commit
hook, commits good entries and shows bad ones refused with their rule codes, then runs the
writing, dream, sync and mount parts and a refusal by the server's pre-receive. It prints
each step and returns the exit status.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import click

from memgit.drives.create import create_drive
from memgit.format import entries as fmt
from memgit.git.plumbing import git

GOOD_PEOPLE = """# People

- Joe leads the product team [source: https://example.com/sessions/100; added: 2026-09-03; id: m-01jd3xk8q7c9v2n4r6t8w0y1z3]
- Priya owns pricing for the billing launch; see [[projects/payments]] [source: claude-code:session/42; added: 2026-09-04; id: m-01jd3xk8q7c9v2n4r6t8w0y1z4]
"""  # noqa: E501
GOOD_PAYMENTS = """# Payments

- Payments and website share a 2026-10-15 launch deadline [source: /?session=102; added: 2026-09-03]
"""

# (title, file, content, make executable, expected code)
BAD_CASES: list[tuple[str, str, str, bool, str]] = [
    ("a credential in an entry", "ops.md",
     "- Staging DB is postgres://app:S3cr3tPassw0rd@db.internal:5432/app "
     "[source: https://example.com/sessions/7; added: 2026-09-05]\n", False, "MG401"),
    ("a javascript: source", "ops.md",
     "- Click here for the dashboard [source: javascript:alert(1); added: 2026-09-05]\n",
     False, "MG101"),
    ("an executable file", "run.md", "- Run this every day [source: imported:unknown]\n",
     True, "MG204"),
    ("a stale ## Index (new topic file not listed)", "forgotten.md",
     "- An unlisted topic [source: imported:unknown]\n", False, "MG502"),
]


def _hook_script() -> str:
    return f"#!/bin/sh\n# memgit demo: the check the memgit-lint pre-commit hook runs\n" \
           f"exec '{sys.executable}' -m memgit.githooks.precommit\n"


def _step(title: str) -> None:
    click.secho(f"\n== {title}", bold=True)


def run_demo(base: Path) -> int:
    """The whole tour in ``base``: ``drive/`` (a checkout) and ``sync/`` (a server, two agents)."""
    target = base / "drive"
    create_drive(target, bare=False, title="Memory: Joe")
    env = dict(os.environ, GIT_AUTHOR_NAME="demo", GIT_AUTHOR_EMAIL="demo@example.com",
               GIT_COMMITTER_NAME="demo", GIT_COMMITTER_EMAIL="demo@example.com")
    hook = target / ".git" / "hooks" / "pre-commit"
    hook.write_text(_hook_script())
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    click.echo(f"Created a drive in {target} with the memgit-lint check as its pre-commit hook.")

    _step("1. Good entries go through")
    (target / "people.md").write_text(GOOD_PEOPLE)
    (target / "projects").mkdir()
    (target / "projects" / "payments.md").write_text(GOOD_PAYMENTS)
    memory = (target / fmt.MEMORY_FILE).read_text()
    paths = ["MEMORY.md", "people.md", "projects/payments.md"]
    (target / fmt.MEMORY_FILE).write_text(fmt.regenerate_index_section(memory, paths))
    git("add", "-A", cwd=target, env=env)
    proc = git("commit", "-q", "-m", "Add people and payments", cwd=target, env=env, check=False)
    ok = proc.returncode == 0
    click.echo("commit accepted" if ok else proc.stderr.decode(errors="replace"))
    click.echo((target / fmt.MEMORY_FILE).read_text())

    caught = 0
    for number, (title, name, content, executable, code) in enumerate(BAD_CASES, start=2):
        _step(f"{number}. A commit with {title} is refused ({code})")
        path = target / name
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(content)
        if executable:
            path.chmod(0o755)
        if code != "MG502" and name not in memory:
            # keep the Index current so only the rule under demonstration fires
            current = (target / fmt.MEMORY_FILE).read_text()
            all_paths = paths + [name]
            (target / fmt.MEMORY_FILE).write_text(fmt.regenerate_index_section(current, all_paths))
        git("add", "-A", cwd=target, env=env)
        proc = git("commit", "-q", "-m", f"Try {title}", cwd=target, env=env, check=False)
        output = (proc.stdout + proc.stderr).decode(errors="replace")
        click.echo(output.rstrip())
        refused = proc.returncode != 0 and code in output
        caught += refused
        click.echo(f"-> {'refused' if refused else 'NOT refused'}")
        # undo the attempt: back to the last good commit
        git("reset", "-q", "--hard", "HEAD", cwd=target, env=env)
        git("clean", "-qfd", cwd=target, env=env)

    _step("Lint of the committed drive")
    proc = git("log", "--oneline", cwd=target, env=env)
    click.echo(proc.stdout.decode().rstrip())
    from memgit.git.repository import open_drive
    from memgit.policy.lint import lint_worktree
    from memgit.policy.settings import Policy

    committed = open_drive(target)
    violations = lint_worktree(committed.git_dir, committed.workdir, Policy())
    click.echo(f"memgit lint: {len(violations)} violations in the committed drive")

    from memgit.demo.writing import demo_writer

    writer_ok = demo_writer(target)

    from memgit.demo.dream import demo_dream

    dream_ok = demo_dream(target)

    from memgit.demo.sync import demo_mount, demo_sync

    sync_dir = base / "sync"
    sync_ok = demo_sync(sync_dir)
    mount_ok = demo_mount(target, sync_dir / "server.git")
    server_ok = _demo_server_refusal(sync_dir / "agent-a", env)
    total = len(BAD_CASES)
    click.secho(f"\nDemo finished: good commit {'accepted' if ok else 'REFUSED'}, "
                f"{caught} of {total} bad commits refused, writer, recall and board "
                f"{'worked' if writer_ok else 'FAILED'}, dream dry run and undo "
                f"{'shown' if dream_ok else 'FAILED'}, offline sync "
                f"{'converged' if sync_ok else 'FAILED'}, recall across a mount "
                f"{'shown' if mount_ok else 'FAILED'}, server refusal "
                f"{'shown' if server_ok else 'FAILED'}. Folder: {base}", bold=True)
    return 0 if ok and caught == total and not violations and writer_ok and dream_ok \
        and sync_ok and mount_ok and server_ok else 1


def _demo_server_refusal(agent: Path, env: dict[str, str]) -> bool:
    """A commit that skipped the local hook (--no-verify) is refused by the server's pre-receive."""
    _step("Server: pre-receive refuses what a checkout let through (git commit --no-verify)")
    with open(agent / "notes.md", "a", encoding="utf-8") as fh:
        fh.write("- Admin console [source: file:///etc/shadow]\n")
    git("add", "-A", cwd=agent, env=env)
    git("commit", "-q", "--no-verify", "-m", "Bypass the local hook", cwd=agent, env=env)
    before = git("ls-remote", "origin", "refs/heads/main", cwd=agent, env=env).stdout
    proc = git("push", "--porcelain", "origin", "main", cwd=agent, env=env, check=False)
    output = (proc.stderr + proc.stdout).decode(errors="replace")
    click.echo(output.rstrip())
    after = git("ls-remote", "origin", "refs/heads/main", cwd=agent, env=env).stdout
    git("reset", "-q", "--hard", "HEAD~1", cwd=agent, env=env)
    refused = proc.returncode != 0 and "MG101" in output and before == after
    click.echo("-> refused; the server's main did not move" if refused else "-> NOT refused")
    return refused
