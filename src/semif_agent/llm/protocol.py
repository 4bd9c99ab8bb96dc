"""The provider seam: one request object in, one answer (or its stream) out.

:class:`LLMProvider` is two async methods, ``request(ModelRequest)`` and
``request_stream(ModelRequest)``, as httpx's transports are one
``handle_request``. The retry, fallback and call-log wrappers implement the
same two and hand the same request object on.

:class:`BaseProvider` adds the keyword face every provider has,
``invoke``/``stream``/``ainvoke``/``astream``: each builds a
:class:`ModelRequest` from its arguments (:meth:`ModelRequest.build`) and
calls the seam, once, for every provider. A provider written before the seam
(the face methods only), or a subclass that overrides ``astream``, is put on
the seam by :func:`as_provider`.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import AsyncIterator, Awaitable, Iterable, Iterator, Mapping
from contextlib import AbstractAsyncContextManager, AbstractContextManager, aclosing, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast, runtime_checkable

from .._sync import iter_sync, run_sync
from .errors import InvalidModelRequestError, ProviderConfigError
from .messages import Message, MessageLike, ToolChoice, ToolSpec, check_tool_choice, to_messages, to_tools
from .options import ProviderOptions, check_options, supported_options
from .pricing import ModelPrice, coerce_table
from .responses import Response, StreamChunk

ToolsLike = Iterable[ToolSpec | Mapping[str, object]]

_T = TypeVar("_T")
_T_co = TypeVar("_T_co", covariant=True)


@runtime_checkable
class LLMProvider(Protocol):
    """A chat model behind one endpoint.

    ``request`` returns the whole :class:`Response`; ``request_stream`` yields
    :data:`~semif_agent.llm.responses.StreamChunk` values ending with a
    ``StopChunk``. Providers may also say ``supports_logprobs = True``, name
    the provider options they take (``supported_options``) and offer a block
    within which what they write per call is held (``batching``, see
    :func:`batched`).
    """

    @property
    def model_id(self) -> str: ...

    @property
    def provider_name(self) -> str: ...

    async def request(self, request: ModelRequest) -> Response: ...

    def request_stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]: ...


@dataclass(frozen=True, kw_only=True)
class ModelRequest:
    """One model call: typed messages, tools, settings, and the provider's own options.

    Build one from loose arguments with :meth:`build`. A loop that keeps its
    history as typed messages constructs it directly: nothing is normalised
    again, and the checks made here cost the same however long the history
    is. ``tool_choice`` is ``"auto"``, ``"any"``, ``"none"`` or a tool's name;
    ``top_logprobs`` asks for that many alternatives per token where the server
    can return log-probabilities (providers that cannot ignore it).
    ``options`` are provider options (see :mod:`semif_agent.llm.options`),
    checked by the provider that answers.
    """

    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: ToolChoice | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    stop: tuple[str, ...] = ()
    top_logprobs: int | None = None
    options: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not any(m.role != "system" for m in self.messages):  # stops at the first non-system message
            raise InvalidModelRequestError("a model call needs at least one non-system message")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise InvalidModelRequestError("max_tokens must be at least 1")
        if self.top_logprobs is not None and not 0 <= self.top_logprobs <= 20:
            raise InvalidModelRequestError("top_logprobs must be between 0 and 20")
        check_tool_choice(self.tool_choice, self.tools)

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
        **options: object,
    ) -> ModelRequest:
        """A request from loose arguments: messages may be typed, strings (user turns) or
        ``{"role", "content"}`` dicts, tools specs or dicts; other keywords are provider options."""
        return cls(
            messages=tuple(to_messages(messages)),
            tools=to_tools(tools),
            tool_choice=tool_choice,
            max_tokens=max_tokens,
            temperature=temperature,
            stop=(stop,) if isinstance(stop, str) else tuple(stop or ()),
            top_logprobs=top_logprobs,
            options=dict(options),
        )

    def kwargs(self) -> dict[str, object]:
        """The keyword arguments to make this same call through a provider's ``ainvoke``/``astream``."""
        return {
            "tools": self.tools or None,
            "tool_choice": self.tool_choice,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "stop": self.stop or None,
            "top_logprobs": self.top_logprobs,
            **self.options,
        }

    def replace(self, **changes: Any) -> ModelRequest:
        """This request with some fields changed (the messages are shared, not copied)."""
        return dataclasses.replace(self, **changes)

    @property
    def system(self) -> str:
        """All system messages' text, joined."""
        return "\n\n".join(m.content for m in self.messages if m.role == "system")


