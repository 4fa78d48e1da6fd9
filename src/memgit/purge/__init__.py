"""``memgit purge``: deleting entries from every commit of a drive.

Owns: ``rewrite`` (plan and apply: every reachable commit rebuilt without the purged
lines, refs moved with compare-and-swap, reflogs expired, objects pruned), ``plan`` (what
a purge will do and did), ``text`` (what a purge removes and the check that nothing
survived).
May import: write, index, policy, state, format, git and what is below them.
"""
