"""What may land on a drive: the one implementation of every rule and its settings.

Owns: ``judge`` (the rules: paths, blobs, trees, pushes, commits), ``settings`` (the
Policy record, memgit.yaml, where a drive's policy is found), ``codes`` (the stable
rule codes, names and hints), ``kinds`` (drive kinds and their defaults),
``registry`` (the purge registry and lock), ``census`` (entries against the caps),
``lint`` (judging a work tree, the staged files or a commit), and the leaves
``dream_settings`` and ``embedding_settings`` (sections of memgit.yaml).
May import: secrets, format, git, errors, safe_text. lint, pre-commit, pre-receive and
the writer all judge through this package; none re-implements a rule.
"""

# The ref of working memory, judged by its own rules (policy.working); here so that
# pre-receive can tell a push to it without importing those rules.
WORKING_REF = "refs/memgit/working"
