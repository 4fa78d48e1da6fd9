"""Fleets of drives: every drive under a root folder at once (``memgit fleet``): census,
find, forget with receipts, each drive's night scheduled, and the fleet index.

Owns: ``history``, ``match``, ``store``, ``index``, ``census``, ``find``, ``forget`` and
``schedule``, as below; the walk over a root is git.roots (post-receive needs it too).
May import: drives, dream, purge, write and what is below them (it acts on each drive
through that drive's own functions); nothing below imports it: post-receive updates
the fleet index by running ``memgit fleet index --drive`` in a process of its own.

* :mod:`memgit.fleet.history`: a drive's entry versions at its head and in its history;
* :mod:`memgit.fleet.match`: what a query (words, phrase, regex) matches, for every path;
* :mod:`memgit.fleet.store`: the fleet index's database, one schema on SQLite and
  PostgreSQL (the fleet's only SQL);
* :mod:`memgit.fleet.index`: drives described, fingerprints, refresh, the PostgreSQL
  copy, post-receive's row;
* :mod:`memgit.fleet.census`, :mod:`memgit.fleet.find`, :mod:`memgit.fleet.forget`,
  :mod:`memgit.fleet.schedule`: the commands' work (docs/fleet.md).

PostgreSQL needs the ``fleet`` extra (``pip install '.[fleet]'``); the embedded
index does not.
"""
