"""The Agent's skill choices as training rows of the decision log.

Every turn of an agent whose discovery has a decision log (a workspace's,
or ``with_skill_discovery(log=...)``) is a run of that log, its ``run_id``
the turn's id:

- ``shortlist``: the skills discovery ranked for the message (the ones the
  prompt offers first), with their scores; ``selected`` is the best one, or
  ``none`` when even it scores below the threshold. Answered by the scorer
  (the local model, or BM25).
- ``activate``: what the model did with the skills it was shown: the skill
  it activated (one row per activation), or ``none`` when the turn ended
  without activating any (a skill already active from an earlier turn is
  not offered again). Answered by the agent's model. The options are the
  skills it was shown, best-ranked first, at most 15 and ``none``.
- ``outcome``: the turn's end (``unclear`` until someone labels it), joined
  onto the turn's rows by readers.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...engine.decisions import NONE_ID, DecisionRequest, DecisionResult, Option, softmax
from ...errors import LogError
from ...records import DecisionLog, DecisionRow, OutcomeRow

log = logging.getLogger("semif_agent.agent")

SHORTLIST_QUESTION = "Which skills might this request need?"
ACTIVATE_QUESTION = "Which skill should the agent activate for this request?"
NONE_FITS = Option(NONE_ID, "None of these skills: no skill is needed, or none fits.")
MAX_OPTIONS = 16


def as_log(target: DecisionLog | str | os.PathLike[str] | None) -> DecisionLog | None:
    """A :class:`DecisionLog` for ``target`` (a log, a path, or None)."""
    if target is None or isinstance(target, DecisionLog):
        return target
    return DecisionLog(Path(target))


class ChoiceLog:
    """Writes one agent's skill choices, turn by turn. A log that cannot be written never stops a turn."""

    def __init__(self, target: DecisionLog) -> None:
        self.target = target
        self.run_id = ""
        self.message = ""
        self.model: str | None = None
        self.ranked: list[tuple[str, float]] = []
        self.activated: list[str] = []
        self._step = 0

    def begin(self, run_id: str, message: str, model: str | None) -> None:
        self.run_id, self.message, self.model = run_id, message, model
        self.ranked, self.activated, self._step = [], [], 0

    def shortlist(
        self,
        ranked: Sequence[tuple[str, float]],
        descriptions: dict[str, str],
        *,
        threshold: float,
        engine: str,
        model: str | None,
        temperature: float | None,
    ) -> None:
        """The turn's ranking; logged when the prompt offers a shortlist from it."""
        self.ranked = list(ranked)
        top = self.ranked[: MAX_OPTIONS - 1]
        if not top:
            return
        scores = {name: score for name, score in top}
        scores[NONE_ID] = threshold
        selected = max(scores, key=lambda k: (scores[k], k == NONE_ID))
        options = [Option(name, descriptions.get(name, "")) for name, _ in top] + [NONE_FITS]
        probabilities = softmax(scores, temperature) if temperature else None
        self._write(
            "shortlist",
            SHORTLIST_QUESTION,
            options,
            DecisionResult(selected, scores, probabilities, engine=engine, model=model),
            skill=None,
        )

    def activation(self, chosen: str, shown: Sequence[str], descriptions: dict[str, str]) -> None:
        """The model activated ``chosen`` among the skills it was ``shown``."""
        self.activated.append(chosen)
        self._write(
            "activate",
            ACTIVATE_QUESTION,
            self._options(chosen, shown, descriptions),
            DecisionResult(chosen, engine="agent", model=self.model),
            skill=chosen,
        )

    def finish(self, shown: Sequence[str], descriptions: dict[str, str], *, stopped_by: str, text: str) -> None:
        """The turn ended: ``none`` if the model activated nothing it was shown, then the outcome row."""
        if not self.run_id:
            return
        if not self.activated and shown:
            self._write(
                "activate",
                ACTIVATE_QUESTION,
                self._options(None, shown, descriptions),
                DecisionResult(NONE_ID, engine="agent", model=self.model),
                skill=None,
            )
        if self._step:
            self._append(
                OutcomeRow(
                    run_id=self.run_id,
                    skill=self.activated[0] if self.activated else None,
                    request=self.message,
                    outcome="unclear",
                    reason=f"agent turn ended: {stopped_by}",
                    action_log=text[:500],
                    source="agent",
                ).to_row()
            )
        self.run_id = ""

    def _options(self, chosen: str | None, shown: Sequence[str], descriptions: dict[str, str]) -> list[Option]:
        order = [name for name, _ in self.ranked if name in set(shown)]
        order += sorted(set(shown) - set(order))
        picked = order[: MAX_OPTIONS - 1]
        if chosen is not None and chosen not in picked:
            picked = picked[: MAX_OPTIONS - 2] + [chosen]
        return [Option(name, descriptions.get(name, "")) for name in picked] + [NONE_FITS]

    def _write(
        self, kind: str, question: str, options: list[Option], result: DecisionResult, *, skill: str | None
    ) -> None:
        if not self.run_id:
            return
        self._step += 1
        row = DecisionRow.of(
            run_id=self.run_id,
            step=self._step,
            kind=kind,
            skill=skill,
            request=DecisionRequest(self.message, question, options),
            result=result,
            source="agent",
        ).to_row()
        self._append(row)

    def _append(self, row: dict[str, Any]) -> None:
        try:
            self.target.append(row)
        except LogError as exc:  # the turn goes on; the row is lost, and said so
            log.warning("a skill choice could not be logged: %s", exc)


def turn_run_id(turn_id: str) -> str:
    """A run id for a turn, sortable like the skill loop's (``YYYYmmdd-HHMMSS-xxxxxx``)."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + turn_id[:6]
