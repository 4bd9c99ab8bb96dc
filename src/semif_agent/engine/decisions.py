"""The SemIf decision types: a question with options, and the engine's answer.

A decision a skill's body asks is bounded (:func:`check_bounds`): at most
:data:`MAX_OPTIONS` options, a state of :data:`MAX_STATE_CHARS` characters,
a question of :data:`MAX_QUESTION_CHARS`, option ids of
:data:`MAX_OPTION_ID_CHARS` and descriptions of :data:`MAX_DESCRIPTION_CHARS`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import DecisionTooLarge, InvalidArgumentError

NONE_ID = "none"
MAX_OPTIONS = 256
"""The most options a skill's decision may offer."""
MAX_STATE_CHARS = 64 * 1024
"""The longest state (characters) a skill's decision may carry."""
MAX_QUESTION_CHARS = 4 * 1024
"""The longest question (characters) of a skill's decision."""
MAX_OPTION_ID_CHARS = 256
"""The longest option id (characters) in a skill's decision."""
MAX_DESCRIPTION_CHARS = 4 * 1024
"""The longest option description (characters) in a skill's decision."""


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
        counts = Counter(o.id for o in self.options)
        if len(counts) != len(self.options):
            dupes = sorted(i for i, n in counts.items() if n > 1)
            shown = ", ".join(dupes[:10]) + (f" and {len(dupes) - 10} more" if len(dupes) > 10 else "")
            raise InvalidArgumentError(f"duplicate option ids: {shown}")

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


def check_option_count(count: int) -> None:
    """Raise :class:`~semif_agent.errors.DecisionTooLarge` when ``count`` options are more than a decision may offer."""
    if count > MAX_OPTIONS:
        raise DecisionTooLarge(f"a decision offers at most {MAX_OPTIONS} options (MAX_OPTIONS), not {count}")


def check_bounds(state: str, question: str, options: Sequence[Option]) -> None:
    """Raise :class:`~semif_agent.errors.DecisionTooLarge`, naming the cap, for a decision over one.

    The caps bound what a skill's body may ask (the host checks every one it
    is sent); the router's own decisions are not held to them. Linear in the
    number of options, which is checked first.
    """
    check_option_count(len(options))
    for name, text, cap in (("state", state, MAX_STATE_CHARS), ("question", question, MAX_QUESTION_CHARS)):
        if len(text) > cap:
            raise DecisionTooLarge(
                f"a decision's {name} is at most {cap} characters (MAX_{name.upper()}_CHARS), not {len(text)}"
            )
    for option in options:
        if len(option.id) > MAX_OPTION_ID_CHARS:
            raise DecisionTooLarge(
                f"an option id is at most {MAX_OPTION_ID_CHARS} characters (MAX_OPTION_ID_CHARS),"
                f" not {len(option.id)} ({option.id[:40]!r}...)"
            )
        if len(option.description) > MAX_DESCRIPTION_CHARS:
            raise DecisionTooLarge(
                f"option {option.id[:40]!r}: a description is at most {MAX_DESCRIPTION_CHARS} characters"
                f" (MAX_DESCRIPTION_CHARS), not {len(option.description)}"
            )


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
