"""``semif log --to-label``: the runs whose label would teach the router most, ranked by the documented score."""

from __future__ import annotations

import json
from pathlib import Path

from semif_agent.records import DecisionLog, OutcomeRow, label_row
from semif_agent.records.rows import UndoRow

from .conftest import Semif


def route(run_id: str, text: str, chosen: float, runner_up: float) -> dict:
    return {
        "run_id": run_id,
        "kind": "route",
        "step": 1,
        "skill": None,
        "state": text,
        "question": "Which skill?",
        "options": [{"id": "notes.add", "description": ""}, {"id": "todos.add", "description": ""}],
        "selected": "notes.add",
        "probabilities": {"notes.add": chosen, "todos.add": runner_up},
        "level": "skill",
    }


def outcome(run_id: str, text: str, label: str, rule: str) -> OutcomeRow:
    return OutcomeRow(run_id=run_id, skill="notes.add", request=text, outcome=label, evidence={"rule": rule})


def test_the_queue_ranks_undone_handed_back_contradicted_and_close_calls_and_skips_labelled_runs(
    semif: Semif, make_workspace, tmp_path: Path
) -> None:
    root = make_workspace({"notes.add": None, "todos.add": None})
    log = DecisionLog(root / "data" / "decisions.jsonl")
    runs = [  # (run id, its margin, its outcome, the rule that decided), oldest first
        ("r1-sure-success", 0.9, "success", "judge"),
        ("r2-undone", 0.9, "success", "judge"),
        ("r3-contradicted", 0.9, "unclear", "contradicted"),
        ("r4-close-call", 0.06, "success", "judge"),  # 0.06 ahead: 2 * (1 - 0.06 / 0.3) = 1.6
        ("r5-labelled", 0.0, "unclear", "contradicted"),
        ("r6-handed-back", 0.9, "handed_back", "gate"),
        ("r7-contradicted", 0.9, "unclear", "contradicted"),
        ("r8-unsure", 0.9, "unclear", "unsure"),
    ]
    for run_id, margin, label, rule in runs:
        chosen = (1 + margin) / 2
        log.extend(
            [route(run_id, f"request {run_id}", chosen, 1 - chosen), outcome(run_id, f"request {run_id}", label, rule)]
        )
    log.append(UndoRow(run_id="r2-undone", by="ada", skill="notes.add", removed=["data/notes/x"]))
    log.append(label_row("r5-labelled", by="ada", skill="todos.add"))

    done = semif("log", "--to-label", "-w", str(root), "--json")
    assert done.returncode == 0, done.stderr
    queue = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(entry["run_id"], entry["score"]) for entry in queue] == [
        ("r2-undone", 4.0),
        ("r6-handed-back", 3.0),
        ("r7-contradicted", 2.0),  # newer than r3 at the same score
        ("r3-contradicted", 2.0),
        ("r4-close-call", 1.6),
        ("r8-unsure", 1.0),
    ]
    assert queue[4]["reasons"] == ["low margin (6%)"]

    shown = semif("log", "--to-label", "-w", str(root), "--limit", "2")
    assert shown.returncode == 0, shown.stderr
    assert [line.split()[:2] for line in shown.stdout.splitlines()] == [["4.0", "r2-undone"], ["3.0", "r6-handed-back"]]
    assert shown.stdout.splitlines()[0].endswith("<- undone")
    assert "4 more runs not shown" in shown.stderr


def test_a_choice_behind_another_option_is_said_so_not_as_a_negative_margin() -> None:
    from semif_agent.records.runs import RunRecord
    from semif_agent.records.to_label import score

    record = RunRecord(
        run_id="r1", request="remind me to call the plumber", skill=None, outcome="unclear", source="run"
    )
    assert score(record, -0.3).reasons == ["unclear", "low margin (chosen 30% behind another)"]
    assert score(record, 0.06).reasons == ["unclear", "low margin (6%)"]
