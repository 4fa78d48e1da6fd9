"""What several commands share: finding the drive and its policy, printing violations."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import click

from ..policy import ERROR, Policy, Violation, find_policy
from ..repo import Drive, open_drive

policy_option = click.option("--policy", "policy_file", metavar="FILE", default=None,
                             help="Policy YAML file (default: memgit.yaml in the git "
                                  "directory, then git config memgit.policy).")


def ctx_directory(ctx: click.Context) -> str | None:
    obj = ctx.find_root().obj or {}
    return obj.get("directory")


def drive_from_ctx(ctx: click.Context) -> Drive:
    return open_drive(ctx_directory(ctx))


def policy_for(drive: Drive, explicit: str | None) -> Policy:
    return find_policy(explicit, drive.git_dir, drive.config_value("memgit.policy"))


def print_violations(violations: Iterable[Violation], as_json: bool, *,
                     err: bool = False) -> None:
    items = list(violations)
    if as_json:
        click.echo(json.dumps([v.as_dict() for v in items], indent=2, ensure_ascii=False))
        return
    current: str | None = None
    for v in items:  # Violation.format() redacts and escapes what it quotes
        if v.path != current:
            if current is not None:
                click.echo("", err=err)
            current = v.path
        tag = "" if v.severity == ERROR else " (warning)"
        click.echo(v.format().replace(f" {v.name}:", f" {v.name}{tag}:", 1), err=err)
        click.echo(f"  hint: {v.hint}", err=err)


def summary(violations: Iterable[Violation]) -> str:
    items = list(violations)
    errors = sum(1 for v in items if v.severity == ERROR)
    warnings = len(items) - errors
    files = len({v.path for v in items})
    return (f"{errors} error{'s' if errors != 1 else ''}, "
            f"{warnings} warning{'s' if warnings != 1 else ''} in {files} "
            f"file{'s' if files != 1 else ''}")


def report_write(result: Any, as_json: bool) -> int:
    """Print a writer result (text lines or JSON); the exit status the writer gives it."""
    from ..writer import exit_status, result_lines

    if as_json:
        click.echo(json.dumps(result.as_dict(), indent=2, ensure_ascii=False))
    else:
        for line in result_lines(result):
            click.echo(line)
    return exit_status(result)
