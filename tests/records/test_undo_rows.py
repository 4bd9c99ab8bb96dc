"""An undo row folds into its run by its reason: a wrong route is a person's failure label, an unwanted result none."""

from __future__ import annotations

from pathlib import Path

from semif_agent.records import DecisionLog, label_row
from semif_agent.records.rows import OutcomeRow, UndoRow
from semif_agent.records.runs import fold_labels

from ._rows import decision


def logged(tmp_path: Path, *undos: UndoRow) -> DecisionLog:
    """A log of one run per undo (ids r1, r2, ...), each a success of todos.add, then the undos."""
    log = DecisionLog(tmp_path / "decisions.jsonl")
    for n in range(1, len(undos) + 1):
        log.append(decision(f"r{n}", 1))
        log.append(OutcomeRow(run_id=f"r{n}", skill="todos.add", request=f"request {n}", outcome="success").to_row())
    for undo in undos:
        log.append(undo.to_row())
    return log


def test_a_route_undo_is_a_persons_failure_and_a_result_undo_leaves_the_route_as_it_was(tmp_path: Path) -> None:
    log = logged(
        tmp_path,
        UndoRow(run_id="r1", by="ada", skill="todos.add", reason="route"),
        UndoRow(run_id="r2", by="ada", skill="todos.add", reason="result"),
        UndoRow(run_id="r3", by="ada", skill="todos.add"),  # written before undos asked why
    )
    runs = {run.run_id: run for run in log.runs()}
    told = [
        (run.undone, run.undo_reason, run.label_outcome, run.true_outcome, run.labelled_by)
        for run in (runs["r1"], runs["r2"], runs["r3"])
    ]
    assert told == [
        (True, "route", "failure", "failure", None),
        (True, "result", None, "success", None),
        (True, "route", "failure", "failure", None),
    ]
    folded = fold_labels(log.read())
    assert folded["r2"].to_dict() == {"undone": True, "undo_reason": "result"}
    assert folded["r1"].to_dict() == {"outcome": "failure", "undone": True, "undo_reason": "route"}


def test_a_label_after_a_result_undo_still_says_what_the_person_says(tmp_path: Path) -> None:
    log = logged(tmp_path, UndoRow(run_id="r1", by="ada", skill="todos.add", reason="result"))
    log.append(label_row("r1", by="bo", outcome="failure").to_row())
    [run] = log.runs()
    assert (run.undone, run.undo_reason, run.label_outcome, run.labelled_by) == (True, "result", "failure", "bo")
