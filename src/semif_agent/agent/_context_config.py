"""The Agent's configuration for memory, retrieval scope, the context budget and MCP (a part of :class:`~.agent.Agent`)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .budget import TokenBudget
from .errors import AgentConfigError
from .memory import MemoryManager
from .memory_tool import FileMemoryBackend, memory_tool
from .scope import RetrievalScope

if TYPE_CHECKING:
    from .agent import Agent
    from .mcp import MCPServerConfig


class ContextConfig:
    """``with_memory``, ``with_memory_tool``, ``with_scope``, ``with_budget`` and ``with_mcp_servers``.
    Mixed into :class:`~.agent.Agent`."""

    def with_memory(self, memory: MemoryManager) -> Agent:
        """Keep the conversation in ``memory``'s session (it outlives the agent); facts via ``memory_tools``/``memory_skill``."""
        if not isinstance(memory, MemoryManager):
            raise AgentConfigError(f"with_memory takes a MemoryManager, got {type(memory).__name__}")
        if self._output is not None and self._output.mode == "prompted":
            raise AgentConfigError("with_memory cannot be combined with prompted structured output; use mode='tool'")
        self._memory = memory
        return self._changed()

    def with_memory_tool(self, backend: FileMemoryBackend | str | os.PathLike[str]) -> Agent:
        """Add the ``memory`` tool over ``backend`` (or its base path) and the memory protocol to the system prompt."""
        self.with_tools([memory_tool(backend)])
        self._memory_protocol = True
        return self._changed()

    def with_scope(self, scope: RetrievalScope | Mapping[str, Any] | None) -> Agent:
        """Set the scope published during each tool call; a subagent's is intersected with its parent's."""
        if scope is not None and not isinstance(scope, RetrievalScope):
            scope = RetrievalScope(**dict(scope))
        self._scope = scope
        return self._changed()

    def with_budget(self, budget: TokenBudget | Mapping[str, Any] | None) -> Agent:
        """Cap what enters the context window (see :class:`~semif_agent.agent.TokenBudget`; ``None``: no caps)."""
        if budget is not None and not isinstance(budget, TokenBudget):
            budget = TokenBudget(**dict(budget))
        self._budget = budget
        return self._changed()

    def with_mcp_servers(self, servers: Sequence[str | MCPServerConfig]) -> Agent:
        """Add MCP servers (configs, URLs or command lines), connected on the first async turn."""
        from .mcp import MCPServers

        if isinstance(servers, str):
            servers = [servers]
        if self._mcp is None:
            self._mcp = MCPServers()
        self._mcp.add(list(servers))
        return self._changed()

    def _remove_discovered_tools(self, names: Sequence[str]) -> None:
        """Take off tools found at run time (MCP; they were added by :meth:`with_tools`, through its name check)."""
        gone = {name for name in names if name in self._tools}
        if not gone:
            return
        self._schema_tokens -= sum(self._tools[n].schema_tokens for n in gone if any(s.name == n for s in self._specs))
        self._specs = tuple(spec for spec in self._specs if spec.name not in gone)
        for name in gone:
            del self._tools[name]
        self._changed()

    def _refuse_sync_with_mcp(self, what: str) -> None:
        if self._mcp is not None:
            raise AgentConfigError(f"{what} cannot be used with MCP servers: they need the async variant "
                                   "(astream, achat or arun, then aclose or `async with agent:`)")
