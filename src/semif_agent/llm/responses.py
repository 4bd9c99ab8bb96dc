"""What a model sends back: a whole :class:`Response`, or a stream of chunks.

A stream is a sequence of :data:`StreamChunk` values, each a frozen dataclass
with a literal ``type``:

- :class:`TextChunk` (``"text_delta"``): a piece of text, with its token
  log-probabilities when the server sent them;
- :class:`ToolCallDelta` (``"tool_call_delta"``): a piece of a tool call
  (``id`` and ``name`` on its first piece, then argument JSON text);
- :class:`UsageChunk` (``"usage"``): the tokens used, once, near the end;
- :class:`StopChunk` (``"stop"``): always last, with the stop reason and the
  assembled :class:`Response`.

A stream that ends without its :class:`StopChunk` has failed: providers raise
:class:`~semif_agent.llm.errors.StreamInterruptedError` instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from .._json import JsonObject
from .messages import AssistantMessage, ToolCall
from .usage import Usage

StopReason: TypeAlias = Literal["stop", "max_tokens", "tool_use", "content_filter", "other"]


@dataclass(frozen=True, kw_only=True)
class TopLogprob:
    """One candidate token at a position, with its log-probability."""

    token: str
    logprob: float


@dataclass(frozen=True, kw_only=True)
class TokenLogprob:
    """The log-probability of a generated token, and the most likely alternatives at its position."""

    token: str
    logprob: float
    top: tuple[TopLogprob, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Response:
    """A model's complete answer.

    ``model`` and ``provider`` name who answered (with fallbacks, not
    necessarily the first one asked). ``logprobs`` is ``None`` unless the
    server returned token log-probabilities. ``raw_stop_reason`` keeps the
    provider's own word for why it stopped. ``compaction_blocks`` are the
    context-compaction blocks the API returned, as they came (they go back
    unchanged with :meth:`to_message`).
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    stop_reason: StopReason = "stop"
    raw_stop_reason: str | None = None
    model: str = ""
    provider: str = ""
    logprobs: tuple[TokenLogprob, ...] | None = None
    compaction_blocks: tuple[JsonObject, ...] = ()

    @property
    def model_ref(self) -> str:
        """``"provider/model"``."""
        return f"{self.provider}/{self.model}" if self.provider else self.model

    def to_message(self) -> AssistantMessage:
        """This answer as a message, to send back in the next turn."""
        return AssistantMessage(content=self.text, tool_calls=self.tool_calls, compaction_blocks=self.compaction_blocks)

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls],
            "usage": self.usage.to_dict(),
            "stop_reason": self.stop_reason,
            "model": self.model,
            "provider": self.provider,
        }


@dataclass(frozen=True, kw_only=True)
class TextChunk:
    """A piece of the answer's text, as the stream brings it (the agent's own event for it is ``TextDelta``)."""

    text: str
    logprobs: tuple[TokenLogprob, ...] = ()
    type: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True, kw_only=True)
class ToolCallDelta:
    """A piece of tool call number ``index``: ``id``/``name`` come first, then argument text."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments_delta: str = ""
    type: Literal["tool_call_delta"] = "tool_call_delta"


@dataclass(frozen=True, kw_only=True)
class UsageChunk:
    """The tokens the call used (and its cost, when priced)."""

    usage: Usage
    type: Literal["usage"] = "usage"


@dataclass(frozen=True, kw_only=True)
class StopChunk:
    """The end of a complete stream: why it stopped, and the whole answer."""

    stop_reason: StopReason
    response: Response
    type: Literal["stop"] = "stop"


StreamChunk: TypeAlias = TextChunk | ToolCallDelta | UsageChunk | StopChunk


def chunk_to_dict(chunk: StreamChunk) -> dict[str, object]:
    """A JSON-ready dict for any stream chunk."""
    if isinstance(chunk, TextChunk):
        return {"type": chunk.type, "text": chunk.text}
    if isinstance(chunk, ToolCallDelta):
        return {
            "type": chunk.type,
            "index": chunk.index,
            "id": chunk.id,
            "name": chunk.name,
            "arguments_delta": chunk.arguments_delta,
        }
    if isinstance(chunk, UsageChunk):
        return {"type": chunk.type, "usage": chunk.usage.to_dict()}
    return {"type": chunk.type, "stop_reason": chunk.stop_reason, "response": chunk.response.to_dict()}
