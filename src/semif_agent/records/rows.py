"""One typed builder per kind of row the decision log holds.

Each builder is a frozen dataclass: :meth:`to_row` gives the JSON object
written to the log (the same shape rows have always had, so old logs still
read), :meth:`from_row` reads one back leniently (a field missing or of the
wrong type in an old or hand-edited row becomes its default). ``FIELDS``
says what each field must be when a row is appended; :func:`shape_problem`
checks a row against it.

A builder whose row is just its fields subclasses :class:`RunRow`: a
dataclass with ``KIND``, ``FIELDS`` (in the order the row lists them) and
its fields is the whole of it. The others read with :func:`read_fields`
and write what differs by hand.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any, ClassVar, Self

from ..engine.decisions import DecisionRequest, DecisionResult

Row = dict[str, Any]
SHOWN_VALUE = 40  # characters of a refused value quoted in the error


@dataclass(frozen=True)
class Expect:
    """What one field of a row must be: one of ``types`` (or null when ``nullable``), present when ``required``.

    ``items``, for a list, is what each of its items is read as (a reader's
    guarantee, not checked when the row is appended).
    """

    what: str
    types: tuple[type, ...]
    nullable: bool = False
    required: bool = False
    items: type | None = None

    def problem(self, name: str, row: Mapping[str, Any]) -> str | None:
        """Why ``row[name]`` is not what it must be, or None when it is."""
        if name not in row:
            return f"{name} is missing (it must be {self.what})" if self.required else None
        value = row[name]
        if value is None and self.nullable:
            return None
        if isinstance(value, self.types) and not (isinstance(value, bool) and bool not in self.types):
            return None
        shown = repr(value)
        shown = shown if len(shown) <= SHOWN_VALUE else shown[: SHOWN_VALUE - 3] + "..."
        return f"{name} must be {self.what}, got {type(value).__name__} {shown}"


def needed(expect: Expect) -> Expect:
    return replace(expect, required=True)


def or_null(expect: Expect) -> Expect:
    return replace(expect, what=f"{expect.what} or null", nullable=True)


TEXT = Expect("a string", (str,))
WHOLE = Expect("a whole number", (int,))
NUMBER = Expect("a number", (int, float))
FLAG = Expect("true or false", (bool,))
LIST = Expect("a list", (list, tuple))
TEXTS = Expect("a list", (list, tuple), items=str)  # read as a list of strings
OBJECT = Expect("an object", (dict,))

COMMON: Mapping[str, Expect] = {"v": WHOLE, "ts": NUMBER, "kind": needed(TEXT), "run_id": needed(TEXT)}
"""The fields every row has (``v`` and ``ts`` are added when it is written)."""


def shape_problem(row: Mapping[str, Any], fields: Mapping[str, Expect]) -> str | None:
    """The first field of ``row`` that is not what ``fields`` says (missing, or of the wrong type), else None."""
    for name, expect in fields.items():
        problem = expect.problem(name, row)
        if problem is not None:
            return problem
    return None


def field_or(row: Mapping[str, Any], name: str, expect: Expect, default: Any = None) -> Any:
    """``row[name]`` when it is what ``expect`` says, else ``default`` (reading is lenient)."""
    return row[name] if name in row and expect.problem(name, row) is None else default


def other_fields(row: Mapping[str, Any], names: Any) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in names and k not in ("v", "ts")}


def read_fields(builder: type[Any], row: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of the dataclass ``builder`` that its ``FIELDS`` names, read leniently from ``row``.

    ``run_id`` and ``kind`` read as strings; any other field missing or of
    the wrong type reads as its default (or, lacking one, as null when it
    may be null, else the empty value of its type); a list is read as a
    new list (of strings for :data:`TEXTS`).
    """
    expected: Mapping[str, Expect] = builder.FIELDS
    values: dict[str, Any] = {}
    for spec in fields(builder):
        expect = expected.get(spec.name)
        if expect is None:
            continue
        if spec.name in ("run_id", "kind"):
            values[spec.name] = str(row.get(spec.name, ""))
            continue
        if spec.default is not MISSING:
            default = spec.default
        elif spec.default_factory is not MISSING:
            default = spec.default_factory()
        else:
            default = None if expect.nullable else expect.types[0]()
        value = field_or(row, spec.name, expect, default)
        if isinstance(value, (list, tuple)):
            value = [expect.items(item) for item in value] if expect.items else list(value)
        values[spec.name] = value
    return values


def written(value: Any) -> Any:
    """``value`` as a row holds it: a list copied, anything else as it is."""
    return list(value) if isinstance(value, (list, tuple)) else value


