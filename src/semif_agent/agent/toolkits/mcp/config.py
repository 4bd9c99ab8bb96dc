"""How to reach an MCP server: :class:`MCPServerConfig`, or a convenience string.

::

    MCPServerConfig(name="files", command="npx", args=("-y", "@modelcontextprotocol/server-filesystem", "."))
    MCPServerConfig(name="search", url="http://127.0.0.1:8000/mcp", headers={"Authorization": "Bearer ..."})
    MCPServerConfig.parse("http://127.0.0.1:8000/mcp")     # a URL: streamable HTTP
    MCPServerConfig.parse("python my_server.py --verbose")  # anything else: a command run over stdio
"""

from __future__ import annotations

import os
import re
import shlex
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import ConfigDict, Field, model_validator

from ..._validated import ValidatedModel
from ...errors import AgentConfigError

Transport = Literal["stdio", "http"]


class MCPServerConfig(ValidatedModel):
    """One MCP server (frozen).

    ``transport`` is inferred: ``url`` means streamable HTTP, ``command``
    (with ``args``, ``env`` added to a minimal default environment, ``cwd``)
    means a subprocess spoken to over stdio. ``name`` (default: from the
    URL's host or the command) labels the server in errors and
    diagnostics. ``tool_prefix`` is put before each of its tool names (to
    keep two servers' tools apart); ``include_tools`` / ``exclude_tools``
    pick tools by the server's names or the agent's (``wipe.all`` is also
    ``wipe_all``, prefix included). ``connect_timeout`` bounds connecting
    and listing the tools; ``call_timeout`` each call (default: the
    agent's ``tool_timeout``).
    """

    model_config = ConfigDict(frozen=True)

    name: str = ""
    transport: Transport | None = None
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    tool_prefix: str = ""
    include_tools: tuple[str, ...] | None = None
    exclude_tools: tuple[str, ...] = ()
    connect_timeout: float = Field(default=30.0, gt=0)
    call_timeout: float | None = Field(default=None, gt=0)

    @model_validator(mode="before")
    @classmethod
    def _infer(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        transport = data.get("transport") or ("http" if data.get("url") else "stdio" if data.get("command") else None)
        if transport is None:
            raise ValueError("an MCP server needs a url (streamable HTTP) or a command (stdio)")
        data["transport"] = transport
        if transport == "http":
            url = str(data.get("url") or "")
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise ValueError(f"an MCP server over HTTP needs an http(s) URL, got {url!r}")
            data["name"] = data.get("name") or parts.netloc
        elif transport == "stdio":
            if not data.get("command"):
                raise ValueError("an MCP server over stdio needs a command")
            data["name"] = data.get("name") or os.path.basename(str(data["command"]))
        return data

    @classmethod
    def parse(cls, server: str | MCPServerConfig | dict[str, Any]) -> MCPServerConfig:
        """A config from a config, a dict of its fields, or a convenience string (a URL, else a command line)."""
        if isinstance(server, MCPServerConfig):
            return server
        try:
            if isinstance(server, dict):
                return cls(**server)
            if isinstance(server, str):
                text = server.strip()
                if text.startswith(("http://", "https://")):
                    return cls(url=text)
                if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", text):
                    raise ValueError("an MCP server URL must be http:// or https://")
                words = shlex.split(text)
                if not words:
                    raise ValueError("an empty command")
                return cls(command=words[0], args=tuple(words[1:]))
        except ValueError as exc:
            raise AgentConfigError(f"bad MCP server {server!r}: {exc}") from None
        raise AgentConfigError(
            f"an MCP server is a URL, a command line or an MCPServerConfig, got {type(server).__name__}"
        )

    def describe(self) -> str:
        """Where the server is, for messages (``http://...`` or the command line)."""
        if self.transport == "http":
            return str(self.url)
        return shlex.join([str(self.command), *self.args])
