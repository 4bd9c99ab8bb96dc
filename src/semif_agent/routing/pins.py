"""A person's label pins its request: the request a person labelled ``--skill NAME`` routes to NAME, whatever the
skills' examples say, as long as the tree has that skill.

Examples are anyone's word: a skill dropped into ``skills/`` may copy another's phrasings and add many more, and the
untrained routing then sends the requests they resemble its way, labelled ones too. A label is a person's: the
request it names (its text with case and spacing aside, :func:`pin_key`) is routed where it says, before any
scoring. The latest label of a request wins (a later ``--none`` of it lifts the pin); a label taken back
(``semif label --undo``) pins nothing; a client's report or pick pins nothing; a skill since removed pins nothing.

The pins are read from the decision log (its outcome and label rows: a run whose outcome row is missing has no
request to pin), kept up with the log as it grows (:class:`LogPins`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .._text import text_key
from ..engine.decisions import NONE_ID, DecisionRequest, DecisionResult, Option
from ..records.kinds import LABEL_KIND, OUTCOME_KIND, UNDO_KIND, UNLABEL_KIND, AnyRow
from ..records.rows import LabelRow
from ..records.runs import RunRecord, persons_word, run_records
from ..tree.router import Route, RoutedDecision
from ..tree.tree import SkillTree

if TYPE_CHECKING:
    from ..records import DecisionLog

PINNED_QUESTION = "Which skill should handle this request?"
PIN_ENGINE = "label"  # the engine a pinned decision names: a person's label, not a model or the scores


PIN_KINDS = (OUTCOME_KIND, LABEL_KIND, UNLABEL_KIND, UNDO_KIND)  # the rows the pins are worked out from

pin_key = text_key  # ``text`` as a pinned request is matched: case and spacing aside


@dataclass(frozen=True)
class Pin:
    """The skill a person labelled a request with, and the run whose label says so."""

    skill: str
    run_id: str


def persons_pins(runs: Iterable[RunRecord]) -> dict[str, Pin]:
    """The requests people labelled with a skill (:func:`pin_key`), each with its latest label's skill; a request
    whose latest label says no skill fits is not pinned."""
    pins: dict[str, Pin] = {}
    for said in runs:
        run = persons_word(said)  # what a client reported of the run aside: it never lifts a person's pin
        if not run.request or not run.label_has_skill or run.label_source is not None:
            continue
        key = pin_key(run.request)
        pins.pop(key, None)  # the latest label of the request is the one that stands
        if run.label_skill is not None:
            pins[key] = Pin(run.label_skill, run.run_id)
    return pins


def pinned_route(tree: SkillTree, text: str, pin: Pin) -> Route:
    """The route of ``text`` to ``pin``'s skill (of ``tree``): one decision, sure of it, that names the label."""
    skill = tree.skills[pin.skill]
    asked = DecisionRequest(
        state=text, question=PINNED_QUESTION, options=[Option(skill.name, skill.description), Option(NONE_ID)]
    )
    said = DecisionResult(
        selected=skill.name,
        scores={skill.name: 1.0, NONE_ID: 0.0},
        probabilities={skill.name: 1.0, NONE_ID: 0.0},
        engine=PIN_ENGINE,
        note=f"a person's label (run {pin.run_id})",
    )
    return Route(
        skill=skill,
        decisions=[RoutedDecision("skill", asked, said, whole=True)],
        reason=f"a person labelled this request {skill.name} (run {pin.run_id})",
    )


def is_pinned(route: Route) -> bool:
    """Whether ``route`` is a pinned one (:func:`pinned_route`)."""
    return bool(route.decisions) and route.decisions[-1].result.engine == PIN_ENGINE


class LogPins:
    """The pins of a decision log's labels (:func:`persons_pins`), kept up with the log as it grows.

    Rows appended since the last look are read alone; the pins are worked out again from the whole log only when
    they can have changed: a person's label, an unlabel or an undo among the new rows, or a new outcome of a run a
    person labelled (a client's label never can: it never outranks a person's). A server logging thousands of finds a minute so reads each of them once, not the whole log
    for every find. A log that shrank or was replaced is read again from its start.
    """

    def __init__(self, log: DecisionLog | None) -> None:
        self.log = log
        self._seen: tuple[int, int, int] | None = None  # the log's device, inode and size when last read
        self._offset = 0
        self._pins: dict[str, Pin] = {}
        self._labelled: set[str] = set()  # the runs a person's label names

    def pins(self) -> dict[str, Pin]:
        path = getattr(self.log, "path", None)
        if self.log is None or not isinstance(path, Path):
            return {}
        try:
            stat = path.stat()
        except OSError:
            return {}
        seen = (stat.st_dev, stat.st_ino, stat.st_size)
        if seen == self._seen:
            return self._pins
        same_file = self._seen is not None and self._seen[:2] == seen[:2] and stat.st_size >= self._offset
        if same_file:
            new, self._offset = self.log.read_after(self._offset, kinds=PIN_KINDS)
            if not any(self._may_move(row) for row in new):
                self._seen = seen
                return self._pins
        self._read_whole(seen)
        return self._pins

    def _may_move(self, row: AnyRow) -> bool:
        """Whether a new row can change the pins: a person's label, an unlabel or undo, a row of a labelled run."""
        if isinstance(row, LabelRow):  # a client's report or pick never outranks a person's label
            return row.source == "person"
        return row.kind in (UNLABEL_KIND, UNDO_KIND) or str(row.run_id) in self._labelled

    def _read_whole(self, seen: tuple[int, int, int]) -> None:
        assert self.log is not None
        rows, self._offset = self.log.read_after(0, kinds=PIN_KINDS)
        self._labelled = {str(row.run_id) for row in rows if isinstance(row, LabelRow) and row.source == "person"}
        self._pins, self._seen = persons_pins(run_records(rows)), seen

    def route(self, tree: SkillTree, text: str) -> Route | None:
        """The pinned route of ``text`` over ``tree``, or None: not labelled, or its skill is not in the tree."""
        pin = self.pins().get(pin_key(text))
        if pin is None or pin.skill not in tree.skills:
            return None
        return pinned_route(tree, text, pin)
