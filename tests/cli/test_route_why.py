"""``semif route`` never shows a less probable option as chosen without saying why."""

from __future__ import annotations

from pathlib import Path

import pytest

from semif_agent.cli.route_cmd import route_json
from semif_agent.engine import local_available
from semif_agent.loop.runner import SkillRunner
from semif_agent.loop.settings import RunSettings
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace

pytestmark = pytest.mark.skipif(not local_available(), reason="the local engine is not installed")

UNSURE = "Jot down: ask the bakery about gluten-free bread"  # notes.add at about 40%, under none's rest
SURE = "Remind me to renew the passport"  # todos.add, the most probable at every decision


def test_a_chosen_option_less_probable_than_another_says_why(semif, tmp_path: Path) -> None:
    ws = create_workspace(tmp_path / "ws")
    runner = SkillRunner.from_settings(RunSettings.resolve(Workspace.load(ws), log=False))
    routed = {text: route_json(text, runner.decide(text)) for text in (UNSURE, SURE)}
    for text, found in routed.items():
        for decision in found["decisions"]:
            chosen = next(o["probability"] for o in decision["options"] if o["id"] == decision["selected"])
            above = [
                o["id"] for o in decision["options"] if o["id"] != decision["selected"] and o["probability"] > chosen
            ]
            assert bool(above) == bool(decision["why"]), (text, decision)
    unsure = routed[UNSURE]
    last = unsure["decisions"][-1]
    assert unsure["skill"] == last["selected"] == "notes.add"
    assert last["options"][0]["id"] == "none"  # the rest of the leaves, other branches' too, outweighs notes.add
    assert "notes.add is the likeliest skill" in last["why"] and "another branch" in last["why"]
    shown = semif("route", UNSURE, "-w", str(ws))
    assert shown.returncode == 0, shown.stderr
    assert "chosen: notes.add is the likeliest skill" in shown.stdout
