"""What several commands share: finding the drive and its policy, printing violations."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from memgit.drives.choose import Chosen
from memgit.git.repository import Drive, open_drive
from memgit.policy.settings import Policy, drive_policy

if TYPE_CHECKING:
    from memgit.policy.judge import Violation

F = TypeVar("F", bound=Callable[..., Any])


def write_output(path: str | os.PathLike[str], text: str, option: str,
                 mode: int | None = None) -> None:
    """Write a command's report to the file an option named (``-o``, ``--output``,
    ``--sarif``): through a temporary file in the same folder and a rename, so a reader
    (node_exporter's textfile collector, a CI step) never sees half a file; a folder that
    does not exist or cannot be written is the user's error, said with the option."""
    import tempfile
    from pathlib import Path

    from memgit.errors import UsageError

    target = Path(path).absolute()
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=str(target.parent))
    except OSError as exc:
        raise UsageError(f"cannot write {target}: {exc.strerror or exc}",
                         f"give {option} a file in a folder that exists and you may write "
                         "to") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise UsageError(f"cannot write {target}: {exc.strerror or exc}",
                             f"give {option} a writable file (not a folder)") from exc
        raise


def shared_options(command: str) -> Callable[[F], F]:
    """The click options of ``command`` built from cli.options.SHARED, the table the quick
    path parses with: one definition of each option for both paths."""
    from memgit.cli.options import SHARED, TEXT

    def decorate(fn: F) -> F:
        for option in reversed(SHARED[command]):
            kwargs: dict[str, Any] = {"help": option.help, "metavar": option.metavar}
            if option.is_flag:
                kwargs.update(is_flag=True, default=False)
            else:
                takes = option.takes
                kwargs["default"] = option.default
                kwargs["show_default"] = option.default is not None
                if takes != TEXT and len(takes) == 2 and all(isinstance(t, int) for t in takes):
                    kwargs["type"] = click.IntRange(*takes)
                elif takes != TEXT:
                    kwargs["type"] = click.Choice(takes)
            fn = click.option(*option.flags, option.dest, **kwargs)(fn)
        return fn
    return decorate


policy_option = click.option("--policy", "policy_file", metavar="FILE", default=None,
                             help="Policy YAML file (default: memgit.yaml in the git "
                                  "directory, then git config memgit.policy).")


def ctx_directory(ctx: click.Context) -> str | None:
    obj = ctx.find_root().obj or {}
    return obj.get("directory")


# The commands that change a drive or judge the folder's repository (lint, check, gate):
# run in a git repository that is not a drive, they refuse rather than fall back to the
# personal drive (drives.choose). The others (reads, the agent tools) fall back everywhere.
WRITES = frozenset({"remember", "forget", "edit", "ask", "answer", "resolve", "compact",
                    "dream", "import", "maintain", "mount", "sync", "backup", "check",
                    "gate", "lint", "set", "unset", "approve", "reject"})
# The commands that judge the folder they run in: never the personal drive, so that outside
# any drive they say what the folder is (MG002) instead of judging another drive.
JUDGES = frozenset({"check", "gate", "lint"})
# The commands that report on "the drive" as a whole: falling back to the personal drive
# inside a repository that is not one, they say which drive they report on (their output
# alone would read as the repository's).
REPORTS = frozenset({"status", "audit"})


def command_name(ctx: click.Context) -> str:
    """The memgit command being run (``mount`` for ``memgit mount add``)."""
    while ctx.parent is not None and ctx.parent.parent is not None:
        ctx = ctx.parent
    return ctx.info_name or ""


def choose_drive(ctx: click.Context) -> Chosen:
    """The drive this command works on (drives.choose), kept in the context for ``memgit
    info``; the personal drive is created on first use, with one line on stderr."""
    from memgit.drives.choose import (
        Chosen,
        choose,
        created_line,
        ensure_personal,
        fallback_note,
        refuse_write,
        repository_verdict,
    )

    chosen = choose(ctx_directory(ctx), None, repository_verdict)
    if chosen.personal and command_name(ctx) in JUDGES:
        chosen = Chosen(os.getcwd(), "the current folder (a judging command)")
    if command_name(ctx) in WRITES:
        refuse_write(chosen)
    if ensure_personal(chosen):
        click.echo(created_line(chosen.path), err=True)
    if command_name(ctx) in REPORTS and fallback_note(chosen):
        click.echo(fallback_note(chosen), err=True)
    (ctx.find_root().obj or {})["chosen"] = chosen
    return chosen


def drive_from_ctx(ctx: click.Context) -> Drive:
    return open_drive(choose_drive(ctx).path)


def policy_for(drive: Drive, explicit: str | None) -> Policy:
    return drive_policy(drive, explicit)


def print_violations(violations: Iterable[Violation], as_json: bool, *,
                     err: bool = False, policy: Policy | None = None) -> None:
    """Text or JSON; paths and messages quoted with ``policy``'s secret rules."""
    items = list(violations)
    if as_json:
        click.echo(json.dumps([v.as_dict(policy) for v in items], indent=2,
                              ensure_ascii=False))
        return
    from memgit.policy.lint import report_lines  # here: most commands print no violations

    for line in report_lines(items, policy):
        click.echo(line, err=err)


def report_write(result: Any, as_json: bool) -> int:
    """Print a writer result (text lines or JSON); the exit status the writer gives it."""
    from memgit.write.ops import exit_status, result_lines

    if as_json:
        click.echo(json.dumps(result.as_dict(), indent=2, ensure_ascii=False))
    else:
        for line in result_lines(result):
            click.echo(line)
    return exit_status(result)


class ProgressBar:
    """Progress of long work on stderr, shown on a terminal only: a bar per phase. Without a
    terminal (a pipe, a log, an agent's tool call) and under ``quiet`` (``--json``) it prints
    nothing, so what a script captures is the command's output alone. Called as
    ``(phase, done, total)``."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet or not sys.stderr.isatty()
        self.phase = ""

    def __call__(self, phase: str, done: int, total: int) -> None:
        if self.quiet:
            return
        if phase != self.phase:
            if self.phase:
                click.echo("", err=True)
            self.phase = phase
        if total <= 0:
            click.echo(f"\r{phase}: {done}", err=True, nl=False)
            return
        filled = done * 30 // total
        click.echo(f"\r{phase:<18} [{'#' * filled}{'.' * (30 - filled)}] {done}/{total}",
                   err=True, nl=False)

    def end(self) -> None:
        if self.phase and not self.quiet:
            click.echo("", err=True)
        self.phase = ""


def scope_options(fn: F) -> F:
    """``--agent`` and ``--team`` of the working memory commands (memgit set, get, unset,
    keys); their defaults come from ``working.store.resolve_scope``."""
    fn = click.option("--team", default=None, metavar="NAME",
                      help="The agent's team (default: $MEMGIT_TEAM, git config "
                           "memgit.team, none).")(fn)
    return click.option("--agent", default=None, metavar="NAME",
                        help="Whose working memory (default: $MEMGIT_AGENT, git config "
                             "memgit.agent, else 'default').")(fn)
