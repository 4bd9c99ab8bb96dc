"""One answer per request: ``semif route``, ``semif run --dry-run``, ``semif run`` and ``find_skills``' best say the
same skill, whether it acts, and why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from semif_agent import Router
from semif_agent.engine import local_available

pytestmark = [
    pytest.mark.skipif(not local_available(), reason="the local engine is not installed"),
    pytest.mark.slow,  # three requests through four faces, each a new process: about 20 s
]

REQUESTS = [
    "Jot down that the garage code is 4512",  # acts
    "What will the weather be in Paris tomorrow?",  # handed back: out of scope
    "Drop the meeting with Carla from my calendar",  # handed back by the gate: calendar.add_event does not 'drop'
]


def test_find_route_dry_run_and_run_give_one_answer(semif, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    assert semif("init", str(ws)).returncode == 0
    router = Router(ws)
    for text in REQUESTS:
        route = json.loads(semif("route", text, "-w", str(ws), "--json").stdout)
        dry = json.loads(semif("run", text, "--dry-run", "-w", str(ws), "--json").stdout)
        run = json.loads(semif("run", text, "-w", str(ws), "--json").stdout)
        found = router.find(text).to_dict()
        ran = run["gate"] or {}
        reason = ran.get("reason") if ran.get("skill") == run["skill"] or run["skill"] is None else None
        answers = {
            "route": (route["skill"], route["handed_back"], route["reason"]),
            "dry run": (dry["skill"], dry["handed_back"], dry["reason"]),
            "run": (run["skill"], run["handed_back"], reason or run["route_reason"]),
            "find": (None if found["best"] == "none" else found["best"], found["handed_back"], found["reason"]),
        }
        assert len(set(answers.values())) == 1, (text, answers)
