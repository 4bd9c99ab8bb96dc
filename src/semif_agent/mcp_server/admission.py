"""How much ``semif mcp`` takes on at once: calls answered together, a bounded queue, a rate per client.

Every tool call (and every resource read) is admitted before it is handled:

- at most ``[mcp] working`` calls are answered at once (``run_skill``
  calls apart: at most ``[mcp] runs`` of them are under way at once);
- a call that finds them all taken waits its turn, in a queue of at most
  ``[mcp] queue`` calls; past it, the call is answered at once with an error
  that starts with ``busy:`` and says to retry, and nothing was done: memory
  stays bounded however many clients ask;
- each client (named by its token, or by its handshake over stdio) may make
  ``[mcp] rate`` calls a second, with ``[mcp] burst`` calls above it at once
  (a token bucket; unset: no limit). A client token may carry its own rate
  (``semif mcp token add NAME --rate N``). A call over it is answered
  ``busy:`` with how long to wait, and nothing was done;
- over HTTP each client may open ``[mcp] sessions`` sessions a minute
  (:data:`SESSION_BURST` at once), whatever its rate: a request that opens a
  session past it is answered 429 before any session is made, so a client
  opening session after session cannot fill the server with them.

Tool calls and resource reads take a place; a listing of the resources (every
skill) counts against the client's rate only; the rest (the five tools'
listing, ``ping``...) is never held.

A ``busy`` answer is the one error a well-behaved client should retry; the
log holds no row for it.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio

from .._text import plural
from ..errors import SemifError
from ..workspace.settings import McpSettings

BUSY = "busy:"
SESSION_BURST = 20  # sessions a client may open at once above its rate of them
"""How every refusal for load begins: what a client may retry after a moment."""
MAX_CLIENTS = 10_000  # clients whose rate is tracked; past it the longest idle is forgotten (its bucket full again)


class ServerBusy(SemifError):
    """The server takes no more of this call now (its queue is full, or the client is over its rate): retry later."""


@dataclass
class _Bucket:
    tokens: float
    at: float


@dataclass
class Admission:
    """Admits calls as the module docstring says; one per server, shared by every client."""

    working: int = 32
    runs: int = 4
    queue: int = 256
    rate: float | None = None
    burst: float | None = None
    sessions: float = 20  # sessions a client may open a minute
    clock: Callable[[], float] = time.monotonic
    waiting: int = 0
    busy_answers: int = 0  # calls answered busy so far
    _buckets: OrderedDict[str, _Bucket] = field(default_factory=OrderedDict)
    _limits: dict[bool, anyio.CapacityLimiter] = field(default_factory=dict)

    @classmethod
    def from_settings(cls, settings: McpSettings) -> Admission:
        return cls(
            working=settings.working,
            runs=settings.runs,
            queue=settings.queue,
            rate=settings.rate,
            burst=settings.burst,
            sessions=settings.sessions,
        )

    def handshake(self, client: str) -> None:
        """Count a session ``client`` opens; a :class:`ServerBusy` when it opens them faster than it may."""
        rate = self.sessions / 60
        try:
            self._take("\0session " + client, rate, SESSION_BURST)
        except ServerBusy as exc:
            wait = str(exc).rsplit("retry in ", 1)[-1]
            raise ServerBusy(
                f"{BUSY} client {client!r} opens sessions faster than {self.sessions:g} a minute; retry in {wait}"
            ) from None

    def counted(self, client: str, *, rate: float | None = None) -> None:
        """Count one request of ``client`` against its rate (``rate``: its own, else the server's); a
        :class:`ServerBusy` when it is over it."""
        rate = rate if rate is not None else self.rate
        if rate is not None:
            self._take(client, rate, self.burst if self.burst is not None else 2 * rate)

    @asynccontextmanager
    async def admitted(self, client: str, *, run: bool = False, rate: float | None = None) -> AsyncIterator[None]:
        """Hold a place for one call of ``client`` (a ``run`` or not) while it is handled; a :class:`ServerBusy` when
        the queue is full or the client is over its rate (``rate``: its own, else the server's)."""
        self.counted(client, rate=rate)
        limiter = self._limiter(run)
        if limiter.available_tokens < 1 and self.waiting >= self.queue:
            self.busy_answers += 1
            raise ServerBusy(
                f"{BUSY} the server is answering {plural(int(limiter.borrowed_tokens), 'call')} with {self.waiting} "
                "more waiting; retry in a moment"
            )
        self.waiting += 1
        waited = True
        try:
            async with limiter:
                self.waiting -= 1
                waited = False
                yield
        finally:
            if waited:  # cancelled while in the queue
                self.waiting -= 1

    def _limiter(self, run: bool) -> anyio.CapacityLimiter:
        limiter = self._limits.get(run)
        if limiter is None:  # made in the server's event loop, on its first call
            limiter = self._limits[run] = anyio.CapacityLimiter(self.runs if run else self.working)
        return limiter

    def _take(self, client: str, rate: float, burst: float) -> None:
        """One call of ``client`` from its bucket (``rate`` a second, ``burst`` at most); a :class:`ServerBusy`."""
        burst = max(1.0, burst)
        now = self.clock()
        bucket = self._buckets.pop(client, None) or _Bucket(burst, now)
        self._buckets[client] = bucket  # the latest used last
        while len(self._buckets) > MAX_CLIENTS:
            self._buckets.popitem(last=False)
        bucket.tokens = min(burst, bucket.tokens + (now - bucket.at) * rate)
        bucket.at = now
        if bucket.tokens < 1:
            self.busy_answers += 1
            wait = (1 - bucket.tokens) / rate
            raise ServerBusy(
                f"{BUSY} client {client!r} is over its rate of {rate:g} calls a second; retry in {wait:.1f} s"
            )
        bucket.tokens -= 1
