"""The options of the commands the quick path answers, written once.

click builds these commands' options from :data:`SHARED` and the quick path parses command
lines with the same table, so the two paths cannot read an option differently. It imports
nothing heavy: the quick path loads it first.
"""

from __future__ import annotations

from memgit.recall.defaults import DEFAULT_BUDGET, DEFAULT_LIMIT, MODES

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads it so)
if TYPE_CHECKING:
    from typing import Any

TEXT = "text"  # an option that takes any value not starting with "-"


class Option:
    """One option: its spellings, the parameter it sets and what it takes: nothing (a
    flag), ``(low, high)`` (an integer in that range), a tuple of choices, or TEXT."""

    __slots__ = ("default", "dest", "flags", "help", "metavar", "takes")

    def __init__(self, flags: tuple[str, ...], dest: str, help: str, *, takes: Any = None,
                 default: Any = None, metavar: str | None = None) -> None:
        self.flags = flags
        self.dest = dest
        self.help = help
        self.takes = takes
        self.default = False if takes is None else default
        self.metavar = metavar

    @property
    def is_flag(self) -> bool:
        return self.takes is None

    def check(self, value: str) -> Any:
        """The value as the command receives it, or None when click would refuse it (the
        quick path then leaves the command line to click, which says why)."""
        if isinstance(self.takes, tuple) and len(self.takes) == 2 and \
                all(isinstance(t, int) for t in self.takes):
            if not (value.isascii() and value.isdigit() and len(value) <= 9):
                return None
            low, high = self.takes
            return int(value) if low <= int(value) <= high else None
        if isinstance(self.takes, tuple):
            return value if value in self.takes else None
        return None if value.startswith("-") else value


_JSON = "--json"
SHARED: dict[str, tuple[Option, ...]] = {
    "recall": (
        Option(("-n", "--limit"), "limit", "How many entries to return.",
               takes=(1, 1000), default=DEFAULT_LIMIT),
        Option(("--mode",), "mode", "hybrid (words and meaning, the default with an "
               "embeddings: section), lexical (words only, the default without) or semantic "
               "(meaning only).", takes=MODES),
        Option((_JSON,), "as_json", "Print the results as JSON."),
        Option(("--no-count",), "no_count", "Do not count these retrievals."),
        Option(("--mounts",), "with_mounts",
               "Search every mounted shared drive too; each hit names its drive."),
    ),
    "context": (
        Option(("--budget",), "budget", "Most tokens the packet may take (conservative "
               "estimate, docs/agents.md).", takes=(0, 1_000_000), default=DEFAULT_BUDGET,
               metavar="TOKENS"),
        Option(("--query", "-q"), "query", "What the session is about: its matching entries "
               "come first.", takes=TEXT, metavar="Q"),
        Option((_JSON,), "as_json", "Print the packet and its parts as JSON."),
    ),
    "status": (
        Option(("--remote",), "remote", "The remote synced with.", takes=TEXT,
               default="origin"),
        Option((_JSON,), "as_json", "Print JSON."),
    ),
    "agent-hook": (
        Option(("--format",), "form", "claude-code (also Codex) or gemini: the tool's hook "
               "JSON in and out; text: plain text out, exit 2 to refuse.",
               takes=("claude-code", "gemini", "text"),
               default="claude-code"),
        Option(("--budget",), "budget", "session-start: the context packet's token budget.",
               takes=(0, 200_000), default=DEFAULT_BUDGET),
        Option(("--limit",), "limit", "prompt: how many recall hits to add.",
               takes=(1, 50), default=DEFAULT_LIMIT),
    ),
}


def hoist_directory(argv: list[str]) -> list[str]:
    """``-C PATH`` (or ``-CPATH``) written after the command, as users type it (``memgit
    mcp -C DRIVE``), moved to the front where the group reads it; nothing after ``--``
    is touched, and the last ``-C`` wins as git's would."""
    front: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(argv):
        token = argv[i]
        if token == "--":
            rest.extend(argv[i:])
            break
        if token == "-C" and i + 1 < len(argv):
            front += argv[i:i + 2]
            i += 2
            continue
        if token.startswith("-C") and len(token) > 2 and not token.startswith("--"):
            front.append(token)
        else:
            rest.append(token)
        i += 1
    return front + rest
