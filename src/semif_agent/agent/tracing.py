"""``TracingAgentCallback``: an Agent's turns as OpenTelemetry spans, in the GenAI semantic conventions.

Each turn is an ``invoke_agent {name}`` span; under it, each model call a
``chat {model}`` span (``gen_ai.request.model``, ``gen_ai.provider.name``,
``gen_ai.usage.input_tokens``/``output_tokens``, finish reasons) and each
tool call an ``execute_tool {tool}`` span (``gen_ai.tool.name``,
``gen_ai.tool.call.id``). A subagent's turn nests under the tool call that
started it. Spans take the times the loop recorded (its events' timestamps,
the model call's start and end), so they are right however late the stream
is read. Message and tool contents stay off the spans unless
``capture_content=True`` (the conventions make them opt-in: they may hold
personal data).

Every Agent traces its turns this way whenever the process's span pipeline
(:mod:`semif_agent.spans`) has a processor: OpenTelemetry when tracing is on
(:mod:`semif_agent.telemetry`: ``[telemetry]`` in semif.toml,
``OTEL_EXPORTER_OTLP_ENDPOINT``, :func:`~semif_agent.telemetry.configure`,
or a tracer provider the application set up), or any processor the
application added; with none, nothing is built. Registering the callback
yourself chooses its options (it then replaces the one the turn would
make, so no span is made twice)::

    agent = Agent(llm=provider).with_callbacks([TracingAgentCallback(capture_content=True)])

A turn's span is opened under :func:`turn_key`, so the SKILL.md scripts and
hooks the turn runs nest under it. A subagent's turn is traced by the turn
that started it, which sees its events.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from datetime import datetime

from .. import spans, telemetry
from ..errors import InvalidArgumentError, check_type
from .events import AgentEvent, ToolFinished, ToolStarted, TurnFinished, TurnStarted
from .hooks import AgentCallback, ModelCall
from .usage import TurnDiagnostics

AGENT_NAME = "semif-agent"


def turn_key(turn_id: str) -> str:
    """The key a turn's span is opened under (work run :func:`~semif_agent.spans.within` it nests under the turn)."""
    return f"agent.turn:{turn_id}"


async def traced_shortlist(shortlist: Awaitable[tuple[str, ...]]) -> tuple[str, ...]:
    """Await a skill shortlist; when one was offered, it is a ``semif.shortlist`` span under the current span (the
    turn's, which the turn makes current while its toolsets prepare)."""
    started = time.time_ns()
    offered = await shortlist
    source = spans.source()
    if offered and source.enabled:
        span = source.start_span("semif.shortlist", start_ns=started, attributes={"semif.skills": list(offered)})
        source.end_span(span)
    return offered


def _ns(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000_000)


