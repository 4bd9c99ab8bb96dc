"""The kinds of row the decision log holds, in one table every reader and writer goes by.

A kind is a **decision** of a run (a question the engine answered: routing,
a skill's sub-decisions, the assessment), a **step** a run took that is no
decision (a proposed or generated skill), a **record** about a run written
after it (its outcome, a person's label, its undo), or a model **call** (the
model-call log). ``semif log --kind`` offers the decisions and steps;
``semif log show`` and the web view's run page title their sections by
``section``; a record about a run is never counted as a step of it.

Adding a kind is one builder (:mod:`.rows`), one entry here, and a test.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import LogError
from .calls import MODEL_CALL_KIND, ModelCallRow
from .rows import (
    DecisionRow,
    Expect,
    GenerateRow,
    LabelRow,
    OutcomeRow,
    ProposeRow,
    UndoRow,
    UnlabelRow,
    shape_problem,
)

Role = Literal["decision", "step", "record", "call"]

ROUTE_KIND = "route"
ASSESS_KIND = "assess"
OUTCOME_KIND = "outcome"
LABEL_KIND = "label"
UNDO_KIND = "undo"
UNLABEL_KIND = "unlabel"


@dataclass(frozen=True)
class RecordKind:
    """One kind of row: its name, builder, role, what it is, and the title of its section when a run is shown."""

    name: str
    builder: Any  # the row's class: has FIELDS, to_row() and from_row()
    role: Role
    description: str
    section: str | None = None  # None: shown as the row's own fields
    after_outcome: bool = False  # shown after what the run did (the assessment), not before it

    @property
    def fields(self) -> Mapping[str, Expect]:
        fields: Mapping[str, Expect] = self.builder.FIELDS
        return fields


RECORD_KINDS: Mapping[str, RecordKind] = {
    kind.name: kind
    for kind in (
        RecordKind("route", DecisionRow, "decision", "which category or skill a request goes to", "route"),
        RecordKind("shortlist", DecisionRow, "decision", "the skills an agent's prompt offers first", "shortlist"),
        RecordKind("activate", DecisionRow, "decision", "the skill an agent's model activated", "activated"),
        RecordKind("predict", DecisionRow, "decision", "a skill's decision before it acts", "prediction"),
        RecordKind("act", DecisionRow, "decision", "a skill's decision while it acts", "acting"),
        RecordKind("assess", DecisionRow, "decision", "the judge's verdict on a run", "judge", after_outcome=True),
        RecordKind("create", DecisionRow, "decision", "which category a new skill belongs to"),
        RecordKind("propose", ProposeRow, "step", "a new skill's manifest, as the code model proposed it"),
        RecordKind("generate", GenerateRow, "step", "one attempt at generating a new skill's body"),
        RecordKind(OUTCOME_KIND, OutcomeRow, "record", "how a run ended: what it did and the assessment"),
        RecordKind(LABEL_KIND, LabelRow, "record", "a person's label of a run: the right skill, the real outcome"),
        RecordKind(UNDO_KIND, UndoRow, "record", "a run taken back by `semif undo`: its route or its result unwanted"),
        RecordKind(UNLABEL_KIND, UnlabelRow, "record", "a person's labels of a run taken back by `semif label --undo`"),
        RecordKind(MODEL_CALL_KIND, ModelCallRow, "call", "one model call: the messages and the answer"),
    )
}

RUN_RECORDS = frozenset(name for name, kind in RECORD_KINDS.items() if kind.role == "record")
"""Kinds that record something about a run rather than a step of it."""


def is_run_record(kind: object) -> bool:
    """Whether a row of ``kind`` records something about a run (its outcome, a label) rather than a step of it."""
    return kind in RUN_RECORDS


def listed_kinds() -> list[str]:
    """The kinds ``semif log --kind`` offers: a run's decisions and steps."""
    return [name for name, kind in RECORD_KINDS.items() if kind.role in ("decision", "step")]


def sections(*, after_outcome: bool) -> list[tuple[str, str]]:
    """``(kind, title)`` of the decisions shown in their own section, before (or after) what the run did."""
    return [
        (name, kind.section)
        for name, kind in RECORD_KINDS.items()
        if kind.section is not None and kind.after_outcome == after_outcome
    ]


def title_of(kind: object) -> str:
    """How a row of ``kind`` is titled when a run is shown: its section, else the kind's name."""
    known = RECORD_KINDS.get(kind) if isinstance(kind, str) else None
    return (known.section if known is not None else None) or str(kind)


def row_problem(row: Any) -> str | None:
    """Why ``row`` cannot be appended (not an object, an unknown kind, a field of the wrong shape), else None."""
    if not isinstance(row, Mapping):
        return f"a row must be an object, got {type(row).__name__}"
    kind = row.get("kind")
    if not isinstance(kind, str) or kind not in RECORD_KINDS:
        known = ", ".join(RECORD_KINDS)
        return f"kind must be one of {known}, got {type(kind).__name__} {kind!r}"
    return shape_problem(row, RECORD_KINDS[kind].fields)


def check_row(row: Any) -> None:
    """Refuse ``row`` with a one-line :class:`LogError` naming what is wrong with it."""
    problem = row_problem(row)
    if problem is not None:
        kind = row.get("kind") if isinstance(row, Mapping) else None
        raise LogError(f"a {kind} row: {problem}" if kind in RECORD_KINDS else problem)
