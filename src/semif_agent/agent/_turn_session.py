"""The session and compaction steps of a turn (mixed into :class:`~._turn.Turn`).

At the start of each round, :meth:`SessionSteps._refresh` takes the round's
config from the agent's session (skills, deferred tools, subagents as they
stand now) and puts its system prompt in place; :meth:`SessionSteps._compact`
summarises the older working messages when they pass the compaction
trigger. A summary's model call is counted into the round it precedes.

SKILL.md lifecycle hooks: a round is a step. :meth:`SessionSteps._step_hooks`
runs the ``pre_step`` hooks of the active skills (those allowed to run
scripts) before the round's model call, and their ``post_step`` hooks after
its tool calls, in the catalog's sandbox (the agent's workspace as working
directory, ``SKILL_HOOK`` naming the hook), with the arguments
``--turn TURN_ID --round N``. A hook's output does not reach the model; one
that fails is logged and the turn goes on.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any, TypeVar

from ..llm.messages import AssistantMessage, Message, SystemMessage
from .compaction import Compaction, CompactionCost, summary_message
from .events import AgentEvent, CompactionFinished, CompactionStarted, _Event
from .usage import RoundUsage, estimate_tokens

if TYPE_CHECKING:
    from ..llm.protocol import LLMProvider
    from ._config import TurnConfig
    from ._execution import ToolExecutor

log = logging.getLogger("semif_agent.agent")

EventT = TypeVar("EventT", bound=_Event)  # an event class, and what _event makes of it


def message_tokens(message: Message) -> int:
    """About how many tokens ``message`` takes in a prompt."""
    tokens = estimate_tokens(message.content) + 4
    if isinstance(message, AssistantMessage):
        for call in message.tool_calls:
            tokens += estimate_tokens(call.name) + estimate_tokens(call.arguments_json()) + 4
    return tokens


class SessionSteps:
    """Per-round session refresh and compaction, over the turn's messages."""

    id: str
    config: TurnConfig
    _base: TurnConfig
    provider: LLMProvider
    messages: list[Message]
    start: int
    compacted: bool
    _tokens: int
    _prepared: Any
    _extra: CompactionCost
    _compaction_failed: bool
    _executor: ToolExecutor | None

    if TYPE_CHECKING:

        def _event(self, cls: type[EventT], **fields: Any) -> EventT: ...

    async def _step_hooks(self, hook_type: str, index: int) -> None:
        """Run the active skills' ``hook_type`` hooks for round ``index`` (see the module's description)."""
        session = self._base.session
        if session is None:
            return
        results = await session.run_hooks(hook_type, ("--turn", self.id, "--round", str(index)))
        for skill, result in results.items():
            if not result.ok:
                log.warning(
                    "the %s hook of skill %r failed (%s): %s",
                    hook_type,
                    skill,
                    result.error_type,
                    result.stderr.strip()[-500:],
                )

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
        first = self.messages[0] if self.messages and isinstance(self.messages[0], SystemMessage) else None
        if first is not None:
            self._tokens -= message_tokens(first)
        if config.system_prompt:
            system = SystemMessage(content=config.system_prompt)
            self._tokens += message_tokens(system)
            if first is not None:
                self.messages[0] = system
            else:
                self.messages.insert(0, system)
                self.start += 1
        elif first is not None:
            del self.messages[0]
            self.start -= 1

    async def _compact(self, compaction: Compaction) -> AsyncGenerator[AgentEvent, None]:
        """Summarise the older working messages when they pass ``compaction``'s trigger."""
        first = 1 if self.messages and isinstance(self.messages[0], SystemMessage) else 0
        working = self.messages[first:]
        before = sum(message_tokens(m) for m in working)
        if before <= compaction.trigger_tokens:
            return
        cut = compaction.boundary(working)
        if cut == 0:
            return
        yield self._event(CompactionStarted)
        try:
            summary, cost = await compaction.summarize(
                working[:cut], self.provider, max_tokens=self.config.max_response_tokens
            )
        except Exception as exc:  # noqa: BLE001 - the turn goes on uncompacted
            log.warning("compaction failed, the messages stay as they are: %s: %s", type(exc).__name__, exc)
            self._compaction_failed = True
            yield self._event(CompactionFinished, tokens_before=before, tokens_after=before)
            return
        self._extra = CompactionCost(
            self._extra.prompt_tokens + cost.prompt_tokens,
            self._extra.completion_tokens + cost.completion_tokens,
            self._extra.cost_usd + cost.cost_usd,
        )
        self.messages[first : first + cut] = [summary_message(summary)]
        self.start = first
        self.compacted = True
        self._tokens = sum(message_tokens(m) for m in self.messages)
        after = sum(message_tokens(m) for m in self.messages[first:])
        yield self._event(CompactionFinished, tokens_before=before, tokens_after=after)

    def _with_compaction_cost(self, usage: RoundUsage) -> RoundUsage:
        """``usage`` with the cost of a summary made at the start of its round added."""
        extra, self._extra = self._extra, CompactionCost()
        if extra == CompactionCost():
            return usage
        return usage.model_copy(
            update={
                "prompt_tokens": usage.prompt_tokens + extra.prompt_tokens,
                "completion_tokens": usage.completion_tokens + extra.completion_tokens,
                "cost_usd": usage.cost_usd + extra.cost_usd,
            }
        )
