"""The context pipeline: what enters a turn's context window, built step by step under a :class:`TokenBudget`.

::

    from semif_agent.agent import Agent, RetrievalScope, SQLiteRetriever, TokenBudget
    from semif_agent.agent.pipeline import ContextPipeline, retriever_step

    docs = SQLiteRetriever("docs.sqlite3")
    agent = (
        Agent(...)
        .with_context_steps([retriever_step(docs, limit=3)])      # documents for each message, before the history
        .with_budget(TokenBudget(total_tokens=8000, context_tokens=2000))
        .with_scope(RetrievalScope(include=("/campaign-1",)))
    )

    window = await ContextPipeline([retriever_step(docs)], budget=TokenBudget(context_tokens=500)).abuild(
        "What did the council decide?", scope=RetrievalScope(include=("/campaign-1",))
    )
    window.system_prompt, window.context, window.history, window.dropped

:meth:`ContextPipeline.abuild` runs its steps in order over one
:class:`PipelineState` (``build`` is it for sync code). A step is a callable
``step(state)``, sync or async, that adds to the state: retrieved passages
(:class:`ContextItem`, via :meth:`PipelineState.add_context`) or earlier
conversation (:meth:`PipelineState.add_history`). The budget governs what
goes in: each addition must fit what is left of ``total_tokens`` (with the
system prompt, the query and the ``reserved`` tokens the caller counts for
tool schemas and the answer) and of its own cap (``context_tokens``,
``history_tokens``); what does not fit is left out and counted in
:attr:`ContextWindow.dropped`.

The scope given to ``abuild`` is the state's, and is published for the build
(:func:`~semif_agent.agent.current_scope` reads it): a :func:`retriever_step`
searches under it and drops hits outside it.

Every turn of an :class:`~semif_agent.agent.Agent` is built on one: the
agent's context steps (``with_context_steps``), then :func:`history_step`
over its conversation; retrieved passages go in the system prompt under
:data:`CONTEXT_HEADER`, for the turn only (the conversation keeps the
messages, never the passages).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from .._sync import run_sync
from ..llm.messages import Message, UserMessage
from ._run_context import current_run, running
from ._turn_messages import message_tokens
from .budget import TokenBudget
from .errors import AgentConfigError
from .scope import RetrievalScope
from .toolkits.retrieval.tools import check_retriever, search_hits
from .usage import estimate_tokens

CONTEXT_HEADER = "## Retrieved context\nPassages found for the user's message; cite their ids when you use them."

Step = Callable[["PipelineState"], "Awaitable[None] | None"]


@dataclass(frozen=True)
class ContextItem:
    """A passage a step put in the window: its text, where it came from, and its estimated size."""

    text: str
    source: str = ""
    id: str = ""
    namespace: str = "/"
    score: float = 0.0

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.rendered()) + 2

    def rendered(self) -> str:
        head = f"[{self.source}] id={self.id} namespace={self.namespace}" if self.id else f"[{self.source}]"
        return f"{head}\n{self.text}"


@dataclass
class PipelineState:
    """What a build has gathered so far, and what it may still add (see the module)."""

    query: str
    system_prompt: str = ""
    scope: RetrievalScope | None = None
    budget: TokenBudget | None = None
    reserved: int = 0  # tokens of the prompt the caller counts apart: tool schemas, the answer's room
    context: list[ContextItem] = field(default_factory=list)
    history: list[Message] = field(default_factory=list)
    dropped: int = 0  # passages or earlier turns left out: they did not fit

    @property
    def tokens(self) -> int:
        """The window's estimated size so far: system prompt, passages, history, the query, and ``reserved``."""
        return (
            estimate_tokens(self.system_prompt)
            + sum(item.tokens for item in self.context)
            + sum(message_tokens(m) for m in self.history)
            + message_tokens(UserMessage(content=self.query))
            + self.reserved
        )

    def room(self, cap: int | None = None) -> int | None:
        """Tokens an addition may still take: under ``total_tokens`` and ``cap`` (``None``: no limit)."""
        rooms = [] if cap is None else [cap]
        if self.budget is not None and self.budget.total_tokens is not None:
            rooms.append(self.budget.total_tokens - self.tokens)
        return max(0, min(rooms)) if rooms else None

    def add_context(self, items: Sequence[ContextItem]) -> list[ContextItem]:
        """Add the passages that fit (in order, under ``context_tokens`` and the total); returns those added."""
        added = []
        for item in items:
            used = sum(i.tokens for i in self.context)
            cap = self.budget.context_tokens if self.budget is not None else None
            room = self.room(None if cap is None else cap - used)
            if room is not None and item.tokens > room:
                self.dropped += 1
                continue
            self.context.append(item)
            added.append(item)
        return added

    def add_history(self, turns: Sequence[Sequence[Message]], *, cap: int | None = None) -> None:
        """Add earlier turns, newest first and whole, while they fit (under ``cap``, ``history_tokens`` and the total);
        they are kept oldest first."""
        budget_cap = self.budget.history_tokens if self.budget is not None else None
        caps = [c for c in (cap, budget_cap) if c is not None]
        room = self.room(min(caps) if caps else None)
        kept: list[Sequence[Message]] = []
        for index, messages in enumerate(reversed(turns)):
            tokens = sum(message_tokens(m) for m in messages)
            if room is not None and tokens > room:
                self.dropped += len(turns) - index
                break
            room = None if room is None else room - tokens
            kept.append(messages)
        self.history[:0] = [m for messages in reversed(kept) for m in messages]


