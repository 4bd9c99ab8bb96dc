"""Labels from people: appended as rows, never rewriting the log; folded field by field when read; crash-safe."""

from __future__ import annotations

import json
import warnings
from dataclasses import replace
from pathlib import Path

import pytest

from semif_agent.engine import DecisionRequest, DecisionResult, Option
from semif_agent.errors import UserError
from semif_agent.records import DecisionLog, DecisionRow, LabelRow, OutcomeRow, RunRecord, TornLineWarning

from ._rows import decision, kill_mid_write


def outcome(
    run: str, label: str, skill: str | None = "todos.add", request: str = "Add a note: buy milk", **extra
) -> dict:
    return OutcomeRow(run_id=run, skill=skill, request=request, outcome=label, **extra).to_row()


@pytest.fixture
def log(tmp_path: Path) -> DecisionLog:
    log = DecisionLog(tmp_path / "decisions.jsonl")
    log.extend(
        [
            decision("20261130-101500-aaaaaa", 1),
            decision("20261130-101500-aaaaaa", 2),
            outcome("20261130-101500-aaaaaa", "success"),
        ]
    )
    log.extend(
        [
            decision("20261130-101501-bbbbbb", 1, "weather in Paris?"),
            outcome("20261130-101501-bbbbbb", "unclear", skill=None, request="weather in Paris?"),
        ]
    )
    return log


def test_a_label_is_one_appended_row_and_every_earlier_byte_stays(log: DecisionLog) -> None:
    before = log.path.read_bytes()
    row = log.add_label("20261130-101500-aaaaaa", by="alice", skill="notes.add", note="  a note, not a task ")
    after = log.path.read_bytes()
    assert after.startswith(before)
    [line] = after[len(before) :].splitlines()
    assert json.loads(line) == row.to_dict()
    assert {k: row.to_dict()[k] for k in ("run_id", "kind", "skill", "by", "source", "note")} == {
        "run_id": "20261130-101500-aaaaaa",
        "kind": "label",
        "skill": "notes.add",
        "by": "alice",
        "source": "person",
        "note": "a note, not a task",
    }
    assert row.v == 1 and row.ts is not None and row.ts > 0 and "outcome" not in row.to_dict()
    log.add_label("20261130-101500-aaaaaa", by="bob", outcome="failure")
    assert log.path.read_bytes().startswith(after)


def test_the_latest_label_wins_field_by_field(log: DecisionLog) -> None:
    run = "20261130-101500-aaaaaa"
    log.add_label(run, by="alice", skill="notes.add", note="a note, not a task")
    log.add_label(run, by="bob", outcome="failure")  # says nothing of the skill: alice's stays
    [labelled, _] = log.runs()
    assert (labelled.label_skill, labelled.label_has_skill, labelled.label_outcome) == ("notes.add", True, "failure")
    assert (labelled.labelled_by, labelled.note) == ("bob", "a note, not a task")
    assert labelled.outcome == "success" and labelled.true_outcome == "failure"
    log.add_label(run, by="carol", no_skill=True, note="nothing fits")
    log.add_label(run, by="dave", outcome="success")
    [labelled, _] = log.runs()
    assert (labelled.label_skill, labelled.label_has_skill, labelled.label_outcome) == (None, True, "success")
    assert (labelled.labelled_by, labelled.note) == ("dave", "nothing fits")
    rows = list(log.read(with_outcomes=True))
    assert [r.to_dict()["label"] for r in rows if r.row.run_id == run] == [
        {"skill": None, "outcome": "success", "by": "dave", "note": "nothing fits"}
    ] * 2


def test_labels_are_joined_onto_decision_rows_and_filters_use_the_true_outcome(log: DecisionLog) -> None:
    log.add_label("20261130-101500-aaaaaa", by="alice", outcome="failure")
    rows = list(log.read(with_outcomes=True))
    assert [r.row.kind for r in rows] == ["route", "route", "route"]  # outcome and label rows are folded in
    assert [r.to_dict().get("label") for r in rows] == [{"outcome": "failure", "by": "alice"}] * 2 + [None]
    assert all(r.outcome == "success" for r in rows[:2])  # the engine's judgement is kept beside it
    assert [r.row.step for r in log.filter(outcome="failure") if isinstance(r.row, DecisionRow)] == [1, 2]
    assert log.filter(outcome="success") == []
    assert {r.row.run_id for r in log.filter(labelled=True)} == {"20261130-101500-aaaaaa"}
    assert {r.row.run_id for r in log.filter(labelled=False)} == {"20261130-101501-bbbbbb"}


def test_a_log_without_labels_reads_as_before(log: DecisionLog) -> None:
    rows = list(log.read())
    outcomes = {r.run_id: r.outcome for r in rows if isinstance(r, OutcomeRow)}
    expected = [{**r.to_dict(), "outcome": outcomes[r.run_id]} for r in rows if not isinstance(r, OutcomeRow)]
    assert [joined.to_dict() for joined in log.read(with_outcomes=True)] == expected
    assert [joined.to_dict() for joined in log.filter()] == expected
    assert all(record.labelled_by is None and not record.label_has_skill for record in log.runs())


