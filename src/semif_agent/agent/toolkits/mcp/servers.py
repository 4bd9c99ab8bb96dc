"""An agent's MCP servers: connected lazily, their tools mapped to :class:`AgentTool`, closed with the agent.

On the agent's first async turn (``astream``, and so ``achat``/``arun``)
every configured server is connected and its tools listed. Each MCP tool
becomes an :class:`AgentTool` with the server's name (after ``tool_prefix``;
characters a tool name cannot hold become ``_``), description and input
schema, and ``read_only`` from its ``readOnlyHint`` annotation (so read-only
MCP calls run concurrently). The tools join the agent through the same
check as ``with_tools`` (the agent's :class:`~semif_agent.agent.own_tools.OwnTools`): a name already taken (by a local tool, another
server's tool, ...) is a :class:`~semif_agent.agent.ToolNameCollisionError`
naming the server, and the turn does not start.

A server whose connection died (or whose event loop ended) is reconnected
on the next turn. ``Agent.aclose()`` closes every connection and takes
their tools off.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..._session import claim
from ...errors import AgentConfigError, ToolNameCollisionError
from ...tools import AgentTool
from ...toolsets import AgentToolset, Prepared, ToolsetView
from .client import MCPConnection, require_sdk
from .config import MCPServerConfig

_NOT_NAME = re.compile(r"[^A-Za-z0-9_-]")
_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


def tool_name(config: MCPServerConfig, name: str) -> str:
    """The agent-side name of MCP tool ``name``: prefixed, with invalid characters made ``_``, at most 64 long."""
    return _NOT_NAME.sub("_", f"{config.tool_prefix}{name}")[:64] or "_"


def agent_tool(connection: MCPConnection, listed: dict[str, Any]) -> AgentTool:
    """The :class:`AgentTool` that calls MCP tool ``listed`` (protocol data from ``tools/list``) on ``connection``."""
    config = connection.config
    remote = str(listed["name"])
    annotations = listed.get("annotations") or {}
    schema = listed.get("inputSchema") or _EMPTY_SCHEMA
    if schema.get("type") != "object":
        schema = {**schema, "type": "object"}
    description = listed.get("description") or annotations.get("title") or listed.get("title") or remote

    async def call(**arguments: Any) -> str:
        return await connection.call_tool(remote, arguments)

    call.__name__ = tool_name(config, remote)
    return AgentTool(
        name=tool_name(config, remote),
        description=f"{description} (MCP server {config.name})",
        input_schema=schema,
        fn=call,
        read_only=annotations.get("readOnlyHint") is True,
        timeout=config.call_timeout,
    )


class MCPServers(AgentToolset):
    """The MCP servers of one agent and, once connected, their connections and tools (a toolset: see
    :mod:`semif_agent.agent.toolsets`)."""

    name = "MCP servers"
    async_only = True

    def __init__(self, servers: Sequence[str | MCPServerConfig | dict[str, Any]] = ()) -> None:
        self.configs: list[MCPServerConfig] = []
        self.connections: dict[str, MCPConnection] = {}
        self.tool_names: dict[str, list[str]] = {}  # server name -> the agent-side names of its tools
        self.tools: dict[str, AgentTool] = {}
        self.changes = 0
        self._lock: asyncio.Lock | None = None
        self._lock_loop: asyncio.AbstractEventLoop | None = None
        if servers:
            self.add(servers)

    def add(self, servers: Sequence[str | MCPServerConfig | dict[str, Any]]) -> None:
        require_sdk()
        configs = [MCPServerConfig.parse(server) for server in servers]
        names = [c.name for c in self.configs]
        for config in configs:
            if config.name in names:
                raise AgentConfigError(f"two MCP servers are named {config.name!r}; give one another name")
            names.append(config.name)
        self.configs.extend(configs)

    # -- as a toolset --------------------------------------------------------------

    @property
    def version(self) -> object:
        return self.changes

    @property
    def active(self) -> bool:
        return bool(self.tools)

    @property
    def fixed_tools(self) -> tuple[AgentTool, ...]:
        return tuple(self.tools.values())

    def claims(self) -> Mapping[str, str]:
        return {name: f"a tool of MCP server {server!r}" for server, names in self.tool_names.items() for name in names}

    def view(self, prepared: Prepared) -> ToolsetView:
        return ToolsetView(tools=dict(self.tools))

    async def open(self, taken: Mapping[str, str]) -> None:
        """Connect every server not connected on this loop; a tool name ``taken`` (or another server's) stops it."""
        if all(c.name in self.connections and self.connections[c.name].alive for c in self.configs):
            return
        async with self._loop_lock():
            for config in self.configs:
                connection = self.connections.get(config.name)
                if connection is not None and connection.alive:
                    continue
                if connection is not None:  # dead, or from an event loop that has ended
                    await self._drop(config.name)
                await self._connect(config, taken)

    async def _connect(self, config: MCPServerConfig, taken: Mapping[str, str]) -> None:
        connection = MCPConnection(config)
        await connection.open()
        try:
            listed = await asyncio.wait_for(connection.list_tools(), config.connect_timeout)
            wanted = [t for t in listed if _wanted(config, str(t.get("name", "")))]
            tools = [agent_tool(connection, t) for t in wanted]
            try:
                claim([t.name for t in tools], {**taken, **self.claims()})  # the agent's one name check
            except ToolNameCollisionError as exc:
                raise ToolNameCollisionError(f"MCP server {config.name!r}: {exc}") from None
        except BaseException:
            await connection.aclose()
            raise
        self.connections[config.name] = connection
        self.tool_names[config.name] = [t.name for t in tools]
        self.tools.update((t.name, t) for t in tools)
        self.changes += 1

    async def _drop(self, name: str) -> None:
        connection = self.connections.pop(name, None)
        for tool_name in self.tool_names.pop(name, []):
            self.tools.pop(tool_name, None)
        self.changes += 1
        if connection is not None:
            await connection.aclose()

    async def aclose(self) -> None:
        """Close every connection and take the servers' tools off."""
        for name in list(self.connections):
            await self._drop(name)

    @property
    def connected(self) -> bool:
        return bool(self.connections) and all(c.alive for c in self.connections.values())

    def _loop_lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock_loop is not loop:
            self._lock, self._lock_loop = asyncio.Lock(), loop
        return self._lock


def _wanted(config: MCPServerConfig, name: str) -> bool:
    """Whether the server's tool ``name`` is kept: ``include_tools`` / ``exclude_tools`` name it by the server's
    name or by its agent-side name (``wipe.all`` is excluded by ``wipe_all`` too, the name the agent would give it)."""
    names = {name, tool_name(config, name)}
    if config.include_tools is not None and names.isdisjoint(config.include_tools):
        return False
    return names.isdisjoint(config.exclude_tools)
