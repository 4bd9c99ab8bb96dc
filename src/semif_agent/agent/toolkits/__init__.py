"""What an agent can be given besides its own tools: memory, retrieval and MCP servers.

Each toolkit sits on the agent's core (tools, errors, skills, the scope and
the per-run context), never the other way round; the
:class:`~semif_agent.agent.Agent` reaches them through its one-line
``with_memory``, ``with_memory_tool`` and ``with_mcp_servers`` methods, and
:mod:`semif_agent.agent` exports their public names.
"""
