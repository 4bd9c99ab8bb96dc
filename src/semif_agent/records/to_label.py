"""The "to label" queue: the runs whose label would teach the router most, best first.

A run's score adds up what makes its route doubtful (:data:`WEIGHTS`):

- ``undone`` (4): someone took its changes back with ``semif undo``; the
  route was wrong, and where the request should go is still unknown;
- ``handed back`` (3): the run was not acted on because the router was not
  sure (an outcome ``handed_back``);
- ``contradicted`` (2): the judge's verdict went against what the run did;
- ``low margin`` (up to 2): its closest routing decision had the chosen
  option less than :data:`LOW_MARGIN` ahead of the next one, scaled
  linearly (a tie scores 2);
- ``unclear`` (1): assessed unclear for another reason.

Runs a person labelled are skipped, and so are runs that score nothing.
Equal scores are shown newest first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .kinds import ROUTE_KIND
from .rows import DecisionRow, LogRow
from .runs import RunRecord

LOW_MARGIN = 0.3
WEIGHTS = {"undone": 4.0, "handed back": 3.0, "contradicted": 2.0, "low margin": 2.0, "unclear": 1.0}
HANDED_BACK = "handed_back"


@dataclass(frozen=True)
class ToLabel:
    """One run of the queue: its record, score and why."""

    record: RunRecord
    score: float
    reasons: list[str] = field(default_factory=list)
    margin: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.record.run_id,
            "score": round(self.score, 3),
            "reasons": self.reasons,
            "margin": None if self.margin is None else round(self.margin, 3),
            "request": self.record.request,
            "skill": self.record.skill,
            "outcome": self.record.outcome,
            "undone": self.record.undone,
        }


def route_margin(row: LogRow) -> float | None:
    """How far a routing decision's choice was ahead of the next option (probabilities), else None."""
    if not isinstance(row, DecisionRow) or row.kind != ROUTE_KIND or not isinstance(row.probabilities, Mapping):
        return None
    chosen = row.probabilities.get(row.selected)
    if not isinstance(chosen, (int, float)):
        return None
    others = [p for option, p in row.probabilities.items() if option != row.selected and isinstance(p, (int, float))]
    return float(chosen) - max(others, default=0.0)


def run_margins(rows: Iterable[LogRow]) -> dict[str, float]:
    """Each run's smallest routing margin (runs without a routing decision with probabilities are left out)."""
    margins: dict[str, float] = {}
    for row in rows:
        margin = route_margin(row)
        if margin is not None:
            margins[row.run_id] = min(margin, margins.get(row.run_id, margin))
    return margins


def score(record: RunRecord, margin: float | None) -> ToLabel:
    """How much ``record``'s label would teach, and why (see the module's table)."""
    reasons, total = [], 0.0
    rule = (record.evidence or {}).get("rule")
    if record.undone:
        reasons.append("undone")
    if record.outcome == HANDED_BACK:
        reasons.append("handed back")
    if rule == "contradicted":
        reasons.append("contradicted")
    elif record.outcome == "unclear":
        reasons.append("unclear")
    total = sum(WEIGHTS[reason] for reason in reasons)
    if margin is not None and margin < LOW_MARGIN:
        # below zero the choice was not the likeliest option (a hand-back over a skill, say): say so, not "-30%"
        reasons.append(
            f"low margin ({margin:.0%})" if margin >= 0 else f"low margin (chosen {-margin:.0%} behind another)"
        )
        total += WEIGHTS["low margin"] * (1.0 - max(margin, 0.0) / LOW_MARGIN)
    return ToLabel(record, total, reasons, margin)


def to_label(records: Iterable[RunRecord], margins: Mapping[str, float]) -> list[ToLabel]:
    """The queue: runs (in log order) nobody labelled that score above nothing, best first, newest first on a tie.
    A client's pick is no label: a run only a client's pick labels stays in the queue."""
    scored = [
        (index, score(record, margins.get(record.run_id)))
        for index, record in enumerate(records)
        if record.labelled_by is None or record.label_source == "implicit"
    ]
    ranked = sorted((item for item in scored if item[1].score > 0), key=lambda item: (-item[1].score, -item[0]))
    return [entry for _, entry in ranked]