if TYPE_CHECKING:  # for the checker only: at run time a Protocol may not subclass collections.abc.AsyncIterator

    class _ClosableStream(AsyncIterator[_T_co], Protocol[_T_co]):
        """A stream that can be closed early (an async generator is one)."""

        def aclose(self) -> Awaitable[object]: ...


def closing_stream(stream: AsyncIterator[_T]) -> AbstractAsyncContextManager[AsyncIterator[_T]]:
    """``aclosing(stream)`` when it can be closed (a provider's stream need not be a generator)."""
    if hasattr(stream, "aclose"):
        # the stream has the aclose() that aclosing calls, which is all _ClosableStream adds
        return aclosing(cast("_ClosableStream[_T]", stream))
    return nullcontext(stream)


def batched(provider: object) -> AbstractContextManager[object]:
    """``provider.batching()``: a block within which what it writes per call may be held and written together.

    A provider that writes nothing per call (or has no ``batching``) gives a
    block that does nothing. The agent holds one for each turn.
    """
    batching = getattr(provider, "batching", None)
    if batching is None:
        return nullcontext()
    block: AbstractContextManager[object] = batching()
    return block


class BaseProvider:
    """A provider written as the two seam methods; the keyword face comes from here.

    Subclasses set ``provider_name`` and implement ``request(request)`` and
    ``request_stream(request)`` (an async generator of chunks that ends with a
    ``StopChunk``). Subclasses written before the seam implement ``_ainvoke``
    and ``_astream`` instead, which the default ``request``/``request_stream``
    call. ``options_schema`` declares the provider options it takes
    (a :class:`~semif_agent.llm.options.ProviderOptions`); the provider checks a
    request's options with :meth:`check_options`.
    """

    provider_name: str = "base"
    supports_logprobs: bool = False
    supports_context_management: bool = False  # the older declaration of the context_management option
    options_schema: type[ProviderOptions] | None = None

    def __init__(
        self, model_id: str, *, pricing: Mapping[str, ModelPrice | Mapping[str, object]] | None = None
    ) -> None:
        if not model_id:
            raise ProviderConfigError(f"{type(self).__name__} needs a model id")
        self.model_id = model_id
        self.pricing = coerce_table(pricing)

    @property
    def model_ref(self) -> str:
        """``"provider/model"``."""
        return f"{self.provider_name}/{self.model_id}"

    @property
    def supported_options(self) -> frozenset[str]:
        """The provider options this provider takes."""
        names = self.options_schema.names() if self.options_schema is not None else frozenset()
        return names | {"context_management"} if self.supports_context_management is True else names

    def check_options(self, request: ModelRequest) -> dict[str, object]:
        """``request.options``, checked: see :func:`semif_agent.llm.options.check_options`."""
        return check_options(self, request)

    # -- the seam ------------------------------------------------------------

    async def request(self, request: ModelRequest) -> Response:
        """Ask the model; return its whole answer."""
        self.check_options(request)
        return await self._ainvoke(request)

    def request_stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        """Ask the model; yield its answer as it comes, ending with a ``StopChunk``."""
        self.check_options(request)
        return self._astream(request)

    async def _ainvoke(self, request: ModelRequest) -> Response:  # pragma: no cover
        raise NotImplementedError(f"{type(self).__name__} implements neither request nor _ainvoke")

    def _astream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:  # pragma: no cover
        raise NotImplementedError(f"{type(self).__name__} implements neither request_stream nor _astream")

    # -- the keyword face: one implementation over the seam ---------------------

    async def ainvoke(self, messages: MessageLike | Iterable[MessageLike], **arguments: Any) -> Response:
        """Ask the model; return its whole answer. The keywords are :meth:`ModelRequest.build`'s."""
        return await self.request(ModelRequest.build(messages, **arguments))

    async def astream(
        self, messages: MessageLike | Iterable[MessageLike], **arguments: Any
    ) -> AsyncIterator[StreamChunk]:
        """Ask the model; yield its answer as it comes. The keywords are :meth:`ModelRequest.build`'s."""
        async with closing_stream(self.request_stream(ModelRequest.build(messages, **arguments))) as chunks:
            async for chunk in chunks:
                yield chunk

    def invoke(self, messages: MessageLike | Iterable[MessageLike], **arguments: Any) -> Response:
        """Sync :meth:`ainvoke` (not inside a running event loop)."""
        return run_sync(self.ainvoke(messages, **arguments), f"{type(self).__name__}.invoke")

    def stream(self, messages: MessageLike | Iterable[MessageLike], **arguments: Any) -> Iterator[StreamChunk]:
        """Sync :meth:`astream` (not inside a running event loop)."""
        return iter_sync(self.astream(messages, **arguments), f"{type(self).__name__}.stream")

    def batching(self) -> AbstractContextManager[object]:
        """A block within which what this provider writes per call may be held (see :func:`batched`): none here."""
        return nullcontext()

    async def aclose(self) -> None:
        """Release network resources (a no-op for providers without any)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.model_ref}>"


class ProviderWrapper(BaseProvider):
    """A provider that wraps another (``inner``) and answers as it: its name, model, pricing and options.

    ``self.next`` is ``inner`` on the seam: wrappers hand the request object on to it.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.next = as_provider(inner)
        self.model_id = inner.model_id
        self.provider_name = inner.provider_name
        self.supports_logprobs = bool(getattr(inner, "supports_logprobs", False))
        self.pricing = getattr(inner, "pricing", {})

    @property
    def supported_options(self) -> frozenset[str]:
        return supported_options(self.inner)

    def batching(self) -> AbstractContextManager[object]:
        return batched(self.inner)

    async def aclose(self) -> None:
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()


