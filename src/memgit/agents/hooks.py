"""Agent hooks: what ``memgit agent-hook EVENT`` does for an agent tool's session hooks.

``session-start`` adds the context packet, ``prompt`` recall hits (not counted as
retrievals: the agent did not ask), ``record`` keeps the turn for ``memgit observe``, and
``guard`` refuses a tool call that would write the drive around the writer: a seatbelt
against honest mistakes, not a sandbox (the policy stays the gate). Hooks never break the
agent's session: a failure prints nothing on stdout, one line on stderr, and exits 0.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RECORD_CHARS = 4000  # of a turn handed to memgit observe (which keeps less)
# The file-writing and shell tools of Claude Code and Codex (Write, Edit, ..., Bash) and of
# Gemini CLI (write_file, replace, run_shell_command), with the argument naming the file.
FILE_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
              "NotebookEdit": "notebook_path", "write_file": "file_path",
              "replace": "file_path"}
SHELL_TOOLS = ("Bash", "run_shell_command")


# --- the guard ----------------------------------------------------------------------------


@dataclass(frozen=True)
class DrivePaths:
    """Where a drive's files are: its work tree (None when bare) and git directory."""

    workdir: Path | None
    git_dir: Path

    def holds(self, path: Path) -> bool:
        roots = [self.git_dir] + ([self.workdir] if self.workdir is not None else [])
        return any(path == root or root in path.parents for root in roots)


def find_drive_paths(start: str | None) -> DrivePaths | None:
    """The drive at or above ``start`` (one ``git rev-parse``, no pygit2), or None
    when it is not inside a git repository whose top folder has a MEMORY.md."""
    if not start:
        return None
    try:
        proc = subprocess.run(["git", "-C", start, "rev-parse", "--is-bare-repository",
                               "--absolute-git-dir", "--show-toplevel"],
                              capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = proc.stdout.splitlines()
    if proc.returncode != 0 or len(lines) < 2:
        return None
    git_dir = Path(lines[1]).resolve()
    if lines[0] == "true":
        return DrivePaths(None, git_dir)
    workdir = Path(lines[2]).resolve() if len(lines) > 2 else None
    if workdir is None or not (workdir / "MEMORY.md").is_file():
        return None
    return DrivePaths(workdir, git_dir)


def _resolve(path: str, cwd: Path) -> Path:
    p = Path(os.path.expanduser(path))
    return Path(os.path.realpath(p if p.is_absolute() else cwd / p))


GUARD_HINT = ("write to the memory drive through memgit instead (MCP tools remember, edit, "
              "forget; or memgit remember/edit/forget), which checks the drive's policy "
              "and commits")


def guard_reason(event: Mapping[str, Any], drive: DrivePaths) -> str | None:
    """Why this tool call must not run (None: let it run)."""
    tool = str(event.get("tool_name") or "")
    tool_input = event.get("tool_input") if isinstance(event.get("tool_input"), dict) else {}
    assert isinstance(tool_input, dict)
    cwd = Path(str(event.get("cwd") or os.getcwd()))
    if tool in FILE_TOOLS:
        target = tool_input.get(FILE_TOOLS[tool])
        if isinstance(target, str) and target and drive.holds(_resolve(target, cwd)):
            return f"memgit: {tool} on a file of the memory drive bypasses its writer; " \
                   + GUARD_HINT
        return None
    if tool in SHELL_TOOLS:
        command = tool_input.get("command")
        if isinstance(command, str):
            return command_reason(command, cwd, drive)
    return None


# Commands that write their file arguments; for these only the last argument is
# written (the others are read).
_WRITERS = frozenset("tee touch truncate rm rmdir unlink shred mkdir chmod chown mv dd "
                     "patch".split())
_LAST_ARG_WRITERS = frozenset("cp install ln rsync".split())
_IN_PLACE = frozenset("sed perl ruby".split())
# git subcommands that make commits, move refs or change the work tree.
_GIT_WRITES = frozenset("add am apply checkout cherry-pick clean commit filter-branch "
                        "filter-repo merge mv pull rebase reset restore revert rm stash "
                        "switch update-index update-ref replace notes".split())
_PREFIXES = frozenset("sudo command env nice nohup time xargs exec".split())
_SEPARATORS = frozenset([";", "&&", "||", "|", "&", "\n", "(", ")"])
_REDIRECTS = re.compile(r"\d*(>|>>|>\||&>|&>>)\Z")


def guard_decision(event: Mapping[str, Any], where: str | None, paths: tuple[str, ...] = (),
                   shell: str | None = None) -> str | None:
    """Why the guard refuses: the event's tool call, or writes to ``paths`` and the shell
    command ``shell`` when given (``--path``/``--command``); None allows (also outside
    a drive: the session's folder, or ``where``, is not in one)."""
    drive = find_drive_paths(where or os.getcwd())
    if drive is None:
        return None
    cwd = Path(str(event.get("cwd") or os.getcwd()))
    reason = None
    for path in paths:
        reason = reason or guard_reason({"tool_name": "Write", "cwd": str(cwd),
                                         "tool_input": {"file_path": path}}, drive)
    if shell is not None:
        reason = reason or command_reason(shell, cwd, drive)
    if not paths and shell is None:
        reason = guard_reason(event, drive)
    return reason


def _simple_commands(command: str) -> list[list[str]]:
    lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes: judge the plain words
        tokens = command.split()
    out: list[list[str]] = [[]]
    for token in tokens:
        if token in _SEPARATORS:
            out.append([])
        else:
            out[-1].append(token)
    return [c for c in out if c]


def command_reason(command: str, cwd: Path, drive: DrivePaths) -> str | None:
    """Why a shell command must not run: it writes into the drive (None: it may run)."""
    here = cwd
    for words in _simple_commands(command):
        words, redirected = _split_redirects(words)
        for target in redirected:
            if drive.holds(_resolve(target, here)):
                return f"memgit: this command writes {target!r} in the memory drive; " \
                       + GUARD_HINT
        while words and ("=" in words[0] and not words[0].startswith("=")
                         or words[0] in _PREFIXES):
            words = words[1:]
        if not words:
            continue
        name = os.path.basename(words[0])
        args = [w.split("=", 1)[1] if w.startswith("of=") else w
                for w in words[1:] if not w.startswith("-")]
        if name == "cd":
            here = _resolve(args[0], here) if args else Path.home()
        elif name == "memgit":
            continue
        elif name == "git":
            reason = _git_reason(words[1:], here, drive)
            if reason:
                return reason
        elif name in _WRITERS or (name in _IN_PLACE and any(
                w.startswith("-i") or w == "--in-place" for w in words[1:])):
            targets = args if name not in _IN_PLACE else args[1:]
            if any(drive.holds(_resolve(a, here)) for a in targets):
                return f"memgit: {name} would change files of the memory drive; " + GUARD_HINT
        elif name in _LAST_ARG_WRITERS and args and drive.holds(_resolve(args[-1], here)):
            return f"memgit: {name} would write into the memory drive; " + GUARD_HINT
    return None


def _split_redirects(words: list[str]) -> tuple[list[str], list[str]]:
    rest: list[str] = []
    targets: list[str] = []
    i = 0
    while i < len(words):
        if _REDIRECTS.match(words[i]) and i + 1 < len(words):
            targets.append(words[i + 1])
            i += 2
            continue
        rest.append(words[i])
        i += 1
    return rest, [t for t in targets if not t.startswith("&") and t != "/dev/null"]


def _git_reason(args: list[str], cwd: Path, drive: DrivePaths) -> str | None:
    where = cwd
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] in ("-C", "--git-dir", "--work-tree") and i + 1 < len(args):
            where = _resolve(args[i + 1], where)
            i += 2
            continue
        i += 1
    if i < len(args) and args[i] in _GIT_WRITES and drive.holds(where):
        return f"memgit: git {args[i]} in the memory drive bypasses its writer; " + GUARD_HINT
    return None


