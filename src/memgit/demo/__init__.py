"""``memgit demo``: the newcomer's tour on a temporary drive, server and agents.

Owns: ``tour`` (the order of the steps), ``writing`` (writer, recall, board),
``sync`` (two offline agents), ``dream`` (a night and its undo).
May import: drives, dream, sync, recall, write and what is below them.
"""
