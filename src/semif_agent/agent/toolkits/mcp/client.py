"""One live connection to an MCP server, over the official ``mcp`` SDK (1.9 and later, 2.x included).

The SDK's transports and session are async context managers built on anyio
task groups, which must be left by the task that entered them. So each
connection runs in a task of its own that opens the transport and the
session, initializes, and then waits to be told to close; tool calls from
any task of the same event loop go through the session. A connection
belongs to the loop it was opened on; once that loop is gone (each
``asyncio.run`` has its own) it reports itself not :attr:`alive`.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import sys
from typing import Any

from pydantic import BaseModel

from ....errors import check_type
from ...errors import AgentConfigError, AgentError
from .config import MCPServerConfig

log = logging.getLogger("semif_agent.agent.mcp")

CLOSE_TIMEOUT = 10.0
PING_TIMEOUT = 5.0


class MCPError(AgentError):
    """An MCP server could not be reached, or failed while connected."""


class MCPToolError(AgentError):
    """An MCP tool answered with an error (the model sees it as an error result)."""


def require_sdk() -> None:
    """Raise a one-line install hint when the ``mcp`` SDK is missing."""
    try:
        import mcp  # noqa: F401 - imported only to see that the SDK is installed
    except ImportError as exc:
        raise AgentConfigError("MCP servers need the mcp SDK: pip install 'semif-agent[mcp]'") from exc


def dump(model: BaseModel | dict[str, Any]) -> dict[str, Any]:
    """An SDK model as data with the protocol's (camelCase) keys, whatever the SDK version."""
    if isinstance(model, dict):
        return model
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


class MCPConnection:
    """A session with one server: :meth:`open`, :meth:`list_tools`, :meth:`call_tool`, :meth:`aclose`."""

    def __init__(self, config: MCPServerConfig) -> None:
        check_type("config", config, MCPServerConfig)
        self.config = config
        self.session: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._opened = False
        self.error: BaseException | None = None

    @property
    def alive(self) -> bool:
        """True while the session is open on the running event loop."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return False
        return (
            self.session is not None
            and self._loop is loop
            and self._task is not None
            and not self._task.done()
            and not loop.is_closed()
        )

    async def open(self) -> None:
        """Connect and initialize, within ``connect_timeout``; :class:`MCPError` when it cannot."""
        require_sdk()
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        ready: asyncio.Future[None] = self._loop.create_future()
        self._task = asyncio.create_task(self._run(ready), name=f"mcp:{self.config.name}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.config.connect_timeout)
        except BaseException as exc:
            await self.aclose()
            if ready.done() and not ready.cancelled():
                ready.exception()  # retrieved: reported below
            if isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt)):
                raise
            reason = "it did not answer in time" if isinstance(exc, TimeoutError) else _reason(exc)
            raise MCPError(
                f"cannot connect to MCP server {self.config.name!r} ({self.config.describe()}): {reason}"
            ) from exc

    async def _run(self, ready: asyncio.Future[None]) -> None:
        from mcp import ClientSession

        assert self._stop is not None
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await _open_transport(stack, self.config)
                session = await stack.enter_async_context(ClientSession(read, write))
                await session.initialize()
                self.session, self._opened = session, True
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:  # reported to open(), or kept for the next call
            self.error = exc
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else MCPError("the connection was cancelled"))
            elif not isinstance(exc, (asyncio.CancelledError, GeneratorExit)):
                log.warning("MCP server %r disconnected: %s", self.config.name, _reason(exc))
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self.session = None

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool the server offers (all pages), as protocol data."""
        session = self._session()
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(1000):
            result = dump(await _list_page(session, cursor))
            tools.extend(result.get("tools") or ())
            cursor = result.get("nextCursor")
            if not cursor:
                break
        return tools

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> str:
        """Call tool ``name``; its result as text. Raises :class:`MCPToolError` when the tool reports an error."""
        session = self._session()
        try:
            result = dump(await session.call_tool(name, arguments))
        except Exception as exc:
            if not await self._answers_ping(session):
                self._lost(exc)
                raise MCPError(f"MCP server {self.config.name!r} disconnected: {_reason(exc)}") from exc
            raise MCPError(f"MCP server {self.config.name!r} failed the call: {_reason(exc)}") from exc
        text = result_text(result)
        if result.get("isError"):
            raise MCPToolError(text or "the tool reported an error")
        return text

    async def _answers_ping(self, session: Any) -> bool:
        try:
            await asyncio.wait_for(session.send_ping(), PING_TIMEOUT)
        except Exception:  # noqa: BLE001 - any failure means the server is gone
            return False
        return True

    def _lost(self, exc: BaseException) -> None:
        """The server is gone: stop the connection task, so the next turn connects again."""
        self.error, self.session = exc, None
        if self._stop is not None:
            self._stop.set()

    def _session(self) -> Any:
        if not self.alive:
            reason = f": {_reason(self.error)}" if self.error is not None else ""
            raise MCPError(f"MCP server {self.config.name!r} is not connected{reason}")
        return self.session

    async def aclose(self) -> None:
        """Close the session and the transport (a stdio server's process ends with it)."""
        task, self._task = self._task, None
        if task is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:  # pragma: no cover - aclose is awaited, so a loop runs
            running = None
        if self._loop is not running or task.done():
            return  # its loop is gone (and took the task with it), or it already ended
        assert self._stop is not None
        self._stop.set()
        if self._opened:  # it connected: let it leave the session and the transport in order
            with contextlib.suppress(TimeoutError, Exception):
                await asyncio.wait_for(asyncio.shield(task), CLOSE_TIMEOUT)
        if not task.done():  # still connecting (or stuck closing): cancel it
            task.cancel()
            with contextlib.suppress(BaseException):
                await task

    def __repr__(self) -> str:
        return f"<MCPConnection {self.config.name!r} {'open' if self.alive else 'closed'}>"


