"""The host names a local server answers to by default (``semif ui``, ``semif mcp --http``): a module of its own,
so the MCP server reads them without the web view's dependencies."""

from __future__ import annotations

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")
"""The names a server bound to loopback answers to (besides its address)."""
