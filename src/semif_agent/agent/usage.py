"""What a turn spends and why it stopped: limits, per-round usage, diagnostics, the run pool.

Token figures come from the provider's reported usage. When a provider
reports none (some OpenAI-compatible servers do not on streams, and the
scripted provider reports zero unless told), they are estimated with
:func:`estimate_tokens`: about four characters a token. That is a coarse
figure, fine for limits and visibility, not for billing.

:class:`UsagePool` is the run-wide ledger. The turn that starts a run makes
the root pool from its :class:`UsageLimits`; a turn started inside one of
its tool calls (a subagent) takes a child pool, and every debit to a child
is also a debit to each pool above it, so a child's spend counts against
the whole run and the effective budget only ever narrows.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Literal, NamedTuple, TypeAlias

from pydantic import ConfigDict, Field, computed_field

from ..errors import check_type
from ._validated import ValidatedModel

CHARS_PER_TOKEN = 4

StoppedBy: TypeAlias = Literal["stop", "max_rounds", "max_tokens", "usage_limit", "output_missing", "stuck", "error"]
LimitKind: TypeAlias = Literal["total_tokens", "tool_calls", "cost"]
LimitScope: TypeAlias = Literal["turn", "run"]


def estimate_tokens(text: str) -> int:
    """About how many tokens ``text`` is: one per four characters, rounded up."""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def estimate_json_tokens(value: object) -> int:
    """:func:`estimate_tokens` of ``value`` written as compact JSON."""
    return estimate_tokens(json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str))


class UsageLimits(ValidatedModel):
    """What a run may spend. ``None`` is no limit.

    Crossing a limit emits ``UsageLimitReached``, grants one wrap-up round and
    ends the turn with ``stopped_by="usage_limit"``: no exception. Token and
    cost checks are made after each round, so a run may overshoot by the
    round in flight and the wrap-up round. Tool calls are checked before
    they run: a batch that would pass ``tool_calls_limit`` is cut, and the
    model is told which calls did not run.
    """

    model_config = ConfigDict(frozen=True)

    total_tokens_limit: int | None = Field(default=None, gt=0)
    tool_calls_limit: int | None = Field(default=None, ge=0)
    cost_limit: float | None = Field(default=None, gt=0)


class RoundUsage(ValidatedModel):
    """One round's accounting (one model call and the tools it asked for).

    ``prompt_tokens`` is the uncached input; cache writes and reads are
    counted apart, so :attr:`total_tokens` (full input + output, as billed)
    adds them. ``tool_schema_tokens`` and ``tool_result_tokens`` are
    estimated subsets shown for visibility, never added on top.
    ``tool_calls`` counts the calls the loop handled this round (run,
    refused or failed; not those cut by a limit, nor ``final_result``).
    ``cost_usd`` is 0.0 for a model without a price. ``estimated`` is true
    when the provider reported no usage and the token figures are estimates.
    """

    model_config = ConfigDict(frozen=True)

    round: int
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tool_schema_tokens: int = 0
    tool_result_tokens: int = 0
    cache_creation_tokens: int = 0
    cache_read_tokens: int = 0
    tool_calls: int = 0
    cost_usd: float = 0.0
    estimated: bool = False

    @computed_field  # type: ignore[prop-decorator]  # pydantic's computed_field over a property, which mypy does not model
    @property
    def total_tokens(self) -> int:
        """Full input (uncached, cache writes, cache reads) plus output."""
        return self.prompt_tokens + self.completion_tokens + self.cache_creation_tokens + self.cache_read_tokens


class TurnError(ValidatedModel):
    """Why a turn failed: the error's kind (class name), message and, for a provider, where."""

    model_config = ConfigDict(frozen=True)

    kind: str
    message: str
    provider: str | None = None
    model: str | None = None
    status: int | None = None

    @classmethod
    def from_exception(cls, exc: BaseException) -> TurnError:
        return cls(
            kind=type(exc).__name__,
            message=str(exc),
            provider=getattr(exc, "provider", None) or None,
            model=getattr(exc, "model", None) or None,
            status=getattr(exc, "status", None),
        )


