"""memgit dream: nightly consolidation that a model proposes and code checks (docs/dream.md).

The package's modules, in the order a run uses them:

* ``config``: the ``dream:`` section of memgit.yaml;
* ``observations``: ``memgit observe``, one turn of a conversation (its rows in
  ``memgit.state.observations``; the runs, the lease and the reports in
  ``memgit.state.dream``);
* ``snapshot``: what a proposer sees (entries, retrieval counts, ages, turns);
* ``rules`` and ``chat``: the rule-based proposer and the OpenAI-compatible model plugin;
* ``checks``: code that judges every suggestion before anything is applied;
* ``apply``: accepted suggestions -> one writer commit, the diff, the report;
* ``run``: a whole run (``--due``, the lease, retries), and ``undo``.

Nothing here is imported by the git hooks; ``config.check_section`` is the only
function the policy parser calls (``policy.SECTIONS["dream"]``), and it imports
nothing heavy.
"""
