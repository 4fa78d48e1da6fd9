"""The pre-commit entry point: judge a checkout's staged files, or fix its Index section,
without click or pygit2 (``memgit-precommit [--fix-index] [--strict] [--policy FILE]``).

It prints and exits like ``memgit lint --cached`` (0 clean, 1 violations, 2 a usage or
input error, 3 an internal error), ``--fix-index`` like ``memgit lint --fix --select
MG502``. Staged files are read with ``git ls-files --stage`` and ``git cat-file``, which
honour GIT_INDEX_FILE (``git commit -a`` stages into a temporary index named there).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from memgit.errors import (
    INTERNAL_EXIT,
    MemgitError,
    NotADriveError,
    UsageError,
    error_lines,
    internal_error_lines,
)

USAGE = "usage: memgit-precommit [--fix-index] [--strict] [--policy FILE]"


def checkout(path: Path) -> tuple[Path, Path]:
    """(git directory, top of the work tree) of the checkout containing ``path``."""
    from memgit.git.plumbing import git

    proc = git("rev-parse", "--absolute-git-dir", "--show-toplevel", cwd=path, check=False)
    lines = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
    if proc.returncode != 0 or len(lines) != 2:
        raise NotADriveError.not_git(str(path))
    return Path(lines[0]), Path(lines[1])


def run(argv: list[str]) -> int:
    from memgit.git.plumbing import config_get
    from memgit.policy.judge import ERROR
    from memgit.policy.lint import (
        fix_index_section,
        lint_staged,
        lint_worktree,
        report_lines,
        summary,
    )
    from memgit.policy.settings import find_policy

    fix = strict = False
    policy_file: str | None = None
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "--fix-index":
            fix = True
        elif arg == "--strict":
            strict = True
        elif arg == "--policy" and args:
            policy_file = args.pop(0)
        else:
            raise UsageError(f"unknown argument {arg!r}", USAGE)
    git_dir, workdir = checkout(Path(os.getcwd()))
    policy = find_policy(policy_file, git_dir, config_get(git_dir, "memgit.policy"))
    if fix:
        fixed = fix_index_section(workdir)
        violations = [v for v in lint_worktree(git_dir, workdir, policy, strict=strict)
                      if v.code == "MG502"]
    else:
        fixed = False
        violations = lint_staged(git_dir, workdir, policy, strict=strict)
    out = report_lines(violations, policy)
    if out:
        sys.stdout.write("".join(line + "\n" for line in out))
        sys.stdout.flush()
    if fixed:
        print("memgit lint: regenerated the ## Index of MEMORY.md", file=sys.stderr)
    if violations:
        print(f"\nmemgit lint: {summary(violations)}", file=sys.stderr)
    return 1 if any(v.severity == ERROR for v in violations) else 0


def main(argv: list[str] | None = None) -> int:
    """The one handler of this entry point (the same messages and statuses as cli.main)."""
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except MemgitError as err:
        from memgit.policy.judge import quote

        print("\n".join(quote(line) for line in error_lines(err)), file=sys.stderr)
        return err.exit_code
    except Exception as exc:  # noqa: BLE001 - unexpected: one line, exit 3
        debug = os.environ.get("MEMGIT_DEBUG") == "1"
        print("\n".join(internal_error_lines(exc, debug=debug)), file=sys.stderr)
        return INTERNAL_EXIT


if __name__ == "__main__":
    sys.exit(main())
