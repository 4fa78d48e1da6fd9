"""What agents call: the operations behind the MCP server and the agent hooks, the MCP
server itself, the hooks agent tools run, and installing an agent integration.

Owns: ``operations`` (AgentDrive: one drive kept open for many calls), ``mcp`` and
``mcp_stdio`` (``memgit mcp``), ``hooks`` and ``hook_io`` (``memgit agent-hook``),
``install`` (``memgit install-agent``, the bundles of plugins/).
May import: sync, recall, write, embeddings, index, policy and what is below them.
"""
