"""Serving over streamable HTTP: loopback unless public, a bearer token on every request, the Host/Origin
rules of ``semif ui`` (a loopback server answers only loopback names and origins)."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings

from ..errors import UserError
from ..ui.server import bind, is_loopback
from .server import SkillServer

TOKEN_ENV = "SEMIF_MCP_TOKEN"
MCP_PATH = "/mcp"


def parse_address(address: str) -> tuple[str, int]:
    """``[HOST:]PORT`` as a host and a port (the host defaults to loopback)."""
    host, _, port = address.rpartition(":")
    try:
        number = int(port)
    except ValueError:
        number = -1
    if not 0 <= number <= 65535:
        raise UserError(f"--http takes [HOST:]PORT with a port from 0 to 65535, not {address!r}")
    return (host.strip("[]") or "127.0.0.1"), number


class BearerToken:
    """ASGI middleware: a request without ``Authorization: Bearer <token>`` gets a 401 and goes no further."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or ()).get(b"authorization", b"")
            if not secrets.compare_digest(given, self.expected):
                body = b"refused: this server needs its bearer token (Authorization: Bearer TOKEN)"
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def http_app(server: SkillServer, *, host: str, token: str) -> Any:
    """The server's streamable HTTP app behind the token; a loopback one refuses other Host and Origin names."""
    security = (
        None  # the SDK's own loopback rules: Host and Origin must name 127.0.0.1, localhost or [::1]
        if is_loopback(host)
        else TransportSecuritySettings(enable_dns_rebinding_protection=False)
    )
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, transport_security=security, host=host)
    return BearerToken(app, token)


def serve_http(
    server: SkillServer, *, host: str, port: int, public: bool, token: str, say: Callable[[str], None]
) -> None:
    """Serve until interrupted, saying the address and the token first."""
    import anyio
    import uvicorn

    if not is_loopback(host) and not public:
        raise UserError(
            f"{host} is not a loopback address: anyone who can reach it could run the workspace's skills; "
            "pass --public to serve there anyway"
        )
    app = http_app(server, host=host, token=token)
    sock = bind(host, port)
    bound_host, bound_port = sock.getsockname()[:2]
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    say(f"serving {server.router.workspace.root} at http://{shown}:{bound_port}{MCP_PATH}")
    say(f"token {token}")
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=1)
    anyio.run(lambda: uvicorn.Server(config).serve(sockets=[sock]))
