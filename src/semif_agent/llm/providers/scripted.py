"""The scripted provider: plays back replies, and records what it was sent.

A public testing utility, registered as ``scripted`` like any provider. Drive
it with a queue of replies or with a function::

    from semif_agent.llm import ScriptedProvider, ScriptedReply, RateLimitError

    provider = ScriptedProvider([
        "Hello!",                                            # plain text
        ScriptedReply(tool_calls=[{"name": "route", "arguments": {"to": "mail"}}]),
        ScriptedReply(text="B", logprobs=[{"token": "B", "logprob": -0.1,
                                           "top": {"B": -0.1, "A": -2.5}}]),
        RateLimitError("slow down", retry_after=1.0),         # raised by the call
        ScriptedReply(text="Half an ans", break_after=2),     # a stream that breaks off
    ])
    provider = ScriptedProvider(fn=lambda request: request.messages[-1].content.upper())

It implements the provider seam (``request``/``request_stream``) like any
provider, and the keyword face (``invoke``, ``stream``, ...) comes with it.
Each call's :class:`~semif_agent.llm.protocol.ModelRequest` is appended to
``provider.requests``. ``supported_options`` names the provider options it
takes (any value; they are kept on the recorded request): a request with
another option fails as it would at a real provider. Streams are fed through the same assembler as the real
providers, one chunk per ``chunk_size`` characters of text.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from ...errors import ArgumentTypeError, check_number, check_type
from .._assembler import StreamAssembler
from ..errors import InvalidModelRequestError, ResponseError, StreamInterruptedError
from ..messages import ToolCall
from ..pricing import ModelPrice
from ..protocol import BaseProvider, ModelRequest
from ..responses import Response, StopReason, StreamChunk, TokenLogprob, TopLogprob
from ..usage import Usage


@dataclass(frozen=True, kw_only=True)
class ScriptedReply:
    """One scripted answer.

    ``tool_calls`` are :class:`ToolCall` values or ``{"name", "arguments"[, "id"]}``
    dicts. ``usage`` is a :class:`Usage` or a dict of its fields (default: zero).
    ``logprobs`` are :class:`TokenLogprob` values or ``{"token", "logprob",
    "top": {token: logprob}}`` dicts. ``stop_reason`` defaults to ``"tool_use"``
    with tool calls, else ``"stop"``. With ``break_after``, a stream breaks off
    (:class:`StreamInterruptedError`) after that many chunks; ``invoke`` raises
    at once.
    """

    text: str = ""
    tool_calls: Sequence[ToolCall | Mapping[str, Any]] = ()
    usage: Usage | Mapping[str, Any] | None = None
    logprobs: Sequence[TokenLogprob | Mapping[str, Any]] | None = None
    stop_reason: StopReason | None = None
    break_after: int | None = None
    model: str | None = field(default=None)

    def __post_init__(self) -> None:
        check_type("text", self.text, str)
        for call in self.tool_calls:
            check_type("each of tool_calls", call, (ToolCall, Mapping))
        check_number("break_after", self.break_after, whole=True, optional=True)


Reply: TypeAlias = str | ScriptedReply | Response | Mapping[str, Any] | BaseException
ReplyFunction: TypeAlias = Callable[[ModelRequest], Reply]


class ScriptedProvider(BaseProvider):
    """Answers from ``replies`` in order, or from ``fn(request)``.

    When the replies run out, ``default`` (a reply) is used if given, else the
    call fails with :class:`ResponseError`. ``supports_logprobs`` makes it look
    like a provider that returns log-probabilities (for engine tests).
    """

    provider_name = "scripted"

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        fn: ReplyFunction | None = None,
        model: str = "scripted",
        default: Reply | None = None,
        chunk_size: int = 8,
        supports_logprobs: bool = False,
        name: str = "scripted",
        pricing: Mapping[str, ModelPrice | Mapping[str, object]] | None = None,
        supported_options: Iterable[str] = (),
    ) -> None:
        if isinstance(replies, (str, bytes)):
            raise ArgumentTypeError(f"replies must be a list, not one {type(replies).__name__}: wrap it in a list")
        check_type("replies", replies, Iterable)
        if fn is not None and not callable(fn):
            raise ArgumentTypeError(f"fn must be a function of the ModelRequest, not {type(fn).__name__}")
        super().__init__(model, pricing=pricing)
        self._replies: deque[Reply] = deque(replies)
        self._fn = fn
        self.default = default
        self.chunk_size = max(1, chunk_size)
        self.supports_logprobs = supports_logprobs
        self.provider_name = name
        self.requests: list[ModelRequest] = []
        self._options = frozenset(supported_options)

    @property
    def supported_options(self) -> frozenset[str]:
        """The provider options this scripted model takes."""
        return self._options | super().supported_options

    @property
    def remaining(self) -> int:
        """Replies left in the queue."""
        return len(self._replies)

    def push(self, *replies: Reply) -> None:
        """Add replies to the end of the queue."""
        self._replies.extend(replies)

    @property
    def last_request(self) -> ModelRequest | None:
        return self.requests[-1] if self.requests else None

    def _next(self, request: ModelRequest) -> ScriptedReply | Response:
        self.check_options(request)
        self.requests.append(request)
        if self._fn is not None:
            reply: Reply | None = self._fn(request)
        elif self._replies:
            reply = self._replies.popleft()
        else:
            reply = self.default
        if reply is None:
            raise ResponseError(
                "the scripted provider has no reply left", provider=self.provider_name, model=self.model_id
            )
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, str):
            return ScriptedReply(text=reply)
        if isinstance(reply, (ScriptedReply, Response)):
            return reply
        if isinstance(reply, Mapping):
            return ScriptedReply(**reply)
        raise InvalidModelRequestError(f"cannot use {type(reply).__name__} as a scripted reply")

    async def request(self, request: ModelRequest) -> Response:
        reply = self._next(request)
        if isinstance(reply, Response):
            return reply
        if reply.break_after is not None:
            raise self._broken()
        assembler = self._assembler(reply)
        for _ in self._pieces(reply, assembler):
            pass
        return assembler.response()

    async def request_stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        reply = self._next(request)
        if isinstance(reply, Response):
            reply = _from_response(reply)
        assembler = self._assembler(reply)
        sent = 0
        for chunks in self._pieces(reply, assembler):
            for chunk in chunks:
                if reply.break_after is not None and sent >= reply.break_after:
                    raise self._broken()
                sent += 1
                yield chunk
        if reply.break_after is not None:
            raise self._broken()
        for chunk in assembler.finish():
            yield chunk

    def _assembler(self, reply: ScriptedReply) -> StreamAssembler:
        return StreamAssembler(provider=self.provider_name, model=reply.model or self.model_id, pricing=self.pricing)

    def _pieces(self, reply: ScriptedReply, assembler: StreamAssembler) -> Iterable[list[StreamChunk]]:
        logprobs = [_to_logprob(lp) for lp in reply.logprobs] if reply.logprobs is not None else None
        if logprobs is not None:
            assembler.add_logprobs(logprobs)
        text = reply.text
        for start in range(0, len(text), self.chunk_size):
            yield assembler.text(text[start : start + self.chunk_size])
        for index, call in enumerate(reply.tool_calls):
            call = _to_call(call, index)
            yield assembler.tool_call(index, id=call.id, name=call.name, arguments=call.arguments_json())
        usage = reply.usage if isinstance(reply.usage, Usage) else Usage(**dict(reply.usage or {}))
        assembler.usage(usage)
        assembler.stop(reply.stop_reason or ("tool_use" if reply.tool_calls else "stop"))

    def _broken(self) -> StreamInterruptedError:
        return StreamInterruptedError("the scripted stream broke off", provider=self.provider_name, model=self.model_id)


def _to_call(call: ToolCall | Mapping[str, Any], index: int) -> ToolCall:
    if isinstance(call, ToolCall):
        return call
    return ToolCall(
        id=str(call.get("id") or f"call_{index}"), name=str(call["name"]), arguments=dict(call.get("arguments") or {})
    )


def _to_logprob(value: TokenLogprob | Mapping[str, Any]) -> TokenLogprob:
    if isinstance(value, TokenLogprob):
        return value
    top = value.get("top") or {}
    return TokenLogprob(
        token=str(value["token"]),
        logprob=float(value["logprob"]),
        top=tuple(TopLogprob(token=str(t), logprob=float(lp)) for t, lp in dict(top).items()),
    )


def _from_response(response: Response) -> ScriptedReply:
    return ScriptedReply(
        text=response.text,
        tool_calls=response.tool_calls,
        usage=response.usage,
        logprobs=response.logprobs,
        stop_reason=response.stop_reason,
        model=response.model or None,
    )


def from_options(model_id: str, **options: Any) -> ScriptedProvider:
    """The registry's factory: ``create_provider("scripted/name", replies=[...])``."""
    return ScriptedProvider(model=model_id, **options)
