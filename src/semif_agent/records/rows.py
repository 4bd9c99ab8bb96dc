"""One pydantic model per kind of row the decision log holds.

Each model is a frozen pydantic model: :meth:`~LogRow.to_row` gives the
JSON object written to the log (the same shape rows have always had, so old
logs still read), :meth:`~LogRow.from_row` reads one back leniently (a field
missing or of the wrong type in an old or hand-edited row becomes its
default). Validating a row with the model is the check an appended row
passes: a field of the wrong type, or a required one missing, is refused
(see :func:`~.kinds.check_row`). Fields a row carries beyond its model's
(a decision's ``request_id``, ``level``, ``source``...) are kept as they are.

A model whose row is just its fields subclasses :class:`RunRow`: its
``kind`` default and its fields, in the order the row lists them, are the
whole of it. The others write what differs by hand.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Self, Union, get_args, get_origin

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    model_validator,
)
from pydantic import ValidationError as _ValidationError

from ..engine.decisions import DecisionRequest, DecisionResult
from .kind_names import (
    GENERATE_KIND,
    LABEL_KIND,
    OUTCOME_KIND,
    PROPOSE_KIND,
    UNDO_KIND,
    UNLABEL_KIND,
)

Row = dict[str, Any]
"""A row as the log holds it: one JSON object."""

Number = StrictInt | StrictFloat
"""A number as a row holds it (an int stays an int, so a row writes back byte for byte); never true or false."""

Text = Annotated[str, BeforeValidator(lambda value: value if isinstance(value, str) else str(value))]
"""An item of a list of strings: read as a string whatever it was (an old row's ``3`` reads ``"3"``)."""

EngineNumber = StrictInt | StrictFloat | float
"""A number an engine answered with: an int or a float kept as it is, another kind (numpy's) read as a float."""

LoggedOption = dict[str, StrictStr]
"""An option a decision offered, as logged: ``{"id": ..., "description": ...}`` (an
:class:`~semif_agent.engine.decisions.Option`)."""

LENIENT_PASSES = 4  # fields put right per pass, one pass per nesting of errors


class LogRow(BaseModel):
    """What every row has: the schema version and time (added when it is written), its kind and its run.

    Fields a row has beyond its model's are kept (``model_extra``) and
    written back as they were.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    v: StrictInt | None = None
    ts: Number | None = None
    run_id: StrictStr
    kind: StrictStr

    def to_row(self) -> Row:
        """The JSON object this row is written as (no ``v`` nor ``ts``: the log adds them)."""
        row: Row = {name: getattr(self, name) for name in type(self).model_fields if name not in ("v", "ts")}
        row.update(self.model_extra or {})
        return row

    def to_dict(self) -> Row:
        """The row as it was read (or built): its fields as they were given, ``v`` and ``ts`` included, and the fields
        it carries beyond its model's; what ``--json`` and the web view show. A row built here names its kind too."""
        shown = self.model_dump(exclude_unset=True)
        return shown if "kind" in shown else {"run_id": self.run_id, "kind": self.kind, **shown}

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Self:
        """``row`` read leniently: a field missing or of the wrong type becomes its default (or its type's empty
        value: ``""``, ``0``, ``[]``; ``run_id`` and ``kind`` read as strings)."""
        return cls.model_validate(lenient_data(cls, row))

    def extra_field(self, name: str) -> Any:
        """A field the row carries beyond its model's (``request_id``, ``level``...), or None."""
        return (self.model_extra or {}).get(name)


def empty_value(annotation: Any) -> Any:
    """The empty value of a field's type: None where it may be null, else ``""``, ``0``, ``False``, ``[]``, ``{}``."""
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        choices = get_args(annotation)
        return None if type(None) in choices else empty_value(choices[0])
    if origin is not None:
        annotation = origin
    if annotation in (list, dict, str, int, float, bool):
        return annotation()
    return None


def lenient_data(model: type[LogRow], row: Mapping[str, Any]) -> Row:
    """``row`` with each field ``model`` cannot read put right: dropped (to its default), or its type's empty value.

    ``run_id``, ``kind`` and ``call_id`` of another type read as strings; a row good as it is comes back unchanged.
    """
    data = dict(row)
    for _ in range(LENIENT_PASSES):
        try:
            model.model_validate(data)
        except _ValidationError as error:
            for problem in error.errors():
                name = problem["loc"][0] if problem["loc"] else None
                spec = model.model_fields.get(name) if isinstance(name, str) else None
                if spec is None or not isinstance(name, str):
                    continue
                if name in ("run_id", "kind", "call_id") and data.get(name) is not None:
                    data[name] = str(data[name])
                elif not spec.is_required():
                    data.pop(name, None)
                else:
                    data[name] = empty_value(spec.annotation)
            continue
        return data
    return data


class RunRow(LogRow):
    """A row about one run that is its fields: ``run_id``, ``kind``, then the model's other fields in order."""


class DecisionRow(LogRow):
    """One decision of a run: what was asked (state, question, options) and what the engine answered.

    Its kind is open: routing (``route``), the assessment (``assess``), a
    skill's own decisions (``predict``, ``act``...).
    """

    run_id: StrictStr
    step: StrictInt
    kind: StrictStr
    skill: StrictStr | None = None
    state: StrictStr = ""
    question: StrictStr
    options: list[LoggedOption] = Field(default_factory=list)
    selected: StrictStr
    scores: dict[str, EngineNumber | None] | None = Field(default_factory=dict)  # by option id; None: not finite
    probabilities: dict[str, EngineNumber] | None = None  # by option id; None: the engine has no distribution
    engine: StrictStr | None = None
    model: StrictStr | None = None
    latency_ms: Number | None = None
    usage: dict[str, Any] | None = None
    note: StrictStr | None = None

    @classmethod
    def of(
        cls,
        *,
        run_id: str,
        step: int,
        kind: str,
        skill: str | None,
        request: DecisionRequest,
        result: DecisionResult,
        **extra: Any,
    ) -> DecisionRow:
        """The row for ``request`` answered by ``result``; ``extra`` (request_id, level, source...) is kept as given."""
        asked, answer = request.to_dict(), result.to_dict()
        return cls(
            run_id=run_id,
            step=step,
            kind=kind,
            skill=skill,
            state=asked["state"],
            question=asked["question"],
            options=asked["options"],
            selected=answer["selected"],
            scores=answer["scores"],
            probabilities=answer["probabilities"],
            engine=answer["engine"],
            model=answer["model"],
            latency_ms=answer["latency_ms"],
            usage=result.usage or None,
            note=result.note or None,
            **extra,
        )

    @property
    def extra(self) -> Mapping[str, Any]:
        """What the writer added beyond the decision's fields: request_id, level, source..."""
        return self.model_extra or {}

    @property
    def level(self) -> str | None:
        """Which level of the tree a routing decision chose at (``"category"``, ``"skill"``), if it says."""
        level = self.extra_field("level")
        return level if isinstance(level, str) else None

    @property
    def source(self) -> str | None:
        """Who made the run the decision is part of (``"agent"`` for an agent turn), if it says."""
        source = self.extra_field("source")
        return source if isinstance(source, str) else None

    def to_row(self) -> Row:
        row: Row = {
            "run_id": self.run_id,
            "step": self.step,
            "kind": self.kind,
            "skill": self.skill,
            "state": self.state,
            "question": self.question,
            "options": self.options,
            "selected": self.selected,
            "scores": self.scores,
            "probabilities": self.probabilities,
            "engine": self.engine,
            "model": self.model,
            "latency_ms": self.latency_ms,
        }
        if self.usage:
            row["usage"] = self.usage
        if self.note:
            row["note"] = self.note
        row.update(self.extra)
        return row

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Self:
        read = super().from_row(row)
        return read if read.scores is not None else read.model_copy(update={"scores": {}})


class OutcomeRow(RunRow):
    """How a run ended: the request, the skill it went to, what it did and the assessment's label."""

    WRITTEN_WHEN_NULL: ClassVar[frozenset[str]] = frozenset({"skill", "request", "outcome", "reason", "error"})
    DROPPED_WHEN_EMPTY: ClassVar[frozenset[str]] = frozenset({"diffs", "output"})

    kind: StrictStr = OUTCOME_KIND
    skill: StrictStr | None = None
    request_id: StrictStr | None = None
    request: StrictStr | None = None
    outcome: StrictStr | None = None
    reason: StrictStr | None = None
    prediction: StrictStr | None = None
    action_log: StrictStr | None = None
    new_state: StrictStr | None = None
    changes: dict[str, Any] | None = None
    diffs: dict[str, Any] | None = None
    error: StrictStr | None = None
    evidence: dict[str, Any] | None = None
    output: dict[str, Any] | None = None
    source: StrictStr | None = None  # "agent" for an agent turn

    def to_row(self) -> Row:
        return {
            name: value
            for name, value in super().to_row().items()
            if name in self.WRITTEN_WHEN_NULL
            or (value is not None and not (name in self.DROPPED_WHEN_EMPTY and not value))
        }


class PersonsRow(RunRow):
    """A row a person wrote about a run (a label, an undo): ``by`` whom, "person" where an old row names no one."""

    by: StrictStr

    @model_validator(mode="after")
    def _someone(self) -> Self:
        if not self.by:
            object.__setattr__(self, "by", "person")
        return self


LABEL_OUTCOMES = ("success", "failure")


LABEL_SOURCES = ("person", "client", "implicit")
"""Who a label comes from: a person (``semif label``, the web view); a client's own judgement (``report_outcome``);
or a client's pick after a ``find`` (``implicit``). Each weighs less in training than the one before it."""

SOURCE_RANK = {"person": 2, "client": 1, "implicit": 0}
"""How far each source's word goes: a label never overrides what a label of a higher rank said (a client's report
never replaces a person's label, a client's pick never replaces either); an undo counts as a person's."""


class LabelRow(PersonsRow):
    """A label of a run: the skill it should have gone to (or none), the real outcome, or both.

    ``has_skill`` says the label names the skill: ``skill`` None then means
    no skill fits (``"skill": null`` in the row); a label that says nothing
    about the skill has no ``skill`` key at all. ``source`` is one of
    :data:`LABEL_SOURCES` (read as "person" when it is none of them);
    ``wrong`` names a skill the request should not go to (the one a
    ``find`` ranked first and the client passed over).
    """

    kind: StrictStr = LABEL_KIND
    skill: StrictStr | None = None
    has_skill: bool = Field(default=False, exclude=True)
    outcome: StrictStr | None = None
    note: StrictStr | None = None
    source: StrictStr = "person"
    wrong: StrictStr | None = None

    @model_validator(mode="before")
    @classmethod
    def _names_the_skill(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "has_skill" not in data and "skill" in data:
            return {**data, "has_skill": data["skill"] is None or isinstance(data["skill"], str)}
        return data

    @model_validator(mode="after")
    def _a_known_source(self) -> Self:
        if self.source not in LABEL_SOURCES:
            object.__setattr__(self, "source", "person")
        return self

    def to_row(self) -> Row:
        row: Row = {"run_id": self.run_id, "kind": self.kind}
        if self.has_skill:
            row["skill"] = self.skill
        if self.outcome is not None:
            row["outcome"] = self.outcome
        if self.note is not None:
            row["note"] = self.note
        row["by"] = self.by
        row["source"] = self.source
        if self.wrong is not None:
            row["wrong"] = self.wrong
        row.update(self.model_extra or {})
        return row


class ProposeRow(RunRow):
    """A skill the code model proposed for a request no skill fits: its manifest."""

    kind: StrictStr = PROPOSE_KIND
    skill: StrictStr
    manifest: dict[str, Any]
    model: StrictStr | None = None
    new_category: StrictBool = False


class GenerateRow(RunRow):
    """One attempt at generating a skill's body: admitted, or the contract's violations."""

    kind: StrictStr = GENERATE_KIND
    skill: StrictStr
    attempt: StrictInt
    model: StrictStr | None = None
    admitted: StrictBool
    violations: list[Text] = Field(default_factory=list)


UNDO_REASONS = ("route", "result")
"""What an undo says was unwanted: the route (the request should not have gone to the run's skill: a routing failure)
or only the result (the skill was right, its change was not wanted: nothing about the route). An undo row without a
reason (written before undos asked) keeps its old meaning, a routing failure."""

UNDO_SHOWN = {"route": "wrong route", "result": "result unwanted"}
"""How a run's undo reason reads beside it ("undone: wrong route") in ``semif log`` and the web view."""


class UndoRow(PersonsRow):
    """A run taken back with ``semif undo``: why (:data:`UNDO_REASONS`), the files it removed and put back, and those
    ``--force`` left as they were (path -> why). Only a ``route`` undo (or an old one with no reason) counts as a
    failure label of the route."""

    kind: StrictStr = UNDO_KIND
    skill: StrictStr | None = None
    reason: StrictStr | None = None  # "route" or "result"; None in rows written before undos asked
    removed: list[Text] = Field(default_factory=list)  # files the run created, removed again
    restored: list[Text] = Field(default_factory=list)  # files it modified or deleted, put back as they were
    skipped: dict[str, Any] = Field(default_factory=dict)  # files --force left as they are now, and why

    @property
    def route_failure(self) -> bool:
        """Whether the undo says the route was wrong: a ``route`` undo, or an old one that gave no reason."""
        return self.reason != "result"


class UnlabelRow(PersonsRow):
    """A person's labels of a run taken back (``semif label --undo``): the run folds as if they had never been given,
    so what clients and the assessment said of it counts again. Earlier rows stay as they were."""

    kind: StrictStr = UNLABEL_KIND
