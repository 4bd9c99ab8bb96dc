"""One turn of the tool-use loop: the async core every public method runs on.

A :class:`Turn` holds all per-turn state (its messages, rounds, pool,
output, stuck ledger), so turns on one agent never share mutable state.
:meth:`Turn.events` is the loop. Each round: one model call (text streams
out as it comes), then the tool calls it asked for; then a verdict: the
turn ends (final answer, output recorded, a cut), or the next round starts.

Cuts. A crossed usage limit, a stuck loop, or the round cap's last round
make the next round a wrap-up: a notice tells the model it is the last,
``tool_choice`` is ``"none"`` (or ``final_result`` while structured output
is pending), and tool calls it makes anyway are not run. The turn then
ends with the cut as ``stopped_by``.

A provider failure ends the turn with ``stopped_by="error"``, the error in
the diagnostics and on ``TurnFinished.exception``; an abandoned stream
records the same with ``error.kind == "cancelled"``. Either way the agent's
conversation is left as it was: only finished turns are remembered.

Sessions and compaction. When the config carries the agent's session (its
toolsets: skills, deferred tools, subagents, ...), the session prepares the
turn (each toolset's view of the message: the skill shortlist, ...) and, at
the start of every round, gives
the config that round runs with: the system prompt and tools as they stand
now (a skill activated in one round shows in the next). When it carries a
compaction, older messages are summarised at the start of a round that
would pass its trigger (see :mod:`.compaction`). The messages, their size
and their compaction are the turn's :class:`~._turn_messages.TurnMessages`.

SKILL.md lifecycle hooks: a round is a step. The ``pre_step`` hooks of the
active skills (those allowed to run scripts) run before the round's model
call, and their ``post_step`` hooks after its tool calls, in the catalog's
sandbox (the agent's workspace as working directory, ``SKILL_HOOK`` naming
the hook), with the arguments ``--turn TURN_ID --round N``. A hook's output
does not reach the model; one that fails is logged and the turn goes on.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from .. import spans
from ..llm.errors import ProviderError, StreamInterruptedError
from ..llm.messages import Message, ToolCall, ToolResultMessage, UserMessage
from ..llm.options import supported_options
from ..llm.protocol import LLMProvider, ModelRequest, as_provider, batched, closing_stream
from ..llm.responses import Response
from ._config import TurnConfig
from ._execution import Outcome, ToolExecutor
from ._run_context import current_usage_pool, effective_scope
from ._stuck import StuckDetector
from ._turn_messages import TurnMessages
from .agent_skills.choices import turn_run_id
from .compaction import Compaction
from .events import (
    AgentEvent,
    CompactionFinished,
    CompactionStarted,
    RoundFinished,
    RoundStarted,
    TextDelta,
    TurnFinished,
    TurnStarted,
    UsageLimitReached,
    _Event,
)
from .hooks import ModelCall, fire
from .output import FINAL_RESULT
from .tracing import traced_callbacks, turn_key
from .usage import (
    ChildTurn,
    LimitBreach,
    RoundUsage,
    StoppedBy,
    TurnDiagnostics,
    TurnError,
    UsagePool,
    estimate_tokens,
)

if TYPE_CHECKING:
    from ._session import TurnPrepared

EventT = TypeVar("EventT", bound=_Event)  # an event class, and what _event makes of it

_OUTPUT_NUDGE = "[system] Record your final answer by calling the final_result tool; do not answer in plain text."


class Turn:
    """One turn: a user message, the rounds it takes, and how it ended."""

    def __init__(
        self,
        config: TurnConfig,
        provider: LLMProvider,
        message: str,
        *,
        history: Sequence[Message] = (),
        parent_tool_call_id: str | None = None,
        on_finish: Callable[[Turn], None] | None = None,
    ) -> None:
        self.id = uuid.uuid4().hex
        traced = traced_callbacks(config.callbacks, subagent=parent_tool_call_id is not None)
        config = config if traced is config.callbacks else replace(config, callbacks=traced)
        self.config = config
        self._base = config  # what the session extends each round
        self.message = message
        self.provider = provider
        self.parent = parent_tool_call_id
        self._on_finish = on_finish
        self.transcript = TurnMessages(config.system_prompt, history, message)
        self.rounds: list[RoundUsage] = []
        self.stopped_by: StoppedBy | None = None
        self.wrap_reason: StoppedBy | None = None
        self.breach: LimitBreach | None = None
        self.output: BaseModel | None = None
        self.output_failures = 0
        self.text = ""
        self.error: TurnError | None = None
        self.exception: BaseException | None = None
        self.diagnostics: TurnDiagnostics | None = None
        self.pool = UsagePool(config.limits)
        self._stuck = StuckDetector()
        self._open_round: int | None = None
        self._response: Response | None = None
        self._executor: ToolExecutor | None = None
        self.children: list[ChildTurn] = []
        self._prepared: TurnPrepared | None = None  # what the session's toolsets prepared for this message

    @property
    def new_messages(self) -> list[Message]:
        """This turn's messages: the user's, then every model answer, tool result and notice."""
        return self.transcript.new_messages

    @property
    def compacted(self) -> bool:
        """True when the conversation before this turn was summarised into it."""
        return self.transcript.compacted

    # -- the loop ------------------------------------------------------------

    async def events(self) -> AsyncGenerator[AgentEvent, None]:
        """The turn's events, ending with ``TurnFinished``."""
        inherited = current_usage_pool()
        if inherited is not None:
            self.pool = inherited.child(self.config.limits)
            if self.pool.breach() is not None:
                self.wrap_reason = "usage_limit"  # started on a spent run: straight to the wrap-up
        self._executor = ToolExecutor(
            self.config,
            pool=self.pool,
            turn_id=self.id,
            parent_tool_call_id=self.parent,
            final_result=self._final_result if self.config.tool_output else None,
            scope=effective_scope(self.config.scope),
            on_child=self.children.append,
        )
        try:
            with batched(self.provider):  # the call log's rows are written together, by the end of the turn
                yield self._observed(self._event(TurnStarted))
                if self._base.session is not None:
                    with spans.within(turn_key(self.id)):  # a toolset's spans (the shortlist) nest under the turn
                        self._prepared = await self._base.session.prepare(
                            self.message, run_id=turn_run_id(self.id), model=getattr(self.provider, "model_id", None)
                        )
                async with aclosing(self._rounds()) as rounds:
                    async for event in rounds:
                        yield self._observed(event)
        except ProviderError as exc:
            self._fail(exc)
        except BaseException as exc:
            self._fail(exc)
            self._finish()
            raise
        diagnostics = self._finish()
        if self._base.session is not None:
            self._base.session.finish(self._prepared, stopped_by=diagnostics.stopped_by, text=self.text)
        finished = self._event(TurnFinished, text=self.text, diagnostics=diagnostics, output=self.output)
        finished._exception = self.exception
        yield self._observed(finished)

    def _observed(self, event: AgentEvent) -> AgentEvent:
        """``event``, shown to the callbacks first (its subagents' forwarded events too)."""
        fire(self.config.callbacks, "on_event", event)
        return event

    async def _rounds(self) -> AsyncGenerator[AgentEvent, None]:
        config = self.config
        for index in range(config.max_rounds):
            final = self.wrap_reason is not None or index == config.max_rounds - 1
            if final and self.wrap_reason is None and index > 0:
                self.wrap_reason = "max_rounds"
            if self.wrap_reason is not None:
                self._append(UserMessage(content=self._wrap_notice()))
            self._open_round = index
            self._refresh()
            config = self.config
            fire(config.callbacks, "on_round_start", index)
            yield self._event(RoundStarted, round=index, max_rounds=config.max_rounds)
            await self._step_hooks("pre_step", index)
            if (
                config.compaction is not None
                and not self.transcript.compaction_failed
                and self.wrap_reason != "usage_limit"
            ):
                async with aclosing(self._compact(config.compaction)) as compaction:
                    async for event in compaction:
                        yield event
            prompt_tokens = self.transcript.tokens + (config.schema_tokens if config.specs else 0)
            async with aclosing(self._model_call(final)) as deltas:
                async for delta in deltas:
                    yield delta
            response = self._response
            assert response is not None
            if response.text or response.tool_calls:
                self._append(response.to_message())
            outcomes: list[Outcome] = []
            if response.tool_calls:
                async with aclosing(self._tool_phase(response.tool_calls, final, outcomes)) as tool_events:
                    async for event in tool_events:
                        yield event
                for outcome in outcomes:
                    self._append(
                        ToolResultMessage(
                            tool_call_id=outcome.call.id, content=outcome.content, is_error=outcome.is_error
                        )
                    )
            await self._step_hooks("post_step", index)
            usage = self._round_usage(index, response, outcomes, prompt_tokens)
            self.rounds.append(usage)
            self.pool.debit(tokens=usage.total_tokens, cost_usd=usage.cost_usd)
            self._open_round = None
            fire(config.callbacks, "on_round_end", index)
            yield self._event(RoundFinished, round=index, usage=usage)
            verdict = self._verdict(response, final)
            if verdict is not None:
                self.stopped_by, self.text = verdict, response.text
                return
            self._watch_stuck(outcomes)
            breach = self.pool.breach()
            if breach is not None:
                self.breach, self.wrap_reason = breach, "usage_limit"
                yield self._event(
                    UsageLimitReached, kind=breach.kind, used=breach.used, limit=breach.limit, scope=breach.scope
                )
        self.stopped_by = self.wrap_reason or "max_rounds"  # pragma: no cover - the last round always ends the turn

    # -- the session and compaction, each round ---------------------------------

    def _refresh(self) -> None:
        """Take the round's config from the session (the same object when nothing changed)."""
        session = self._base.session
        if session is None:
            return
        config = session.configure(self._base, self._prepared)
        if config is self.config:
            return
        self.config = config
        if self._executor is not None:
            self._executor.config = config
        self.transcript.set_system_prompt(config.system_prompt)

    async def _step_hooks(self, hook_type: str, index: int) -> None:
        """Run the active skills' ``hook_type`` hooks for round ``index`` (see the module's description)."""
        if self._base.session is not None:
            with spans.within(turn_key(self.id)):  # their spans nest under the turn's
                await self._base.session.run_step_hooks(hook_type, self.id, index)

    async def _compact(self, compaction: Compaction) -> AsyncGenerator[AgentEvent, None]:
        """Summarise the older working messages when they pass ``compaction``'s trigger."""
        due = self.transcript.compaction_due(compaction)
        if due is None:
            return
        before, cut = due
        yield self._event(CompactionStarted)
        after = await self.transcript.compact(
            compaction, cut, self.provider, max_tokens=self.config.max_response_tokens
        )
        yield self._event(CompactionFinished, tokens_before=before, tokens_after=before if after is None else after)

    async def _model_call(self, final: bool) -> AsyncGenerator[TextDelta, None]:
        self._response = None
        request, started = self._request(final), datetime.now(UTC)
        try:
            async with closing_stream(as_provider(self.provider).request_stream(request)) as chunks:
                async for chunk in chunks:
                    if chunk.type == "text_delta":
                        if chunk.text:
                            yield self._event(TextDelta, text=chunk.text)
                    elif chunk.type == "stop":
                        self._response = chunk.response
            if self._response is None:
                raise StreamInterruptedError(
                    "the model's stream ended without its answer",
                    provider=str(getattr(self.provider, "provider_name", "")),
                    model=str(getattr(self.provider, "model_id", "")),
                )
        except BaseException as exc:
            self._tell_model_call(request, started, error=exc)
            raise
        self._tell_model_call(request, started)

    def _tell_model_call(self, request: ModelRequest, started: datetime, error: BaseException | None = None) -> None:
        """Show the callbacks the model call just made (see :class:`~.hooks.ModelCall`)."""
        if not self.config.callbacks:
            return
        call = ModelCall(
            turn_id=self.id,
            round=self._open_round or 0,
            provider=str(getattr(self.provider, "provider_name", "")),
            model=str(getattr(self.provider, "model_id", "")),
            request=request,
            started=started,
            finished=datetime.now(UTC),
            response=self._response if error is None else None,
            error=error,
        )
        fire(self.config.callbacks, "on_model_call", call)

    def _request(self, final: bool) -> ModelRequest:
        """This round's request: the typed messages as they stand (none normalised again), tools, options."""
        config = self.config
        tool_choice = None
        if config.specs:
            pending = config.tool_output is not None and self.output is None
            if final:
                tool_choice = FINAL_RESULT if pending else "none"
            else:
                tool_choice = "any" if pending else "auto"
        options: dict[str, Any] = {}
        if config.context_management and "context_management" in supported_options(self.provider):
            options["context_management"] = dict(config.context_management)
        return ModelRequest(
            messages=tuple(self.transcript.messages),
            tools=config.specs,
            tool_choice=tool_choice,
            max_tokens=config.max_response_tokens,
            options=options,
        )

    def _tool_phase(
        self, calls: tuple[ToolCall, ...], final: bool, outcomes: list[Outcome]
    ) -> AsyncGenerator[AgentEvent, None]:
        executor = self._executor
        assert executor is not None
        if not final:
            return executor.run_batch(calls, outcomes)
        return self._not_run(executor, calls, outcomes)

    async def _not_run(
        self, executor: ToolExecutor, calls: tuple[ToolCall, ...], outcomes: list[Outcome]
    ) -> AsyncGenerator[AgentEvent, None]:
        """The last round runs no tools: the model would never see their results."""
        reason = self._cut_reason()
        for call in calls:
            if call.name == FINAL_RESULT and self.config.tool_output is not None:
                outcomes.append(self._final_result(call))
                continue
            outcome = Outcome(call, f"Error: not run: {reason}.", is_error=True, counted=False)
            outcomes.append(outcome)
            yield executor.finished_event(outcome)

    # -- verdicts ------------------------------------------------------------

    def _verdict(self, response: Response, final: bool) -> StoppedBy | None:
        """How the turn ends after this round, or ``None`` to go on."""
        spec = self.config.output
        if self.output is not None:
            return self.wrap_reason or "stop"
        if spec is not None and self.output_failures > spec.max_output_retries:
            return self.wrap_reason or "output_missing"
        if response.tool_calls:
            return (self.wrap_reason or "max_rounds") if final else None
        if response.stop_reason == "max_tokens":
            return self.wrap_reason or "max_tokens"
        if spec is None:
            return self.wrap_reason or "stop"
        if spec.mode == "prompted":
            value, error = spec.from_text(response.text)
            if value is not None:
                self.output = value
                return self.wrap_reason or "stop"
            retry = (
                f"[system] Your answer does not match the required JSON schema: {error}. "
                "Answer again with only a JSON object that matches it."
            )
        else:
            retry = _OUTPUT_NUDGE
        self.output_failures += 1
        if final or self.output_failures > spec.max_output_retries:
            return self.wrap_reason or "output_missing"
        self._append(UserMessage(content=retry))
        return None

    def _final_result(self, call: ToolCall) -> Outcome:
        """Handle a ``final_result`` call: record the output, or send the validation error back."""
        spec = self.config.output
        assert spec is not None
        if self.output is not None:
            return Outcome(call, "A final answer was already recorded.", counted=False)
        if call.arguments_valid:
            value, error = spec.from_arguments(call.arguments)
        else:
            value, error = None, "the arguments were not a JSON object"
        if value is None:
            self.output_failures += 1
            return Outcome(
                call,
                f"Error: the final answer does not match the schema: {error}. "
                "Call final_result again with a corrected answer.",
                is_error=True,
                counted=False,
            )
        self.output = value
        return Outcome(call, "Final answer recorded.", counted=False)

    def _watch_stuck(self, outcomes: list[Outcome]) -> None:
        watched = [o for o in outcomes if not (o.call.name == FINAL_RESULT and self.config.tool_output is not None)]
        if not watched:
            self._stuck.reset()
            return
        state = self._stuck.observe(watched)
        if state == "nudge":
            self._append(UserMessage(content=self._stuck.nudge_text))
        elif state == "stuck":
            self.wrap_reason = "stuck"

    def _cut_reason(self) -> str:
        if self.wrap_reason == "usage_limit":
            if self.breach is None:
                return "this run's usage limit is reached"
            used = (
                f"${self.breach.used:.4f} of ${self.breach.limit:.4f}"
                if self.breach.kind == "cost"
                else f"{self.breach.used} of {self.breach.limit}"
            )
            return f"the usage limit is reached ({self.breach.kind.replace('_', ' ')}: {used})"
        if self.wrap_reason == "stuck":
            return "repeated identical tool calls are making no progress"
        return f"this turn has used its {self.config.max_rounds} rounds"

    def _wrap_notice(self) -> str:
        if self.config.tool_output is not None and self.output is None:
            action = "Record your final answer by calling the final_result tool now."
        else:
            action = "Give your best final answer now, without calling tools."
        return f"[system] Final round: {self._cut_reason()}. {action}"

    # -- accounting ----------------------------------------------------------

    def _round_usage(self, index: int, response: Response, outcomes: list[Outcome], prompt_tokens: int) -> RoundUsage:
        return self.transcript.charge_compaction(self._model_usage(index, response, outcomes, prompt_tokens))

    def _model_usage(self, index: int, response: Response, outcomes: list[Outcome], prompt_tokens: int) -> RoundUsage:
        usage = response.usage
        counted = sum(1 for o in outcomes if o.counted)
        result_tokens = sum(estimate_tokens(o.content) for o in outcomes)
        schema_tokens = self.config.schema_tokens if self.config.specs else 0
        cost = usage.cost_usd or 0.0
        if usage.total_tokens:
            return RoundUsage(
                round=index,
                prompt_tokens=usage.input_tokens,
                completion_tokens=usage.output_tokens,
                cache_creation_tokens=usage.cache_write_tokens,
                cache_read_tokens=usage.cache_read_tokens,
                tool_schema_tokens=schema_tokens,
                tool_result_tokens=result_tokens,
                tool_calls=counted,
                cost_usd=cost,
            )
        completion = estimate_tokens(response.text) + sum(
            estimate_tokens(c.arguments_json()) for c in response.tool_calls
        )
        return RoundUsage(
            round=index,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion,
            tool_schema_tokens=schema_tokens,
            tool_result_tokens=result_tokens,
            tool_calls=counted,
            cost_usd=cost,
            estimated=True,
        )

    def _append(self, message: Message) -> None:
        self.transcript.append(message)

    # -- the end -------------------------------------------------------------

    def _fail(self, exc: BaseException) -> None:
        self.stopped_by = "error"
        self.text = ""
        if isinstance(exc, (GeneratorExit, asyncio.CancelledError, KeyboardInterrupt)):
            self.error = TurnError(kind="cancelled", message="the turn was abandoned before it finished")
        else:
            self.error = TurnError.from_exception(exc)
            self.exception = exc

    def _finish(self) -> TurnDiagnostics:
        """Close the open round, set :attr:`diagnostics` and return them; tell ``on_finish``."""
        if self._open_round is not None:
            fire(self.config.callbacks, "on_round_end", self._open_round)
            self._open_round = None
        self.diagnostics = TurnDiagnostics(
            turn_id=self.id,
            rounds=tuple(self.rounds),
            children=tuple(self.children),
            stopped_by=self.stopped_by or "error",
            error=self.error,
        )
        fire(self.config.callbacks, "on_turn_end", self.id, self.diagnostics)
        if self._on_finish is not None:
            self._on_finish(self)
        return self.diagnostics

    def _event(self, cls: type[EventT], **fields: Any) -> EventT:
        return cls(turn_id=self.id, parent_tool_call_id=self.parent, **fields)
