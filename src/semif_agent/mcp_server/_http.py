"""Serving over streamable HTTP: loopback unless public, a bearer token on every request, and the Host rule of
``semif ui`` on every address, public or not.

A request is answered only when its Host, and its Origin when a browser sends
one, name a host the server answers to: the names of
:func:`semif_agent.ui.server.allowed_hosts` (the bound address, loopback names
when bound to loopback or every address, and each ``--allow-host NAME``),
matched by the Starlette rule ``semif ui`` uses. A page elsewhere that points
its own name at this address (DNS rebinding), or calls it from its origin,
gets a 400 before the token is even looked at.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from ..errors import UserError
from ..ui.server import allowed_hosts, bind, is_loopback
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

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
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


ORIGINAL_SCOPE = "semif.original_scope"  # where the Origin check keeps the request it stands in for


class HostAndOrigin:
    """ASGI middleware: the Host, and the Origin when one is sent, must be one of ``names`` (else a 400).

    Both go through Starlette's ``TrustedHostMiddleware`` (``*.example.com``
    matches every subdomain), the Origin as a stand-in request whose Host is
    the Origin's: one rule for both, the one ``semif ui`` answers by. An
    ``Origin: null`` (a sandboxed or local page) names no host and is refused.
    """

    def __init__(self, app: ASGIApp, names: Sequence[str]) -> None:
        self.app = app
        self._host = TrustedHostMiddleware(self._check_origin, allowed_hosts=list(names), www_redirect=False)
        self._origin = TrustedHostMiddleware(self._pass, allowed_hosts=list(names), www_redirect=False)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._host(scope, receive, send)

    async def _check_origin(self, scope: Scope, receive: Receive, send: Send) -> None:
        origin = Headers(scope=scope).get("origin") if scope["type"] in ("http", "websocket") else None
        if origin is None:
            await self.app(scope, receive, send)
            return
        named = urlsplit(origin).netloc or origin  # "null", or anything not a URL, stays as it is: refused
        headers = [(key, value) for key, value in scope.get("headers") or () if key != b"host"]
        stand_in = {**scope, "headers": [*headers, (b"host", named.encode("latin-1", "replace"))]}
        await self._origin({**stand_in, ORIGINAL_SCOPE: scope}, receive, send)

    async def _pass(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope[ORIGINAL_SCOPE], receive, send)


def http_app(server: SkillServer, *, host: str, token: str, allow_hosts: Sequence[str] = ()) -> HostAndOrigin:
    """The server's streamable HTTP app behind the token and :class:`HostAndOrigin` (on every address, public too)."""
    names = allowed_hosts(host, allow_hosts)
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)  # HostAndOrigin checks, everywhere
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, transport_security=security, host=host)
    return HostAndOrigin(BearerToken(app, token), names)


def serve_http(
    server: SkillServer,
    *,
    host: str,
    port: int,
    public: bool,
    token: str,
    say: Callable[[str], None],
    allow_hosts: Sequence[str] = (),
) -> None:
    """Serve until interrupted, saying the address and the token first (and, off loopback, the names it answers to)."""
    import anyio
    import uvicorn

    if not is_loopback(host) and not public:
        raise UserError(
            f"{host} is not a loopback address: anyone who can reach it could run the workspace's skills; "
            "pass --public to serve there anyway"
        )
    app = http_app(server, host=host, token=token, allow_hosts=allow_hosts)
    sock = bind(host, port)
    bound_host, bound_port = sock.getsockname()[:2]
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    say(f"serving {server.router.workspace.root} at http://{shown}:{bound_port}{MCP_PATH}")
    say(f"token {token}")
    if not is_loopback(host):
        names = ", ".join(allowed_hosts(host, allow_hosts))
        say(f"answering only requests for the host names {names} (--allow-host NAME adds one)")
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=1)
    anyio.run(lambda: uvicorn.Server(config).serve(sockets=[sock]))