# --- recording a turn ----------------------------------------------------------------------


def turn_text(event: Mapping[str, Any]) -> str:
    """The assistant's last message: the event's ``last_assistant_message`` (Claude Code,
    Codex) or ``prompt_response`` (Gemini CLI's AfterAgent), else the last assistant text
    of the transcript (JSON lines) the event points at."""
    for key in ("last_assistant_message", "prompt_response"):
        text = event.get(key)
        if isinstance(text, str) and text.strip():
            return text.strip()[:RECORD_CHARS]
    path = event.get("transcript_path")
    if not isinstance(path, str) or not path:
        return ""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.readlines()[-200:]
    except OSError:
        return ""
    for line in reversed(lines):
        found = _assistant_text(line)
        if found:
            return found[:RECORD_CHARS]
    return ""


def _assistant_text(line: str) -> str:
    try:
        item = json.loads(line)
    except json.JSONDecodeError:
        return ""
    if not isinstance(item, dict) or item.get("type") != "assistant":
        return ""
    message = item.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        return "\n".join(str(c.get("text", "")) for c in content
                         if isinstance(c, dict) and c.get("type") == "text").strip()
    return ""


def observe_argv(event: Mapping[str, Any], drive: str | None) -> list[str]:
    """memgit's arguments to record a turn with ``observe`` (its text goes on stdin)."""
    argv = (["-C", drive] if drive else []) + ["observe"]
    session = event.get("session_id")
    if isinstance(session, str) and re.fullmatch(r"[A-Za-z0-9._:-]{1,128}", session):
        argv += ["--session", session]
    return argv + ["--role", "assistant", "-"]
