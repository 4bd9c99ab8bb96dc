"""The quality page's figures from labelled runs, and charts that escape what they draw."""

from __future__ import annotations

from pathlib import Path

import pytest

from semif_agent.records import DecisionLog
from semif_agent.records.rows import LabelRow
from semif_agent.records.runs import label_row
from semif_agent.ui import charts
from semif_agent.ui.index import LogIndex
from semif_agent.ui.quality import quality

from .test_index import decision, outcome


def test_figures_from_labelled_runs(tmp_path: Path) -> None:
    log = DecisionLog(tmp_path / "decisions.jsonl")
    for run_id, p, skill, label in (
        ("right", 0.9, "email.compose", {"skill": "email.compose"}),
        ("wrong", 0.8, "email.compose", {"skill": "notes.add"}),
        ("worked", 0.3, "todos.add", {"outcome": "success"}),
        ("unlabelled", 0.5, "todos.add", None),
        ("only-failed", 0.6, "todos.add", {"outcome": "failure"}),  # says nothing of the route
    ):
        log.extend([decision(run_id, f"request {run_id}", p=p), outcome(run_id, f"request {run_id}", skill, "success")])
        if label:
            log.add_label(run_id, by="ann", **label)
    index = LogIndex(log.path)
    index.refresh()
    figures = quality(index.records())

    assert (figures.labelled, figures.accuracy) == (3, pytest.approx(2 / 3))
    assert figures.confusions == [("email.compose", "notes.add", 1)]
    filled = {round(low, 1): (n, accuracy) for low, _, n, _, accuracy in figures.bins if n}
    assert filled == {0.2: (1, 1.0), 0.7: (1, 0.0), 0.8: (1, 1.0)}
    assert figures.calibration_error == pytest.approx((0.7 + 0.8 + 0.1) / 3, abs=1e-4)
    assert [(n, right) for _, n, right in figures.periods] == [(3, 2)]  # all on one day
    assert dict(figures.outcomes)["todos.add"] == {"success": 2, "failure": 1, "unclear": 0, "none": 0}
    assert quality(index.records(), engine="local").labelled == 0


def test_a_clients_pick_or_report_is_not_taken_for_the_truth(tmp_path: Path) -> None:
    log = DecisionLog(tmp_path / "decisions.jsonl")
    for run_id in ("picked", "reported", "person"):
        log.extend(
            [
                decision(run_id, f"request {run_id}", p=0.9),
                outcome(run_id, f"request {run_id}", "email.compose", "success"),
            ]
        )
    log.append(LabelRow(run_id="picked", by="bot", skill="notes.add", has_skill=True, source="implicit").to_row())
    log.append(label_row("reported", by="bot", skill="notes.add", outcome="failure", source="client").to_row())
    log.add_label("person", by="ann", skill="notes.add")
    index = LogIndex(log.path)
    index.refresh()
    figures = quality(index.records())
    assert (figures.labelled, figures.accuracy) == (1, 0.0)  # the person's label alone
    assert figures.confusions == [("email.compose", "notes.add", 1)]


def test_charts_escape_what_they_draw() -> None:
    drawn = str(charts.bar_chart([("<script>x</script>", 2)], "a <title>"))
    assert "<script>" not in drawn and "&lt;script&gt;x&lt;/script&gt;" in drawn and "a &lt;title&gt;" in drawn