def test_a_run_is_named_by_its_id_or_a_unique_prefix(log: DecisionLog) -> None:
    assert log.run("20261130-101500").run_id == "20261130-101500-aaaaaa"
    assert log.add_label("20261130-101501", by="alice", no_skill=True).run_id == "20261130-101501-bbbbbb"
    with pytest.raises(
        UserError, match=r"ambiguous: 2 runs start with it \(20261130-101500-aaaaaa, 20261130-101501-bbbbbb\)"
    ):
        log.run("2026")
    with pytest.raises(UserError, match="no run 'zzz' in the decision log"):
        log.add_label("zzz", by="alice", outcome="failure")
    log.append(decision("20261130-101500-aaaaaa-2", 1))
    assert log.run("20261130-101500-aaaaaa").run_id == "20261130-101500-aaaaaa"  # a whole id beats a longer one


def test_a_label_must_say_something_and_not_contradict_itself(log: DecisionLog) -> None:
    before = log.path.read_bytes()
    cases = [
        (dict(skill="notes.add", no_skill=True), "not both"),
        ({}, "needs a skill"),
        (dict(outcome="unclear"), "success or failure"),
        (dict(outcome="failure", by=" "), "who gives it"),
    ]
    for given, message in cases:
        with pytest.raises(UserError, match=message):
            log.add_label("20261130-101500-aaaaaa", **{"by": "alice", **given})
    assert log.path.read_bytes() == before


def test_a_torn_label_line_is_skipped_and_the_next_label_starts_fresh(log: DecisionLog) -> None:
    log.add_label("20261130-101500-aaaaaa", by="alice", skill="notes.add")
    with log.path.open("ab") as handle:
        handle.write(b'{"v": 1, "run_id": "20261130-101500-aaaaaa", "kind": "label", "outcome": "fai')
    with pytest.warns(TornLineWarning, match="torn last line"):
        [labelled, _] = log.runs()
    assert (labelled.label_skill, labelled.label_outcome, labelled.labelled_by) == ("notes.add", None, "alice")
    with pytest.warns(TornLineWarning):
        log.add_label("20261130-101500-aaaaaa", by="bob", outcome="failure")
    with pytest.warns(TornLineWarning, match=":7: skipped unreadable line"):
        [labelled, _] = log.runs()
    assert (labelled.label_skill, labelled.label_outcome, labelled.labelled_by) == ("notes.add", "failure", "bob")


# Labels written as add_label writes them once the run is found (resolving it reads the whole log, which
# would leave the kill little chance to land mid-write).
LABELLER = """
import sys
from semif_agent.records import DecisionLog
from semif_agent.records import label_row
log = DecisionLog(sys.argv[1])
big = "x" * 200_000
i = 0
while True:
    i += 1
    log.append(label_row("20261130-101500-aaaaaa", by="writer", outcome="failure", note=f"{i} {big}"))
    if i == 20:
        print("ready", flush=True)
"""


def test_a_process_killed_mid_label_leaves_every_earlier_row_intact(log: DecisionLog) -> None:
    before = log.path.read_bytes()
    kill_mid_write(LABELLER, log.path)
    assert log.path.read_bytes().startswith(before)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TornLineWarning)
        labels = [r for r in log.read() if isinstance(r, LabelRow)]
        numbers = [int((r.note or "").split()[0]) for r in labels]
        assert len(numbers) >= 10
        assert numbers == list(range(1, len(numbers) + 1)), "labels before the kill must all be intact and in order"
        log.add_label("20261130-101500", by="after", skill="notes.add")
        [labelled, _] = log.runs()
    assert (labelled.labelled_by, labelled.label_skill, labelled.label_outcome) == ("after", "notes.add", "failure")
    last = log.path.read_bytes().split(b"\n")[-2]
    assert json.loads(last)["by"] == "after"


