"""The official MCP SDK's client, talking to `semif mcp` in a real process over stdio or streamable HTTP."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncIterator, Generator
from pathlib import Path
from typing import Any

import httpx2
from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters, stdio_client


class Client:
    """A session, and the notifications the server sent it."""

    def __init__(self, session: ClientSession, notices: list[Any]) -> None:
        self.session = session
        self.notices = notices

    async def call(self, tool: str, **arguments: Any) -> Any:
        """The tool's JSON answer; an error result raises :class:`ToolFailed` with its text."""
        result = await self.session.call_tool(tool, arguments)
        text = "".join(part.text for part in result.content if isinstance(part, types.TextContent))
        if result.is_error:
            raise ToolFailed(text)
        try:
            return json.loads(text)
        except ValueError:
            return text

    def saw_list_changed(self) -> bool:
        return any(isinstance(n, types.ResourceListChangedNotification) for n in self.notices)


class ToolFailed(Exception):
    pass


def _notices() -> tuple[list[Any], Any]:
    seen: list[Any] = []

    async def handle(message: Any) -> None:
        seen.append(getattr(message, "root", message))

    return seen, handle


@contextlib.asynccontextmanager
async def stdio(workspace: Path, env: dict[str, str], *args: str, errlog: Any = None) -> AsyncIterator[Client]:
    """`python -m semif_agent mcp -w WORKSPACE` started by the SDK's stdio client (its stderr to ``errlog``, a file)."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "semif_agent", "mcp", "-w", str(workspace), *args], env=env
    )
    seen, handle = _notices()
    async with (
        stdio_client(params, errlog=errlog or sys.stderr) as (read, write),
        ClientSession(read, write, message_handler=handle) as session,
    ):
        await session.initialize()
        yield Client(session, seen)


class Bearer(httpx2.Auth):
    """The bearer ``token`` on every request of the SDK's HTTP client, and the status of each answer (``statuses``)."""

    def __init__(self, token: str | None) -> None:
        self.token = token
        self.statuses: list[int] = []

    def auth_flow(self, request: httpx2.Request) -> Generator[httpx2.Request, httpx2.Response, None]:
        if self.token:
            request.headers["Authorization"] = f"Bearer {self.token}"
        response = yield request
        self.statuses.append(response.status_code)


@contextlib.asynccontextmanager
async def http(url: str, token: str | Bearer | None, *, name: str | None = None) -> AsyncIterator[Client]:
    """The SDK's streamable HTTP client at ``url``, sending ``token`` as a bearer token (a :class:`Bearer` keeps the
    statuses of its answers), calling itself ``name`` in the handshake (the SDK's own name unless given)."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    info = types.Implementation(name=name, version="1") if name else None
    seen, handle = _notices()
    async with (
        create_mcp_http_client(auth=token if isinstance(token, Bearer) else Bearer(token)) as http_client,
        streamable_http_client(url, http_client=http_client) as streams,
        ClientSession(streams[0], streams[1], message_handler=handle, client_info=info) as session,
    ):
        await session.initialize()
        yield Client(session, seen)
