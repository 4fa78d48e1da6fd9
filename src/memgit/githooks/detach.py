"""Run work in a process git no longer waits for: the one way the hooks detach.

git waits for a hook until every holder of the hook's stdout and stderr has closed them
(they are the sideband to the client), so work after the answer runs in a grandchild in
a new session whose standard descriptors are ``/dev/null`` and which holds no other
descriptor of the hook's but the one it is told to keep. Used by post_receive's
background work and by warm_client's start of a judge.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads it so)
if TYPE_CHECKING:
    from collections.abc import Callable


def detached(work: Callable[[], object]) -> None:
    """Run ``work`` in a detached grandchild (two forks and a ``setsid``) and return at
    once in the caller, after the first child has ended (no zombie is left). ``work``
    runs after :func:`let_go`, or replaces the process (an ``exec``); the grandchild
    ends with status 0 whatever it raises."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)
        return
    try:  # the first child: a new session, then the grandchild does the work
        os.setsid()
        if os.fork() == 0:
            work()
    finally:
        os._exit(0)


def let_go(keep: int = -1) -> None:
    """Let go of everything git gave the hook: stdin, stdout and stderr become
    ``/dev/null``, and every other descriptor but ``keep`` is closed."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    if null > 2:
        os.close(null)
    top = max(3, os.sysconf("SC_OPEN_MAX"))
    if keep < 3:
        os.closerange(3, top)
        return
    os.closerange(3, keep)
    os.closerange(keep + 1, max(keep + 1, top))
