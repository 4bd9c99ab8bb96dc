"""A turn's messages: what the model is sent each round, their estimated size, and their compaction.

:class:`TurnMessages` holds the system prompt (swapped when the session
changes it between rounds), the conversation before the turn and the
turn's own messages, with a running token estimate. When they pass a
:class:`~.compaction.Compaction`'s trigger, :meth:`TurnMessages.compact`
summarises the older working messages into one; the summary's model call
is counted into the round it precedes (:meth:`TurnMessages.charge_compaction`).
The turn (:class:`~._turn.Turn`) holds one and tells it what happened; the
events are the turn's.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ..llm.messages import AssistantMessage, Message, SystemMessage, UserMessage
from ..llm.protocol import LLMProvider
from .compaction import Compaction, CompactionCost, summary_message
from .usage import RoundUsage, estimate_tokens

log = logging.getLogger("semif_agent.agent")


def message_tokens(message: Message) -> int:
    """About how many tokens ``message`` takes in a prompt."""
    tokens = estimate_tokens(message.content) + 4
    if isinstance(message, AssistantMessage):
        for call in message.tool_calls:
            tokens += estimate_tokens(call.name) + estimate_tokens(call.arguments_json()) + 4
    return tokens


class TurnMessages:
    """The system prompt, the history before the turn, then the turn's messages (from :attr:`start`)."""

    def __init__(self, system_prompt: str, history: Sequence[Message], message: str) -> None:
        self.messages: list[Message] = [SystemMessage(content=system_prompt)] if system_prompt else []
        self.messages.extend(history)
        self.start = len(self.messages)
        self.tokens = sum(message_tokens(m) for m in self.messages)
        self.compacted = False  # the conversation before this turn was summarised into it
        self.compaction_failed = False
        self._compaction_cost = CompactionCost()  # counted into the round it precedes
        self.append(UserMessage(content=message))

    @property
    def new_messages(self) -> list[Message]:
        """This turn's messages: the user's, then every model answer, tool result and notice."""
        return self.messages[self.start :]

    def append(self, message: Message) -> None:
        self.messages.append(message)
        self.tokens += message_tokens(message)

    def set_system_prompt(self, prompt: str) -> None:
        """Put ``prompt`` first (none when empty), in place of the system prompt there was."""
        first = self.messages[0] if self.messages and isinstance(self.messages[0], SystemMessage) else None
        if first is not None:
            self.tokens -= message_tokens(first)
        if prompt:
            system = SystemMessage(content=prompt)
            self.tokens += message_tokens(system)
            if first is not None:
                self.messages[0] = system
            else:
                self.messages.insert(0, system)
                self.start += 1
        elif first is not None:
            del self.messages[0]
            self.start -= 1

    def compaction_due(self, compaction: Compaction) -> tuple[int, int] | None:
        """``(tokens, cut)`` when the working messages pass the trigger and the first ``cut`` of them can go."""
        working = self.messages[self._first_working() :]
        before = sum(message_tokens(m) for m in working)
        if before <= compaction.trigger_tokens:
            return None
        cut = compaction.boundary(working)
        return (before, cut) if cut else None

    async def compact(self, compaction: Compaction, cut: int, provider: LLMProvider, *, max_tokens: int) -> int | None:
        """Summarise the first ``cut`` working messages into one; the working tokens after, or None when it failed."""
        first = self._first_working()
        try:
            summary, cost = await compaction.summarize(
                self.messages[first : first + cut], provider, max_tokens=max_tokens
            )
        except Exception as exc:  # noqa: BLE001 - the turn goes on uncompacted
            log.warning("compaction failed, the messages stay as they are: %s: %s", type(exc).__name__, exc)
            self.compaction_failed = True
            return None
        spent = self._compaction_cost
        self._compaction_cost = CompactionCost(
            spent.prompt_tokens + cost.prompt_tokens,
            spent.completion_tokens + cost.completion_tokens,
            spent.cost_usd + cost.cost_usd,
        )
        self.messages[first : first + cut] = [summary_message(summary)]
        self.start = first
        self.compacted = True
        self.tokens = sum(message_tokens(m) for m in self.messages)
        return sum(message_tokens(m) for m in self.messages[first:])

    def charge_compaction(self, usage: RoundUsage) -> RoundUsage:
        """``usage`` with the cost of a summary made at the start of its round added."""
        extra, self._compaction_cost = self._compaction_cost, CompactionCost()
        if extra == CompactionCost():
            return usage
        return usage.model_copy(
            update={
                "prompt_tokens": usage.prompt_tokens + extra.prompt_tokens,
                "completion_tokens": usage.completion_tokens + extra.completion_tokens,
                "cost_usd": usage.cost_usd + extra.cost_usd,
            }
        )

    def _first_working(self) -> int:
        """Where the working messages start: after the system prompt."""
        return 1 if self.messages and isinstance(self.messages[0], SystemMessage) else 0
