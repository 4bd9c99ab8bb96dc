"""What the helpers around the turn loop need of an agent, as small protocols (the agent implements them).

- :class:`Delegate`: an agent a task is handed to (a subagent, or an agent
  behind ``as_tool``) starts a clean turn for it.
"""

from __future__ import annotations

from typing import Protocol

from ._turn import Turn
from .output import OutputSpec


class Delegate(Protocol):
    def task_turn(self, task: str, *, output: OutputSpec | None = None, parent_tool_call_id: str | None = None) -> Turn:
        """A clean turn on ``task`` (no conversation before it; not remembered after)."""
        ...

    @property
    def delegates(self) -> bool:
        """True when this agent can start subagents of its own."""
        ...

    def clear_history(self) -> None:
        """Start a new session: nothing activated or loaded by an earlier task carries over."""
        ...

    async def aclose(self) -> None: ...
