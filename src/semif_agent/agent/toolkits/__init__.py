"""What an agent can be given besides its own tools: memory, retrieval and MCP servers.

Each toolkit sits on the agent's core (tools, errors, skills, the scope and
the per-run context), never the other way round. The MCP servers, the
``memory`` tool and the retrieval tools are toolsets
(:mod:`semif_agent.agent.toolsets`): ``Agent(toolsets=[...])`` takes them, and
the one-line ``with_memory_tool`` and ``with_mcp_servers`` add them;
``with_memory`` keeps the conversation in a :class:`~.memory.MemoryManager`.
:mod:`semif_agent.agent` exports their public names.
"""
