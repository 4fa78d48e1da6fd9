"""memgit lint: check a working tree or a commit against the drive policy."""

from __future__ import annotations

import os
from pathlib import Path

import click

from memgit.cli.common import drive_from_ctx, policy_for, policy_option, print_violations
from memgit.errors import UsageError
from memgit.policy.codes import RULES
from memgit.policy.judge import ERROR
from memgit.policy.lint import (
    fix_index_section,
    lint_rev,
    lint_staged,
    lint_worktree,
    relative_paths,
    summary,
)


@click.command("lint")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--rev", default=None, metavar="REV", help="Judge this commit's tree, not the "
              "working tree.")
@click.option("--cached", is_flag=True, help="Judge what is staged (the pre-commit hooks "
              "use this).")
@click.option("--select", "select", multiple=True, metavar="CODE",
              help="Report only these rule codes (repeatable), e.g. --select MG502.")
@click.option("--fix", is_flag=True, help="Regenerate the ## Index of MEMORY.md.")
@click.option("--strict", is_flag=True, help="Treat link and size warnings as errors.")
@click.option("--json", "as_json", is_flag=True, help="Print violations as JSON.")
@policy_option
@click.pass_context
def command(ctx: click.Context, paths: tuple[str, ...], rev: str | None, cached: bool,
            select: tuple[str, ...], fix: bool,
            strict: bool, as_json: bool, policy_file: str | None) -> int:
    """Check a drive against the policy. Exit 0 clean, 1 violations, 2 error."""
    drive = drive_from_ctx(ctx)
    policy = policy_for(drive, policy_file)
    if rev is not None and cached:
        raise UsageError("--rev and --cached name two different trees", "give one of them")
    if rev is not None and fix:
        raise UsageError("--fix works on the working tree, not with --rev",
                         "drop --rev, or drop --fix")
    unknown = [c for c in select if c not in RULES]
    if unknown:
        raise UsageError(f"unknown rule code(s): {', '.join(unknown)}",
                         "see docs/rules.md for the codes")
    fixed = False
    if fix:
        fixed = fix_index_section(drive.workdir)
    if rev is not None:
        violations = lint_rev(drive, rev, policy, strict=strict)
    elif cached:
        if drive.workdir is None:
            raise UsageError("--cached judges a checkout's staged files; a bare repository "
                             "has none", "lint a commit instead: memgit lint --rev main")
        violations = lint_staged(drive.git_dir, drive.workdir, policy, strict=strict)
    else:
        violations = lint_worktree(drive.git_dir, drive.workdir, policy, strict=strict)
    if select:
        violations = [v for v in violations if v.code in select]
    if paths and rev is None:
        assert drive.workdir is not None
        wanted = relative_paths(drive.workdir, paths, Path(os.getcwd()))
        violations = [v for v in violations if v.path in wanted or not v.path
                      or v.path == "MEMORY.md"]
    print_violations(violations, as_json, policy=policy)
    errors = [v for v in violations if v.severity == ERROR]
    if not as_json:
        if fixed:
            click.echo("memgit lint: regenerated the ## Index of MEMORY.md", err=True)
        if violations:
            click.echo(f"\nmemgit lint: {summary(violations)}", err=True)
    return 1 if errors else 0
