"""What ``git push --porcelain`` said, and the errors a failed fetch or push becomes
(docs/sync.md, the sync protocol's step 4)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from memgit.errors import MemgitError, SyncAuthError, SyncNetworkError
from memgit.safe_text import display_url, scrub_url

_AUTH_RE = re.compile(r"authentication failed|could not read (username|password)|"
                      r"terminal prompts disabled|\b40[13]\b|permission denied|"
                      r"access denied|not authorized", re.I)


@dataclass(frozen=True)
class PushOutcome:
    """What ``git push --porcelain`` said: ``ok``, ``race``, ``refused``, ``auth``, ``network``."""

    status: str
    summary: str
    message: str  # the server's ``remote:`` lines, or git's error


def parse_push(returncode: int, stdout: str, stderr: str) -> PushOutcome:
    """Read the porcelain ref line (``<flag>\\t<from>:<to>\\t<summary>``) and stderr.

    A refused push over smart HTTP still answers HTTP 200 with the refusal in
    the pack protocol, so the ref line, not an exit or HTTP status, decides.
    """
    remote = "\n".join(_remote_line(line) for line in stderr.splitlines()
                       if line.startswith("remote:") and line[len("remote:"):].strip())
    for line in stdout.splitlines():
        parts = line.split("\t")
        if len(parts) < 3 or len(parts[0]) != 1:
            continue
        flag, summary = parts[0], parts[2]
        if flag in " *=+":
            return PushOutcome("ok", summary, remote)
        if flag == "!":
            if "remote rejected" in summary:
                # Another push landed between the ref advertisement and our
                # update: git's ref lock or the hook's non-fast-forward rule
                # says so. That is a race, not a policy refusal.
                if any(word in summary for word in ("failed to update ref", "failed to lock",
                                                    "cannot lock ref")) or \
                        ("MG604" in remote and "MG" not in remote.replace("MG604", "")):
                    return PushOutcome("race", summary, remote)
                return PushOutcome("refused", summary, remote or summary)
            if any(word in summary for word in ("non-fast-forward", "fetch first", "stale info")):
                return PushOutcome("race", summary, remote)
            return PushOutcome("refused", summary, remote or summary)
    err = stderr.strip()
    if returncode == 0:
        return PushOutcome("ok", "", remote)
    if returncode < 0 and not err and -returncode == _sigpipe():
        # git 2.39 refuses a push itself when the server's branch moved to a commit the
        # checkout lacks ("fetch first"); with push options it still sends them after
        # the empty command list, and a receive-pack that already ended on that list
        # kills it with SIGPIPE, silently (write_or_die re-raises EPIPE as the signal).
        # Seen 11 times in 1,200 such pushes under load: the branch moved, a lost race.
        return PushOutcome("race", "[rejected] (killed by SIGPIPE)",
                           silent_exit("git push", returncode))
    if _AUTH_RE.search(err):
        return PushOutcome("auth", "", err)
    return PushOutcome("network", "", err or silent_exit("git push", returncode))


def _remote_line(line: str) -> str:
    """A ``remote:`` line of git's stderr as the server printed it (its indentation kept)."""
    text = line[len("remote:"):]
    return (text[1:] if text.startswith(" ") else text).rstrip()


def _sigpipe() -> int:
    import signal  # only after a git was killed: the module builds its enums on import

    return int(signal.SIGPIPE)


def silent_exit(what: str, returncode: int) -> str:
    """What to say of a git that failed without a word: its exit status, or the signal
    that killed it (``subprocess`` gives a signal as a negative status)."""
    if returncode < 0:
        import signal

        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"{what} was killed by {name}, saying nothing"
    return f"{what} exited with status {returncode}, saying nothing"


def network_error(remote: str, err: str, action: str) -> MemgitError:
    """What a failed fetch, push or clone of ``remote`` (a name or a URL) becomes: git's
    last line, with a URL's password and query masked (a clone's URL may carry a token)."""
    last = err.strip().splitlines()[-1] if err.strip() else f"git {action} failed"
    last, shown = scrub_url(last, remote), display_url(remote)
    if _AUTH_RE.search(err):
        return SyncAuthError(f"cannot {action} {shown}: authentication failed ({last})",
                             "check the remote's credentials (git credential helper, ssh key)")
    again = ("then clone again (nothing was left behind)" if action == "clone" else
             "then sync again; your local commits are kept")
    return SyncNetworkError(f"cannot {action} {shown}: {last}",
                            f"check the remote URL and the network, {again}")
