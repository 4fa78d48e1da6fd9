"""The entry point of the installed server hooks: read git's ``OLD NEW REF`` lines, run the
hook, chain.

The hook scripts run ``python -I -S -c "from memgit.githooks.entry import exit_now,
hook_main; exit_now(hook_main())" NAME``: no click, no ``site``, no teardown. Every import
is paid by every push, so nothing is imported that the hook does not use: pre-receive
imports memgit.githooks.receive, post-receive only memgit.githooks.post_receive (which
hands its work to a detached process).
"""

from __future__ import annotations

import os
import sys
from types import ModuleType  # loaded anyway: enum, functools and re import it

from memgit.githooks.hook_io import ServerSideError, emit, hook_git_dir, server_error_lines
from memgit.safe_text import printable

HOOK_NAMES = ("pre-receive", "post-receive")


# --- running the hooks ----------------------------------------------------------------------


def run_chained(chain: str | None, stdin: bytes) -> int:
    """Run the hook memgit was installed in front of (``install-hooks --chain``), with the
    same stdin. Like git, a missing or non-executable hook is not run."""
    if not chain or not os.path.isfile(chain) or not os.access(chain, os.X_OK):
        return 0
    import subprocess

    sys.stderr.flush()
    return subprocess.run([chain], input=stdin).returncode


def run_hook(name: str, stdin: bytes, git_dir: str | os.PathLike[str], *,
             policy_file: str | None = None, chain: str | None = None,
             queued: bool = False) -> int:
    """Run hook ``name`` for ``git_dir``: print, then run the chained hook if any.

    ``queued`` (the installed hooks): pre-receive judges in its turn, one push of the
    drive at a time (memgit.githooks.queue); a push whose branch moved while it waited
    is refused before anything heavy is imported."""
    if name == "pre-receive":
        from pathlib import Path

        def judge() -> int:
            from memgit.githooks.receive import run_pre_receive

            status, lines = run_pre_receive(Path(git_dir), stdin, policy_file=policy_file)
            emit(lines)
            return status or run_chained(chain, stdin)

        if not queued:
            return judge()
        from memgit.githooks.queue import in_turn

        return in_turn(Path(git_dir), stdin, judge)
    if name == "post-receive":
        from memgit.githooks.post_receive import run_post_receive

        status, lines = run_post_receive(os.fspath(git_dir), stdin)
        emit(lines)
        chained = run_chained(chain, stdin)
        return status or chained
    emit([f"memgit: unknown hook {printable(name, 300)!r}; "
          f"expected one of {', '.join(HOOK_NAMES)}"])
    return 2


class _Deferred(ModuleType):
    """A stand-in for a module in ``sys.modules``: the real one is imported on the first
    use of one of its names, and answers from then on."""

    def __getattr__(self, name: str) -> object:
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        __import__(self.__name__)
        return getattr(sys.modules[self.__name__], name)


def defer_inspect() -> None:
    """Put off importing ``inspect`` until something uses it.

    ``dataclasses`` imports ``inspect`` (with ``ast``, ``dis``, ``tokenize``...: 45M of a
    pre-receive's 446M instructions) for one call, ``inspect.signature``, made only to
    write a docstring for a dataclass that has none; every dataclass a hook imports has
    one (tests/githooks/test_entry.py holds it), so a push never needs the module. A
    stand-in takes its place in ``sys.modules`` (``import inspect`` binds it) and imports
    the real module the first time any name of it is used, so nothing that does use it
    sees a difference. Only the hooks do this: they are processes of their own.
    """
    if "inspect" not in sys.modules:
        sys.modules["inspect"] = _Deferred("inspect")


def exit_now(status: int) -> None:
    """End the hook's process with ``status`` at once, by ``os._exit`` once stdout and
    stderr are flushed (the installed scripts of version 4: ``exit_now(hook_main())``).

    The interpreter's teardown frees every module and object one by one: about 25M
    instructions of a pre-receive (docs/performance.md), paid by every push for nothing.
    Nothing the hooks do needs it: their output is flushed here, the push queue's turn
    and every lock are given back by ``finally`` blocks before :func:`hook_main`
    returns, a database they wrote is committed, and post-receive's detached work runs
    in a process of its own."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:
        pass  # the reader (git) went away: the status is what is left to give
    client = sys.modules.get("memgit.githooks.warm_client")
    wanted = getattr(client, "WANTED", None)
    if client is not None and wanted:  # no warm judge answered: start one for the next run
        try:
            client.start_judge(wanted)
        except OSError:
            pass  # the next run judges in its own process and tries again
    os._exit(status)


def hook_main(argv: list[str] | None = None, stdin: bytes | None = None) -> int:
    """Entry point of the installed hook scripts (no click: every import costs the push).

    ``hook_main(["pre-receive", "--chain", PATH, "--policy", FILE])``; ``stdin``: the
    hook's input when it was read already (a child of the warm judge), else read here.
    """
    defer_inspect()
    args = list(sys.argv[1:] if argv is None else argv)
    name = args.pop(0) if args else ""
    if name == "--version":  # install-hooks --check: can this command import memgit?
        from memgit import __version__

        print(f"memgit {__version__}")
        return 0
    options: dict[str, str] = {}
    while args:
        flag = args.pop(0)
        if flag not in ("--chain", "--policy") or not args:
            if name == "pre-receive":
                emit(server_error_lines(ServerSideError(
                    f"the hook script passes an unknown argument {flag!r}",
                    "reinstall the hooks: memgit install-hooks --server REPO")))
                return 1
            continue
        options[flag] = args.pop(0)
    if stdin is None:
        try:
            stdin = sys.stdin.buffer.read() if sys.stdin is not None else b""
        except OSError:
            stdin = b""
    return run_hook(name, stdin, hook_git_dir(), policy_file=options.get("--policy"),
                    chain=options.get("--chain"), queued=True)
