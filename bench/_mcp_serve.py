"""What the `semif mcp --http` benches share: the server as a child process, a client session of the official SDK,
one tool call classified (answered, busy, or an error of some kind), and the server's memory and CPU from /proc."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def _sdk() -> None:
    """Import the MCP SDK with this folder off the path: its ``mcp.py`` (a bench) would stand in for the SDK."""
    here = Path(__file__).resolve().parent
    kept = sys.path[:]
    sys.path[:] = [entry for entry in kept if Path(entry or ".").resolve() != here]
    try:
        import mcp.client.streamable_http
        import mcp.shared._httpx_utils  # noqa: F401 (imported for its place in sys.modules, found while this folder is off the path)
    finally:
        sys.path[:] = kept
    # a session whose server is gone (killed, on purpose) says so at every close: the benches count that themselves
    logging.getLogger("mcp.client.streamable_http").setLevel(logging.ERROR)


_sdk()
TOKEN_ENV = "SEMIF_MCP_TOKEN"
BUSY = "busy"
TOOL_PREFIX = "Error executing tool "


@dataclass
class Served:
    """A `semif mcp -w WS --http 127.0.0.1:0` child process, the URL it serves at and its stderr file."""

    process: subprocess.Popen[str]
    url: str
    errors: Path

    def stop(self) -> int:
        """Ask it to stop (SIGTERM), and wait for it; killed if it has not stopped within a minute."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.wait()


def serve(workspace: Path, token: str, errors: Path, env: dict[str, str] | None = None, timeout: float = 120) -> Served:
    """Start `semif mcp -w WORKSPACE --http 127.0.0.1:0` with ``token`` as its bearer token (through the
    environment) and return once it says where it serves (its stderr kept in ``errors``)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "semif_agent", "mcp", "-w", str(workspace), "--http", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=errors.open("a", encoding="utf-8"),
        text=True,
        env={**(env or os.environ), TOKEN_ENV: token},
    )
    lines: list[str] = []

    def read_first() -> None:
        assert process.stdout is not None
        lines.append(process.stdout.readline())

    reader = threading.Thread(target=read_first, daemon=True)
    reader.start()
    reader.join(timeout)
    if not lines or " at " not in lines[0]:
        process.kill()
        tail = errors.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-3:]
        raise SystemExit(f"semif mcp --http did not start: {lines} {tail}")
    threading.Thread(target=process.stdout.read, daemon=True).start()  # type: ignore[union-attr]  # drained, never blocks
    return Served(process, lines[0].split(" at ", 1)[1].strip(), errors)


@contextlib.asynccontextmanager
async def session(url: str, token: str, name: str, timeout: float = 300) -> AsyncIterator[Any]:
    """A session of the SDK's streamable HTTP client, its handshake done under the client name ``name``."""
    import httpx2
    from mcp import ClientSession, types
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"Authorization": f"Bearer {token}"}
    limits = httpx2.Timeout(timeout, connect=30)
    async with (
        create_mcp_http_client(headers=headers, timeout=limits) as http_client,
        streamable_http_client(url, http_client=http_client) as streams,
        ClientSession(streams[0], streams[1], client_info=types.Implementation(name=name, version="1")) as opened,
    ):
        await opened.initialize()
        yield opened


async def call(opened: Any, tool: str, arguments: dict[str, Any]) -> tuple[Any, str | None]:
    """Call ``tool``: its JSON answer and None, or None and what went wrong: ``busy`` (a tool error whose text
    starts with "busy"), ``tool: <its text>`` (another tool error), or ``<exception type>: <text>``."""
    from mcp import types

    try:
        result = await opened.call_tool(tool, arguments)
    except Exception as exc:  # noqa: BLE001 (a bench counts every failure by its kind)
        return None, f"{type(exc).__name__}: {str(exc)[:80]}"
    text = "".join(part.text for part in result.content if isinstance(part, types.TextContent))
    if result.is_error:
        said = text.split(": ", 1)[1] if text.startswith(TOOL_PREFIX) and ": " in text else text
        return None, BUSY if said.lower().startswith(BUSY) else f"tool: {said[:80]}"
    try:
        return json.loads(text), None
    except ValueError:
        return text, None


def cpu_seconds(pid: int) -> float:
    """The CPU time (user and system) process ``pid`` and its waited-for children used so far (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")
