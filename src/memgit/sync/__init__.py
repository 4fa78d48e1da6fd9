"""Many checkouts, one drive: the replay-and-sync client and shared drives mounted
read-only.

Owns: ``client`` (``memgit sync``), ``replay`` (the entry operations between two
trees, applied to another), ``status`` (where a checkout stands against its server),
``mounts`` and ``mount_dirs`` (shared drives next to a personal one).
May import: purge, recall, write, index, embeddings, policy, state, format, git, errors.
"""
