"""What a tool call runs inside, as one object: the run's usage pool, the retrieval scope, the call, the subagent.

The executor publishes a :class:`RunContext` for each tool call it runs
(one context variable, set and reset once per call); everything a tool, a
subagent or a retriever needs to know about where it runs is read from it:

- ``pool``: the run's usage pool; a turn started inside the call (a
  subagent's) takes a child of it (:func:`current_usage_pool`);
- ``scope``: the retrieval scope of the turn (:func:`current_scope`); a
  subagent's turn intersects it with its own (:func:`effective_scope`);
- ``call``: the call itself (:class:`ToolCallContext`): a subagent run inside
  it forwards its events into the parent's stream through it, flat, as they
  come, and reports its :class:`~semif_agent.agent.usage.ChildTurn`;
- ``subagent``: the name of the subagent whose turn the call belongs to
  (subagents do not nest: one started here is refused).

Outside tool calls every field is ``None``.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .scope import RetrievalScope
from .usage import ChildTurn, UsagePool

if TYPE_CHECKING:
    from .events import AgentEvent


@dataclass(frozen=True, slots=True)
class ToolCallContext:
    """One running tool call: ``emit`` forwards an event into its turn's stream; ``add_child`` records a subagent turn.

    Both are called on the event loop's thread (from async tools), never from a worker thread.
    """

    tool_call_id: str
    name: str
    emit: Callable[[AgentEvent], None]
    add_child: Callable[[ChildTurn], None]


@dataclass(frozen=True, slots=True)
class RunContext:
    """Where the code running now runs: see the module's description."""

    pool: UsagePool | None = None
    scope: RetrievalScope | None = None
    call: ToolCallContext | None = None
    subagent: str | None = None


OUTSIDE = RunContext()
_current: contextvars.ContextVar[RunContext] = contextvars.ContextVar("semif_agent_run", default=OUTSIDE)


def current_run() -> RunContext:
    """The context published here (:data:`OUTSIDE`, every field ``None``, outside tool calls)."""
    return _current.get()


@contextmanager
def running(context: RunContext) -> Iterator[RunContext]:
    """Publish ``context`` for the duration of the block."""
    token = _current.set(context)
    try:
        yield context
    finally:
        _current.reset(token)


@contextmanager
def inside_subagent(name: str) -> Iterator[RunContext]:
    """The current context, marked as running subagent ``name``, for the duration of the block."""
    with running(replace(_current.get(), subagent=name)) as context:
        yield context


def current_tool_call() -> ToolCallContext | None:
    """The tool call running here (``None`` outside tool calls)."""
    return _current.get().call


def current_usage_pool() -> UsagePool | None:
    """The run pool published for the tool call running here (``None`` outside tool calls).

    A turn started inside a tool call (a subagent) takes a child of it.
    """
    return _current.get().pool


def current_scope() -> RetrievalScope | None:
    """The scope published for the current tool call (``None`` outside one, or for an agent without a scope)."""
    return _current.get().scope


def effective_scope(own: RetrievalScope | None) -> RetrievalScope | None:
    """The scope a turn runs with: ``own`` narrowed by the one published around it (a parent's tool call)."""
    inherited = current_scope()
    if inherited is None:
        return own
    return inherited.intersect(own)


SUBAGENT_MARK = "_semif_subagent"
"""Set on the function of a tool that runs a subagent (its events are forwarded live; it never nests)."""


def runs_subagent(fn: Any) -> bool:
    """True when ``fn`` (a tool's function) runs a subagent."""
    return bool(getattr(fn, SUBAGENT_MARK, False))
