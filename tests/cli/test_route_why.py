"""``semif route`` never shows a less probable option as chosen without saying why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from semif_agent.engine import local_available

pytestmark = pytest.mark.skipif(not local_available(), reason="the local engine is not installed")

UNSURE = "Jot down: ask the bakery about gluten-free bread"  # notes.add at about 40%, under none's rest
SURE = "Remind me to renew the passport"  # todos.add, the most probable at every decision


def test_a_chosen_option_less_probable_than_another_says_why(semif, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    assert semif("init", str(ws)).returncode == 0
    for text in (UNSURE, SURE):
        found = semif("route", text, "-w", str(ws), "--json")
        assert found.returncode == 0, found.stderr
        for decision in json.loads(found.stdout)["decisions"]:
            chosen = next(o["probability"] for o in decision["options"] if o["id"] == decision["selected"])
            above = [
                o["id"] for o in decision["options"] if o["id"] != decision["selected"] and o["probability"] > chosen
            ]
            assert bool(above) == bool(decision["why"]), (text, decision)
    unsure = json.loads(semif("route", UNSURE, "-w", str(ws), "--json").stdout)
    last = unsure["decisions"][-1]
    assert unsure["skill"] == last["selected"] == "notes.add"
    assert last["options"][0]["id"] == "none"  # the rest of the leaves, other branches' too, outweighs notes.add
    assert "notes.add is the likeliest skill" in last["why"] and "another branch" in last["why"]
    shown = semif("route", UNSURE, "-w", str(ws))
    assert "chosen: notes.add is the likeliest skill" in shown.stdout
