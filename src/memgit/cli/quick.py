"""The ``memgit`` entry point: recall, context and status answered quickly, the rest by click.

Before anything heavy is imported, :func:`main` parses ``recall``, ``context``, ``status``
and ``agent-hook session-start|prompt|guard`` (options: cli.options) and answers them
through cli.quick_read when the recall index is current and no write is queued. Anything
else, any doubt and any error go to :func:`memgit.cli.main.main` with the same arguments
before anything is printed; both paths print the same bytes. ``MEMGIT_QUICK=0`` turns the
quick path off; with ``MEMGIT_DEBUG=1`` its failures raise instead of falling back.
"""

from __future__ import annotations

import os
import sys

# This module is what the ``memgit`` script loads first: it imports only os and sys
# (typing, re and pathlib each cost more than a recall: docs/performance.md).
TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads it so)
if TYPE_CHECKING:
    from typing import Any

QUICK_ENV = "MEMGIT_QUICK"


class Invocation:
    """A command line of one of the quick commands, parsed as click would."""

    __slots__ = ("command", "directory", "options", "words")

    def __init__(self, command: str, directory: str | None, options: dict[str, Any],
                 words: list[str]) -> None:
        self.command = command
        self.directory = directory
        self.options = options
        self.words = words


def parse(argv: list[str]) -> Invocation | None:
    """The invocation, or None when anything in it is left to click. The options come
    from cli.options.SHARED, the table click builds the same commands from."""
    from memgit.cli.options import SHARED, hoist_directory

    directory: str | None = None
    rest = hoist_directory(list(argv))
    while rest and rest[0].startswith("-C"):
        if rest[0] == "-C" and len(rest) > 1:
            directory, rest = rest[1], rest[2:]
        elif len(rest[0]) > 2:
            directory, rest = rest[0][2:], rest[1:]
        else:
            return None
    if not rest or rest[0] not in SHARED:
        return None
    command, tokens = rest[0], rest[1:]
    spec = {flag: option for option in SHARED[command] for flag in option.flags}
    options = {option.dest: option.default for option in SHARED[command]}
    words: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if token == "--":  # what follows is words, as click reads it
            words.extend(tokens[i:])
            break
        if not token.startswith("-") or token == "-":
            words.append(token)
            continue
        name, sep, value = token.partition("=") if token.startswith("--") else \
            (token[:2], "", token[2:])
        option = spec.get(name)
        if option is None:
            return None  # --help, --policy, an unknown option: click decides
        if option.is_flag:
            if sep or value:
                return None
            options[option.dest] = True
            continue
        if not sep and not value:
            if i >= len(tokens):
                return None
            value = tokens[i]
            i += 1
        checked = option.check(value)
        if checked is None:
            return None
        options[option.dest] = checked
    if command == "agent-hook":
        # the hooks that run at every session, prompt and tool call; record (and the
        # guard's --path/--command forms, unknown options here) go to click
        from memgit.agents.hook_io import QUICK_EVENTS

        return Invocation(command, directory, options, words) \
            if len(words) == 1 and words[0] in QUICK_EVENTS else None
    if (command == "recall") != bool(words):
        return None  # recall needs words, the others take none
    if command == "recall" and not " ".join(words).strip():
        return None
    return Invocation(command, directory, options, words)


def _write(text: str, *, err: bool = False) -> None:
    """Print as click.echo does; text with an escape character goes through click.echo
    itself, which strips ANSI sequences when the output is not a terminal."""
    if "\x1b" in text:
        import click

        click.echo(text, nl=False, err=err)
        return
    stream = sys.stderr if err else sys.stdout
    stream.write(text)
    stream.flush()


def run(call: Invocation) -> int:
    """Answer the invocation through memgit.cli.quick_read (NotQuick: the full path must)."""
    from memgit.cli import quick_read

    opts = call.options
    if call.command == "agent-hook":
        return _agent_hook(call)
    if call.command == "status":
        from memgit.drives.choose import fallback_note

        chosen = quick_read.chosen_drive(call.directory, None)
        info = quick_read.status(chosen.path, opts["remote"])
        if fallback_note(chosen):  # the full path's choose_drive says the same
            _write(fallback_note(chosen) + "\n", err=True)
        if opts["as_json"]:
            import json

            _write(json.dumps(info, indent=2) + "\n")
        else:
            from memgit.sync.status import status_lines

            _write("".join(line + "\n" for line in status_lines(info)))
        return 0
    current = quick_read.open_current(quick_read.chosen_path(call.directory, None))
    if call.command == "context":
        packet = quick_read.context(current, opts["budget"], opts["query"])
        if opts["as_json"]:
            from memgit.cli.quick_json import dumps

            _write(dumps(packet.as_dict()) + "\n")
        else:
            _write(packet.text)
        return 0
    if opts["with_mounts"]:
        if opts["mode"] not in (None, "lexical"):
            raise quick_read.NotQuick("a mode by meaning with --mounts")  # the full path refuses it
        return _recall_mounts(current, call)
    from memgit.index.search import hit_line

    hits, warnings = quick_read.recall_in_mode(current, " ".join(call.words).strip(),
                                               opts["limit"], count=not opts["no_count"],
                                               mode=opts["mode"])
    if warnings:
        from memgit.safe_text import printable

        _write("".join(f"memgit: warning: {printable(w, 400)}\n" for w in warnings), err=True)
    if opts["as_json"]:
        from memgit.cli.quick_json import dumps  # json.dumps(indent=2, ensure_ascii=False)
        from memgit.index.search import hit_json

        _write(dumps([hit_json(h) for h in hits]) + "\n")
    elif hits:
        _write("".join(hit_line(h) + "\n" for h in hits))
    else:
        _write("no matching entries\n", err=True)
    return 0 if hits else 1


