"""The token budget: what may enter the context window of a turn.

::

    from semif_agent.agent import Agent, TokenBudget

    agent = Agent(...).with_budget(TokenBudget(total_tokens=8000, history_tokens=3000, tool_result_tokens=1500))

It governs what a turn puts in front of the model, not what a run may spend
(that is :class:`~semif_agent.agent.UsageLimits`). All figures are the
agent's estimates (about four characters a token). Each cap is optional:

``total_tokens``
    The whole prompt a turn starts with: the system prompt, the tool
    schemas, the retrieved passages, the earlier conversation, the new message, and the room kept
    for the answer (``max_response_tokens``). Earlier turns are dropped,
    oldest first and whole, until it fits. Unlike the agent's
    ``max_tokens`` it counts the system prompt and the tool schemas.
``history_tokens``
    The earlier conversation alone (whole turns, oldest dropped first).
``system_tokens``
    The system prompt, with what the agent appends to it (the memory
    protocol, ...). A prompt over it is a configuration error when the turn
    starts: cutting instructions silently would change what the agent does.
``context_tokens``
    The passages the turn's context steps retrieved for the message
    (:func:`~semif_agent.agent.pipeline.retriever_step`): those that do not
    fit are left out, best kept first.
``tool_result_tokens``
    Each tool result, cut head-and-tail like the agent's
    ``tool_result_max_tokens``; the lower of the two caps applies (a tool's
    own ``max_result_tokens`` is capped by it too).

The turn's window is built by the context pipeline
(:mod:`semif_agent.agent.pipeline`), the one place these caps are applied.
The new message and a turn's own rounds are never cut: a turn that outgrows
its window inside one turn is what compaction is for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ConfigDict, Field

from ._validated import ValidatedModel


class TokenBudget(ValidatedModel):
    """Caps, in estimated tokens, on what enters the context window (frozen; ``None``: no cap)."""

    model_config = ConfigDict(frozen=True)

    total_tokens: int | None = Field(default=None, gt=0)
    history_tokens: int | None = Field(default=None, ge=0)
    system_tokens: int | None = Field(default=None, gt=0)
    tool_result_tokens: int | None = Field(default=None, gt=0)
    context_tokens: int | None = Field(default=None, ge=0)

    @classmethod
    def coerce(cls, budget: TokenBudget | Mapping[str, Any] | None) -> TokenBudget | None:
        """``budget`` as a :class:`TokenBudget` (a mapping gives its fields; ``None`` stays ``None``)."""
        return budget if budget is None or isinstance(budget, TokenBudget) else cls(**dict(budget))

    def result_cap(self, cap: int | None) -> int | None:
        """The cap on one tool result: the lower of ``cap`` and ``context_tokens``
            The passages the turn's context steps retrieved for the message
            (:func:`~semif_agent.agent.pipeline.retriever_step`): those that do not
            fit are left out, best kept first.
        ``tool_result_tokens``."""
        if self.tool_result_tokens is None:
            return cap
        return self.tool_result_tokens if cap is None else min(cap, self.tool_result_tokens)
