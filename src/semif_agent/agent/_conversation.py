"""An agent's conversation: its finished turns (or its memory's session), and what of it the next turn sees."""

from __future__ import annotations

from pydantic import BaseModel

from ..llm.messages import Message, UserMessage
from ._config import AgentSettings, TurnConfig
from ._turn import Turn
from ._turn_messages import message_tokens
from .toolkits.memory import MemoryManager
from .usage import TurnDiagnostics


class Conversation:
    """The turns that ended, oldest first, with their estimated size; kept in ``memory`` when there is one."""

    def __init__(self) -> None:
        self.memory: MemoryManager | None = None
        self._turns: list[tuple[tuple[Message, ...], int]] = []  # finished turns: (messages, estimated tokens)
        self.last_turn: TurnDiagnostics | None = None
        self.last_output: BaseModel | None = None

    def messages(self) -> tuple[Message, ...]:
        if self.memory is not None:
            return tuple(self.memory.messages())
        return tuple(m for messages, _ in self._turns for m in messages)

    def clear(self) -> None:
        self._turns.clear()
        if self.memory is not None:
            self.memory.clear_history()

    def context_for(self, message: str, config: TurnConfig, settings: AgentSettings) -> list[Message]:
        """The earlier turns that fit ``max_tokens`` (and a :class:`TokenBudget`) with ``message``, oldest dropped first."""
        message_size = message_tokens(UserMessage(content=message))
        room = settings.max_tokens - settings.max_response_tokens - message_size
        if config.budget is not None:
            capped = config.budget.history_room(
                system=config.system_tokens,
                schemas=config.schema_tokens if config.specs else 0,
                message=message_size,
                response=settings.max_response_tokens,
            )
            room = room if capped is None else min(room, capped)
        if self.memory is not None:
            turns = self.memory.recent_turns(max(room, 0))
            return [m for messages, _ in turns for m in messages]
        kept: list[tuple[Message, ...]] = []
        for messages, tokens in reversed(self._turns):
            if tokens > room:
                break
            room -= tokens
            kept.append(messages)
        return [m for messages in reversed(kept) for m in messages]

    def remember(self, turn: Turn) -> None:
        """Record how ``turn`` ended; a turn that did not fail joins the conversation whole."""
        self.last_turn = turn.diagnostics
        self.last_output = turn.output
        if turn.stopped_by == "error":
            return
        if turn.compacted:  # the turn's messages start with the summary of everything before
            self.clear()
        messages = tuple(turn.new_messages)
        tokens = sum(message_tokens(m) for m in messages)
        if self.memory is not None:
            self.memory.add_turn(messages, tokens)
        else:
            self._turns.append((messages, tokens))
