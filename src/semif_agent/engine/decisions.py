"""The SemIf decision types: a question with options, and the engine's answer."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidArgumentError

NONE_ID = "none"


@dataclass(frozen=True)
class Option:
    """One answer a decision offers: a stable ``id`` and what it means."""

    id: str
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise InvalidArgumentError("Option.id must be a non-empty string")
        if not isinstance(self.description, str):
            raise InvalidArgumentError(f"Option {self.id!r}: description must be a string")


@dataclass(frozen=True)
class DecisionRequest:
    """ "Which of these options?": the state the decision is about, the question, the options."""

    state: str
    question: str
    options: list[Option] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.options:
            raise InvalidArgumentError("a DecisionRequest needs at least one option")
        ids = [o.id for o in self.options]
        if len(set(ids)) != len(ids):
            dupes = sorted({i for i in ids if ids.count(i) > 1})
            raise InvalidArgumentError(f"duplicate option ids: {', '.join(dupes)}")

    @property
    def option_ids(self) -> list[str]:
        return [o.id for o in self.options]

    @property
    def has_none(self) -> bool:
        return any(o.id == NONE_ID for o in self.options)

    def to_dict(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "question": self.question,
            "options": [{"id": o.id, "description": o.description} for o in self.options],
        }


@dataclass(frozen=True)
class DecisionResult:
    """An engine's answer.

    ``selected`` is always one of the offered option ids. ``scores`` holds the
    engine's raw score per option (similarity, BM25, log-probability...);
    ``probabilities`` a distribution over the options when the engine has one,
    else ``None``. ``engine`` and ``model`` say who answered.
    """

    selected: str
    scores: dict[str, float] = field(default_factory=dict)
    probabilities: dict[str, float] | None = None
    engine: str = ""
    model: str | None = None
    latency_ms: float = 0.0
    usage: dict[str, Any] | None = None
    note: str = ""

    @property
    def score(self) -> float | None:
        """The selected option's score, if the engine scored it."""
        return self.scores.get(self.selected)

    def to_dict(self) -> dict[str, Any]:
        return {
            "selected": self.selected,
            "scores": {k: _finite(v) for k, v in self.scores.items()},
            "probabilities": self.probabilities,
            "engine": self.engine,
            "model": self.model,
            "latency_ms": round(self.latency_ms, 3),
            "usage": self.usage,
            "note": self.note,
        }


def _finite(value: float) -> float | None:
    return round(value, 6) if math.isfinite(value) else None


def softmax(scores: dict[str, float], temperature: float = 1.0) -> dict[str, float]:
    """A probability per key from raw scores (numerically stable)."""
    if not scores:
        return {}
    top = max(scores.values())
    exps = {k: math.exp((v - top) / temperature) for k, v in scores.items()}
    total = sum(exps.values())
    return {k: v / total for k, v in exps.items()}
