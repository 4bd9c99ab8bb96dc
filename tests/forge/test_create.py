"""`semif run --create`: a request no leaf fits gets a new, checked skill, and runs on it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from semif_agent.cli import main
from semif_agent.llm import ScriptedProvider
from semif_agent.llm.testing import override_provider
from semif_agent.starter import create_workspace

from .test_generator import fenced

CONVERT = """
import re

from semif_agent.skills import ActionResult, DecisionRequest, Option, Prediction


def predict(ctx, request):
    decision = DecisionRequest(request.text, "Which conversion is asked for?",
                               [Option("miles_to_km", "Convert miles to kilometres."),
                                Option("km_to_miles", "Convert kilometres to miles."),
                                Option("none", "No distance conversion.")])
    result = ctx.engine.call(decision)
    return Prediction(text=result.selected, decisions=[(decision, result)])


def act(ctx, request, prediction):
    number = re.search(r"\\d+(?:\\.\\d+)?", request.text)
    if prediction.text == "none" or number is None:
        return ActionResult(action_log="units.convert_distance: no distance to convert.", new_state=request.text)
    value = float(number.group(0))
    factor = 1.609344 if prediction.text == "miles_to_km" else 1 / 1.609344
    return ActionResult(action_log=f"units.convert_distance: {value:g} -> {value * factor:.2f} ({prediction.text}).",
                        new_state=f"{value * factor:.2f}")
"""
PROPOSAL = json.dumps(
    {
        "name": "units.convert_distance",
        "description": "Convert a distance between miles and kilometres.",
        "examples": ["how many km is 3 miles"],
        "category": "units",
        "category_description": "Unit conversions",
    }
)


def test_run_create_writes_a_skill_for_an_unserved_request_and_runs_it(tmp_path: Path) -> None:
    root = create_workspace(tmp_path / "ws")
    provider = ScriptedProvider([PROPOSAL, fenced(CONVERT)])
    with override_provider(provider):
        result = CliRunner().invoke(
            main,
            [
                "run",
                "Convert 12 miles to kilometres",
                "-w",
                str(root),
                "--engine",
                "local",
                "--create",
                "--code-model",
                "openai/coder",
                "--json",
            ],
        )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["created"]["name"] == "units.convert_distance"
    assert data["skill"] == "units.convert_distance"
    assert data["action_log"].startswith("units.convert_distance: 12 -> ")
    assert (root / "data" / "skills" / "units" / "convert_distance.py").exists()
    rows = [json.loads(line) for line in (root / "data" / "decisions.jsonl").read_text().splitlines()]
    kinds = [r["kind"] for r in rows]
    assert kinds.index("create") < kinds.index("propose") < kinds.index("generate")
    assert rows[kinds.index("create")]["selected"] == "none"  # no existing category fits
    categories = json.loads((root / "data" / "categories.json").read_text())["categories"]
    assert {"name": "units", "description": "Unit conversions. Skills: units.convert_distance."} in categories
