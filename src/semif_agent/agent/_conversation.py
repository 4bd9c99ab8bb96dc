"""An agent's conversation: its finished turns (or its memory's session); what of it the next turn sees is the
context pipeline's to say (:func:`~.pipeline.history_step`)."""

from __future__ import annotations

from pydantic import BaseModel

from ..llm.messages import Message
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

    def turns(self) -> list[tuple[Message, ...]]:
        """The finished turns, oldest first, each as its messages (with memory: its session's)."""
        if self.memory is not None:
            return [messages for messages, _ in self.memory.recent_turns()]
        return [messages for messages, _ in self._turns]

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
