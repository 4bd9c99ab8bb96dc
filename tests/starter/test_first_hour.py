"""A new user's first hour: everyday requests run end to end with the local engine, checked on the data they leave.

The requests are ``tests/fixtures/first_hour.jsonl`` (see ``_first_hour.py``);
``python bench/first_hour.py --show`` prints the same counts and what went wrong.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from semif_agent.engine import create_engine, local_available
from semif_agent.starter import TEMPLATE_DIR

from ._first_hour import FirstHour, load_requests, pinned_workspace

ROWS = load_requests()
ROUTING_SET = Path(__file__).resolve().parents[1] / "routing" / "starter_requests.jsonl"


def test_the_set_is_realistic_and_apart_from_the_routing_set():
    skills = {s["name"] for s in json.loads((TEMPLATE_DIR / "data" / "categories.json").read_text())["skills"]}
    assert len(ROWS) >= 40
    assert all(row["skill"] is None or row["skill"] in skills for row in ROWS)
    assert set(Counter(row["skill"] for row in ROWS)) == skills | {None}, "every skill, and requests no skill fits"
    tuned = {json.loads(line)["text"].lower() for line in ROUTING_SET.read_text().splitlines() if line.strip()}
    examples = {
        e.lower()
        for s in json.loads((TEMPLATE_DIR / "data" / "categories.json").read_text())["skills"]
        for e in s["examples"]
    }
    assert not {row["text"].lower() for row in ROWS} & (tuned | examples)
    for row in ROWS:
        assert row["expect"] and all(
            e["in"] in ("drafts", "calendar", "notes", "todos", "answer") for e in row["expect"]
        )
        for skill, _ in row.get("given", []):
            assert skill in skills


@pytest.fixture(scope="module")
def outcomes():
    if not local_available():
        pytest.skip("the local engine is not installed (pip install 'semif-agent[local]')")
    with pinned_workspace() as ws:
        first_hour = FirstHour(ws, create_engine("local", {}))
        return [first_hour.run(row) for row in ROWS]


@pytest.mark.slow  # the outcomes: 48 requests run end to end, each body in a confined process
def test_requests_routed_right_do_the_right_thing_to_the_data(outcomes):
    routed = [o for o in outcomes if o.routed_right]
    wrong = {o.row["text"]: o.problems for o in routed if not o.done_right}
    assert wrong == {}
    # Routing reads only the request's text: the route's own choice is right 41 times in 48 on every run, and the
    # act gate lets 38 of those act (python bench/first_hour.py, 5 runs: 41 and 38 each time); the others it hands
    # back as not sure, which changes nothing.
    assert sum(o.skill == o.row["skill"] for o in outcomes) >= 40
    assert len(routed) >= 36, [(o.row["text"], o.skill) for o in outcomes if not o.routed_right]


@pytest.mark.slow  # the outcomes: 48 requests run end to end, each body in a confined process
def test_no_route_the_gate_lets_through_writes_where_it_should_not(outcomes):
    """A run that acts on a wrong route and changes a file is the damage the gate exists to prevent."""
    damage = {
        o.row["text"]: o.skill
        for o in outcomes
        if o.skill != o.row["skill"] and not o.result.handed_back and not o.result.changes.empty
    }
    assert damage == {}


@pytest.mark.slow  # the outcomes: 48 requests run end to end, each body in a confined process
def test_no_wrong_result_is_judged_a_success(outcomes):
    false = {o.row["text"]: o.result.assessment.reason for o in outcomes if o.label == "success" and not o.done_right}
    assert false == {}
    # 46 of 48 with the ids and the workspace's path pinned (python bench/first_hour.py; 39 while an unsure judge
    # made a correct note or listing "unclear"). The margin is for other processors.
    assert sum(o.judged_right for o in outcomes) >= 43


@pytest.mark.slow  # the outcomes: 48 requests run end to end, each body in a confined process
def test_the_pinned_clock_dates_what_the_skills_write(outcomes):
    """The workspace's ``[config] now`` (a Monday) pins the clock: "next Tuesday" is eight days on."""
    [tuesday] = [o for o in outcomes if o.row["text"] == "Schedule a call with Grace next Tuesday at 10:30"]
    assert tuesday.done_right and tuesday.result.changes.created[0].startswith("data/calendar/20250318-")