async def _open_transport(stack: contextlib.AsyncExitStack, config: MCPServerConfig) -> tuple[Any, Any]:
    if config.transport == "stdio":
        from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client

        env = {**get_default_environment(), **config.env} if config.env else None
        params = StdioServerParameters(command=str(config.command), args=list(config.args), env=env, cwd=config.cwd)
        streams = await stack.enter_async_context(stdio_client(params, errlog=sys.stderr))
        return streams[0], streams[1]
    from mcp.client import streamable_http

    headers = dict(config.headers) or None
    modern = getattr(streamable_http, "streamable_http_client", None)
    if modern is not None and "http_client" in inspect.signature(modern).parameters:
        from mcp.shared._httpx_utils import create_mcp_http_client

        client = await stack.enter_async_context(create_mcp_http_client(headers=headers))
        streams = await stack.enter_async_context(modern(str(config.url), http_client=client))
    else:  # mcp 1.x before streamable_http_client
        streams = await stack.enter_async_context(
            streamable_http.streamablehttp_client(str(config.url), headers=headers)  # type: ignore[attr-defined]  # mcp 1.x's name, gone from newer SDKs
        )
    return streams[0], streams[1]


async def _list_page(session: Any, cursor: str | None) -> Any:
    if cursor is None:
        return await session.list_tools()
    parameters = inspect.signature(session.list_tools).parameters
    if "params" in parameters:
        from mcp import types

        return await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))
    return await session.list_tools(cursor)


def result_text(result: dict[str, Any]) -> str:
    """A ``tools/call`` result as the text the model sees: its text content, with placeholders for the rest."""
    parts: list[str] = []
    for item in result.get("content") or ():
        kind = item.get("type")
        if kind == "text":
            parts.append(str(item.get("text", "")))
        elif kind in ("image", "audio"):
            parts.append(f"[{kind} content: {item.get('mimeType', 'unknown type')}]")
        elif kind == "resource":
            resource = item.get("resource") or {}
            parts.append(str(resource["text"]) if "text" in resource else f"[resource {resource.get('uri', '')}]")
        elif kind == "resource_link":
            parts.append(f"[resource link {item.get('uri', '')}: {item.get('name', '')}]")
        else:
            parts.append(json.dumps(item, ensure_ascii=False, default=str))
    if not parts and result.get("structuredContent") is not None:
        return json.dumps(result["structuredContent"], ensure_ascii=False, default=str)
    return "\n".join(parts)


def _reason(exc: BaseException | None) -> str:
    """The innermost useful message of ``exc`` (the SDK's task groups wrap failures in exception groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if exc is None:
        return "unknown error"
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
