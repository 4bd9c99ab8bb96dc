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

import logging
import os
import secrets
import sys
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from .._text import plural
from ..errors import UserError
from ..ui.server import allowed_hosts, bind, is_loopback
from .admission import Admission, ServerBusy
from .server import SkillServer
from .tokens import SCOPE_KEY, TAKEN_KEY, ClientToken, TokenStore, TokenStoreError, matching

TOKEN_ENV = "SEMIF_MCP_TOKEN"
SHARED = "shared token"  # who opens a session with the shared token, as the sessions' rate counts it
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
    """ASGI middleware: a request goes on only with ``Authorization: Bearer <token>``, the token the shared one or a
    client token of ``clients`` (else a 401).

    A client token's :class:`~.tokens.ClientToken` goes in the request's scope
    (``state``), where :func:`~.tokens.token_of` finds it. The store is looked
    at on every request (a ``stat``; read again only when it changed): a token
    revoked is refused on its very next request, whatever session it opened.
    A store that cannot be read accepts no client token, and ``warn`` is told
    why (once, until it changes).
    """

    def __init__(
        self,
        app: ASGIApp,
        token: str | None,
        clients: TokenStore | None = None,
        warn: Callable[[str], None] | None = None,
        admission: Admission | None = None,
    ) -> None:
        self.app = app
        self.admission = admission or Admission()
        self.expected = f"Bearer {token}".encode() if token else None
        self.clients = clients
        self.warn = warn or (lambda line: print(line, file=sys.stderr, flush=True))
        self._warned: str | None = None
        self._names: frozenset[str] = frozenset()  # the clients' names, as the store last read said
        self._client(b"")  # a store that cannot be read is said at once

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or ()).get(b"authorization", b"")
            client = self._client(given)
            shared = self.expected is not None and secrets.compare_digest(given, self.expected)
            if client is None and not shared:
                body = (
                    b"refused: this server needs a bearer token it accepts (Authorization: Bearer TOKEN); "
                    b"this one is wrong, missing, or a client token since revoked"
                )
                await _refuse(send, 401, body, [(b"www-authenticate", b"Bearer")])
                return
            if scope.get("method") == "POST" and b"mcp-session-id" not in dict(scope.get("headers") or ()):
                try:  # a request with no session opens one: each client may open so many a minute
                    self.admission.handshake(client.name if client is not None else SHARED)
                except ServerBusy as exc:
                    await _refuse(send, 429, str(exc).encode(), [(b"retry-after", b"3")])
                    return
            state = scope.setdefault("state", {})
            if client is not None:
                state[SCOPE_KEY] = client
            else:
                state.pop(SCOPE_KEY, None)
                state[TAKEN_KEY] = self._names  # a shared-token client may not name itself after a token's client
        await self.app(scope, receive, send)

    def _client(self, given: bytes) -> ClientToken | None:
        """The client whose token ``given`` (the Authorization header) carries, if any."""
        if self.clients is None:
            return None
        try:
            held = self.clients.tokens()
        except TokenStoreError as exc:
            if str(exc) != self._warned:
                self._warned = str(exc)
                self.warn(str(exc))
            return None
        self._names = frozenset(stored.client.name for stored in held)
        if self._warned is not None:
            self._warned = None
            self.warn(f"the client tokens {self.clients.path} can be read again: they are accepted")
        if not given.startswith(b"Bearer "):
            return None
        return matching(held, given[len(b"Bearer ") :].decode("latin-1"))


async def _refuse(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    """Answer ``status`` with ``body`` as plain text."""
    await send(
        {"type": "http.response.start", "status": status, "headers": [(b"content-type", b"text/plain"), *headers]}
    )
    await send({"type": "http.response.body", "body": body})


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


def http_app(
    server: SkillServer,
    *,
    host: str,
    token: str | None,
    allow_hosts: Sequence[str] = (),
    clients: TokenStore | None = None,
) -> HostAndOrigin:
    """The server's streamable HTTP app behind :class:`BearerToken` (the shared ``token``, if any, and the client
    tokens of ``clients``) and :class:`HostAndOrigin` (on every address, public too)."""
    names = allowed_hosts(host, allow_hosts)
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)  # HostAndOrigin checks, everywhere
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, transport_security=security, host=host)
    return HostAndOrigin(BearerToken(app, token, clients, warn=server.say, admission=server.admission), names)


class ClientLeft(logging.Filter):
    """A client gone while its answer was being sent is one line in the server's log, not a page of traceback."""

    GONE = ("ClosedResourceError", "BrokenResourceError", "EndOfStream", "ClientDisconnect")

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if exc is None:
            return True
        names = {type(e).__name__ for e in _chain(exc)}
        said = " ".join(str(e) for e in _chain(exc))
        if names & set(self.GONE) or "after response already completed" in said:
            record.msg, record.args, record.exc_info, record.exc_text = (
                "a client left while it was answered",
                (),
                None,
                None,
            )
        return True


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc``, its causes and contexts, and the members of the exception groups among them."""
    seen: list[BaseException] = []
    todo = [exc]
    while todo and len(seen) < 50:
        current = todo.pop()
        if current in seen:
            continue
        seen.append(current)
        todo += [e for e in (current.__cause__, current.__context__) if e is not None]
        todo += list(getattr(current, "exceptions", ()))
    return seen


def shared_token(clients: TokenStore) -> tuple[str | None, str]:
    """The shared token a server accepts (None: none), and the line that says which tokens it accepts.

    ``$SEMIF_MCP_TOKEN`` when set; else a new random one, unless the
    workspace has client tokens (``semif mcp token add``), or a store of them
    that cannot be read: then none is made, and only they are accepted.
    """
    try:
        count: int | None = len(clients.tokens())
    except TokenStoreError:
        count = None
    given = os.environ.get(TOKEN_ENV, "").strip()
    held = "no client token until their file is fixed" if count is None else plural(count, "client token")
    if given or count == 0:
        token = given or secrets.token_urlsafe(24)
        return token, f"token {token}" + (f" (and {held}: semif mcp token list)" if count != 0 else "")
    return None, f"no shared token: {held} (semif mcp token list; ${TOKEN_ENV} sets a shared one)"


def serve_http(
    server: SkillServer,
    *,
    host: str,
    port: int,
    public: bool,
    say: Callable[[str], None],
    allow_hosts: Sequence[str] = (),
) -> None:
    """Serve until interrupted, saying the address and the tokens it accepts first (the shared one, see
    :func:`shared_token`; and, off loopback, the names it answers to)."""
    import anyio
    import uvicorn

    if not is_loopback(host) and not public:
        raise UserError(
            f"{host} is not a loopback address: anyone who can reach it could run the workspace's skills; "
            "pass --public to serve there anyway"
        )
    clients = TokenStore(server.router.workspace.root)
    token, accepted = shared_token(clients)
    app = http_app(server, host=host, token=token, allow_hosts=allow_hosts, clients=clients)
    sock = bind(host, port)
    bound_host, bound_port = sock.getsockname()[:2]
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    say(f"serving {server.router.workspace.root} at http://{shown}:{bound_port}{MCP_PATH}")
    say(accepted)
    if not is_loopback(host):
        names = ", ".join(allowed_hosts(host, allow_hosts))
        say(f"answering only requests for the host names {names} (--allow-host NAME adds one)")
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=1)
    logging.getLogger("uvicorn.error").addFilter(ClientLeft())
    anyio.run(lambda: uvicorn.Server(config).serve(sockets=[sock]))