@dataclass(frozen=True)
class RunRow:
    """A row about one run that is its fields: ``run_id``, ``kind`` (``KIND``), then the rest of ``FIELDS`` in order."""

    KIND: ClassVar[str]
    FIELDS: ClassVar[Mapping[str, Expect]]

    run_id: str

    def to_row(self) -> Row:
        row: Row = {"run_id": self.run_id, "kind": self.KIND}
        row.update((name, written(getattr(self, name))) for name in self.FIELDS if name not in COMMON)
        return row

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Self:
        return cls(**read_fields(cls, row))


@dataclass(frozen=True)
class DecisionRow:
    """One decision of a run: what was asked (state, question, options) and what the engine answered."""

    FIELDS: ClassVar[Mapping[str, Expect]] = {
        **COMMON,
        "step": needed(WHOLE),
        "skill": or_null(TEXT),
        "state": TEXT,
        "question": needed(TEXT),
        "options": LIST,
        "selected": needed(TEXT),
        "scores": or_null(OBJECT),
        "probabilities": or_null(OBJECT),
        "engine": or_null(TEXT),
        "model": or_null(TEXT),
        "latency_ms": or_null(NUMBER),
        "usage": OBJECT,
        "note": TEXT,
    }

    run_id: str
    step: int
    kind: str
    skill: str | None
    state: str
    question: str
    options: list[dict[str, Any]]
    selected: str
    scores: dict[str, Any] = field(default_factory=dict)
    probabilities: dict[str, Any] | None = None
    engine: str | None = None
    model: str | None = None
    latency_ms: float | None = None
    usage: dict[str, Any] | None = None
    note: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)  # what the writer adds: request_id, level, source...

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
        """The row for ``request`` answered by ``result``."""
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
            extra=extra,
        )

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
    def from_row(cls, row: Mapping[str, Any]) -> DecisionRow:
        read = read_fields(cls, row)
        return cls(**{**read, "scores": read["scores"] or {}}, extra=other_fields(row, cls.FIELDS))


@dataclass(frozen=True)
class OutcomeRow(RunRow):
    """How a run ended: the request, the skill it went to, what it did and the assessment's label."""

    KIND: ClassVar[str] = "outcome"
    FIELDS: ClassVar[Mapping[str, Expect]] = {
        **COMMON,
        "skill": or_null(TEXT),
        "request_id": or_null(TEXT),
        "request": or_null(TEXT),
        "outcome": or_null(TEXT),
        "reason": or_null(TEXT),
        "prediction": or_null(TEXT),
        "action_log": or_null(TEXT),
        "new_state": or_null(TEXT),
        "changes": OBJECT,
        "diffs": OBJECT,
        "error": or_null(TEXT),
        "evidence": or_null(OBJECT),
        "output": OBJECT,
        "source": TEXT,
    }
    WRITTEN_WHEN_NULL: ClassVar[frozenset[str]] = frozenset({"skill", "request", "outcome", "reason", "error"})
    DROPPED_WHEN_EMPTY: ClassVar[frozenset[str]] = frozenset({"diffs", "output"})

    skill: str | None
    request: str | None
    outcome: str | None
    reason: str | None = None
    request_id: str | None = None
    prediction: str | None = None
    action_log: str | None = None
    new_state: str | None = None
    changes: dict[str, Any] | None = None
    diffs: dict[str, Any] | None = None
    error: str | None = None
    evidence: dict[str, Any] | None = None
    output: dict[str, Any] | None = None
    source: str | None = None  # "agent" for an agent turn

    def to_row(self) -> Row:
        return {
            name: value
            for name, value in super().to_row().items()
            if name in self.WRITTEN_WHEN_NULL
            or (value is not None and not (name in self.DROPPED_WHEN_EMPTY and not value))
        }


@dataclass(frozen=True)
class PersonsRow(RunRow):
    """A row a person wrote about a run (a label, an undo): ``by`` whom, "person" where an old row names no one."""

    by: str

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Self:
        read = super().from_row(row)
        return read if read.by else replace(read, by="person")


LABEL_OUTCOMES = ("success", "failure")


LABEL_SOURCES = ("person", "client", "implicit")
"""Who a label comes from: a person (``semif label``, the web view); a client's own judgement (``report_outcome``);
or a client's pick after a ``find`` (``implicit``). Each weighs less in training than the one before it."""

SOURCE_RANK = {"person": 2, "client": 1, "implicit": 0}
"""How far each source's word goes: a label never overrides what a label of a higher rank said (a client's report
never replaces a person's label, a client's pick never replaces either); an undo counts as a person's."""


