"""memgit dream: nightly consolidation that a model proposes and code checks (docs/dream.md).

The package's modules, in the order a run uses them:

* ``config``: the ``dream:`` section of memgit.yaml;
* ``store``: the SQL of observations and dream runs (the lease, the reports);
* ``observations``: ``memgit observe``, one turn of a conversation;
* ``snapshot``: what a proposer sees (entries, retrieval counts, ages, turns);
* ``rules`` and ``chat``: the rule-based proposer and the OpenAI-compatible model plugin;
* ``checks``: code that judges every suggestion before anything is applied;
* ``apply``: accepted suggestions -> one writer commit, the diff, the report;
* ``run``: a whole run (``--due``, the lease, retries), and ``undo``.

Nothing here is imported by the git hooks; ``config.check_section`` is the only
function the policy parser calls, and it imports nothing heavy.
"""
