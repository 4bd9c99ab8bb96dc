"""MCP for the agent: external MCP servers' tools as agent tools, over the official ``mcp`` SDK.

::

    async with Agent(...).with_mcp_servers(["http://127.0.0.1:8000/mcp", "python my_server.py"]) as agent:
        async for chunk in agent.achat("..."):
            ...

Needs the ``mcp`` extra (``pip install 'semif-agent[mcp]'``). Connections are
lazy and async-only: see :mod:`semif_agent.agent.toolkits.mcp.servers`.
"""

from __future__ import annotations

from .client import MCPConnection, MCPError, MCPToolError, result_text
from .config import MCPServerConfig
from .servers import MCPServers, agent_tool, tool_name

__all__ = [
    "MCPServerConfig",
    "MCPConnection",
    "MCPServers",
    "MCPError",
    "MCPToolError",
    "agent_tool",
    "tool_name",
    "result_text",
]