class TracingAgentCallback(AgentCallback):
    """Spans of an Agent's turns, model calls and tool calls (see the module's description).

    ``agent_name`` names the agent on its spans (``gen_ai.agent.name``).
    Configures tracing from the environment when nothing did yet
    (``OTEL_EXPORTER_OTLP_ENDPOINT``); one instance may serve several
    agents and concurrent turns.
    """

    def __init__(self, *, agent_name: str = AGENT_NAME, capture_content: bool = False) -> None:
        check_type("agent_name", agent_name, str)
        check_type("capture_content", capture_content, bool)
        if not agent_name.strip():
            raise InvalidArgumentError("agent_name must name the agent, not be empty")
        self.agent_name = agent_name
        self.capture_content = capture_content
        self._turns: dict[str, spans.Span] = {}
        self._tools: dict[str, spans.Span] = {}
        telemetry.configure_from(None)

    # -- the turn ------------------------------------------------------------

    def on_event(self, event: AgentEvent) -> None:
        source = spans.source()
        if not source.enabled:
            return
        if isinstance(event, TurnStarted):
            self._start_turn(source, event)
        elif isinstance(event, ToolStarted):
            self._start_tool(source, event)
        elif isinstance(event, ToolFinished):
            self._end_tool(source, event)
        elif isinstance(event, TurnFinished):  # a subagent's turn, forwarded: its own end is not seen here
            self.on_turn_end(event.turn_id, event.diagnostics, end_ns=_ns(event.timestamp))

    def _start_turn(self, source: spans.SpanSource, event: TurnStarted) -> None:
        parent = self._tools.get(event.parent_tool_call_id) if event.parent_tool_call_id else None
        name = self.agent_name if parent is None else f"{self.agent_name} subagent"
        self._turns[event.turn_id] = source.start_span(
            f"invoke_agent {name}",
            key=turn_key(event.turn_id),
            parent=parent,
            start_ns=_ns(event.timestamp),
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": name,
                "semif.turn.id": event.turn_id,
                "semif.parent_tool_call_id": event.parent_tool_call_id,
            },
        )

    def on_turn_end(self, turn_id: str, diagnostics: TurnDiagnostics, *, end_ns: int | None = None) -> None:
        span = self._turns.pop(turn_id, None)
        if span is None:
            return
        error = diagnostics.error
        self._end_unfinished(span, error.kind if error is not None else "incomplete", end_ns)
        spans.source().end_span(
            span,
            ok=error is None,
            message=error.message if error is not None else "",
            end_ns=end_ns,
            attributes={
                "error.type": error.kind if error is not None else None,
                "gen_ai.usage.input_tokens": diagnostics.total_prompt_tokens,
                "gen_ai.usage.output_tokens": diagnostics.total_completion_tokens,
                "semif.rounds": len(diagnostics.rounds),
                "semif.tool_calls": diagnostics.total_tool_calls,
                "semif.cost_usd": diagnostics.total_cost_usd,
                "semif.stopped_by": diagnostics.stopped_by,
            },
        )

    def _end_unfinished(self, turn: spans.Span, kind: str, end_ns: int | None) -> None:
        """End the spans under ``turn`` nothing ended: the turn was cancelled or failed while they ran (its tool
        calls, a subagent's turn and the subagent's calls). Innermost first, as errors; none stays open."""
        under = {turn.span_id}
        found: list[tuple[dict[str, spans.Span], str]] = []
        grew = True
        while grew:
            grew = False
            for held in (self._tools, self._turns):
                for key, span in held.items():
                    if span.parent_span_id in under and span.span_id not in under:
                        under.add(span.span_id)
                        found.append((held, key))
                        grew = True
        for held, key in reversed(found):
            spans.source().end_span(
                held.pop(key),
                ok=False,
                message="the turn it was part of ended before it finished",
                end_ns=end_ns,
                attributes={"error.type": kind},
            )

    # -- model calls -----------------------------------------------------------

    def on_model_call(self, call: ModelCall) -> None:
        source = spans.source()
        if not source.enabled:
            return
        request, response = call.request, call.response
        attributes: dict[str, object] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": call.provider,
            "gen_ai.system": call.provider,  # the name before gen_ai.provider.name, still read by many tools
            "gen_ai.request.model": call.model,
            "gen_ai.request.max_tokens": request.max_tokens,
            "semif.round": call.round,
        }
        if response is not None:
            usage = response.usage
            attributes |= {
                "gen_ai.response.model": response.model or None,
                "gen_ai.response.finish_reasons": [response.raw_stop_reason or response.stop_reason],
                "gen_ai.usage.input_tokens": usage.input_tokens,
                "gen_ai.usage.output_tokens": usage.output_tokens,
                "gen_ai.usage.cache_read.input_tokens": usage.cache_read_tokens or None,
                "gen_ai.usage.cache_creation.input_tokens": usage.cache_write_tokens or None,
                "semif.cost_usd": usage.cost_usd,
                "semif.tool_calls": len(response.tool_calls),
            }
            if self.capture_content:
                attributes["gen_ai.output.messages"] = [response.to_dict()]
        span = source.start_span(
            f"chat {call.model}".strip(),
            parent=self._turns.get(call.turn_id),
            start_ns=_ns(call.started),
            attributes=attributes,
            kind="client",
        )
        failure = call.error
        source.end_span(
            span,
            ok=failure is None,
            message=(str(failure) or type(failure).__name__) if failure is not None else "",
            attributes={"error.type": type(failure).__name__} if failure is not None else None,
            end_ns=_ns(call.finished),
        )

    # -- tool calls ------------------------------------------------------------

    def _start_tool(self, source: spans.SpanSource, event: ToolStarted) -> None:
        self._tools[event.tool_call_id] = source.start_span(
            f"execute_tool {event.name}",
            parent=self._turns.get(event.turn_id),
            start_ns=_ns(event.timestamp),
            attributes=self._tool_attributes(event.name, event.tool_call_id)
            | ({"gen_ai.tool.call.arguments": event.tool_input} if self.capture_content else {}),
        )

    def _end_tool(self, source: spans.SpanSource, event: ToolFinished) -> None:
        span = self._tools.pop(event.tool_call_id, None)
        if span is None:  # refused before it ran (unknown, invalid, denied, cut): a span of its own, at once
            span = source.start_span(
                f"execute_tool {event.name}",
                parent=self._turns.get(event.turn_id),
                start_ns=_ns(event.timestamp),
                attributes=self._tool_attributes(event.name, event.tool_call_id) | {"semif.tool.ran": False},
            )
        shown: dict[str, object] = {"gen_ai.tool.call.result": event.result} if self.capture_content else {}
        source.end_span(
            span,
            ok=not event.is_error,
            message=event.result if event.is_error else "",
            end_ns=_ns(event.timestamp),
            attributes=shown | ({"error.type": "tool_error"} if event.is_error else {}),
        )

    @staticmethod
    def _tool_attributes(name: str, call_id: str) -> dict[str, object]:
        return {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": call_id,
            "gen_ai.tool.type": "function",
        }


def traced_callbacks(callbacks: tuple[AgentCallback, ...], *, subagent: bool) -> tuple[AgentCallback, ...]:
    """A turn's ``callbacks``, with a :class:`TracingAgentCallback` of its own when spans go somewhere (tracing
    configured from the environment first, as the callback does) and none of them traces already; a ``subagent``'s
    turn gets none (the turn that started it traces its forwarded events)."""
    if subagent or any(isinstance(c, TracingAgentCallback) for c in callbacks):
        return callbacks
    telemetry.configure_from(None)
    if not spans.source().enabled:
        return callbacks
    return (*callbacks, TracingAgentCallback())
