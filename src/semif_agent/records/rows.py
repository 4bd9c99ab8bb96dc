"""One typed builder per kind of row the decision log holds.

Each builder is a frozen dataclass: :meth:`to_row` gives the JSON object
written to the log (the same shape rows have always had, so old logs still
read), :meth:`from_row` reads one back leniently (a field missing or of the
wrong type in an old or hand-edited row becomes its default). ``FIELDS``
says what each field must be when a row is appended; :func:`shape_problem`
checks a row against it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..engine.decisions import DecisionRequest, DecisionResult

Row = dict[str, Any]
SHOWN_VALUE = 40  # characters of a refused value quoted in the error


@dataclass(frozen=True)
class Expect:
    """What one field of a row must be: one of ``types`` (or null when ``nullable``), present when ``required``."""

    what: str
    types: tuple[type, ...]
    nullable: bool = False
    required: bool = False

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
    return Expect(expect.what, expect.types, expect.nullable, required=True)


def or_null(expect: Expect) -> Expect:
    return Expect(f"{expect.what} or null", expect.types, nullable=True, required=expect.required)


TEXT = Expect("a string", (str,))
WHOLE = Expect("a whole number", (int,))
NUMBER = Expect("a number", (int, float))
FLAG = Expect("true or false", (bool,))
LIST = Expect("a list", (list, tuple))
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
        f = cls.FIELDS
        return cls(
            run_id=str(row.get("run_id", "")),
            step=field_or(row, "step", f["step"], 0),
            kind=str(row.get("kind", "")),
            skill=field_or(row, "skill", f["skill"]),
            state=field_or(row, "state", f["state"], ""),
            question=field_or(row, "question", f["question"], ""),
            options=list(field_or(row, "options", f["options"], [])),
            selected=field_or(row, "selected", f["selected"], ""),
            scores=field_or(row, "scores", f["scores"]) or {},
            probabilities=field_or(row, "probabilities", f["probabilities"]),
            engine=field_or(row, "engine", f["engine"]),
            model=field_or(row, "model", f["model"]),
            latency_ms=field_or(row, "latency_ms", f["latency_ms"]),
            usage=field_or(row, "usage", f["usage"]),
            note=field_or(row, "note", f["note"]),
            extra=other_fields(row, cls.FIELDS),
        )


@dataclass(frozen=True)
class OutcomeRow:
    """How a run ended: the request, the skill it went to, what it did and the assessment's label."""

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

    run_id: str
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
        row: Row = {"run_id": self.run_id, "kind": "outcome", "skill": self.skill}
        for name in (
            "request_id",
            "request",
            "outcome",
            "reason",
            "prediction",
            "action_log",
            "new_state",
            "changes",
            "diffs",
            "error",
            "evidence",
            "output",
            "source",
        ):
            value = getattr(self, name)
            dropped_when_empty = name in ("diffs", "output") and not value
            if name in self.WRITTEN_WHEN_NULL or (value is not None and not dropped_when_empty):
                row[name] = value
        return row

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> OutcomeRow:
        values = {name: field_or(row, name, expect) for name, expect in cls.FIELDS.items() if name not in COMMON}
        return cls(run_id=str(row.get("run_id", "")), **values)


LABEL_OUTCOMES = ("success", "failure")


LABEL_SOURCES = ("person", "client", "implicit")
"""Who a label comes from: a person; a client's own judgement (``report_outcome``); or a client's pick after a
``find`` (``implicit``: it weighs less in training, and never overrides the others)."""


@dataclass(frozen=True)
class LabelRow:
    """A label of a run: the skill it should have gone to (or none), the real outcome, or both.

    ``has_skill`` says the label names the skill: ``skill`` None then means
    no skill fits (``"skill": null`` in the row); a label that says nothing
    about the skill has no ``skill`` key at all. ``source`` is one of
    :data:`LABEL_SOURCES`; ``wrong`` names a skill the request
    should not go to (the one a ``find`` ranked first and the client passed over).
    """

    FIELDS: ClassVar[Mapping[str, Expect]] = {
        **COMMON,
        "by": needed(TEXT),
        "skill": or_null(TEXT),
        "outcome": TEXT,
        "note": TEXT,
        "source": TEXT,
        "wrong": TEXT,
    }

    run_id: str
    by: str
    skill: str | None = None
    has_skill: bool = False
    outcome: str | None = None
    note: str | None = None
    source: str = "person"
    wrong: str | None = None

    def to_row(self) -> Row:
        row: Row = {"run_id": self.run_id, "kind": "label"}
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
    def from_row(cls, row: Mapping[str, Any]) -> LabelRow:
        f = cls.FIELDS
        has_skill = "skill" in row and f["skill"].problem("skill", row) is None
        return cls(
            run_id=str(row.get("run_id", "")),
            by=field_or(row, "by", f["by"]) or "person",
            skill=row["skill"] if has_skill else None,
            has_skill=has_skill,
            outcome=field_or(row, "outcome", f["outcome"]),
            note=field_or(row, "note", f["note"]),
            source=row["source"] if row.get("source") in LABEL_SOURCES else "person",
            wrong=field_or(row, "wrong", f["wrong"]),
        )


