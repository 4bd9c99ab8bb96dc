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
