"""The typed events of a turn: one ordered stream from ``Agent.stream``/``astream``.

Each event is a frozen pydantic model with a literal ``type``; the union
:data:`AgentEvent` is discriminated on it. Every event carries the
``turn_id`` of its turn, a UTC ``timestamp``, and ``parent_tool_call_id``
(``None`` for top-level events; the parent tool call's id for events a
subagent forwards). Tool events are correlated by ``tool_call_id``.

A turn's stream: ``TurnStarted``; per round ``RoundStarted``, ``TextDelta``
as text arrives, ``ToolStarted``/``ToolFinished`` for its tool calls,
``RoundFinished`` with its :class:`RoundUsage`, and ``UsageLimitReached``
when a limit was crossed; then ``TurnFinished`` with the final answer and
the :class:`TurnDiagnostics`. ``ToolStarted`` is emitted only for calls that
run; every call the model made gets one ``ToolFinished`` (``ran=False`` for
calls refused before running: unknown tool, invalid input, denied, cut).

:func:`event_to_dict` is the one serialiser; :func:`event_from_dict` reads
its output back.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, SerializeAsAny, TypeAdapter

from ._validated import ValidatedModel
from .usage import LimitKind, LimitScope, RoundUsage, TurnDiagnostics


def _now() -> datetime:
    return datetime.now(UTC)


class _Event(ValidatedModel):
    model_config = ConfigDict(frozen=True)

    turn_id: str
    timestamp: datetime = Field(default_factory=_now)
    parent_tool_call_id: str | None = None


class TurnStarted(_Event):
    """The turn began; its rounds follow."""

    type: Literal["turn_started"] = "turn_started"


class RoundStarted(_Event):
    """A round (one model call, then the tools it asks for) starts; ``round`` counts from 0."""

    type: Literal["round_started"] = "round_started"
    round: int
    max_rounds: int


class TextDelta(_Event):
    """A piece of the model's text, as it arrives (what ``chat`` yields)."""

    type: Literal["text_delta"] = "text_delta"
    text: str


class ToolStarted(_Event):
    """A tool call is about to run, with the input it runs with (after hooks and approval)."""

    type: Literal["tool_started"] = "tool_started"
    tool_call_id: str
    name: str
    tool_input: dict[str, Any]


class ToolFinished(_Event):
    """A tool call's result, as the model sees it. Failures are ``is_error=True``, never exceptions.

    ``ran`` is false for calls refused before running (no ``ToolStarted``
    preceded them).
    """

    type: Literal["tool_finished"] = "tool_finished"
    tool_call_id: str
    name: str
    result: str
    is_error: bool = False
    ran: bool = True


class CompactionStarted(_Event):
    """Older messages are being summarised to make room."""

    type: Literal["compaction_started"] = "compaction_started"


class CompactionFinished(_Event):
    """Older messages were replaced by a summary."""

    type: Literal["compaction_finished"] = "compaction_finished"
    tokens_before: int
    tokens_after: int


class RoundFinished(_Event):
    """A round ended, with its accounting."""

    type: Literal["round_finished"] = "round_finished"
    round: int
    usage: RoundUsage


class UsageLimitReached(_Event):
    """A usage limit was crossed: the next round is the wrap-up round, then the turn ends.

    ``kind`` is ``total_tokens``, ``tool_calls`` or ``cost`` (``used`` and
    ``limit`` in USD); ``scope="run"`` is the run-wide pool, ``"turn"`` a
    subagent's own narrower limit.
    """

    type: Literal["usage_limit_reached"] = "usage_limit_reached"
    kind: LimitKind
    used: int | float
    limit: int | float
    scope: LimitScope = "run"


class TurnFinished(_Event):
    """The last event: the final answer (the last round's text), the diagnostics, the output.

    ``output`` is the validated structured-output instance when the agent
    has an output model and the model produced one.
    """

    type: Literal["turn_finished"] = "turn_finished"
    text: str
    diagnostics: TurnDiagnostics
    output: SerializeAsAny[BaseModel] | None = None
    _exception: BaseException | None = PrivateAttr(default=None)

    @property
    def exception(self) -> BaseException | None:
        """The exception that ended the turn, in this process (not serialised)."""
        return self._exception


AgentEvent: TypeAlias = Annotated[
    TurnStarted
    | RoundStarted
    | TextDelta
    | ToolStarted
    | ToolFinished
    | CompactionStarted
    | CompactionFinished
    | RoundFinished
    | UsageLimitReached
    | TurnFinished,
    Field(discriminator="type"),
]

EVENT_TYPES: tuple[type[_Event], ...] = (
    TurnStarted,
    RoundStarted,
    TextDelta,
    ToolStarted,
    ToolFinished,
    CompactionStarted,
    CompactionFinished,
    RoundFinished,
    UsageLimitReached,
    TurnFinished,
)

_adapter: TypeAdapter[AgentEvent] = TypeAdapter(AgentEvent)


def event_to_dict(event: _Event) -> dict[str, object]:
    """A JSON-ready dict of any event: ``type`` first, timestamps as ISO 8601 text."""
    data = event.model_dump(mode="json")
    return {"type": data.pop("type"), **data}


def event_from_dict(data: dict[str, Any]) -> AgentEvent:
    """The event :func:`event_to_dict` made (``TurnFinished.output`` comes back as a plain model)."""
    return _adapter.validate_python(data)
