"""memgit's access to git, in layers (nothing else imports pygit2 or runs ``git``).

Owns, hook-safe (no pygit2: pre-receive, pre-commit and the quick path may import them):
``modes`` (tree entry modes), ``plumbing`` (the ``git`` executable with a fixed git dir),
``raw`` (the one ``cat-file --batch`` reader, raw tree parser and tree cache),
``rewrite`` (one pack written, refs moved in one transaction, reflogs expired, pruning),
``files`` (a git dir, refs and config read from the files), ``roots`` (the bare
repositories under a fleet's root, and the root a drive belongs to); through pygit2:
``repository`` (a drive's repository: trees, blobs, commits, compare-and-swap ref moves)
and ``worktree`` (a checkout and git's staging area); with the user's git and its
credentials: ``remote`` (fetch, push, clone).
May import: errors, format and the standard library. This file imports nothing, so
importing a hook-safe module never loads pygit2.
"""

DEFAULT_BRANCH = "main"  # the branch a new drive starts on, and the policy's default
TMP_SUFFIX = ".memgit-tmp"  # git.worktree.write_worktree_file and githooks.install write these
