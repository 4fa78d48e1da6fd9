"""memgit serve: every drive under one root over git's smart HTTP, with drive-scoped
tokens, Prometheus metrics and a read-only dashboard (docs/serve.md).

Owns: ``paths``, ``tokens``, ``backend``, ``app``, ``server``, ``metrics``, ``pages``,
``views`` (and its templates) and ``history``, as below.
May import: drives, sync, recall, write, githooks and what is below them (it reads drives
through their own functions and writes nothing to them).

* :mod:`memgit.serve.paths`: owner and drive names, and the one way from a name or a URL
  to a folder inside the root (no ``..``, no symlink, no control character);
* :mod:`memgit.serve.tokens`: making, listing, revoking and checking tokens (salted
  hashes in memgit.state.tokens);
* :mod:`memgit.serve.backend`: git's own ``git http-backend`` run as a CGI, streamed both
  ways;
* :mod:`memgit.serve.app`: the ASGI application (routing, access, limits, the log);
* :mod:`memgit.serve.server`: uvicorn, with a deadline for a request's headers;
* :mod:`memgit.serve.metrics`: the server's request counts and latencies, and /metrics;
* :mod:`memgit.serve.pages` and :mod:`memgit.serve.views`: what the dashboard shows and
  its templates (Jinja2, every value escaped);
* :mod:`memgit.serve.history`: an entry's versions along the branch.

The web parts need the ``serve`` extra (``pip install '.[serve]'``); paths and
tokens do not, so ``memgit token`` works without it.
"""
