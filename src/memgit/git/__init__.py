"""memgit's access to git, in layers (nothing else imports pygit2 or runs ``git``).

Hook-safe (no pygit2; what pre-receive and pre-commit may import):

* ``modes``      the file modes of tree entries;
* ``plumbing``   running the ``git`` executable: plumbing commands with a fixed
                 git dir, config, hooks folder, the commits a push brings;
* ``raw``        raw objects: the one ``cat-file --batch`` reader, the one raw tree
                 parser, the one level-by-level tree cache (receive and purge);
* ``rewrite``    history rewriting: writing a pack, moving refs in one
                 transaction, expiring reflogs and pruning.

pygit2 (the writer, the recall index, sync, lint of a commit or a checkout):

* ``repository`` a drive's repository: opening and creating it, trees and blobs,
                 commits, compare-and-swap ref moves;
* ``worktree``   a checkout: its work tree files and git's staging area;

and the network, with the user's git (credentials, ssh config):

* ``remote``     fetch, push, clone.

This file imports nothing, so importing a hook-safe module never loads pygit2.
"""

DEFAULT_BRANCH = "main"  # the branch a new drive starts on, and the policy's default