# -- putting any provider on the seam -------------------------------------------


_kinds: weakref.WeakKeyDictionary[type, str] = weakref.WeakKeyDictionary()


def _kind(cls: type) -> str:
    """``"seam"``, ``"face"`` (answer through ``ainvoke``/``astream``) or ``"none"``, for a provider class."""
    kind = _kinds.get(cls)
    if kind is None:
        if issubclass(cls, BaseProvider):
            face = cls.astream is not BaseProvider.astream or cls.ainvoke is not BaseProvider.ainvoke
            kind = "face" if face else "seam"
        elif callable(getattr(cls, "request", None)) and callable(getattr(cls, "request_stream", None)):
            kind = "seam"
        elif callable(getattr(cls, "astream", None)) or callable(getattr(cls, "ainvoke", None)):
            kind = "face"
        else:
            kind = "none"
        _kinds[cls] = kind
    return kind


def is_provider(value: object) -> bool:
    """True for anything :func:`as_provider` can put on the seam."""
    return _kind(type(value)) != "none"


def as_provider(provider: Any) -> LLMProvider:
    """``provider`` on the seam: itself, or an adapter that calls its keyword face.

    The face is called for providers that have only ``ainvoke``/``astream``
    (written before the seam) and for :class:`BaseProvider` subclasses that
    override ``astream`` or ``ainvoke``, so what they add still runs.
    """
    kind = _kind(type(provider))
    if kind == "seam":
        return provider  # type: ignore[no-any-return]  # checked by _kind
    if kind == "face":
        return _FaceAdapter(provider)
    raise ProviderConfigError(
        f"{provider!r} is not a model provider: it has neither request/request_stream nor ainvoke/astream"
    )


class _FaceAdapter:
    """A provider's keyword face, seen through the seam."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    @property
    def model_id(self) -> str:
        return str(self.inner.model_id)

    @property
    def provider_name(self) -> str:
        return str(self.inner.provider_name)

    async def request(self, request: ModelRequest) -> Response:
        response: Response = await self.inner.ainvoke(list(request.messages), **request.kwargs())
        return response

    async def request_stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        async with closing_stream(self.inner.astream(list(request.messages), **request.kwargs())) as chunks:
            async for chunk in chunks:
                yield chunk