@pytest.mark.slow
def test_runs_of_the_skill_loop_and_of_agent_turns_with_their_labels(tmp_path: Path) -> None:
    from semif_agent.agent import Agent, Skill
    from semif_agent.engine import create_engine
    from semif_agent.llm import ScriptedProvider
    from semif_agent.loop import SkillRunner
    from semif_agent.starter import create_workspace
    from semif_agent.workspace import Workspace

    from ..agent._support import calls

    log = DecisionLog(tmp_path / "decisions.jsonl")
    runner = SkillRunner(Workspace.load(create_workspace(tmp_path / "ws")), engine=create_engine("lexical"), log=log)
    emailed = runner.run("Email Alice that the quarterly report is ready")
    handed_back = runner.run("what is the capital of France?")
    skills = [
        Skill(name=f"{topic}-helper", activation="on_demand", description=f"Create and check {topic}.")
        for topic in ("invoices", "telescopes", "recipes", "podcasts", "flights")
    ]
    provider = ScriptedProvider([calls(("activate_skill", {"name": "telescopes-helper"})), "Point it north."])
    agent = Agent(llm=provider).with_skills(skills).with_skill_discovery(engine="lexical", log=log)
    list(agent.stream("help me align my telescopes"))
    turn = [r for r in log.read() if isinstance(r, OutcomeRow) and r.source == "agent"][0].run_id
    log.add_label(handed_back.run_id, by="alice", no_skill=True)
    log.add_label(turn, by="bob", outcome="success", note="it helped")

    records = log.runs()
    assert records[0].evidence == emailed.assessment.evidence  # what the assessment weighed rides along
    assert [replace(r, evidence=None) for r in records] == [
        RunRecord(
            run_id=emailed.run_id,
            request="Email Alice that the quarterly report is ready",
            skill="email.compose",
            outcome=emailed.assessment.label,
            source="run",
        ),
        RunRecord(
            run_id=handed_back.run_id,
            request="what is the capital of France?",
            skill=handed_back.skill,
            outcome=handed_back.assessment.label,
            source="run",
            label_skill=None,
            label_has_skill=True,
            labelled_by="alice",
        ),
        RunRecord(
            run_id=turn,
            request="help me align my telescopes",
            skill="telescopes-helper",
            outcome="unclear",
            source="agent",
            label_outcome="success",
            labelled_by="bob",
            note="it helped",
        ),
    ]
    assert [record.true_outcome for record in log.runs()][2] == "success"


def test_a_run_without_an_outcome_row_takes_its_request_from_its_first_decision(tmp_path: Path) -> None:
    log = DecisionLog(tmp_path / "decisions.jsonl")
    log.extend([decision("cut", 1, "Email Bob"), decision("cut", 2, "ignored")])
    log.append(LabelRow(run_id="orphan", by="alice", outcome="failure"))  # labels alone make no run
    assert log.runs() == [
        RunRecord(run_id="cut", request="Email Bob", skill=None, outcome=None, source="run", outcome_missing=True)
    ]


def test_a_run_whose_outcome_row_is_lost_names_the_skill_its_route_rows_chose(tmp_path: Path) -> None:
    log = DecisionLog(tmp_path / "decisions.jsonl")
    log.extend([decision("cut", 1, "Add milk", level="category"), decision("cut", 2, "Add milk", level="skill")])
    log.extend([decision("whole", 1, "Add eggs", level="skill"), outcome("whole", "success", request="Add eggs")])
    cut, whole = log.runs()
    assert (cut.skill, cut.outcome, cut.outcome_missing) == ("todos.add", None, True)
    assert cut.assessed == "outcome missing: the log was cut, or the run is still going"
    assert (whole.skill, whole.outcome, whole.outcome_missing, whole.assessed) == (
        "todos.add",
        "success",
        False,
        "success",
    )
    none_fits = DecisionRow.of(
        run_id="nothing",
        step=1,
        kind="route",
        skill=None,
        request=DecisionRequest("weather?", "Which skill?", [Option("todos.add"), Option("none")]),
        result=DecisionResult("none"),
        level="skill",
    )
    log.append(none_fits)
    assert log.runs()[-1].skill is None  # routed to no skill


def test_taking_labels_back_folds_the_run_unlabelled_and_a_clients_pick_counts_again(log: DecisionLog) -> None:
    run_id = "20261130-101500-aaaaaa"
    log.append(LabelRow(run_id=run_id, by="claude-code", skill="todos.add", has_skill=True, source="implicit").to_row())
    log.add_label(run_id, by="alice", skill="notes.add")
    log.add_label(run_id, by="alice", outcome="failure")
    assert (log.run(run_id).label_skill, log.run(run_id).label_outcome) == ("notes.add", "failure")
    before = log.path.read_bytes()

    row = log.take_back_labels(run_id[:15], by="alice")
    assert log.path.read_bytes().startswith(before), "earlier rows stay as they were"
    assert {k: row.to_dict()[k] for k in ("run_id", "kind", "by")} == {
        "run_id": run_id,
        "kind": "unlabel",
        "by": "alice",
    }
    run = log.run(run_id)
    assert run.label_outcome is None and run.outcome == "success"
    assert (run.label_skill, run.label_source, run.labelled_by) == ("todos.add", "implicit", "claude-code")

    with pytest.raises(UserError, match=f"run {run_id} has no label to take back"):
        log.take_back_labels(run_id, by="alice")
    with pytest.raises(UserError, match="no run 'nope'"):
        log.take_back_labels("nope", by="alice")
    log.add_label(run_id, by="bob", skill=None, no_skill=True)  # a label after the take-back stands
    assert (log.run(run_id).label_has_skill, log.run(run_id).label_skill, log.run(run_id).labelled_by) == (
        True,
        None,
        "bob",
    )
    assert log.run("20261130-101501-bbbbbb").labelled_by is None
