"""Compare routing settings on the same held-out examples, and change them only for a real gain.

``decide`` takes the candidate that did best on the validation half (where
thresholds were tuned) and weighs it against the current settings on the
held-out half: it keeps the current ones unless there are enough held-out
examples, the candidate gains at least ``MIN_GAIN`` on the chosen measure, and
a paired exact test (McNemar's, on the examples where the two disagree) says
the gain is not noise. Choosing on one half and testing on the other makes
that one test honest: no correction for the number of candidates is needed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from math import exp, lgamma, log
from typing import Any

from .._text import percent_figure
from ..errors import InvalidArgumentError
from .evaluate import Example, RoutedExample
from .names import MEASURES

# At least 30 held-out examples: with fewer, one request moves accuracy by more
# than 3 points, the threshold was tuned on a validation half about as small,
# and the verdict hangs on the handful of requests the two settings disagree on.
MIN_HELD_OUT = 30
# A smaller gain is not worth changing how a workspace routes, even when a
# large dataset makes it significant.
MIN_GAIN = 0.02
ALPHA = 0.05  # the significance level of the paired test
MEASURE_LABELS = {"accuracy": "accuracy", "balanced": "balanced accuracy", "leaf": "in-scope accuracy"}


@dataclass
class Trial:
    """A routing setting and how it did on the held-out examples (``outcomes`` in dataset order).

    ``validation`` is the measure it was tuned for, on the validation half
    (``None`` for settings that were not tuned).
    """

    strategy: str
    threshold: float | None
    temperature: float | None
    outcomes: list[RoutedExample]
    metrics: dict[str, Any]
    validation: float | None = None

    @property
    def settings(self) -> dict[str, object]:
        """What ``data/routing.json`` would hold for it."""
        found = {"strategy": self.strategy, "threshold": self.threshold, "temperature": self.temperature}
        return {k: v for k, v in found.items() if v is not None}

    @property
    def label(self) -> str:
        return self.strategy if self.threshold is None else f"{self.strategy} at {self.threshold:g}"


@dataclass
class Decision:
    """Whether tuning changes the routing, why (one line), and the numbers behind it."""

    changed: bool
    reason: str
    candidate: Trial
    gain: float
    p_value: float
    held_out: int


def measure_weights(examples: list[Example], measure: str) -> list[int]:
    """What each example counts for in ``measure``, in whole units.

    ``accuracy``: one each. ``leaf``: one per in-scope example, none for the
    others. ``balanced``: in-scope and out-of-scope examples weigh the same in
    total (each in-scope one counts the number of out-of-scope ones, and the
    other way round), as in the mean of leaf accuracy and out-of-scope recall.
    """
    if measure not in MEASURES:
        raise InvalidArgumentError(f"unknown measure {measure!r} (known: {', '.join(MEASURES)})")
    inside = sum(e.skill is not None for e in examples)
    outside = len(examples) - inside
    if measure == "leaf":
        return [int(e.skill is not None) for e in examples]
    if measure == "balanced" and inside and outside:
        return [outside if e.skill is not None else inside for e in examples]
    return [1] * len(examples)


def paired_p_value(current: list[bool], candidate: list[bool], weights: list[int]) -> float:
    """Two-sided exact p-value of "the two do equally well", from the examples where one is right and the other not.

    If neither is better, each disagreement is as likely to go one way as the
    other, so the weighted difference is a sum of fair coins of +/- weight.
    Its exact distribution is built one group of equal weights at a time; the
    p-value is the chance of a difference at least as large as the observed
    one. With equal weights this is McNemar's exact test.
    """
    pairs = [(now, new, w) for now, new, w in zip(current, candidate, weights, strict=True) if now != new and w]
    observed = abs(sum(w if new else -w for _, new, w in pairs))
    distribution = {0: 1.0}
    for weight, count in Counter(w for _, _, w in pairs).items():
        steps = [(weight * (2 * wins - count), _fair_coins(count, wins)) for wins in range(count + 1)]
        spread: dict[int, float] = {}
        for total, chance in distribution.items():
            for step, step_chance in steps:
                spread[total + step] = spread.get(total + step, 0.0) + chance * step_chance
        distribution = spread
    return min(1.0, sum(chance for total, chance in distribution.items() if abs(total) >= observed))


def _fair_coins(count: int, wins: int) -> float:
    """The chance of exactly ``wins`` heads in ``count`` fair coins (in logarithms: exact integers of thousands of
    digits took seconds for a few thousand coins)."""
    return exp(lgamma(count + 1) - lgamma(wins + 1) - lgamma(count - wins + 1) - count * log(2))


def decide(current: Trial, candidates: list[Trial], measure: str) -> Decision:
    """Keep ``current`` unless the candidate best on the validation half is really better on the held-out one.

    Ties on the validation half go to the current strategy, then to the
    earlier candidate.
    """
    key = MEASURES[measure]
    best = max(candidates, key=lambda t: (t.validation or 0.0, t.strategy == current.strategy))
    gain = round((best.metrics[key] or 0.0) - (current.metrics[key] or 0.0), 4)
    examples = [o.example for o in current.outcomes]
    weights = measure_weights(examples, measure)
    held_out = sum(1 for w in weights if w)
    p_value = paired_p_value([o.correct for o in current.outcomes], [o.correct for o in best.outcomes], weights)
    what = MEASURE_LABELS[measure]
    claim = f"the {gain * 100:.1f}-point gain in {what} of {best.label} on {held_out} held-out examples"
    if (best.strategy, best.threshold) == (current.strategy, current.threshold):
        why = "tuning on the validation half picks it again"
    elif gain <= 0:
        why = (
            f"{best.label}, the best on the validation half, does no better in {what} on {held_out} held-out "
            f"examples ({percent_figure(best.metrics[key])} against {percent_figure(current.metrics[key])})"
        )
    elif held_out < MIN_HELD_OUT:
        why = f"{claim} cannot be told from noise (fewer than {MIN_HELD_OUT}; p={p_value:.2g})"
    elif gain < MIN_GAIN:
        why = f"{claim} is below the {MIN_GAIN * 100:g} points worth a change"
    elif p_value >= ALPHA:
        why = f"{claim} is within noise (p={p_value:.2g})"
    else:
        reason = (
            f"changed {current.label} to {best.label}: a {gain * 100:.1f}-point gain in {what} "
            f"on {held_out} held-out examples (p={p_value:.2g})"
        )
        return Decision(True, reason, best, gain, p_value, held_out)
    return Decision(False, f"kept {current.label}: {why}", best, gain, p_value, held_out)
