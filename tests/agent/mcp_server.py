"""A real MCP server for the agent's MCP tests, run as a subprocess.

    python mcp_server.py                 # stdio
    python mcp_server.py --http          # streamable HTTP on a free loopback port, printed as "PORT <n>"
    python mcp_server.py --name tools    # the server's name

Its tools: ``add`` and ``lookup`` (read-only), ``remember`` (writes a line to
the file named by ``$MCP_TEST_LOG`` if set) and ``fail`` (an error result).
With ``$MCP_TEST_PIDFILE`` set, it writes its process id there on start.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys

try:  # mcp 2.x
    from mcp.server.mcpserver import MCPServer as Server
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as Server  # type: ignore[no-redef]  # the same names from the SDK's other home
    from mcp.server.fastmcp.exceptions import ToolError  # type: ignore[no-redef]  # the same names from the SDK's other home
from mcp.types import ToolAnnotations

CAPITALS = {"france": "Paris", "portugal": "Lisbon", "japan": "Tokyo"}


def build(name: str) -> Server:
    server = Server(name, log_level="ERROR")

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def add(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def lookup(country: str) -> str:
        """The capital city of a country."""
        return CAPITALS.get(country.lower(), f"unknown country {country}")

    @server.tool()
    def remember(note: str) -> str:
        """Write a note down (not read-only)."""
        path = os.environ.get("MCP_TEST_LOG")
        if path:
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(note + "\n")
        return f"noted: {note}"

    @server.tool()
    def fail(reason: str) -> str:
        """Always fails with the given reason."""
        raise ToolError(reason)

    return server


def serve_http(server: Server) -> None:
    import anyio
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    app = server.streamable_http_app()
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    anyio.run(lambda: uvicorn.Server(config).serve(sockets=[sock]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--name", default="test-tools")
    args = parser.parse_args()
    server = build(args.name)
    if os.environ.get("MCP_TEST_PIDFILE"):
        with open(os.environ["MCP_TEST_PIDFILE"], "w", encoding="utf-8") as handle:
            handle.write(str(os.getpid()))
    if args.http:
        serve_http(server)
    else:
        server.run("stdio")


if __name__ == "__main__":
    sys.exit(main())
