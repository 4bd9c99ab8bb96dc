"""The kinds of row the decision log holds, in one table every reader and writer goes by.

A kind is a **decision** of a run (a question the engine answered: routing,
a skill's sub-decisions, the assessment), a **step** a run took that is no
decision (a proposed or generated skill), a **record** about a run written
after it (its outcome, a person's label, its undo), or a model **call** (the
model-call log). ``semif log --kind`` offers the decisions and steps;
``semif log show`` and the web view's run page title their sections by
``section``; a record about a run is never counted as a step of it.

Every row read is one of the models of :data:`AnyRow`, a union told apart by
``kind`` (:data:`ROW_ADAPTER` reads and checks rows): the records, steps and
model calls by their own model, any other kind (``route``, ``assess``, a
skill's own decisions) as a :class:`~.rows.DecisionRow`.

Adding a kind is one model (:mod:`.rows`), one entry here, and a test.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Discriminator, Tag, TypeAdapter, ValidationError

from ..errors import LogError
from .calls import ModelCallRow
from .kind_names import ASSESS_KIND as ASSESS_KIND  # the names without the models; read here with the table
from .kind_names import GENERATE_KIND as GENERATE_KIND
from .kind_names import LABEL_KIND as LABEL_KIND
from .kind_names import MODEL_CALL_KIND as MODEL_CALL_KIND
from .kind_names import OUTCOME_KIND as OUTCOME_KIND
from .kind_names import PROPOSE_KIND as PROPOSE_KIND
from .kind_names import ROLES, Role
from .kind_names import ROUTE_KIND as ROUTE_KIND
from .kind_names import UNDO_KIND as UNDO_KIND
from .kind_names import UNLABEL_KIND as UNLABEL_KIND
from .kind_names import listed_kinds as listed_kinds
from .rows import (
    DecisionRow,
    GenerateRow,
    LabelRow,
    LogRow,
    OutcomeRow,
    ProposeRow,
    UndoRow,
    UnlabelRow,
)

SHOWN_VALUE = 40  # characters of a refused value quoted in the error


@dataclass(frozen=True)
class RecordKind:
    """One kind of row: its name, model, role, what it is, and the title of its section when a run is shown."""

    name: str
    builder: type[LogRow]  # the row's model: its to_row() writes it, its from_row() reads an old one
    description: str
    section: str | None = None  # None: shown as the row's own fields
    after_outcome: bool = False  # shown after what the run did (the assessment), not before it

    @property
    def role(self) -> Role:
        """Whether it is a decision, a step, a record about a run or a model call (:data:`.kind_names.ROLES`)."""
        return ROLES[self.name]


RECORD_KINDS: Mapping[str, RecordKind] = {
    kind.name: kind
    for kind in (
        RecordKind(ROUTE_KIND, DecisionRow, "which category or skill a request goes to", "route"),
        RecordKind("shortlist", DecisionRow, "the skills an agent's prompt offers first", "shortlist"),
        RecordKind("activate", DecisionRow, "the skill an agent's model activated", "activated"),
        RecordKind("predict", DecisionRow, "a skill's decision before it acts", "prediction"),
        RecordKind("act", DecisionRow, "a skill's decision while it acts", "acting"),
        RecordKind(ASSESS_KIND, DecisionRow, "the judge's verdict on a run", "judge", after_outcome=True),
        RecordKind("create", DecisionRow, "which category a new skill belongs to"),
        RecordKind(PROPOSE_KIND, ProposeRow, "a new skill's manifest, as the code model proposed it"),
        RecordKind(GENERATE_KIND, GenerateRow, "one attempt at generating a new skill's body"),
        RecordKind(OUTCOME_KIND, OutcomeRow, "how a run ended: what it did and the assessment"),
        RecordKind(LABEL_KIND, LabelRow, "a person's label of a run: the right skill, the real outcome"),
        RecordKind(UNDO_KIND, UndoRow, "a run taken back by `semif undo`: its route or its result unwanted"),
        RecordKind(UNLABEL_KIND, UnlabelRow, "a person's labels of a run taken back by `semif label --undo`"),
        RecordKind(MODEL_CALL_KIND, ModelCallRow, "one model call: the messages and the answer"),
    )
}

DECISION_TAG = "decision"
_TAGS = {name: name for name, kind in RECORD_KINDS.items() if kind.builder is not DecisionRow}


def row_tag(row: Any) -> str:
    """Which model of :data:`AnyRow` reads ``row``: its kind's, or the decision's for any other kind."""
    kind = row.get("kind") if isinstance(row, dict) else getattr(row, "kind", None)
    return _TAGS.get(kind, DECISION_TAG) if isinstance(kind, str) else DECISION_TAG


AnyRow = Annotated[
    Annotated[DecisionRow, Tag(DECISION_TAG)]
    | Annotated[OutcomeRow, Tag(OUTCOME_KIND)]
    | Annotated[LabelRow, Tag(LABEL_KIND)]
    | Annotated[UndoRow, Tag(UNDO_KIND)]
    | Annotated[UnlabelRow, Tag(UNLABEL_KIND)]
    | Annotated[ProposeRow, Tag(PROPOSE_KIND)]
    | Annotated[GenerateRow, Tag(GENERATE_KIND)]
    | Annotated[ModelCallRow, Tag(MODEL_CALL_KIND)],
    Discriminator(row_tag),
]
"""Any row of the log: the model its ``kind`` names, a :class:`~.rows.DecisionRow` for a kind of decision."""

ROW_ADAPTER: TypeAdapter[AnyRow] = TypeAdapter(AnyRow)
"""Reads (and checks) a row of any kind."""

_MODELS: Mapping[str, type[LogRow]] = {DECISION_TAG: DecisionRow} | {tag: RECORD_KINDS[tag].builder for tag in _TAGS}


UNREADABLE = frozenset({"json_invalid", "json_type", "model_type", "model_attributes_type"})
"""The errors of a line that is no row at all: not JSON (a write cut short), or JSON but not an object."""


def parse_row(line: bytes | str) -> AnyRow | None:
    """One line of the log as its row's model, read leniently (a field missing or of the wrong type becomes its
    default); None when the line is no JSON object (a torn or unreadable line)."""
    try:
        return ROW_ADAPTER.validate_json(line)
    except ValidationError as error:
        if any(problem["type"] in UNREADABLE and not problem["loc"][1:] for problem in error.errors()):
            return None
    data = json.loads(line)  # a JSON object with a field the model cannot read as it is
    model = _MODELS[row_tag(data)]
    read: AnyRow = model.from_row(data)  # type: ignore[assignment]  # the model of the row's own tag, one of AnyRow
    return read


RUN_RECORDS = frozenset(name for name, kind in RECORD_KINDS.items() if kind.role == "record")
"""Kinds that record something about a run rather than a step of it."""


def is_run_record(kind: object) -> bool:
    """Whether a row of ``kind`` records something about a run (its outcome, a label) rather than a step of it."""
    return kind in RUN_RECORDS


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


def shown(value: Any) -> str:
    """``value`` quoted in an error, cut to :data:`SHOWN_VALUE` characters."""
    text = repr(value)
    return text if len(text) <= SHOWN_VALUE else text[: SHOWN_VALUE - 3] + "..."


EXPECTED = {
    "string_type": "a string",
    "int_type": "a whole number",
    "float_type": "a number",
    "bool_type": "true or false",
    "dict_type": "an object",
    "list_type": "a list",
}
"""What a field must be, by the kind of pydantic error its value gave."""


def first_problem(error: ValidationError) -> str:
    """The first problem pydantic found with a row, in one line naming the field and the value refused."""
    problems = error.errors(include_url=False)
    first = problems[0]
    name = str(first["loc"][0]) if first["loc"] else "the row"
    if first["type"] == "missing":
        return f"{name} is missing"
    kinds = {problem["type"] for problem in problems if problem["loc"][:1] == first["loc"][:1]}
    what = "a number" if {"int_type", "float_type"} <= kinds else EXPECTED.get(first["type"])
    where = ".".join(str(part) for part in first["loc"][1:] if not str(part).startswith(("function-", "str", "int")))
    value = first["input"]
    said = f"must be {what}" if what is not None else first["msg"][:1].lower() + first["msg"][1:]
    return f"{name}{' ' + where if where else ''} {said}, got {type(value).__name__} {shown(value)}"


def row_problem(row: Any) -> str | None:
    """Why ``row`` cannot be appended (not an object, an unknown kind, a field of the wrong shape), else None."""
    if not isinstance(row, Mapping):
        return f"a row must be an object, got {type(row).__name__}"
    kind = row.get("kind")
    if not isinstance(kind, str) or kind not in RECORD_KINDS:
        known = ", ".join(RECORD_KINDS)
        return f"kind must be one of {known}, got {type(kind).__name__} {kind!r}"
    try:
        RECORD_KINDS[kind].builder.model_validate(row)
    except ValidationError as error:
        return first_problem(error)
    return None


def check_row(row: Any) -> None:
    """Refuse ``row`` with a one-line :class:`LogError` naming what is wrong with it."""
    problem = row_problem(row)
    if problem is not None:
        kind = row.get("kind") if isinstance(row, Mapping) else None
        raise LogError(f"a {kind} row: {problem}" if kind in RECORD_KINDS else problem)
