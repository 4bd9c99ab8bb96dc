"""The tool call running now, as a tool sees it: its id, and the channel back to the turn that runs it.

The executor publishes a :class:`ToolCallContext` for each call (like the
run pool). A subagent run inside the call uses it to forward its events
into the parent's stream, flat, as they come, and to report its
:class:`~semif_agent.agent.usage.ChildTurn` to the parent's diagnostics.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .usage import ChildTurn


@dataclass(frozen=True, slots=True)
class ToolCallContext:
    """One running tool call: ``emit`` forwards an event into its turn's stream; ``add_child`` records a subagent turn.

    Both are called on the event loop's thread (from async tools), never from a worker thread.
    """

    tool_call_id: str
    name: str
    emit: Callable[[Any], None]
    add_child: Callable[[ChildTurn], None]


SUBAGENT_MARK = "_semif_subagent"
"""Set on the function of a tool that runs a subagent (its events are forwarded live; it never nests)."""


def runs_subagent(fn: Any) -> bool:
    """True when ``fn`` (a tool's function) runs a subagent."""
    return bool(getattr(fn, SUBAGENT_MARK, False))


_current: contextvars.ContextVar[ToolCallContext | None] = contextvars.ContextVar("semif_agent_tool_call", default=None)


def current_tool_call() -> ToolCallContext | None:
    """The tool call running here (``None`` outside tool calls)."""
    return _current.get()


def publish_call(context: ToolCallContext | None) -> contextvars.Token[ToolCallContext | None]:
    return _current.set(context)


def reset_call(token: contextvars.Token[ToolCallContext | None]) -> None:
    _current.reset(token)
