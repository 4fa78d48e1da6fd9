"""The click entry point: a thin group; each command is commands/<name>.py, imported to run.

:func:`main` is the one error handler: a ``MemgitError`` prints its code, message and
hint; anything else ``MG000 internal error`` (the traceback with ``--debug`` or
``MEMGIT_DEBUG=1``). Exit statuses: 0 done, 1 violations (or nothing matched), 2 a usage
or input error, 3 an internal error or a conflict, 130 interrupted.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from memgit.errors import INTERNAL_EXIT, MemgitError, error_lines, internal_error_lines

# name -> (module under memgit.cli.commands, short help)
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
    "context": ("context", "Print the context packet an agent loads at session start."),
    "mcp": ("mcp", "Serve the drive to an agent over MCP (stdio; memgit[mcp])."),
    "install-agent": ("install_agent", "Install an agent integration (claude-code, codex, "
                      "gemini, shell)."),
    "agent-hook": ("agent_hook", "Run an agent hook: session-start, prompt, guard, record."),
    "observe": ("observe", "Keep one turn of a conversation for the next dream."),
    "dream": ("dream", "Consolidate the drive (model or rules, checked in code); undo; status."),
    "maintain": ("maintain", "Housekeeping: retention, the queue, SQLite and git upkeep."),
    "mount": ("mount", "Mount shared drives read-only next to this one (add, list, remove, "
              "sync)."),
    "fork": ("fork", "Copy a drive with its history into a new drive that records its parent."),
    "compact": ("compact", "Remove the entries over the drive's caps (one revertable commit)."),
    "backup": ("backup", "Write a complete, checksummed backup of the drive to one file."),
    "restore": ("restore", "Recreate a working drive from a backup (verified first)."),
    "check": ("check", "Judge a revision range as pre-receive would (CI: text, JSON, SARIF, "
              "GitHub, GitLab)."),
    "gate": ("gate", "Land agents' incoming branches on main after judging them (forge CI)."),
    "serve": ("serve", "Serve every drive under a root over smart HTTP, with tokens, "
              "/metrics and a dashboard (memgit[serve])."),
    "token": ("token", "Access tokens for memgit serve: add, list, revoke."),
    "set": ("set_", "Set a key of the agent's working memory (JSON up to 64 KiB)."),
    "get": ("get", "Print a key of the agent's working memory."),
    "unset": ("unset", "Remove a key from the agent's working memory."),
    "keys": ("keys", "List the keys of the agent's working memory, a page at a time."),
    "fleet": ("fleet", "Every drive under a root: census, find, forget, nightly dreams, index."),
    "review": ("review", "List the proposals waiting for a person (the drive's autonomy rules)."),
    "approve": ("approve", "Approve proposals: they become active entries (one commit)."),
    "reject": ("reject", "Reject proposals with a reason (removed later by maintain)."),
    "audit": ("audit", "A drive's health report, each finding with the command that fixes it."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        spec = COMMANDS.get(cmd_name)
        if spec is None:
            return None
        module = importlib.import_module(f"memgit.cli.commands.{spec[0]}")
        command: click.Command = module.command
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][1]) for name in sorted(COMMANDS)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


_debug = {"on": False}


def _set_debug(_ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    _debug["on"] = _debug["on"] or value
    return value


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-C", "directory", metavar="PATH", default=None,
              help="Run as if memgit was started in PATH (like git -C).")
@click.option("--debug", is_flag=True, is_eager=True, expose_value=False, callback=_set_debug,
              help="Print the traceback of an internal error (or set MEMGIT_DEBUG=1).")
@click.version_option(package_name="memgit")
@click.pass_context
def cli(ctx: click.Context, directory: str | None) -> None:
    """memgit: git hosting for what AI agents remember."""
    ctx.obj = {"directory": directory}


def print_error(err: MemgitError) -> None:
    from memgit.policy.judge import quote

    for line in error_lines(err):  # a value an error quotes may hold a credential
        click.echo(quote(line), err=True)


def print_internal_error(exc: BaseException) -> None:
    debug = _debug["on"] or os.environ.get("MEMGIT_DEBUG") == "1"
    for line in internal_error_lines(exc, debug=debug):
        click.echo(line, err=True)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; the one place where errors become messages and exit statuses."""
    from memgit.cli.options import hoist_directory

    _debug["on"] = False
    args = hoist_directory(sys.argv[1:] if argv is None else list(argv))
    try:
        result: Any = cli.main(args=args, prog_name="memgit", standalone_mode=False)
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
    except KeyboardInterrupt:
        click.echo("memgit: interrupted", err=True)
        return 130
    except Exception as exc:  # noqa: BLE001 - the one handler of unexpected errors
        if _repaired_state(exc):
            return main(argv)  # once: _repaired_state says no the second time
        print_internal_error(exc)
        return INTERNAL_EXIT
    return result if isinstance(result, int) else 0


_state_repaired = {"on": False}


def _repaired_state(exc: BaseException) -> bool:
    """A state database found damaged mid-query is repaired (state.repair_damaged) and the
    command runs once more: it failed before anything of it landed (a write that has
    committed swallows later state errors), and the rebuilt database serves it."""
    from memgit import state

    if _state_repaired["on"] or not state.is_damage(exc):
        return False
    _state_repaired["on"] = True
    return bool(state.repair_damaged())


if __name__ == "__main__":
    sys.exit(main())