@dataclass(frozen=True)
class LabelRow(PersonsRow):
    """A label of a run: the skill it should have gone to (or none), the real outcome, or both.

    ``has_skill`` says the label names the skill: ``skill`` None then means
    no skill fits (``"skill": null`` in the row); a label that says nothing
    about the skill has no ``skill`` key at all. ``source`` is one of
    :data:`LABEL_SOURCES`; ``wrong`` names a skill the request
    should not go to (the one a ``find`` ranked first and the client passed over).
    """

    KIND: ClassVar[str] = "label"
    FIELDS: ClassVar[Mapping[str, Expect]] = {
        **COMMON,
        "by": needed(TEXT),
        "skill": or_null(TEXT),
        "outcome": TEXT,
        "note": TEXT,
        "source": TEXT,
        "wrong": TEXT,
    }

    skill: str | None = None
    has_skill: bool = False
    outcome: str | None = None
    note: str | None = None
    source: str = "person"
    wrong: str | None = None

    def to_row(self) -> Row:
        row: Row = {"run_id": self.run_id, "kind": self.KIND}
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
        return row

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Self:
        read = super().from_row(row)
        has_skill = "skill" in row and cls.FIELDS["skill"].problem("skill", row) is None
        source = read.source if read.source in LABEL_SOURCES else "person"
        return replace(read, has_skill=has_skill, source=source)


@dataclass(frozen=True)
class ProposeRow(RunRow):
    """A skill the code model proposed for a request no skill fits: its manifest."""

    KIND: ClassVar[str] = "propose"
    FIELDS: ClassVar[Mapping[str, Expect]] = {
        **COMMON,
        "skill": needed(TEXT),
        "manifest": needed(OBJECT),
        "model": or_null(TEXT),
        "new_category": FLAG,
    }

    skill: str
    manifest: dict[str, Any]
    model: str | None = None
    new_category: bool = False


@dataclass(frozen=True)
class GenerateRow(RunRow):
    """One attempt at generating a skill's body: admitted, or the contract's violations."""

    KIND: ClassVar[str] = "generate"
    FIELDS: ClassVar[Mapping[str, Expect]] = {
        **COMMON,
        "skill": needed(TEXT),
        "attempt": needed(WHOLE),
        "model": or_null(TEXT),
        "admitted": needed(FLAG),
        "violations": TEXTS,
    }

    skill: str
    attempt: int
    admitted: bool
    violations: list[str] = field(default_factory=list)
    model: str | None = None


UNDO_REASONS = ("route", "result")
"""What an undo says was unwanted: the route (the request should not have gone to the run's skill: a routing failure)
or only the result (the skill was right, its change was not wanted: nothing about the route). An undo row without a
reason (written before undos asked) keeps its old meaning, a routing failure."""

UNDO_SHOWN = {"route": "wrong route", "result": "result unwanted"}
"""How a run's undo reason reads beside it ("undone: wrong route") in ``semif log`` and the web view."""


@dataclass(frozen=True)
class UndoRow(PersonsRow):
    """A run taken back with ``semif undo``: why (:data:`UNDO_REASONS`), the files it removed and put back, and those
    ``--force`` left as they were (path -> why). Only a ``route`` undo (or an old one with no reason) counts as a
    failure label of the route."""

    KIND: ClassVar[str] = "undo"
    FIELDS: ClassVar[Mapping[str, Expect]] = {
        **COMMON,
        "by": needed(TEXT),
        "skill": or_null(TEXT),
        "reason": or_null(TEXT),
        "removed": TEXTS,
        "restored": TEXTS,
        "skipped": OBJECT,
    }

    skill: str | None = None
    reason: str | None = None  # "route" or "result"; None in rows written before undos asked
    removed: list[str] = field(default_factory=list)  # files the run created, removed again
    restored: list[str] = field(default_factory=list)  # files it modified or deleted, put back as they were
    skipped: dict[str, str] = field(default_factory=dict)  # files --force left as they are now, and why

    @property
    def route_failure(self) -> bool:
        """Whether the undo says the route was wrong: a ``route`` undo, or an old one that gave no reason."""
        return self.reason != "result"


@dataclass(frozen=True)
class UnlabelRow(PersonsRow):
    """A person's labels of a run taken back (``semif label --undo``): the run folds as if they had never been given,
    so what clients and the assessment said of it counts again. Earlier rows stay as they were."""

    KIND: ClassVar[str] = "unlabel"
    FIELDS: ClassVar[Mapping[str, Expect]] = {**COMMON, "by": needed(TEXT)}
