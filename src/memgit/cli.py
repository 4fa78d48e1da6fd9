"""The click entry point: a thin group; each command lives in commands/<name>.py.

Commands are imported only when they run, so a hook that has nothing to do
starts fast (docs/performance.md).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from .errors import MemgitError

# name -> (module under memgit.commands, short help)
COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("init", "Create a drive checkout (or a bare server drive with --bare)."),
    "lint": ("lint", "Check a drive's working tree or a commit against the policy."),
    "demo": ("demo", "Make a demo drive and show memgit catching bad entries."),
    "hook": ("hook", "Run a server hook (pre-receive, post-receive) for a push."),
    "install-hooks": ("install_hooks", "Install memgit's server hooks into bare repositories."),
    "remember": ("remember", "Add entries to the drive (one commit, compare-and-swap)."),
    "forget": ("forget", "Remove entries by id (history keeps them; see purge)."),
    "edit": ("edit", "Replace an entry's text, keeping its id and metadata."),
    "recall": ("recall", "Find entries by full-text search (BM25)."),
    "index": ("index", "Update or rebuild the drive's index."),
    "info": ("info", "Show head, index, limits use, pending writes and event counts."),
    "metrics": ("metrics", "Print event counters in Prometheus text format."),
    "ask": ("ask", "Post a question on the drive's board (questions.md)."),
    "answer": ("answer", "Answer a question of the board."),
    "resolve": ("resolve", "Mark a question of the board resolved."),
    "purge": ("purge", "Delete entries forever from all of history (admin)."),
    "sync": ("sync", "Replay offline commits onto the server, then take the server's."),
    "clone": ("clone", "Clone a server drive, ready for memgit sync."),
    "status": ("status", "Show commits waiting for memgit sync and the last sync time."),
    "import": ("import_", "Adopt other tools' memory: import plan SOURCE, import apply PLAN."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        spec = COMMANDS.get(cmd_name)
        if spec is None:
            return None
        module = importlib.import_module(f"memgit.commands.{spec[0]}")
        command: click.Command = module.command
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][1]) for name in sorted(COMMANDS)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-C", "directory", metavar="PATH", default=None,
              help="Run as if memgit was started in PATH (like git -C).")
@click.version_option(package_name="memgit")
@click.pass_context
def cli(ctx: click.Context, directory: str | None) -> None:
    """memgit: git hosting for what AI agents remember."""
    ctx.obj = {"directory": directory}


def print_error(err: MemgitError) -> None:
    click.echo(f"memgit: error {err.code}: {err.message}", err=True)
    if err.hint:
        click.echo(f"  hint: {err.hint}", err=True)


def main(argv: list[str] | None = None) -> int:
    try:
        result: Any = cli.main(args=argv, prog_name="memgit", standalone_mode=False)
    except MemgitError as err:
        print_error(err)
        return err.exit_code
    except click.exceptions.Abort:
        click.echo("memgit: aborted", err=True)
        return 130
    except click.ClickException as err:
        err.show()
        return 2 if isinstance(err, click.UsageError) else err.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except BrokenPipeError:
        return 1
    return result if isinstance(result, int) else 0


if __name__ == "__main__":
    sys.exit(main())
