"""What the server hooks read and print: git's ``OLD NEW REF`` lines, and lines for the pusher.

Both hooks import it, so it imports nothing but the standard library, memgit.errors and
memgit.safe_text (the one terminal sanitiser).
"""

from __future__ import annotations

import os
import sys

from memgit.errors import MemgitError
from memgit.safe_text import printable

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads it so)
if TYPE_CHECKING:
    from collections.abc import Callable

_ZERO = "0"


class ServerSideError(MemgitError):
    """The hook cannot judge the push (its input, the setup, the repository)."""

    code = "MG609"
    exit_code = 1


class RefUpdate:
    """One ``OLD NEW REF`` line of the hook's stdin (a plain class: the dataclass
    machinery costs the post-receive hook more than its whole work in the foreground)."""

    __slots__ = ("old", "new", "ref")

    def __init__(self, old: str, new: str, ref: str) -> None:
        self.old, self.new, self.ref = old, new, ref

    @property
    def is_delete(self) -> bool:
        return set(self.new) == {_ZERO}

    @property
    def is_create(self) -> bool:
        return set(self.old) == {_ZERO}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RefUpdate) and (self.old, self.new, self.ref) == \
            (other.old, other.new, other.ref)

    def __hash__(self) -> int:
        return hash((self.old, self.new, self.ref))

    def __repr__(self) -> str:
        return f"RefUpdate({self.old!r}, {self.new!r}, {self.ref!r})"


def _is_oid(value: str) -> bool:
    return len(value) in (40, 64) and all(c in "0123456789abcdef" for c in value)


def parse_updates(data: bytes) -> list[RefUpdate]:
    """Parse the hook's stdin; anything but well-formed ``OLD NEW REF`` lines is refused."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ServerSideError("the hook's input is not text",
                              "git feeds pre-receive 'OLD NEW REF' lines") from exc
    updates: list[RefUpdate] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line:
            continue
        parts = line.split(" ")
        if len(parts) != 3 or not _is_oid(parts[0]) or not _is_oid(parts[1]) \
                or len(parts[0]) != len(parts[1]) or not parts[2].startswith("refs/") \
                or any(c.isspace() or ord(c) < 32 for c in parts[2]):
            raise ServerSideError(f"line {number} of the hook's input is not 'OLD NEW REF'",
                                  "the hook must be run by git receive-pack")
        updates.append(RefUpdate(*parts))
    if not updates:
        raise ServerSideError("the hook's input names no ref update",
                              "the hook must be run by git receive-pack")
    return updates


def hook_git_dir() -> str:
    """The repository a hook runs for: GIT_DIR if git set it, else the working directory
    (git runs receive-pack hooks inside the git directory). A string: post-receive does
    not import pathlib."""
    return os.path.abspath(os.environ.get("GIT_DIR") or ".")


# --- work after the answer ---------------------------------------------------------------

# Set (to a list) in a child of the warm judge (memgit.githooks.warm): work a hook need not
# do before git has its answer waits here and is done once the answer is given, under
# post-receive.lock held shared (so post_receive.wait_for_background waits for it too).
# None in a hook's own process: the work is done at once, as before.
AFTER_ANSWER: list[Callable[[], object]] | None = None


def after_answer(work: Callable[[], object]) -> None:
    """Do ``work`` once the hook's answer is given (a child of the warm judge), else now."""
    if AFTER_ANSWER is None:
        work()
    else:
        AFTER_ANSWER.append(work)


# --- output -------------------------------------------------------------------------


def server_error_lines(err: MemgitError) -> list[str]:
    lines = ["memgit: push refused: the server cannot check it",
             f"memgit: error MG609 server-error: {printable(err.message, 500)}"]
    if err.hint:
        lines.append(f"  hint: {printable(err.hint, 300)}")
    lines.append("  hint: ask the drive's admin to check the server-side setup "
                 "(this is not a problem with your push)")
    return lines


def emit(lines: list[str]) -> None:
    """Print to stderr, which git relays to the pusher as ``remote:`` lines."""
    if lines:
        data = "".join(line + "\n" for line in lines)
        sys.stderr.buffer.write(data.encode("utf-8", "backslashreplace"))
        sys.stderr.flush()
