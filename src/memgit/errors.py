"""memgit's exceptions and the lines they print; one handler at the top prints them (cli.main)."""

from __future__ import annotations


class MemgitError(Exception):
    """An error a user can act on: a message, a hint, a stable code and an exit status.

    Exit statuses (cli.main): 0 clean or done, 1 violations found, 2 a usage or input
    error (the default here), 3 an internal error (MG000, printed by cli.main for any
    exception that is not a MemgitError) or a conflict (MG006).
    """

    code = "MG000"
    exit_code = 2

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(MemgitError):
    code = "MG001"


class NotADriveError(MemgitError):
    """MG002: what was named is not a drive. One constructor, so one message, per
    situation (a missing branch is git.repository.missing_branch)."""

    code = "MG002"

    @classmethod
    def missing(cls, path: str) -> NotADriveError:
        return cls(f"{path} does not exist", "pass a drive with -C PATH or MEMGIT_DRIVE")

    @classmethod
    def not_git(cls, path: str) -> NotADriveError:
        return cls(f"{path} is not a git repository, so not a drive",
                   "memgit init PATH creates a drive, memgit clone URL checks one out, "
                   "memgit init --adopt PATH makes a memory folder one; or pass -C PATH")

    @classmethod
    def no_memory(cls, where: str, branch: str, *, remote: bool = False) -> NotADriveError:
        """A git repository (or a remote) whose branch has no MEMORY.md at its head."""
        if remote:
            return cls(f"{where} is not a drive: its {branch} has no MEMORY.md",
                       "check the URL, the branch and your access to the drive")
        return cls(f"{where} is a git repository but not a drive: {branch} has no MEMORY.md",
                   "memgit init --adopt PATH makes a memory repository a drive; "
                   "otherwise pass a drive with -C PATH or MEMGIT_DRIVE")


class PolicyFileError(MemgitError):
    code = "MG003"


class RepoError(MemgitError):
    code = "MG004"


class RegistryError(MemgitError):
    code = "MG005"


class HookConflictError(MemgitError):
    """A hook memgit did not write is in the way (install with --chain, or move it)."""

    code = "MG008"


class SyncAuthError(RepoError):
    """The server refused the user's credentials during memgit sync."""

    code = "MG010"


class SyncNetworkError(RepoError):
    """The server could not be reached during memgit sync."""

    code = "MG011"


class StateDatabaseError(MemgitError):
    """The state database file is damaged or is not a SQLite database at all."""

    code = "MG013"


class PluginError(MemgitError):
    """A plugin is unknown, cannot be loaded, or does not have its kind's shape."""

    code = "MG012"


class EmbedderError(MemgitError):
    """An embedder failed: its endpoint is down or answered wrongly, or its model is missing.

    ``status`` is the endpoint's HTTP status when it answered with one. Recall treats
    this error as "no semantic ranking now" and falls back to lexical recall.
    """

    code = "MG014"

    def __init__(self, message: str, hint: str = "", status: int | None = None) -> None:
        super().__init__(message, hint)
        self.status = status


class EmbeddingModelError(MemgitError):
    """The drive's vectors were made by another model (or dimension) than the configured
    embedder's: refused until ``memgit index --rebuild --embeddings`` re-embeds them."""

    code = "MG015"


class MountError(MemgitError):
    """A mount name is invalid or unknown, or a URL cannot be mounted (memgit mount)."""

    code = "MG040"


class BackupError(MemgitError):
    """A backup cannot be written, or a backup is damaged or was changed (checksums)."""

    code = "MG041"


class FleetError(MemgitError):
    """memgit fleet cannot do what was asked: its index cannot be opened or reached, or a
    request cannot be carried out as given."""

    code = "MG050"


class DreamFailedError(MemgitError):
    """memgit dream failed: the model gave no usable answer, or the run could not finish."""

    code = "MG030"


class UndoRefusedError(MemgitError):
    """memgit dream undo refused: lines that night touched were changed since."""

    code = "MG031"
    exit_code = 1


class ConflictError(MemgitError):
    """The branch moved under us (compare-and-swap failed)."""

    code = "MG006"
    exit_code = 3


class RefusedError(MemgitError):
    """The policy refused what was asked; carries the violations."""

    code = "MG007"
    exit_code = 1

    def __init__(self, message: str, violations: list | None = None, hint: str = "") -> None:
        super().__init__(message, hint)
        self.violations = violations or []


class NoSuchKeyError(MemgitError):
    """memgit get/unset: working memory has no such key (like ``git config --get``)."""

    code = "MG016"
    exit_code = 1


class ValueRefusedError(RefusedError):
    """A working memory key or value the policy refuses: the code is the rule's (MG7xx,
    MG401 for a credential), the message names what is wrong, never the value."""

    def __init__(self, code: str, message: str, hint: str) -> None:
        super().__init__(message, [], hint)
        self.code = code


def error_lines(err: MemgitError) -> list[str]:
    """What a command prints for a MemgitError: its code and message, then its hint,
    control characters escaped (the callers redact possible credentials: policy.quote).
    A message of several lines (a server's refusal) prints as lines, each indented under
    the first, each escaped on its own."""
    from memgit.safe_text import printable

    first, *rest = err.message.split("\n")  # a message of several lines (a server's)
    lines = [printable(f"memgit: error {err.code}: {first}")]
    lines.extend(printable(f"  {line}") for line in rest if line.strip())
    if err.hint:
        lines.append(printable(f"  hint: {err.hint}"))
    return lines


def internal_error_lines(exc: BaseException, *, debug: bool) -> list[str]:
    """What a command prints for an exception memgit did not expect (MG000, exit 3): one
    line naming it, the traceback only when ``debug``, a hint to report it."""
    first = str(exc).strip().splitlines()
    detail = f"{type(exc).__name__}: {first[0]}" if first else type(exc).__name__
    lines = [f"memgit: error MG000 internal error: {detail}"]
    if debug:
        import traceback

        lines.append("".join(traceback.format_exception(exc)).rstrip("\n"))
        lines.append("  hint: memgit did not expect this (a bug, or damage it does not "
                     "recognise): please report it with the traceback above and the command "
                     "you ran")
    else:
        lines.append("  hint: memgit did not expect this (a bug, or damage it does not "
                     "recognise): please report it with the command you ran (rerun with "
                     "--debug or MEMGIT_DEBUG=1 for the traceback)")
    return lines


INTERNAL_EXIT = 3