@dataclass(frozen=True)
class ContextWindow:
    """What a build put in the window: the system prompt (with the passages), the passages, the history."""

    query: str
    system_prompt: str
    context: tuple[ContextItem, ...]
    history: tuple[Message, ...]
    tokens: int
    dropped: int


class ContextPipeline:
    """Steps run in order to fill a turn's context window, under a :class:`TokenBudget` (see the module)."""

    def __init__(self, steps: Sequence[Step] = (), *, budget: TokenBudget | None = None) -> None:
        self.steps: list[Step] = []
        self.budget = budget
        for step in steps:
            self.add_step(step)

    def add_step(self, step: Step) -> ContextPipeline:
        """Add a step (``step(state)``, sync or async) after the others. Returns self."""
        if not callable(step):
            raise AgentConfigError(f"a pipeline step must be callable (state) -> None, got {type(step).__name__}")
        self.steps.append(step)
        return self

    def with_budget(self, budget: TokenBudget | None) -> ContextPipeline:
        """Govern what enters the window with ``budget``. Returns self."""
        self.budget = budget
        return self

    async def abuild(
        self, query: str, *, system_prompt: str = "", scope: RetrievalScope | None = None, reserved: int = 0
    ) -> ContextWindow:
        """Run the steps for ``query``, ``scope`` published meanwhile; the window they filled."""
        state = PipelineState(str(query), system_prompt, scope, self.budget, reserved)
        with running(replace(current_run(), scope=scope)):
            for step in self.steps:
                done = step(state)
                if inspect.isawaitable(done):
                    await done
        system = system_prompt
        if state.context:
            passages = "\n\n".join(item.rendered() for item in state.context)
            system = "\n\n".join(part for part in (system_prompt, f"{CONTEXT_HEADER}\n\n{passages}") if part)
        return ContextWindow(
            query=state.query,
            system_prompt=system,
            context=tuple(state.context),
            history=tuple(state.history),
            tokens=state.tokens,
            dropped=state.dropped,
        )

    def build(
        self, query: str, *, system_prompt: str = "", scope: RetrievalScope | None = None, reserved: int = 0
    ) -> ContextWindow:
        """:meth:`abuild` for sync code (not inside a running event loop)."""
        return run_sync(
            self.abuild(query, system_prompt=system_prompt, scope=scope, reserved=reserved), "ContextPipeline.build"
        )


def retriever_step(retriever: object, *, limit: int = 5, source: str = "retrieval") -> Step:
    """A step searching ``retriever`` for the query under the state's scope; the hits that fit go in, best first.

    ``retriever`` is any :class:`~semif_agent.agent.toolkits.retrieval.Retriever` (``search`` or ``asearch``).
    """
    check_retriever(retriever, "the retriever")

    async def retrieve(state: PipelineState) -> None:
        hits = await search_hits(retriever, state.query, limit, state.scope, None)
        if state.scope is not None:
            hits = [hit for hit in hits if state.scope.matches(hit.namespace)]
        state.add_context(
            [ContextItem(h.text, source, h.id, h.namespace, h.score) for h in hits[:limit]],
        )

    return retrieve


class HistorySource(Protocol):
    """Earlier turns, oldest first, each as its messages (an agent's conversation)."""

    def turns(self) -> Sequence[Sequence[Message]]: ...


def history_step(source: HistorySource, *, max_tokens: int | None = None) -> Step:
    """A step adding ``source``'s latest turns that fit (whole, oldest dropped first), under ``max_tokens`` too.

    ``max_tokens`` counts the history, the query and the passages before it, not the system prompt nor
    the ``reserved`` tokens (the agent's ``max_tokens`` less the answer's room).
    """

    def history(state: PipelineState) -> None:
        cap = None
        if max_tokens is not None:
            cap = max_tokens - message_tokens(UserMessage(content=state.query))
            cap -= sum(item.tokens for item in state.context)
        state.add_history(source.turns(), cap=cap)

    return history
