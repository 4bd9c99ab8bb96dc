"""The measured act threshold is kept while the workspace's labels stand: a label taken back measures it again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from semif_agent._sync import run_sync
from semif_agent.engine import create_engine, local_available
from semif_agent.loop.act_threshold import THRESHOLD_FILE, measured_act_threshold
from semif_agent.loop.runner import SkillRunner
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace

pytestmark = [
    pytest.mark.slow,  # the threshold measured three times on the starter, each routing its examples: about 7 s
    pytest.mark.skipif(not local_available(), reason="the local engine is not installed"),
]


def test_a_label_taken_back_is_measured_without(tmp_path: Path) -> None:
    root = create_workspace(tmp_path / "ws")
    runner = SkillRunner(Workspace.load(root), engine=create_engine("local"))
    kept = root / "data" / THRESHOLD_FILE
    run_id = runner.run("Write to Tom asking if he can join the call on Friday").run_id
    unlabelled = run_sync(measured_act_threshold(runner))
    runner.log.add_label(run_id, by="tester", skill="email.compose")
    run_sync(measured_act_threshold(runner))
    labelled_key = json.loads(kept.read_text())["key"]

    runner.log.take_back_labels(run_id, by="tester")
    again = run_sync(measured_act_threshold(runner))
    assert json.loads(kept.read_text())["key"] != labelled_key, "measured again, not kept from when it was labelled"
    assert again == unlabelled


def test_clients_picks_do_not_move_the_threshold(tmp_path: Path) -> None:
    """A client that runs skills the route did not rank first (each run labelled as its pick) leaves the threshold
    where people's labels put it: before, each pick counted as a labelled request, and a few picks of a skill far
    from where the route went raised the threshold until ordinary writes no longer acted."""
    from semif_agent.records.rows import LabelRow

    root = create_workspace(tmp_path / "ws")
    runner = SkillRunner(Workspace.load(root), engine=create_engine("local"))
    before = run_sync(measured_act_threshold(runner))
    picks = {
        "Order a pizza for tonight": "calendar.add_event",
        "Give Carla a heads-up that the mockups are due Friday": "calendar.add_event",
        "Schedule a call with Grace next Tuesday at 10:30": "email.compose",
        "Note that the wifi password is on the fridge": "email.compose",
    }
    for request, skill in picks.items():
        run_id = runner.run(request, skill=skill).run_id
        assert run_id is not None
        runner.log.append(LabelRow(run_id=run_id, by="mcp", skill=skill, has_skill=True, source="implicit").to_row())
    after = run_sync(measured_act_threshold(runner))
    assert after.threshold == before.threshold
