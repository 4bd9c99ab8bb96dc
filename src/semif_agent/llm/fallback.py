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

from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import ExitStack, contextmanager

from .errors import ProviderConfigError, ProviderError, UnsupportedOptionError
from .options import supported_options
from .protocol import BaseProvider, LLMProvider, ModelRequest, as_provider, batched, closing_stream
from .responses import Response, StreamChunk


class FallbackProvider(BaseProvider):
    """``providers`` tried in order; named after the first (the primary).

    A provider option goes to the providers of the chain that take it (a
    ``context_management`` setting for an Anthropic primary is not sent to an
    OpenAI fallback); an option none of them takes is refused before any call.
    """

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
        self._chain = [(as_provider(p), supported_options(p)) for p in self.providers]
        primary = self.providers[0]
        self.model_id = primary.model_id
        self.provider_name = primary.provider_name
        self.supports_logprobs = bool(getattr(primary, "supports_logprobs", False))
        self.pricing = getattr(primary, "pricing", {})

    @property
    def supported_options(self) -> frozenset[str]:
        """The options any provider of the chain takes."""
        return frozenset().union(*(takes for _, takes in self._chain))

    async def request(self, request: ModelRequest) -> Response:
        failures: list[BaseException] = []
        for provider, takes in self._chain:
            try:
                return await provider.request(self._for(request, takes))
            except self.fallback_on as exc:
                failures.append(exc)
        raise _last(failures, self.providers)

    async def request_stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        failures: list[BaseException] = []
        for provider, takes in self._chain:
            started = False
            try:
                async with closing_stream(provider.request_stream(self._for(request, takes))) as chunks:
                    async for chunk in chunks:
                        started = True
                        yield chunk
                return
            except self.fallback_on as exc:
                if started:
                    raise
                failures.append(exc)
        raise _last(failures, self.providers)

    def _for(self, request: ModelRequest, takes: frozenset[str]) -> ModelRequest:
        """``request`` with only the options a provider that takes ``takes`` is given."""
        if not request.options or request.options.keys() <= takes:
            return request
        unknown = set(request.options) - self.supported_options
        if unknown:
            raise UnsupportedOptionError(
                f"no provider of {self!r} takes the option{'s' if len(unknown) > 1 else ''} "
                f"{', '.join(repr(n) for n in sorted(unknown))}"
            )
        return request.replace(options={k: v for k, v in request.options.items() if k in takes})

    @contextmanager
    def batching(self) -> Iterator[None]:
        """Every provider of the chain's block (see :func:`~semif_agent.llm.protocol.batched`)."""
        with ExitStack() as blocks:
            for provider in self.providers:
                blocks.enter_context(batched(provider))
            yield

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
        last.add_note(
            f"fallback: {provider.provider_name}/{provider.model_id} failed first: {type(failure).__name__}: {failure}"
        )
    return last
