"""The decision log is append-only, crash-safe, and readable after a crash."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import pytest
from pydantic import Field, StrictStr

from semif_agent.errors import LogError
from semif_agent.records import (
    RECORD_KINDS,
    DecisionLog,
    DecisionRow,
    GenerateRow,
    LabelRow,
    ModelCallRow,
    OutcomeRow,
    ProposeRow,
    TornLineWarning,
)
from semif_agent.records.rows import Number, RunRow, Text, UndoRow

from ._rows import decision, decisions, kill_mid_write


def test_rows_round_trip_with_schema_version(tmp_path: Path) -> None:
    log = DecisionLog(tmp_path / "d.jsonl")
    log.append(decision("r1", 1))
    log.extend([decision("r1", 2), decision("r2", 1)])
    rows = decisions(log.read())
    assert [(r.run_id, r.step) for r in rows] == [("r1", 1), ("r1", 2), ("r2", 1)]
    assert all(r.v == 1 and r.ts is not None and r.ts > 0 for r in rows)
    assert rows[0].options == [
        {"id": "todos.add", "description": "Add a task"},
        {"id": "none", "description": ""},
    ]


def test_outcome_rows_are_joined_onto_their_runs(tmp_path: Path) -> None:
    log = DecisionLog(tmp_path / "d.jsonl")
    log.extend([decision("r1", 1), decision("r2", 1)])
    log.append(OutcomeRow(run_id="r1", skill=None, request=None, outcome="success"))
    rows = list(log.read(with_outcomes=True))
    assert [(r.row.run_id, r.outcome) for r in rows] == [("r1", "success"), ("r2", None)]
    assert [r.row.run_id for r in log.filter(outcome="success")] == ["r1"]
    assert [r.row.run_id for r in log.filter(last_runs=1)] == ["r2"]


def test_torn_last_line_is_skipped_with_a_warning_and_the_next_row_starts_fresh(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    log = DecisionLog(path)
    log.extend([decision("r1", 1), decision("r1", 2)])
    with path.open("ab") as handle:
        handle.write(b'{"run_id": "r1", "step": 3, "sta')  # a write cut short
    with pytest.warns(TornLineWarning, match="torn last line"):
        assert len(list(log.read())) == 2
    log.append(decision("r2", 1))
    with pytest.warns(TornLineWarning):
        rows = decisions(log.read())
    assert [(r.run_id, r.step) for r in rows] == [("r1", 1), ("r1", 2), ("r2", 1)]


def test_missing_log_reads_as_empty(tmp_path: Path) -> None:
    assert list(DecisionLog(tmp_path / "nope.jsonl").read()) == []


WRITER = """
import sys
from semif_agent.engine import DecisionRequest, DecisionResult, Option
from semif_agent.records import DecisionLog, DecisionRow
log = DecisionLog(sys.argv[1])
asked = DecisionRequest("x" * 200_000, "question?", [Option("a"), Option("none")])
i = 0
while True:
    i += 1
    log.append(DecisionRow.of(run_id="crash", step=i, kind="act", skill=None, request=asked, result=DecisionResult("a")))
    if i == 20:
        print("ready", flush=True)
