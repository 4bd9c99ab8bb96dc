"""The figures of the quality page, from the indexed runs: routing accuracy, calibration, confusions, outcomes.

A run says whether its routing was right only once a person labelled it (what a client picked or reported
is left out):
a label naming the skill it should have gone to (or none) says so directly;
a label saying it succeeded, without naming a skill, confirms the skill it
chose. A label that only says it failed does not say whether the route was
wrong, and is left out.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..records import RunRecord
from ..records.runs import persons_word
from ..routing.evaluate import Example, RoutedExample, expected_calibration_error
from .index import IndexedRun

BINS = 10
MAX_PERIODS = 60
TOP_CONFUSIONS = 12
TOP_SKILLS = 20
OUTCOMES = ("success", "failure", "unclear", "none")


def routing_correct(record: RunRecord) -> bool | None:
    """Whether a labelled run went to the right skill (None: nobody said)."""
    if record.label_has_skill:
        return record.skill == record.label_skill
    if record.label_outcome == "success":
        return True
    return None


@dataclass
class Quality:
    labelled: int = 0
    accuracy: float | None = None
    periods: list[tuple[str, int, int]] = field(default_factory=list)  # (period, runs, right)
    bins: list[tuple[float, float, int, float | None, float | None]] = field(default_factory=list)
    # (low, high, runs, mean confidence, accuracy) for each of BINS bins
    calibration_error: float | None = None
    confusions: list[tuple[str, str, int]] = field(default_factory=list)  # (chosen, should be, runs)
    outcomes: list[tuple[str, dict[str, int]]] = field(default_factory=list)  # (skill, {outcome: runs})
    by_week: bool = False


def quality(runs: Iterable[tuple[IndexedRun, RunRecord]], *, engine: str = "") -> Quality:
    """The quality page's figures over ``runs`` (only those answered by ``engine`` when given)."""
    judged: list[tuple[IndexedRun, RunRecord, bool]] = []
    per_skill: dict[str, Counter] = defaultdict(Counter)
    confused: Counter = Counter()
    for run, told in runs:
        if engine and engine not in run.engines:
            continue
        record = persons_word(told)  # a client's pick or report is not taken for the truth
        if record.source == "run":
            per_skill[record.skill or "(none)"][record.true_outcome or "none"] += 1
        right = routing_correct(record)
        if right is None:
            continue
        judged.append((run, record, right))
        if not right:
            confused[(record.skill or "none", record.label_skill or "none")] += 1
    figures = Quality(labelled=len(judged))
    if judged:
        figures.accuracy = sum(right for _, _, right in judged) / len(judged)
    figures.periods, figures.by_week = _periods(judged)
    figures.bins, figures.calibration_error = _reliability(judged)
    figures.confusions = [(chosen, wanted, n) for (chosen, wanted), n in confused.most_common(TOP_CONFUSIONS)]
    busiest = sorted(per_skill.items(), key=lambda item: (-sum(item[1].values()), item[0]))[:TOP_SKILLS]
    figures.outcomes = [(skill, {name: counts.get(name, 0) for name in OUTCOMES}) for skill, counts in busiest]
    return figures


def _periods(judged: list[tuple[IndexedRun, RunRecord, bool]]) -> tuple[list[tuple[str, int, int]], bool]:
    """Accuracy per day (per ISO week when the days are too many to draw), oldest first."""

    def tally(key: Any) -> dict[str, list[int]]:
        counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for run, _, right in judged:
            if run.started is None:
                continue
            period = key(datetime.fromtimestamp(run.started))
            counts[period][0] += 1
            counts[period][1] += int(right)
        return counts

    counts = tally(lambda when: when.strftime("%Y-%m-%d"))
    by_week = len(counts) > MAX_PERIODS
    if by_week:
        counts = tally(lambda when: "{}-W{:02d}".format(*when.isocalendar()[:2]))
    periods = sorted(counts.items())[-MAX_PERIODS:]
    return [(period, n, right) for period, (n, right) in periods], by_week


def _reliability(judged: list[tuple[IndexedRun, RunRecord, bool]]) -> tuple[list, float | None]:
    """The reliability diagram's bins (the routing decision's probability against being right) and the ECE."""
    outcomes = [
        RoutedExample(
            Example(record.request or "", record.label_skill if record.label_has_skill else record.skill),
            record.skill,
            0,
            0.0,
            0,
            run.confidence,
        )
        for run, record, _ in judged
        if run.confidence is not None
    ]  # correct exactly when routing_correct
    pairs = [(float(o.confidence), o.correct) for o in outcomes if o.confidence is not None]
    bins: list[tuple[float, float, int, float | None, float | None]] = []
    for number in range(BINS):
        low, high = number / BINS, (number + 1) / BINS
        members = [(p, right) for p, right in pairs if low < p <= high or (number == 0 and p == 0)]
        if members:
            bins.append(
                (
                    low,
                    high,
                    len(members),
                    sum(p for p, _ in members) / len(members),
                    sum(right for _, right in members) / len(members),
                )
            )
        else:
            bins.append((low, high, 0, None, None))
    return bins, expected_calibration_error(outcomes, BINS)