def _recall_mounts(current: Any, call: Invocation) -> int:
    """``memgit recall --mounts``: this drive and every mount, each hit labelled."""
    from memgit.cli import quick_read
    from memgit.index.search import hit_json, labelled_line

    opts = call.options
    pairs = quick_read.recall_mounts(current, " ".join(call.words).strip(), opts["limit"],
                                     count=not opts["no_count"])
    if opts["as_json"]:
        from memgit.cli.quick_json import dumps

        _write(dumps([hit_json(h, label) for label, h in pairs]) + "\n")
    elif pairs:
        _write("".join(labelled_line(label, h) + "\n" for label, h in pairs))
    else:
        _write("no matching entries\n", err=True)
    return 0 if pairs else 1


def _agent_hook(call: Invocation) -> int:
    """``memgit agent-hook session-start|prompt`` on a current index. When the full path
    must answer, it reads the same event: what was read from stdin is handed back."""
    from memgit.agents import hook_io as hook

    raw = sys.stdin.read()
    try:
        if call.words[0] == "guard":
            return _guard(call, hook.read_event(raw))
        text = _hook_text(call, hook.read_event(raw), raw)
    except BaseException:
        import io

        sys.stdin = io.StringIO(raw)
        raise
    _write(hook.context_output(call.words[0], text, call.options["form"]))
    return 0


def _guard(call: Invocation, data: dict[str, Any]) -> int:
    """commands/agent_hook.py's guard for a tool call on stdin (no click, no pygit2)."""
    from memgit.agents import hook_io as hook
    from memgit.agents.hooks import guard_decision
    from memgit.cli.quick_read import chosen_path

    reason = guard_decision(data, chosen_path(call.directory, hook.hook_cwd(data),
                                              made=False))
    if reason is None:
        return 0
    text, on_stderr, code = hook.deny_output(reason, call.options["form"])
    _write(text, err=on_stderr)
    return code


def _hook_text(call: Invocation, data: dict[str, Any], raw: str) -> str:
    """commands/agent_hook.py's added context for the event, through quick_read."""
    from memgit.agents import hook_io as hook
    from memgit.cli import quick_read

    event = call.words[0]
    query = hook.prompt_query(data, raw) if event == "prompt" else None
    if event == "prompt" and query is None:
        return ""
    current = quick_read.open_current(quick_read.chosen_path(call.directory,
                                                             hook.hook_cwd(data)))
    quick_read.require_memory(current)
    if query is None:
        return quick_read.context(current, call.options["budget"], None).text
    # the drive's default mode, as agent.AgentDrive.recall (hybrid with embeddings:)
    hits, _warnings = quick_read.recall_in_mode(current, query, call.options["limit"],
                                                count=False)
    from memgit.index.search import hit_json

    return hook.prompt_context([hit_json(h) for h in hits])


def quick(args: list[str]) -> int | None:
    """The quick path's exit code, or None when the full path must answer."""
    call = parse(args) if os.environ.get(QUICK_ENV) != "0" else None
    if call is not None:
        try:
            return run(call)
        except BrokenPipeError:
            return 1  # as cli.main: the reader went away
        except Exception as exc:  # noqa: BLE001 - NotQuick, or anything: the full path answers
            if os.environ.get("MEMGIT_DEBUG") == "1":
                from memgit.cli.quick_read import NotQuick

                if not isinstance(exc, NotQuick):
                    raise
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the command line: the quick path when it can answer, else memgit.cli.main.main."""
    args = sys.argv[1:] if argv is None else list(argv)
    code = quick(args)
    if code is not None:
        return code
    from memgit.cli.main import main as full_main

    return full_main(args)


def main_and_exit() -> None:
    """The ``memgit`` command (scripts/memgit, ``python -m memgit``): :func:`main`, then the
    process ends. After a quick answer it ends at once, by ``os._exit`` once stdout and
    stderr are flushed: tearing the interpreter down (every module and object freed one
    by one, the database closed) is about a sixth of a quick recall's instructions
    (docs/performance.md), and the quick path needs none of it: its one write, the
    retrieval counts, is committed before anything is printed, and a database left open
    is read as it is by the next connection (SQLite's WAL needs no close; the OS drops the
    process's locks). The full path exits as Python does (atexit work, threads, files)."""
    args = sys.argv[1:]
    code = quick(args)
    if code is None:
        from memgit.cli.main import main as full_main

        sys.exit(full_main(args))
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        code = 1  # as cli.main: the reader went away
    os._exit(code)
