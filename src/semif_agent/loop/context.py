"""The engine a skill body sees: the real engine, counted against the skill's budget."""

from __future__ import annotations

from dataclasses import dataclass, field

from .._text import plural
from ..engine.base import Engine
from ..engine.decisions import DecisionRequest, DecisionResult
from ..errors import BudgetExceeded, check_number
from .guard import unguarded


@dataclass
class BudgetedEngine:
    """Forwards ``call`` to ``engine`` until ``budget`` calls were made, then fails fast.

    Every decision made through it is kept in ``decisions``, so it is logged
    even if the body forgets to return it. ``overrun`` stays set even if the
    body swallows the :class:`BudgetExceeded`.
    """

    engine: Engine
    budget: int
    skill: str = ""
    decisions: list[tuple[DecisionRequest, DecisionResult]] = field(default_factory=list)
    overrun: bool = False

    def __post_init__(self) -> None:
        check_number("budget", self.budget, whole=True)

    @property
    def name(self) -> str:
        return self.engine.name

    @property
    def model(self) -> str | None:
        return self.engine.model

    @property
    def calls(self) -> int:
        return len(self.decisions)

    def call(self, request: DecisionRequest) -> DecisionResult:
        if len(self.decisions) >= self.budget:
            self.overrun = True
            raise BudgetExceeded(
                f"skill {self.skill!r} exceeded its cost_budget of "
                f"{plural(self.budget, 'engine call')} (call {len(self.decisions) + 1}: {request.question!r})"
            )
        with unguarded():
            result = self.engine.call(request)
        self.decisions.append((request, result))
        return result
