"""Installing memgit's server hooks into bare repositories, and checking them.

The hooks are ``/bin/sh`` scripts that exec memgit's Python by absolute path with ``-I
-S`` and the ``sys.path`` recorded at install time, so they run the same memgit under the
bare environment git http-backend, fcgiwrap, git daemon or sshd gives a hook, without
``site`` (docs/server.md). A hook file memgit did not write is never overwritten:
installing refuses, or with ``chain=True`` keeps it as ``<hook>.memgit-chained`` and runs
it after memgit's check with the same stdin.
"""

from __future__ import annotations

import functools
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from memgit.errors import HookConflictError, UsageError
from memgit.git.plumbing import config_get, config_set, find_repository, hooks_dir
from memgit.plugins import install_command

if TYPE_CHECKING:
    from memgit.git.repository import Drive

# 5: asks the warm judge first (memgit.githooks.warm); 4: ends by entry.exit_now;
# 3: the entry point is memgit.githooks.entry
HOOK_VERSION = 5
HOOKS = ("pre-receive", "post-receive")
MARKER = "# memgit-hook:"
HOOK_CALL = "exit_now(hook_main())"  # the call that ends every hook script's program
ASK_CALL = "from memgit.githooks.warm_client import ask; ask(); "  # the warm judge, first
CHAIN_SUFFIX = ".memgit-chained"

# git's own settings, set next to the hooks (docs/server.md, "git's settings"). git runs
# fsck on the received objects before pre-receive and applies the deny* checks after it,
# so both layers are needed. The two timeouts make a push that finds the branch's lock
# file (or HEAD's, or packed-refs') taken by another process wait for it, with git's own
# jittered backoff, instead of failing after git's defaults (100 ms and 1 s). Push
# options let memgit sync name the work a push carries (memgit.githooks.queue).
SERVER_CONFIG: dict[str, str] = {
    "receive.fsckObjects": "true",
    "receive.denyNonFastForwards": "true",
    "receive.denyDeletes": "true",
    "core.filesRefLockTimeout": "10000",
    "core.packedRefsTimeout": "10000",
    "receive.advertisePushOptions": "true",
}
_AT_LEAST = ("core.filesRefLockTimeout", "core.packedRefsTimeout")  # longer (or -1) is fine


def config_ok(key: str, value: str | None) -> bool:
    """Whether a SERVER_CONFIG key's current value is what the server needs: the value
    itself, or for a timeout a longer one (-1: wait forever)."""
    if value is None:
        return False
    if key in _AT_LEAST:
        try:
            number = int(value)
        except ValueError:
            return False
        return number == -1 or number >= int(SERVER_CONFIG[key])
    return value.lower() == SERVER_CONFIG[key]

_PURPOSE = {
    "pre-receive": "refuse pushes the drive policy does not allow",
    "post-receive": "count accepted pushes and update the recall index, detached",
}


def import_paths() -> list[str]:
    """What an installed hook puts on ``sys.path`` (it runs ``python -I -S``): the folder
    memgit is imported from, then this Python's site-packages folders."""
    import site

    import memgit

    paths = [str(Path(memgit.__file__).resolve().parent.parent)]
    candidates = list(site.getsitepackages())
    user = site.getusersitepackages() if site.ENABLE_USER_SITE else None
    if user and user in sys.path:
        candidates.append(user)
    for path in candidates:
        if os.path.isdir(path) and path not in paths:
            paths.append(path)
    return paths


def _entry_code(paths: Sequence[str] | None, call: str) -> str:
    prefix = f"sys.path[:0] = {json.dumps(list(paths))}; " if paths else ""
    return (f"import sys; {prefix}{ASK_CALL}"
            f"from memgit.githooks.entry import exit_now, hook_main; {call}")


def hook_argv(python: str, paths: Sequence[str]) -> list[str]:
    """The command an installed hook runs, without the hook's own arguments."""
    return [python, "-I", "-S", "-X", "utf8", "-c",
            _entry_code(paths, HOOK_CALL)]


def render_hook(name: str, python: str | None, *, chain: bool = False,
                paths: Sequence[str] | None = None) -> str:
    """The hook script. ``python=None`` gives the generic template of ``hooks/`` (the
    interpreter comes from ``$MEMGIT_PYTHON``, else ``python3`` on PATH, with its normal
    site-packages); otherwise ``paths`` (default: :func:`import_paths`) are recorded."""
    if name not in HOOKS:
        raise ValueError(f"unknown hook {name!r}")
    chained = f' --chain "$0{CHAIN_SUFFIX}"' if chain else ""
    if python is None:
        command = ('"${MEMGIT_PYTHON:-python3}" -I -X utf8 -c '
                   + shlex.quote(_entry_code(None, HOOK_CALL)))
    else:
        command = " ".join(shlex.quote(a) for a in
                           hook_argv(python, import_paths() if paths is None else paths))
    how = ("Set MEMGIT_PYTHON to the Python that has memgit installed, or install\n"
           "# with `memgit install-hooks --server REPO`, which records it."
           if python is None else
           "Runs the Python memgit was installed with (recorded at install time).")
    return (
        "#!/bin/sh\n"
        f"# memgit {name} hook: {_PURPOSE[name]}.\n"
        "# Written by `memgit install-hooks --server`; `memgit install-hooks --check REPO`\n"
        "# tells whether it is current. Do not edit: reinstall instead.\n"
        f"# {how}\n"
        "# -I: no PYTHON* variables, no user site-packages, not the repository on sys.path.\n"
        f"{MARKER} {name} {HOOK_VERSION}\n"
        f"exec {command} {name}{chained}\n"
    )


