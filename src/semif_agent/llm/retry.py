"""Retries with backoff, as a provider that wraps another.

:class:`RetryingProvider` implements :class:`~semif_agent.llm.protocol.LLMProvider`
over any provider. It retries what may pass on a second try (429, 5xx,
dropped connections, timeouts: errors whose ``retryable`` is true), waiting
what the server asked (``retry-after``) or an exponential backoff with jitter.
A stream is retried only until its first chunk has been handed on: after that,
a failure goes to the caller (a half-delivered answer is never replayed).

The official SDKs' own retries are switched off by our providers, so these are
the only ones.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .._text import plural
from ..errors import check_number, check_type
from .errors import ProviderConfigError, ProviderError
from .protocol import LLMProvider, ModelRequest, ProviderWrapper, closing_stream
from .responses import Response, StreamChunk


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """How often and how long to retry.

    The n-th retry (from 0) waits ``initial_delay * multiplier**n`` seconds,
    capped at ``max_delay``, give or take ``jitter`` (a fraction), unless the
    server said how long to wait: that is honoured exactly, up to
    ``max_retry_after`` (a longer wait is not retried). ``sleep`` is the
    coroutine used to wait (tests may record the delays instead).
    """

    max_retries: int = 2
    initial_delay: float = 0.5
    max_delay: float = 8.0
    multiplier: float = 2.0
    jitter: float = 0.1
    max_retry_after: float = 60.0
    sleep: Callable[[float], Awaitable[object]] | None = None

    def __post_init__(self) -> None:
        check_number("max_retries", self.max_retries, whole=True)
        for name in ("initial_delay", "max_delay", "jitter", "max_retry_after"):
            check_number(name, getattr(self, name))
        check_number("multiplier", self.multiplier, minimum=1)

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> RetryPolicy:
        """A policy from settings keys ``max_retries``, ``retry_initial_delay``, ``retry_max_delay``."""
        defaults = cls()
        try:
            return cls(
                max_retries=int(settings.get("max_retries", defaults.max_retries)),
                initial_delay=float(settings.get("retry_initial_delay", defaults.initial_delay)),
                max_delay=float(settings.get("retry_max_delay", defaults.max_delay)),
            )
        except (TypeError, ValueError) as exc:
            raise ProviderConfigError(
                f"max_retries, retry_initial_delay and retry_max_delay must be numbers ({exc})"
            ) from exc

    def delay_before(self, retry: int, error: ProviderError) -> float | None:
        """Seconds to wait before retry number ``retry`` (from 0), or ``None``: do not retry."""
        if not error.retryable or retry >= self.max_retries:
            return None
        if error.retry_after is not None:
            return error.retry_after if error.retry_after <= self.max_retry_after else None
        base = min(self.max_delay, self.initial_delay * self.multiplier**retry)
        return max(0.0, base * (1.0 + random.uniform(-self.jitter, self.jitter)))

    async def wait(self, seconds: float) -> None:
        await (self.sleep or asyncio.sleep)(seconds)


class RetryingProvider(ProviderWrapper):
    """``inner``, retried according to ``policy``."""

    def __init__(self, inner: LLMProvider, policy: RetryPolicy | None = None) -> None:
        check_type("policy", policy, RetryPolicy, optional=True)
        super().__init__(inner)
        self.policy = policy or RetryPolicy()

    async def request(self, request: ModelRequest) -> Response:
        retry = 0
        while True:
            try:
                return await self.next.request(request)
            except ProviderError as exc:
                delay = self._delay(retry, exc)
                if delay is None:
                    raise
            retry += 1
            await self.policy.wait(delay)

    async def request_stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        retry = 0
        while True:
            started = False
            try:
                async with closing_stream(self.next.request_stream(request)) as chunks:
                    async for chunk in chunks:
                        started = True
                        yield chunk
                return
            except ProviderError as exc:
                delay = None if started else self._delay(retry, exc)
                if delay is None:
                    raise
            retry += 1
            await self.policy.wait(delay)

    def _delay(self, retry: int, error: ProviderError) -> float | None:
        delay = self.policy.delay_before(retry, error)
        if delay is None and retry:
            error.add_note(f"gave up after {plural(retry, 'retry', 'retries')}")
        return delay

    def __repr__(self) -> str:
        return f"<RetryingProvider {self.provider_name}/{self.model_id} max_retries={self.policy.max_retries}>"
