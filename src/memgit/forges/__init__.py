"""memgit where teams host git: ``memgit check`` for CI, the gate for forges without
server hooks, the CI environments they read, and server state kept in refs.

* :mod:`memgit.forges.judge` judges a revision range with pre-receive's own code;
* :mod:`memgit.forges.ci_env` finds the range a CI run is about (GitHub, GitLab);
* :mod:`memgit.forges.formats` prints a verdict as text, JSON, SARIF 2.1.0, GitHub
  workflow commands or a GitLab code quality report;
* :mod:`memgit.forges.gate` lands agents' incoming branches on main (``memgit gate``),
  :mod:`memgit.forges.incoming` is ``memgit sync``'s side of it;
* :mod:`memgit.policy.registry_refs` keeps the purge registry in refs, so a replica
  that receives refs and objects judges like its primary.

docs/forges.md describes what runs where.
"""
