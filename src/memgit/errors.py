"""memgit's exceptions; the CLI has one handler that prints them (cli.py)."""

from __future__ import annotations


class MemgitError(Exception):
    """An error a user can act on: a message, a hint, a stable code and an exit status."""

    code = "MG000"
    exit_code = 2

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(MemgitError):
    code = "MG001"


class NotADriveError(MemgitError):
    code = "MG002"


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


class PluginError(MemgitError):
    """A plugin is unknown, cannot be loaded, or does not have its kind's shape."""

    code = "MG012"


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
