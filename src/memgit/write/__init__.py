"""The writer: the one path by which memgit writes memory.

Owns: ``writer`` (the write lock, the compare-and-swap commit, the pending queue),
``ops`` (what a write asks for and what it did), ``plan`` (new file texts and the
Index section, judged by the policy before anything is committed), ``board`` (the
questions board).
May import: index, embeddings, policy, state, format, git and what is below them.
Every write regenerates the Index section and reindexes in the same step.
"""
