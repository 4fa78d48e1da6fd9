"""Working memory: key/value state per agent (and team) on its own ref beside the branch.

``store`` reads and writes it (``memgit set/get/unset/keys``, the MCP tools), ``sync``
brings it to and from a server with ``memgit sync`` and ``memgit clone``. What may land is
``policy.working``'s; docs/working-memory.md says where it lives and why.
"""
