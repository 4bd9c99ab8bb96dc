"""The one stream assembler every provider feeds.

A provider translates its wire events (or a whole non-streamed answer) into
calls on :class:`StreamAssembler`; each call returns the chunks to hand on, and
:meth:`StreamAssembler.finish` checks the stream was complete and returns the
closing chunks with the assembled :class:`Response`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .._json import JsonObject, JsonValue
from .errors import StreamInterruptedError
from .messages import ToolCall
from .pricing import ModelPrice, price_usage
from .responses import (
    Response,
    StopChunk,
    StopReason,
    StreamChunk,
    TextChunk,
    TokenLogprob,
    ToolCallDelta,
    UsageChunk,
)
from .usage import Usage


@dataclass
class _PendingCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class StreamAssembler:
    """Collects one answer's pieces; emits chunks; builds the :class:`Response`."""

    def __init__(self, *, provider: str, model: str, pricing: Mapping[str, ModelPrice] | None = None) -> None:
        self.provider = provider
        self.model = model
        self._pricing = pricing
        self._text: list[str] = []
        self._calls: dict[int, _PendingCall] = {}
        self._logprobs: list[TokenLogprob] | None = None
        self._usage: Usage | None = None
        self._stop: StopReason | None = None
        self._raw_stop: str | None = None
        self._compaction: dict[int, JsonObject] = {}
        self.emitted = 0

    @property
    def started(self) -> bool:
        """True once content has been handed on (after which a failure cannot be retried)."""
        return self.emitted > 0

    def text(self, text: str, logprobs: list[TokenLogprob] | None = None) -> list[StreamChunk]:
        if logprobs is not None:
            self.add_logprobs(logprobs)
        if not text and not logprobs:
            return []
        self._text.append(text)
        self.emitted += 1
        return [TextChunk(text=text, logprobs=tuple(logprobs or ()))]

    def add_logprobs(self, logprobs: list[TokenLogprob]) -> None:
        if self._logprobs is None:
            self._logprobs = []
        self._logprobs.extend(logprobs)

    def tool_call(
        self,
        index: int,
        *,
        id: str | None = None,
        name: str | None = None,
        arguments: str = "",
    ) -> list[StreamChunk]:
        """A piece of tool call ``index`` (a whole call is one piece with everything)."""
        call = self._calls.setdefault(index, _PendingCall())
        if id:
            call.id = id
        if name:
            call.name = name
        if arguments:
            call.arguments.append(arguments)
        self.emitted += 1
        return [ToolCallDelta(index=index, id=id or None, name=name or None, arguments_delta=arguments)]

    def compaction(self, index: int, piece: Mapping[str, JsonValue]) -> None:
        """A piece of compaction block ``index``: the block as it started, then each delta's fields.

        A field already present and text in both grows by the delta's text;
        any other field is set. The block keeps the fields in the order they came.
        """
        block = self._compaction.setdefault(index, {})
        for key, value in piece.items():
            if key == "type" and "type" in block:
                continue
            known = block.get(key)
            block[key] = known + value if isinstance(known, str) and isinstance(value, str) else value

    def usage(self, usage: Usage) -> None:
        """The latest usage figures (the last report wins; it is emitted once, at the end)."""
        self._usage = usage

    def stop(self, reason: StopReason, raw: str | None = None) -> None:
        self._stop = reason
        self._raw_stop = raw

    def finish(self) -> list[StreamChunk]:
        """The closing chunks. Raises :class:`StreamInterruptedError` if no stop reason came."""
        if self._stop is None:
            raise StreamInterruptedError(
                "the stream ended before the model finished its answer "
                f"({len(''.join(self._text))} characters and {len(self._calls)} tool calls arrived)",
                provider=self.provider,
                model=self.model,
            )
        response = self.response()
        return [UsageChunk(usage=response.usage), StopChunk(stop_reason=response.stop_reason, response=response)]

    def response(self) -> Response:
        """The answer assembled so far (complete once :meth:`stop` was called)."""
        calls = tuple(
            ToolCall.from_json(id=c.id or f"call_{i}", name=c.name, raw_arguments="".join(c.arguments))
            for i, c in sorted(self._calls.items())
        )
        usage = price_usage(self._usage or Usage(), self.provider, self.model, self._pricing)
        return Response(
            text="".join(self._text),
            tool_calls=calls,
            usage=usage,
            stop_reason=self._stop or "other",
            raw_stop_reason=self._raw_stop,
            model=self.model,
            provider=self.provider,
            logprobs=None if self._logprobs is None else tuple(self._logprobs),
            compaction_blocks=tuple(dict(block) for _, block in sorted(self._compaction.items())),
        )