class TurnDiagnostics(ValidatedModel):
    """Accounting and outcome of one turn (``agent.last_turn``, ``TurnFinished.diagnostics``).

    ``stopped_by``: ``stop`` (the model finished), ``max_rounds`` (the round
    cap cut the turn), ``max_tokens`` (the provider cut the answer),
    ``usage_limit`` (a limit ended the turn after its wrap-up round),
    ``output_missing`` (structured output never validated), ``stuck``
    (identical repeated tool calls, ended after a nudge and a wrap-up), or
    ``error`` (the turn failed or was abandoned: ``error`` says how).
    ``children`` lists subagent turns run inside this one's tool calls.
    """

    model_config = ConfigDict(frozen=True)

    turn_id: str = ""
    rounds: tuple[RoundUsage, ...] = ()
    stopped_by: StoppedBy = "stop"
    children: tuple[ChildTurn, ...] = ()
    error: TurnError | None = None

    @computed_field  # type: ignore[prop-decorator]  # pydantic's computed_field over a property, which mypy does not model
    @property
    def total_tokens(self) -> int:
        return sum(r.total_tokens for r in self.rounds)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's computed_field over a property, which mypy does not model
    @property
    def total_tool_calls(self) -> int:
        return sum(r.tool_calls for r in self.rounds)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's computed_field over a property, which mypy does not model
    @property
    def total_cost_usd(self) -> float:
        return sum(r.cost_usd for r in self.rounds)

    @property
    def total_prompt_tokens(self) -> int:
        return sum(r.prompt_tokens for r in self.rounds)

    @property
    def total_completion_tokens(self) -> int:
        return sum(r.completion_tokens for r in self.rounds)

    @property
    def run_total_tokens(self) -> int:
        """This turn's tokens plus every subagent turn's under it."""
        return self.total_tokens + sum(c.diagnostics.run_total_tokens for c in self.children)


class ChildTurn(ValidatedModel):
    """A subagent turn run inside one of this turn's tool calls."""

    model_config = ConfigDict(frozen=True)

    tool_call_id: str
    name: str
    diagnostics: TurnDiagnostics


TurnDiagnostics.model_rebuild()


class LimitBreach(NamedTuple):
    """A crossed limit: which, how much was used (USD for cost), the limit, and whose."""

    kind: LimitKind
    used: int | float
    limit: int | float
    scope: LimitScope


class UsagePool:
    """The spend of one run, checked against limits; a child pool debits every pool above it.

    All debits happen on the event loop's thread, between awaits, so no lock
    is needed (tools running in worker threads never debit).
    """

    __slots__ = ("limits", "parent", "tokens", "tool_calls", "refused_calls", "cost_usd")

    def __init__(self, limits: UsageLimits | None = None, *, parent: UsagePool | None = None) -> None:
        check_type("limits", limits, UsageLimits, optional=True)
        check_type("parent", parent, UsagePool, optional=True)
        self.limits = limits
        self.parent = parent
        self.tokens = 0
        self.tool_calls = 0
        self.refused_calls = 0  # calls cut before they ran because a limit would be passed
        self.cost_usd = 0.0

    def child(self, limits: UsageLimits | None = None) -> UsagePool:
        """A pool for a turn run inside this run (its own, narrower, ``limits`` on top)."""
        return UsagePool(limits, parent=self)

    def chain(self) -> Iterator[UsagePool]:
        """This pool, then each pool above it."""
        pool: UsagePool | None = self
        while pool is not None:
            yield pool
            pool = pool.parent

    def debit(self, *, tokens: int = 0, tool_calls: int = 0, cost_usd: float = 0.0) -> None:
        for pool in self.chain():
            pool.tokens += tokens
            pool.tool_calls += tool_calls
            pool.cost_usd += cost_usd

    def refuse(self, calls: int) -> None:
        """Record calls cut before they ran (they count toward the breach report, not the spend)."""
        for pool in self.chain():
            pool.refused_calls += calls

    def tool_calls_left(self) -> int | None:
        """How many more tool calls every pool in the chain allows (``None``: no limit)."""
        left: int | None = None
        for pool in self.chain():
            limit = pool.limits.tool_calls_limit if pool.limits is not None else None
            if limit is not None:
                room = max(0, limit - pool.tool_calls)
                left = room if left is None else min(left, room)
        return left

    def breach(self) -> LimitBreach | None:
        """The first crossed limit, own limits first (``scope="turn"`` below the root, ``"run"`` at it)."""
        for pool in self.chain():
            limits = pool.limits
            if limits is None:
                continue
            scope: LimitScope = "turn" if pool.parent is not None else "run"
            if limits.total_tokens_limit is not None and pool.tokens > limits.total_tokens_limit:
                return LimitBreach("total_tokens", pool.tokens, limits.total_tokens_limit, scope)
            asked = pool.tool_calls + pool.refused_calls
            if limits.tool_calls_limit is not None and asked > limits.tool_calls_limit:
                return LimitBreach("tool_calls", asked, limits.tool_calls_limit, scope)
            if limits.cost_limit is not None and pool.cost_usd > limits.cost_limit:
                return LimitBreach("cost", pool.cost_usd, limits.cost_limit, scope)
        return None
