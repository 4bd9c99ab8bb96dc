"""The provider protocol, and the base class that gives every provider its sync face.

Anything with these members is an :class:`LLMProvider`. Built-in providers
(and the retry and fallback wrappers) derive from :class:`BaseProvider`, which
implements the protocol's sync methods once, over the async ones, and
normalises the arguments into a :class:`ModelRequest`, so a provider writes
just two async methods: ``_ainvoke`` and ``_astream``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from .._sync import iter_sync, run_sync
from .errors import InvalidModelRequestError, ProviderConfigError
from .messages import Message, MessageLike, ToolChoice, ToolSpec, check_tool_choice, to_messages, to_tools
from .pricing import ModelPrice, coerce_table
from .responses import Response, StreamChunk

ToolsLike = Iterable[ToolSpec | Mapping[str, Any]]


@runtime_checkable
class LLMProvider(Protocol):
    """A chat model behind one endpoint.

    ``invoke``/``ainvoke`` return a whole :class:`Response`; ``stream``/``astream``
    yield :data:`~semif_agent.llm.responses.StreamChunk` values ending with a
    ``StopChunk``. ``messages`` may be typed messages, strings (user turns) or
    ``{"role", "content"}`` dicts. ``tool_choice`` is ``"auto"``, ``"any"``,
    ``"none"`` or a tool's name. ``top_logprobs`` asks for that many
    alternatives per token where the server can return log-probabilities
    (providers that cannot ignore it; ``Response.logprobs`` is then ``None``).

    Providers may also say ``supports_logprobs = True``.
    """

    @property
    def model_id(self) -> str: ...

    @property
    def provider_name(self) -> str: ...

    def invoke(
        self,
        messages: MessageLike | Iterable[MessageLike],
        *,
        tools: ToolsLike | None = None,
        tool_choice: ToolChoice | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: Iterable[str] | str | None = None,
        top_logprobs: int | None = None,
    ) -> Response: ...

    def stream(
        self,
        messages: MessageLike | Iterable[MessageLike],
        *,
        tools: ToolsLike | None = None,
        tool_choice: ToolChoice | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: Iterable[str] | str | None = None,
        top_logprobs: int | None = None,
    ) -> Iterator[StreamChunk]: ...

    async def ainvoke(
        self,
        messages: MessageLike | Iterable[MessageLike],
        *,
        tools: ToolsLike | None = None,
        tool_choice: ToolChoice | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: Iterable[str] | str | None = None,
        top_logprobs: int | None = None,
    ) -> Response: ...

    def astream(
        self,
        messages: MessageLike | Iterable[MessageLike],
        *,
        tools: ToolsLike | None = None,
        tool_choice: ToolChoice | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: Iterable[str] | str | None = None,
        top_logprobs: int | None = None,
    ) -> AsyncIterator[StreamChunk]: ...


@dataclass(frozen=True, kw_only=True)
class ModelRequest:
    """One call's arguments, checked and normalised (what a provider implementation receives)."""

    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: ToolChoice | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    stop: tuple[str, ...] = ()
    top_logprobs: int | None = None

    @classmethod
    def build(
        cls,
        messages: MessageLike | Iterable[MessageLike],
        *,
        tools: ToolsLike | None = None,
        tool_choice: ToolChoice | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: Iterable[str] | str | None = None,
        top_logprobs: int | None = None,
    ) -> ModelRequest:
        typed = tuple(to_messages(messages))
        if not any(m.role != "system" for m in typed):
            raise InvalidModelRequestError("a model call needs at least one non-system message")
        specs = to_tools(tools)
        if max_tokens is not None and max_tokens < 1:
            raise InvalidModelRequestError("max_tokens must be at least 1")
        if top_logprobs is not None and not 0 <= top_logprobs <= 20:
            raise InvalidModelRequestError("top_logprobs must be between 0 and 20")
        return cls(
            messages=typed,
            tools=specs,
            tool_choice=check_tool_choice(tool_choice, specs),
            max_tokens=max_tokens,
            temperature=temperature,
            stop=(stop,) if isinstance(stop, str) else tuple(stop or ()),
            top_logprobs=top_logprobs,
        )

    def kwargs(self) -> dict[str, Any]:
        """The keyword arguments to make this same call on any :class:`LLMProvider`."""
        return {
            "tools": self.tools or None,
            "tool_choice": self.tool_choice,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "stop": self.stop or None,
            "top_logprobs": self.top_logprobs,
        }

    @property
    def system(self) -> str:
        """All system messages' text, joined."""
        return "\n\n".join(m.content for m in self.messages if m.role == "system")


class BaseProvider:
    """A provider written as two async methods; the protocol's other methods come from here.

    Subclasses set ``provider_name`` and implement ``_ainvoke(request)`` and
    ``_astream(request)`` (an async generator of chunks that ends with a
    ``StopChunk``).
    """

    provider_name: str = "base"
    supports_logprobs: bool = False

    def __init__(self, model_id: str, *, pricing: Mapping[str, ModelPrice | Mapping[str, Any]] | None = None) -> None:
        if not model_id:
            raise ProviderConfigError(f"{type(self).__name__} needs a model id")
        self.model_id = model_id
        self.pricing = coerce_table(pricing)

    @property
    def model_ref(self) -> str:
        """``"provider/model"``."""
        return f"{self.provider_name}/{self.model_id}"

    async def ainvoke(self, messages: MessageLike | Iterable[MessageLike], **options: Any) -> Response:
        """Ask the model; return its whole answer. See :class:`LLMProvider` for the options."""
        return await self._ainvoke(ModelRequest.build(messages, **options))

    async def astream(self, messages: MessageLike | Iterable[MessageLike], **options: Any) -> AsyncIterator[StreamChunk]:
        """Ask the model; yield its answer as it comes. See :class:`LLMProvider` for the options."""
        request = ModelRequest.build(messages, **options)
        async for chunk in self._astream(request):
            yield chunk

    def invoke(self, messages: MessageLike | Iterable[MessageLike], **options: Any) -> Response:
        """Sync :meth:`ainvoke` (not inside a running event loop)."""
        return run_sync(self.ainvoke(messages, **options), f"{type(self).__name__}.invoke")

    def stream(self, messages: MessageLike | Iterable[MessageLike], **options: Any) -> Iterator[StreamChunk]:
        """Sync :meth:`astream` (not inside a running event loop)."""
        return iter_sync(self.astream(messages, **options), f"{type(self).__name__}.stream")

    async def _ainvoke(self, request: ModelRequest) -> Response:  # pragma: no cover
        raise NotImplementedError

    def _astream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:  # pragma: no cover
        raise NotImplementedError

    async def aclose(self) -> None:
        """Release network resources (a no-op for providers without any)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.model_ref}>"
