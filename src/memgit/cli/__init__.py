"""The command line: the ``memgit`` entry point, the quick path and one module per command.

Owns: ``quick`` (what the ``memgit`` script loads first: recall, context, status and the
agent hooks answered without click or pygit2 when they can be), ``quick_read`` (the
quick path's reads), ``options`` (the options both paths share), ``main`` (the click
group and the one error handler), ``common`` (finding the drive, printing results) and
``commands/`` (parse arguments, call the library, print).
May import every package; only ``__main__`` imports it.
"""
