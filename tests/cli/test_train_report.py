"""How `semif train` reads: each count of training rows with its noun in the right number ("3 labels", "1 example").
The report printed is a real training report and switch decision, built without the embedded model."""

from __future__ import annotations

import pytest

from semif_agent.cli.train_cmd import ROW_NOUNS, _print_report
from semif_agent.routing.switching import Flip, decide
from semif_agent.routing.training import SOURCES, TrainingReport


def printed(counts: dict[str, int], classes: int, fixed: int, capsys: pytest.CaptureFixture[str]) -> list[str]:
    report = TrainingReport(counts, classes, held_out=0, folds=5, seconds={"embedding": 0.5, "fitting": 0.2})
    flips = [Flip(f"request {i}", "a", "b", "a", "label") for i in range(fixed)]
    report.decision = decide(
        "the untrained examples strategy", [False] * fixed + [True], [True] * (fixed + 1), flips, None
    )
    _print_report(report.to_dict(), None)
    return capsys.readouterr().out.splitlines()


def test_counts_of_many_take_the_plural(capsys: pytest.CaptureFixture[str]) -> None:
    counts = {"label": 3, "examples": 12, "dataset": 4, "success": 2, "failure": 2, "implicit": 2, "reported": 2}
    lines = printed({**counts, "none": 5}, 11, 2, capsys)
    assert lines[0] == (
        "learned 11 skills from 4 dataset requests, 12 examples, 2 failures, 2 implicit labels, 3 labels, "
        "5 none, 2 reported outcomes, 2 successes"
    )
    assert (
        lines[2]
        == "replayed 3 requests with a known route: the untrained examples strategy gets 1 right, the new router 3"
    )
    assert "switched from the untrained examples strategy: 2 requests now right, 0 now wrong, of 3 replayed" in lines


def test_counts_of_one_take_the_singular(capsys: pytest.CaptureFixture[str]) -> None:
    counts = {"label": 1, "examples": 1, "dataset": 1, "success": 1, "failure": 1, "implicit": 1, "reported": 1}
    lines = printed({**counts, "none": 1}, 1, 0, capsys)
    assert lines[0] == (
        "learned 1 skill from 1 dataset request, 1 example, 1 failure, 1 implicit label, 1 label, 1 none, "
        "1 reported outcome, 1 success"
    )
    assert lines[2].startswith("replayed 1 request with a known route")


def test_every_training_source_has_its_noun() -> None:
    assert set(ROW_NOUNS) == {*SOURCES, "none"}
