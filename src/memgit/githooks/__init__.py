"""The git hooks memgit runs as: pre-receive and post-receive on a server drive,
pre-commit on a checkout, and installing them.

Owns: ``entry`` (what an installed hook script calls), ``hook_io`` (git's OLD NEW REF
lines in, the pusher's lines out), ``receive`` (pre-receive: a push judged by the
policy), ``verdict`` (the lines a refusal prints), ``post_receive`` (count and reindex,
detached), ``precommit`` (the pre-commit framework's entry), ``install``, ``warm`` (the
warm judge: one process that has imported all this once forks a child per hook run) and
``warm_client`` (what a hook script runs first to reach it).
May import: policy, index, embeddings, state, secrets, format, git and what is below them.
The hooks' own paths never load pygit2, click or a plugin (tests/test_architecture.py).
"""
