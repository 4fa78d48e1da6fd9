"""Whole drives: creating, cloning, adopting, forking, backing up and restoring them,
housekeeping, caps and what ``memgit info`` shows.

Owns: ``create`` (init, clone, adopt), ``fork``, ``backup`` (backup and restore),
``maintain`` (memgit maintain's steps), ``compact`` (entries over the caps removed),
``info`` (the drive at a glance).
May import: dream, sync, purge, recall, githooks, write and what is below them.
"""
