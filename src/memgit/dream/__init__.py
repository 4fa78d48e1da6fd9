"""memgit dream: nightly consolidation that a model proposes and code checks (docs/dream.md).

Owns, in the order a run uses them: ``observations`` (``memgit observe``, one turn of a
conversation), ``snapshot`` (what a proposer sees), ``rule_based`` and ``chat`` (the
rule-based proposer and the OpenAI-compatible model plugin), ``checks`` (code that
judges every suggestion before anything is applied), ``apply`` (accepted suggestions
-> one writer commit, the diff, the report), ``run`` (a whole run: ``--due``, the lease,
retries) and ``undo``. Its settings are policy.dream_settings.
May import: sync, recall, write, index, policy, state, plugins and what is below them.
Nothing here is imported by the git hooks.
"""