"""


def test_a_run_killed_mid_write_leaves_every_earlier_row_intact(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    kill_mid_write(WRITER, path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TornLineWarning)
        rows = decisions(DecisionLog(path).read())
    steps = [r.step for r in rows]
    assert len(steps) >= 20
    assert steps == list(range(1, len(steps) + 1)), "rows before the kill must all be intact and in order"
    DecisionLog(path).append(decision("after", 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TornLineWarning)
        assert list(DecisionLog(path).read())[-1].run_id == "after"
    lines = path.read_bytes().split(b"\n")
    assert json.loads(lines[-2])["run_id"] == "after"


def test_a_symlink_in_place_of_the_log_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("precious\n")
    (tmp_path / "d.jsonl").symlink_to(target)
    log = DecisionLog(tmp_path / "d.jsonl")
    with pytest.raises(LogError, match=r"d\.jsonl is a symbolic link; refusing to follow it"):
        log.append(decision("r1", 1))
    with pytest.raises(LogError, match="symbolic link"):
        list(log.read())
    assert target.read_text() == "precious\n"


def test_a_dangling_symlink_is_not_followed_to_create_a_file(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").symlink_to(tmp_path / "created-through-the-link.jsonl")
    with pytest.raises(LogError, match="symbolic link"):
        DecisionLog(tmp_path / "d.jsonl").append(decision("r1", 1))
    assert not (tmp_path / "created-through-the-link.jsonl").exists()


def test_a_directory_or_a_fifo_in_place_of_the_log_is_refused(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").mkdir()
    with pytest.raises(LogError, match=r"d\.jsonl is a directory"):
        DecisionLog(tmp_path / "d.jsonl").append(decision("r1", 1))
    with pytest.raises(LogError, match=r"d\.jsonl is a directory"):
        list(DecisionLog(tmp_path / "d.jsonl").read())
    assert list((tmp_path / "d.jsonl").iterdir()) == []
    os.mkfifo(tmp_path / "f.jsonl")
    with pytest.raises(LogError, match=r"f\.jsonl is not a regular file"):
        DecisionLog(tmp_path / "f.jsonl").append(decision("r1", 1))
    with pytest.raises(LogError, match=r"f\.jsonl is not a regular file"):
        list(DecisionLog(tmp_path / "f.jsonl").read())


def test_a_row_of_the_wrong_shape_is_refused_in_one_line_and_nothing_is_written(tmp_path: Path) -> None:
    log = DecisionLog(tmp_path / "d.jsonl")
    log.append(decision("r1", 1))
    before = log.path.read_bytes()
    cases = [
        ({**decision("r1", 2), "run_id": 42}, "a route row: run_id must be a string, got int 42"),
        ({**decision("r1", 2), "step": "2"}, "step must be a whole number, got str '2'"),
        ({**decision("r1", 2), "step": True}, "step must be a whole number, got bool True"),
        (
            {k: v for k, v in decision("r1", 2).items() if k != "question"},
            "question is missing",
        ),
        ({**decision("r1", 2), "kind": "rewind"}, "kind must be one of route, shortlist, .* got str 'rewind'"),
        ({"run_id": "r1", "step": 3}, "kind must be one of .* got NoneType None"),
        (
            OutcomeRow(run_id="r1", skill=None, request=None, outcome="success").to_row() | {"changes": ["a"]},
            "changes must be an object",
        ),
        ({"run_id": "r1", "kind": "label", "outcome": "failure"}, "a label row: by is missing"),
    ]
    for given, message in cases:
        with pytest.raises(LogError, match=message) as caught:
            log.extend([decision("r1", 2), given])  # the good row before it is not written either
        assert "\n" not in str(caught.value) and "nothing was written" in str(caught.value)
    assert log.path.read_bytes() == before


def test_builders_write_the_rows_they_always_were_and_read_old_rows_leniently(tmp_path: Path) -> None:
    written = decision("r1", 1) | {"level": "skill"}
    assert list(written)[:13] == [
        "run_id", "step", "kind", "skill", "state", "question", "options", "selected",
        "scores", "probabilities", "engine", "model", "latency_ms",
    ]  # fmt: skip
    assert DecisionRow.from_row(written).to_row() == written
    outcome = OutcomeRow(run_id="r1", skill="a", request="do", outcome="failure", error="boom", changes={"created": []})
    assert OutcomeRow.from_row(outcome.to_row()) == outcome
    old = DecisionRow.from_row({"run_id": "r0", "kind": "route", "step": "one", "selected": 3})
    assert (old.step, old.selected, old.options, old.scores) == (0, "", [], {})
    with pytest.warns(TornLineWarning):
        path = tmp_path / "d.jsonl"
        path.write_bytes(json.dumps({"v": 1, **written}).encode() + b"\n" + b'{"run_id": "r1", "kind": "outc')
        [back] = [DecisionRow.from_row(r.to_dict()) for r in DecisionLog(path).read()]
    assert back.extra == {"level": "skill"} and back.selected == "todos.add"


def test_the_builders_of_steps_and_records_write_their_fields_in_order_and_read_them_leniently() -> None:
    propose = ProposeRow(run_id="r1", skill="notes.add", manifest={"name": "add"}, model="m")
    generate = GenerateRow(run_id="r1", skill="notes.add", attempt=2, admitted=False, violations=["no effects"])
    undo = UndoRow(run_id="r1", by="ada", skill="notes.add", removed=["data/a"], restored=["data/b"])
    call = ModelCallRow(
        call_id="c1",
        provider="p",
        model="m",
        messages=[{"role": "user"}],
        tools=["read"],
        error="boom",
        context={"run_id": "r1"},
    )
    assert [list(b.to_row()) for b in (propose, generate, undo, call)] == [
        ["run_id", "kind", "skill", "manifest", "model", "new_category"],
        ["run_id", "kind", "skill", "attempt", "model", "admitted", "violations"],
        ["run_id", "kind", "by", "skill", "reason", "removed", "restored", "skipped"],
        ["run_id", "kind", "call_id", "provider", "model", "messages", "tools", "tool_choice", "response", "latency_ms", "error"],
    ]  # fmt: skip
    for built in (propose, generate, undo, call):
        assert type(built).from_row(built.to_row()) == built
        assert RECORD_KINDS[built.to_row()["kind"]].builder is type(built)
    old = {"run_id": "r0", "kind": "undo", "by": 7, "removed": ["a", 3], "restored": "b", "attempt": "two"}
    assert fields_of(UndoRow.from_row(old)) == fields_of(UndoRow(run_id="r0", by="person", removed=["a", "3"]))
    assert UndoRow.from_row(old).model_extra == {"attempt": "two"}  # a field beyond the model's is kept as it was
    assert (UndoRow.from_row(old).reason, UndoRow.from_row(old).route_failure) == (None, True)  # an old undo: a route
    assert fields_of(GenerateRow.from_row(old | {"kind": "generate"})) == fields_of(
        GenerateRow(run_id="r0", skill="", attempt=0, admitted=False)
    )
    assert LabelRow.from_row({"run_id": "r0", "skill": None}) == LabelRow(run_id="r0", by="person", has_skill=True)
    assert ModelCallRow.from_row({"call_id": 5, "tools": "read"}).call_id == "5"


def fields_of(row: RunRow) -> dict[str, object]:
    """A row's own fields (not those it carries beyond its model's)."""
    return {name: getattr(row, name) for name in type(row).model_fields}


def test_a_kind_whose_row_is_its_fields_is_a_model_with_kind_and_fields() -> None:
    class NoteRow(RunRow):
        kind: StrictStr = "note"
        text: StrictStr
        tags: list[Text] = Field(default_factory=list)
        weight: Number | None = None

    note = NoteRow(run_id="r1", text="hi", tags=("a", "b"), weight=0.5)
    written = note.to_row()
    assert list(written.items()) == [
        ("run_id", "r1"),
        ("kind", "note"),
        ("text", "hi"),
        ("tags", ["a", "b"]),
        ("weight", 0.5),
    ]
    assert NoteRow.from_row(written) == NoteRow(run_id="r1", text="hi", tags=["a", "b"], weight=0.5)
    old = NoteRow.from_row({"run_id": 4, "text": 3, "tags": [1, "b"], "weight": "heavy"})
    assert old == NoteRow(run_id="4", text="", tags=["1", "b"], weight=None)


def test_reading_some_kinds_parses_only_the_lines_that_name_them(tmp_path: Path) -> None:
    log = DecisionLog(tmp_path / "decisions.jsonl")
    label = LabelRow(run_id="r1", by="ann", skill="todos.add", has_skill=True).to_row()
    log.extend([decision("r1", 1, state='Note: "label" the jars'), label, decision("r2", 1)])
    with open(log.path, "ab") as out:
        out.write(b'{"kind": "label", "run_id": "r3", "torn')  # a torn label line is skipped, with its warning
    with pytest.warns(TornLineWarning):
        found = list(log.read(kinds=("label",)))
    assert [(row.kind, row.run_id) for row in found] == [("label", "r1")]
    assert [row.kind for row in log.read(kinds=("route",))] == ["route", "route"]


def test_a_log_reads_as_typed_rows_an_old_or_hand_edited_row_leniently_its_other_fields_kept(tmp_path: Path) -> None:
    path = tmp_path / "decisions.jsonl"
    edited = [
        {"v": 1, "ts": 5, "run_id": "r1", "kind": "route", "step": "2", "question": "Which?", "selected": "a",
         "level": "skill", "request_id": "q1"},  # a step as text
        {"run_id": "r1", "kind": "predict", "question": "How?", "selected": "b", "step": 3},  # v, ts: an old writer's
        {"run_id": 7, "kind": "label", "by": ["ann"], "skill": None, "source": "a robot"},  # hand-edited
        {"run_id": "r1", "kind": "outcome", "outcome": "success", "changes": "all of them", "gate": {"acts": True}},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(row) + "\n" for row in edited))
    route, predict, label, outcome = DecisionLog(path).read()
    assert isinstance(route, DecisionRow) and (route.step, route.ts, route.level, route.extra_field("request_id")) == (
        0,
        5,
        "skill",
        "q1",
    )
    assert isinstance(predict, DecisionRow) and (predict.kind, predict.step, predict.v, predict.options) == (
        "predict",
        3,
        None,
        [],
    )
    assert isinstance(label, LabelRow) and (label.run_id, label.by, label.has_skill, label.skill, label.source) == (
        "7",
        "person",
        True,
        None,
        "person",
    )
    assert isinstance(outcome, OutcomeRow) and (outcome.outcome, outcome.changes) == ("success", None)
    assert outcome.extra_field("gate") == {"acts": True} and outcome.to_dict()["gate"] == {"acts": True}
    assert route.to_dict() == {**edited[0], "step": 0}  # as it was written, but for what could not be read


def test_every_kind_has_its_name_and_role_where_a_help_reads_them_without_the_models() -> None:
    """``semif log --help`` lists the kinds from :mod:`semif_agent.records.kind_names` (no pydantic): the same kinds
    the table of models holds, in its order."""
    from semif_agent.records.kind_names import ROLES, listed_kinds

    assert list(ROLES) == list(RECORD_KINDS)
    assert listed_kinds() == [name for name, kind in RECORD_KINDS.items() if kind.role in ("decision", "step")]


def test_a_read_row_is_read_by_attribute_not_by_key(tmp_path: Path) -> None:
    log = DecisionLog(tmp_path / "d.jsonl")
    log.append(decision("r1", 1))
    log.append(OutcomeRow(run_id="r1", skill=None, request=None, outcome="success"))
    [route, outcome] = log.read()
    assert (route.kind, outcome.kind) == ("route", "outcome")  # a field is an attribute the type checker sees
    [joined] = log.read(with_outcomes=True)
    for read in (route, outcome, joined):
        with pytest.raises(TypeError):
            read["kind"]  # type: ignore[index]  # no key access: a renamed field must not hide behind a string
        assert not hasattr(read, "get")
    assert route.to_dict()["kind"] == "route" and joined.to_dict()["outcome"] == "success"  # the JSON object, asked for
