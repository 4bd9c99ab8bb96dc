"""Act only when sure: no request changes a file unless it asked for a change a skill serves (local engine)."""

from __future__ import annotations

import json

import pytest

from semif_agent.engine import create_engine, local_available
from semif_agent.starter import TEMPLATE_DIR

from ._act_when_sure import DEVELOPMENT, counts, load_rows, run_all
from ._first_hour import FirstHour, load_requests, make_workspace

ROWS = load_rows()
# Requests that still break the hard rule, and why: each fails here until the gate learns better (strict xfail).
KNOWN: dict[str, str] = {}
DEV_ROWS = load_rows(DEVELOPMENT)


@pytest.mark.parametrize(("rows", "size"), [(ROWS, 40), (DEV_ROWS, 60)], ids=["held-out", "development"])
def test_the_set_is_realistic_and_apart_from_what_the_gate_knows(rows, size):
    doc = json.loads((TEMPLATE_DIR / "data" / "categories.json").read_text())
    known = {e.lower() for s in doc["skills"] for e in s["examples"]} | {e.lower() for e in doc["none_examples"]}
    known |= {row["text"].lower() for row in load_requests()}
    known |= {row["text"].lower() for row in (DEV_ROWS if rows is ROWS else ROWS)}  # the two sets apart
    assert len(rows) >= size
    assert not {row["text"].lower() for row in rows} & known
    skills = {s["name"] for s in doc["skills"]}
    assert all(row["skill"] is None or row["skill"] in skills for row in rows)
    questions = [r for r in rows if r["text"].endswith("?")]
    assert len(questions) >= 10 and sum(r["skill"] is None for r in rows) >= 10
    assert all(not r["changes"] for r in questions)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    if not local_available():
        pytest.skip("the local engine is not installed (pip install 'semif-agent[local]')")
    first_hour = FirstHour(make_workspace(tmp_path_factory.mktemp("act") / "ws"), create_engine("local", {}))
    return run_all(first_hour, ROWS)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(r["text"], marks=pytest.mark.xfail(strict=True, reason=KNOWN[r["text"]]))
        if r["text"] in KNOWN
        else r["text"]
        for r in ROWS
    ],
)
def test_no_file_changes_unless_a_change_a_skill_serves_was_asked(runs, text):
    [run] = [r for r in runs if r.row["text"] == text]
    assert not run.breaks_the_rule, f"{run.result.skill} changed {run.changed} ({run.result.gate})"


def test_counts(runs):
    found = counts(runs)
    print(found)  # acted / right / handed back: python bench/act_when_sure.py prints the same
    assert found["broke_the_rule"] == list(KNOWN)


def test_the_lookups_the_issue_names_write_nothing(runs):
    by_text = {r.row["text"]: r for r in runs}
    for text in ("Am I free on Friday afternoon?", "Cancel the dentist appointment on Thursday"):
        assert by_text[text].changed == [], text


def test_acted_runs_are_mostly_right(runs):
    found = counts(runs)
    # measured: 0.93 of acted runs right, about two thirds of the requests acted on; the bounds leave room
    assert found["accuracy_of_acted"] >= 0.8
    assert found["share_acted"] >= 0.4
    # measured: 12 runs where a skill that writes acted, all 12 right (the runs the act threshold gates)
    assert found["acted_writing"] >= 8 and found["accuracy_of_acted_writing"] >= 0.9


@pytest.mark.slow
def test_on_the_development_set_acted_runs_are_right_95_percent(tmp_path):
    if not local_available():
        pytest.skip("the local engine is not installed (pip install 'semif-agent[local]')")
    first_hour = FirstHour(make_workspace(tmp_path / "ws"), create_engine("local", {}))
    found = counts(run_all(first_hour, DEV_ROWS))
    # measured: 49 of 71 acted, 0.96 of those right (python bench/act_when_sure.py --requests ...gate_dev.jsonl)
    assert found["broke_the_rule"] == []
    assert found["accuracy_of_acted"] >= 0.95 and found["share_acted"] >= 0.6
