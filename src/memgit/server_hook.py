"""The entry point hooks installed before version 3 call (``memgit.server_hook``).

Kept so that a server upgraded with pip keeps judging pushes until its hooks are
reinstalled (``memgit install-hooks --check`` names them outdated; ``memgit
install-hooks --server REPO`` rewrites them to call ``memgit.githooks.entry``).
"""

from memgit.githooks.entry import hook_main

__all__ = ["hook_main"]
