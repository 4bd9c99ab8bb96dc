"""A decision row's options and probabilities are typed as what they hold, and read so from the log."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from semif_agent.engine import DecisionRequest, DecisionResult, Option
from semif_agent.records import DecisionLog, DecisionRow

from ._rows import decisions


def test_a_decisions_options_and_probabilities_are_typed_as_what_they_hold(tmp_path: Path) -> None:
    log = DecisionLog(tmp_path / "d.jsonl")
    asked = DecisionRequest("Add a note", "Which skill?", [Option("notes.add", "Add a note"), Option("none")])
    answered = DecisionResult(selected="notes.add", scores={"notes.add": 0.9, "none": 0.2}, engine="lexical")
    kept = {"notes.add": 1, "none": 0.25}  # an int stays an int: the row is written back as it was
    log.append(
        DecisionRow.of(
            run_id="r1",
            step=1,
            kind="route",
            skill=None,
            request=asked,
            result=dataclasses.replace(answered, probabilities=kept),
        ).to_row()
    )
    [row] = decisions(log.read())
    assert row.options == [{"id": "notes.add", "description": "Add a note"}, {"id": "none", "description": ""}]
    assert row.probabilities == kept and isinstance(row.probabilities["notes.add"], int)
    assert row.scores == {"notes.add": 0.9, "none": 0.2}
    odd = {"run_id": "r2", "kind": "route", "step": 1, "question": "Which?", "selected": "a",
           "options": [{"id": 3}], "probabilities": {"a": "high"}}  # fmt: skip
    (tmp_path / "odd.jsonl").write_text(json.dumps(odd) + "\n")
    [read] = decisions(DecisionLog(tmp_path / "odd.jsonl").read())
    assert (read.options, read.probabilities) == ([], None)  # not what a decision holds: read as none
