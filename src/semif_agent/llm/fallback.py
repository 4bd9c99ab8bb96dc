"""Fallbacks: try providers in order, as one provider.

:class:`FallbackProvider` implements :class:`~semif_agent.llm.protocol.LLMProvider`
over a list of providers (each usually a
:class:`~semif_agent.llm.retry.RetryingProvider`, so a provider's retries are
spent before the next one is tried). A call goes to the first; when it fails
with a :class:`~semif_agent.llm.errors.ProviderError`, the next one is asked,
and so on. A stream falls over only before its first chunk was handed on.
When every provider failed, the last error is raised, with notes naming the
earlier failures.

The answer's ``Response.provider``/``model`` say which provider answered.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from .errors import ProviderConfigError, ProviderError
from .protocol import BaseProvider, LLMProvider, ModelRequest
from .responses import Response, StreamChunk


class FallbackProvider(BaseProvider):
    """``providers`` tried in order; named after the first (the primary)."""

    def __init__(
        self,
        providers: Sequence[LLMProvider],
        *,
        fallback_on: tuple[type[BaseException], ...] = (ProviderError,),
    ) -> None:
        if not providers:
            raise ProviderConfigError("FallbackProvider needs at least one provider")
        self.providers = list(providers)
        self.fallback_on = fallback_on
        primary = self.providers[0]
        self.model_id = primary.model_id
        self.provider_name = primary.provider_name
        self.supports_logprobs = bool(getattr(primary, "supports_logprobs", False))
        self.pricing = getattr(primary, "pricing", {})

    async def _ainvoke(self, request: ModelRequest) -> Response:
        failures: list[BaseException] = []
        for provider in self.providers:
            try:
                return await provider.ainvoke(list(request.messages), **request.kwargs())
            except self.fallback_on as exc:
                failures.append(exc)
        raise _last(failures, self.providers)

    async def _astream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        failures: list[BaseException] = []
        for provider in self.providers:
            started = False
            try:
                async for chunk in provider.astream(list(request.messages), **request.kwargs()):
                    started = True
                    yield chunk
                return
            except self.fallback_on as exc:
                if started:
                    raise
                failures.append(exc)
        raise _last(failures, self.providers)

    async def aclose(self) -> None:
        for provider in self.providers:
            close = getattr(provider, "aclose", None)
            if close is not None:
                await close()

    def __repr__(self) -> str:
        chain = " -> ".join(f"{p.provider_name}/{p.model_id}" for p in self.providers)
        return f"<FallbackProvider {chain}>"


def _last(failures: list[BaseException], providers: list[LLMProvider]) -> BaseException:
    last = failures[-1]
    for provider, failure in zip(providers, failures[:-1]):
        last.add_note(f"fallback: {provider.provider_name}/{provider.model_id} failed first: {type(failure).__name__}: {failure}")
    return last