@dataclass(frozen=True)
class ProposeRow:
    """A skill the code model proposed for a request no skill fits: its manifest."""

    FIELDS: ClassVar[Mapping[str, Expect]] = {
        **COMMON,
        "skill": needed(TEXT),
        "manifest": needed(OBJECT),
        "model": or_null(TEXT),
        "new_category": FLAG,
    }

    run_id: str
    skill: str
    manifest: dict[str, Any]
    model: str | None = None
    new_category: bool = False

    def to_row(self) -> Row:
        return {
            "run_id": self.run_id,
            "kind": "propose",
            "skill": self.skill,
            "manifest": self.manifest,
            "model": self.model,
            "new_category": self.new_category,
        }

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> ProposeRow:
        f = cls.FIELDS
        return cls(
            run_id=str(row.get("run_id", "")),
            skill=field_or(row, "skill", f["skill"], ""),
            manifest=field_or(row, "manifest", f["manifest"], {}),
            model=field_or(row, "model", f["model"]),
            new_category=field_or(row, "new_category", f["new_category"], False),
        )


@dataclass(frozen=True)
class GenerateRow:
    """One attempt at generating a skill's body: admitted, or the contract's violations."""

    FIELDS: ClassVar[Mapping[str, Expect]] = {
        **COMMON,
        "skill": needed(TEXT),
        "attempt": needed(WHOLE),
        "model": or_null(TEXT),
        "admitted": needed(FLAG),
        "violations": LIST,
    }

    run_id: str
    skill: str
    attempt: int
    admitted: bool
    violations: list[str] = field(default_factory=list)
    model: str | None = None

    def to_row(self) -> Row:
        return {
            "run_id": self.run_id,
            "kind": "generate",
            "skill": self.skill,
            "attempt": self.attempt,
            "model": self.model,
            "admitted": self.admitted,
            "violations": list(self.violations),
        }

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> GenerateRow:
        f = cls.FIELDS
        return cls(
            run_id=str(row.get("run_id", "")),
            skill=field_or(row, "skill", f["skill"], ""),
            attempt=field_or(row, "attempt", f["attempt"], 0),
            admitted=field_or(row, "admitted", f["admitted"], False),
            violations=[str(v) for v in field_or(row, "violations", f["violations"], [])],
            model=field_or(row, "model", f["model"]),
        )


@dataclass(frozen=True)
class UndoRow:
    """A run taken back with ``semif undo``: the files it removed and put back. It counts as a failure label."""

    FIELDS: ClassVar[Mapping[str, Expect]] = {
        **COMMON,
        "by": needed(TEXT),
        "skill": or_null(TEXT),
        "removed": LIST,
        "restored": LIST,
    }

    run_id: str
    by: str
    skill: str | None = None
    removed: list[str] = field(default_factory=list)  # files the run created, removed again
    restored: list[str] = field(default_factory=list)  # files it modified or deleted, put back as they were

    def to_row(self) -> Row:
        return {
            "run_id": self.run_id,
            "kind": "undo",
            "by": self.by,
            "skill": self.skill,
            "removed": list(self.removed),
            "restored": list(self.restored),
        }

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> UndoRow:
        f = cls.FIELDS
        return cls(
            run_id=str(row.get("run_id", "")),
            by=field_or(row, "by", f["by"]) or "person",
            skill=field_or(row, "skill", f["skill"]),
            removed=[str(p) for p in field_or(row, "removed", f["removed"], [])],
            restored=[str(p) for p in field_or(row, "restored", f["restored"], [])],
        )
