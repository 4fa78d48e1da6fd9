"""memgit init: create a drive checkout, or a bare server drive with --bare; --adopt makes
an existing memory repository a drive in place."""

from __future__ import annotations

from pathlib import Path

import click

from memgit.cli.common import ctx_directory
from memgit.drives.create import adopt_drive, create_drive
from memgit.errors import UsageError
from memgit.policy.judge import ERROR
from memgit.policy.lint import lint_rev, report_lines, summary
from memgit.policy.settings import drive_policy


@click.command("init")
@click.argument("path", required=False)
@click.option("--bare", is_flag=True, help="Create a bare server drive with the hooks installed.")
@click.option("--adopt", is_flag=True, help="Make the memory repository (or folder) at PATH "
              "a drive in place, keeping its files and history.")
@click.option("--empty", is_flag=True, help="With --bare: no first commit, so the first "
              "push can bring an existing history (its tip judged by every rule).")
@click.option("--title", default="Memory", show_default=True, help="The MEMORY.md heading.")
@click.pass_context
def command(ctx: click.Context, path: str | None, bare: bool, adopt: bool, empty: bool,
            title: str) -> int:
    """Create a drive in PATH (default: the current folder), or adopt one with --adopt."""
    base = Path(ctx_directory(ctx) or ".")
    target = (base / path).absolute() if path else base.absolute()
    if adopt:
        if bare or empty:
            raise UsageError("--adopt takes the repository as it is (bare or not)",
                             "drop --bare and --empty")
        return _adopt(target)
    if empty and not bare:
        raise UsageError("--empty makes a server drive for a first push", "add --bare")
    target = create_drive(target, bare=bare, title=title, empty=empty)
    if empty:
        click.echo(f"Created an empty bare server drive in {target}: push an existing "
                   "history to its branch main (the tip must pass the drive policy; older "
                   "commits are checked for credentials, purged entries and paths)")
        return 0
    kind = "bare server drive" if bare else "drive checkout"
    click.echo(f"Created {kind} in {target} (branch main, MEMORY.md with ## Index)")
    return 0


def _adopt(target: Path) -> int:
    adopted = adopt_drive(target)
    drive = adopted.drive
    what = ("created MEMORY.md with # Memory and ## Index" if adopted.created_memory
            else "regenerated the ## Index of MEMORY.md" if adopted.commit
            else "MEMORY.md and its ## Index were right already")
    commit = f" (commit {adopted.commit[:12]})" if adopted.commit else ""
    click.echo(f"Adopted {drive.root} as a drive on branch {adopted.branch}: {what}{commit}")
    if adopted.branch_note:
        click.echo(f"  {adopted.branch_note}")
    if drive.workdir is None:
        click.echo(f"  install the server hooks: memgit install-hooks --server {drive.root}")
    else:
        click.echo("  installed memgit's pre-commit hook")
    policy = drive_policy(drive)
    violations = lint_rev(drive, f"refs/heads/{adopted.branch}", policy)
    if not violations:
        click.echo("The drive policy finds nothing to fix.")
        return 0
    codes = {v.code for v in violations if v.severity == ERROR}
    click.echo(f"Still failing the drive policy ({summary(violations)}):" if codes else
               f"The drive policy accepts it, with warnings ({summary(violations)}):")
    for line in report_lines(violations):
        click.echo(f"  {line}" if line else "")
    if not codes:
        return 0
    if codes & {"MG201", "MG204"}:
        click.echo("To keep files that are not Markdown, write 'profile: amr' to "
                   f"{drive.git_dir / 'memgit.yaml'} (the plain Agent Memory Repo rules).")
    click.echo("Or bring the memory into a new drive instead, which turns what it can into "
               f"entries: memgit import plan {drive.root} -o plan.json, then memgit -C "
               "NEW_DRIVE import apply plan.json")
    return 1