def is_memgit_hook(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return MARKER.encode() in head


def recorded_command(script: str) -> list[str] | None:
    """The command line an installed hook runs (the words after ``exec``)."""
    for line in script.splitlines():
        if line.startswith("exec "):
            try:
                return shlex.split(line[5:], posix=True)
            except ValueError:
                return None
    return None


def probe(argv: Sequence[str]) -> str | None:
    """Run a hook command with ``--version`` (imports memgit, reads no stdin), in an
    empty environment: None when it works, else what went wrong."""
    cmd = list(argv)
    if "-c" in cmd:
        cmd = cmd[: cmd.index("-c") + 2]
    try:
        proc = subprocess.run([*cmd, "--version"], capture_output=True,
                              stdin=subprocess.DEVNULL, timeout=60, env={})
    except OSError as exc:
        return str(exc)
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return err[-1] if err else f"exit status {proc.returncode}"
    return None


@functools.lru_cache(maxsize=8)
def python_can_run_hooks(python: str, paths: tuple[str, ...]) -> str | None:
    """None when the hook command for ``python`` and ``paths`` can import memgit."""
    return probe(hook_argv(python, paths))


def bare_repository(path: Path) -> Path:
    """The git directory of the bare repository at ``path`` (which must be that repository
    itself, not a folder inside one); UsageError otherwise."""
    found = find_repository(path) if path.is_dir() else None
    if found is None:
        raise UsageError(f"{path} is not a git repository", "name a bare repository")
    git_dir, bare = found
    if not bare:
        raise UsageError(f"{path} is not a bare repository",
                         "server hooks belong in the bare repository people push to; "
                         "a checkout uses the pre-commit hooks (.pre-commit-hooks.yaml)")
    if git_dir.resolve() != path.resolve():
        raise UsageError(f"{path} is not a git repository (it is inside {git_dir})",
                         "name the bare repository itself")
    return git_dir


def configure_server(drive: Drive) -> None:
    """Set git's own settings on a server drive (SERVER_CONFIG; a timeout an admin set
    longer is kept), hide the purge registry's refs from fetching clients and publish the
    registry file into them (memgit.policy.registry_refs: what replicates with refs and
    objects)."""
    from memgit.policy import registry_refs
    from memgit.policy.registry import REGISTRY_FILE

    for key, value in SERVER_CONFIG.items():
        if not config_ok(key, config_get(drive.git_dir, key)):
            config_set(drive.git_dir, key, value)
    registry_refs.hide(drive.git_dir)
    registry_refs.publish(drive.git_dir, drive.git_dir / REGISTRY_FILE)


def install_server_hooks(drive: Drive, chain: bool) -> list[Path]:
    """Install pre-receive and post-receive into ``drive``; return the files written.

    A foreign hook is refused (HookConflictError) unless ``chain``; then it is moved to
    ``<hook>.memgit-chained`` and run by memgit's hook after memgit's own check. An
    existing chain is kept when memgit's hooks are reinstalled.
    """
    return install_hooks_into(drive.git_dir, chain=chain)


def install_hooks_into(git_dir: Path, *, chain: bool, python: str | None = None) -> list[Path]:
    python = python or sys.executable
    paths = import_paths()
    problem = python_can_run_hooks(python, tuple(paths))
    if problem is not None:
        raise HookConflictError(f"{python} cannot run memgit's hooks: {problem}",
                                f"install memgit into that Python ({install_command()}), "
                                "not only on PYTHONPATH")
    directory = hooks_dir(git_dir)
    plan: list[tuple[Path, bool, bool]] = []  # (hook path, move foreign away, chained)
    for name in HOOKS:
        path = directory / name
        chained = Path(str(path) + CHAIN_SUFFIX)
        foreign = (path.exists() or path.is_symlink()) and not is_memgit_hook(path)
        if foreign and not chain:
            raise HookConflictError(
                f"{path} exists and was not written by memgit",
                "rerun with --chain to run it after memgit's check, or move it away")
        if foreign and (chained.exists() or chained.is_symlink()):
            raise HookConflictError(f"{chained} exists already; memgit chains one hook only",
                                    "merge the two hooks into one, then rerun with --chain")
        plan.append((path, foreign, foreign or chained.exists() or chained.is_symlink()))
    directory.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for path, move, keep_chain in plan:
        if move:
            os.replace(path, str(path) + CHAIN_SUFFIX)
        _write_executable(path, render_hook(path.name, python, chain=keep_chain, paths=paths))
        written.append(path)
    return written


LAYOUTS = ("plain", "gitea")
GITEA_NAME = "memgit"  # hooks/<hook>.d/memgit, beside Gitea's own hooks/<hook>.d/gitea


def hook_paths(git_dir: Path, layout: str = "plain") -> dict[str, Path]:
    """Where memgit's hooks go: ``hooks/<name>``, or for ``gitea`` (also Forgejo)
    ``hooks/<name>.d/memgit``: Gitea writes ``hooks/<name>`` itself, a script that feeds
    its stdin to every executable file of ``hooks/<name>.d/`` in turn and fails when
    any of them fails, and rewrites it on "Resynchronize hooks"."""
    directory = hooks_dir(git_dir)
    if layout == "gitea":
        return {name: directory / f"{name}.d" / GITEA_NAME for name in HOOKS}
    return {name: directory / name for name in HOOKS}


def install_gitea_hooks(git_dir: Path, *, python: str | None = None) -> list[Path]:
    """Write memgit's hooks into ``hooks/pre-receive.d/`` and ``hooks/post-receive.d/``;
    Gitea's own files are left alone. A foreign ``memgit`` file there is refused."""
    python = python or sys.executable
    paths = import_paths()
    problem = python_can_run_hooks(python, tuple(paths))
    if problem is not None:
        raise HookConflictError(f"{python} cannot run memgit's hooks: {problem}",
                                f"install memgit into that Python ({install_command()})")
    targets = hook_paths(git_dir, "gitea")
    for path in targets.values():
        if (path.exists() or path.is_symlink()) and not is_memgit_hook(path):
            raise HookConflictError(f"{path} exists and was not written by memgit",
                                    "move it away, then install again")
    for name, path in targets.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_executable(path, render_hook(name, python, paths=paths))
    return list(targets.values())


def _write_executable(path: Path, text: str) -> None:
    """Write atomically: git may run the hook at any moment."""
    tmp = path.with_name(f".{path.name}.memgit-tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.chmod(tmp, 0o755)
    os.replace(tmp, path)


# --- --check ----------------------------------------------------------------------------


@dataclass
class HookState:
    name: str
    path: Path
    state: str  # current | outdated | missing | foreign | not-executable
    detail: str = ""


@dataclass
class ServerStatus:
    git_dir: Path
    hooks: list[HookState] = field(default_factory=list)
    config: dict[str, str | None] = field(default_factory=dict)
    registry_hidden: bool = True

    @property
    def problems(self) -> list[str]:
        out = [f"{h.name}: {h.state}" + (f" ({h.detail})" if h.detail else "")
               for h in self.hooks if h.state != "current"]
        out += [f"{key} is {value or 'unset'}, should be {SERVER_CONFIG[key]}"
                + (" or more" if key in _AT_LEAST else "")
                for key, value in self.config.items() if not config_ok(key, value)]
        if not self.registry_hidden:
            out.append("uploadpack.hideRefs does not hide refs/memgit/registry")
        return out

    @property
    def ok(self) -> bool:
        return not self.problems


def server_status(git_dir: Path, python: str | None = None,
                  layout: str = "plain") -> ServerStatus:
    """Whether memgit's hooks in ``git_dir`` are installed and current, and git's config."""
    python = python or sys.executable
    status = ServerStatus(git_dir)
    paths = import_paths()
    for name, path in hook_paths(git_dir, layout).items():
        status.hooks.append(_hook_state(name, path, python, paths))
    for key in SERVER_CONFIG:
        value = config_get(git_dir, key)
        status.config[key] = value
    from memgit.policy.registry_refs import is_hidden

    status.registry_hidden = is_hidden(git_dir)
    return status


def _hook_state(name: str, path: Path, python: str, paths: list[str]) -> HookState:
    if not path.exists() and not path.is_symlink():
        return HookState(name, path, "missing")
    if not is_memgit_hook(path):
        return HookState(name, path, "foreign", "not written by memgit")
    text = path.read_text(encoding="utf-8", errors="replace")
    chained = Path(str(path) + CHAIN_SUFFIX)
    expected = render_hook(name, python, chain=chained.exists() or chained.is_symlink(),
                           paths=paths)
    recorded = recorded_command(text)
    if not os.access(path, os.X_OK):
        return HookState(name, path, "not-executable", "git skips hooks without the x bit")
    if text == expected:
        return HookState(name, path, "current")
    if not recorded:
        return HookState(name, path, "outdated", "no command line found in it")
    broken = probe(recorded)
    if broken:
        return HookState(name, path, "broken", f"it cannot run memgit: {broken}")
    if recorded[0] != python:
        return HookState(name, path, "outdated", f"runs {recorded[0]}, this memgit is {python}")
    return HookState(name, path, "outdated", "written by another memgit version")
