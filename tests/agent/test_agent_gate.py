"""The Agent's skill tools pass the act gate ``semif run`` passes: an unsure write or a question to a skill that
writes comes back as a structured result and changes nothing; naming the skill acts, as ``--skill`` does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from semif_agent.agent import Agent
from semif_agent.engine import local_available
from semif_agent.llm import ScriptedProvider, ToolResultMessage
from semif_agent.loop import SkillRunner
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace

from ._support import calls

pytestmark = pytest.mark.skipif(not local_available(), reason="the local engine is not installed")

UNSURE = "Jot down: ask the bakery about gluten-free bread"  # notes.add at about 20% on a fresh starter
# The workspaces here act at 50% (the starter measures a lower threshold, at which the note acts): an unsure write.
SET_THRESHOLD = "\n[routing]\nact_threshold = 0.5\n"
FREE = "Am I free on Friday afternoon?"  # a question
SURE = "Remind me to renew the passport"  # todos.add, sure


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    root = create_workspace(tmp_path / "ws")
    with (root / "semif.toml").open("a", encoding="utf-8") as toml:
        toml.write(SET_THRESHOLD)
    return Workspace.load(root)


def written(ws: Workspace) -> list[str]:
    data = ws.root / "data"
    return sorted(str(p.relative_to(data)) for d in ("notes", "calendar", "todos") for p in (data / d).rglob("*"))


def tool_results(provider: ScriptedProvider) -> list[dict]:
    """What each tool call returned, in order (each request carries the results so far)."""
    messages = provider.requests[-1].messages
    return [json.loads(m.content) for m in messages if isinstance(m, ToolResultMessage) and m.content.startswith("{")]


def outcomes(ws: Workspace) -> list[dict]:
    rows = [json.loads(line) for line in ws.log_path.read_text(encoding="utf-8").splitlines()]
    return [r for r in rows if r["kind"] == "outcome" and r.get("source") != "agent"]


def test_an_unsure_write_is_handed_back_to_the_model_and_naming_the_skill_acts(workspace: Workspace) -> None:
    provider = ScriptedProvider(
        [
            calls(("activate_skill", {"name": "notes.add"})),
            calls(("skill__notes__add", {"request": UNSURE})),
            calls(("skill__notes__add", {"request": UNSURE, "skill": "notes.add"})),
            "Noted.",
        ]
    )
    agent = Agent(llm=provider).with_workspace(SkillRunner(workspace))
    before = written(workspace)
    "".join(agent.chat(UNSURE))
    held, acted = tool_results(provider)
    assert held["handed_back"] is True and held["skill"] == "notes.add" and "act threshold" in held["reason"]
    assert held["candidates"][0]["skill"] == "notes.add" and held["candidates"][0]["effects"] == "write"
    assert 0 < held["candidates"][0]["probability"] < 0.5
    assert "assessment" not in held  # nothing ran to be assessed
    assert acted["skill"] == "notes.add" and "handed_back" not in acted and acted["changes"]
    assert written(workspace) != before
    first, second = outcomes(workspace)
    assert first["outcome"] == "handed_back" and first["evidence"]["gate"]["rule"] == "unsure"
    assert second["outcome"] != "handed_back" and second["evidence"]["gate"]["rule"] == "caller"


def test_a_question_to_a_skill_that_writes_changes_nothing_and_a_sure_write_acts(workspace: Workspace) -> None:
    provider = ScriptedProvider(
        [
            calls(("activate_skill", {"name": "calendar.add_event"}), ("activate_skill", {"name": "todos.add"})),
            calls(("skill__calendar__add_event", {"request": FREE})),
            calls(("skill__todos__add", {"request": SURE})),
            "Done.",
        ]
    )
    agent = Agent(llm=provider).with_workspace(SkillRunner(workspace))
    before = written(workspace)
    "".join(agent.chat(FREE))
    question, todo = tool_results(provider)
    assert question["handed_back"] is True and question["skill"] == "calendar.add_event"
    assert "look something up" in question["reason"]
    assert todo["skill"] == "todos.add" and todo["changes"]
    assert written(workspace) == sorted([*before, "todos/todos.json"])  # the to-do, and no event
    gates = [o["evidence"]["gate"]["rule"] for o in outcomes(workspace)]
    assert gates == ["lookup-writes", "sure"]


def test_a_skill_tool_names_only_its_own_skill(workspace: Workspace) -> None:
    provider = ScriptedProvider(
        [
            calls(("activate_skill", {"name": "notes.add"})),
            calls(("skill__notes__add", {"request": UNSURE, "skill": "email.compose"})),
            "Sorry.",
        ]
    )
    agent = Agent(llm=provider).with_workspace(SkillRunner(workspace))
    before = written(workspace)
    "".join(agent.chat(UNSURE))
    [refused] = [m for m in provider.requests[-1].messages if isinstance(m, ToolResultMessage)][-1:]
    assert refused.is_error and "must be one of 'notes.add'" in refused.content
    assert written(workspace) == before and not outcomes(workspace)


def test_a_skill_the_route_does_not_weigh_is_handed_back_with_what_it_weighed(workspace: Workspace) -> None:
    runner = SkillRunner(workspace)
    before = written(workspace)
    result = runner.run(SURE, skill="email.compose", proposed=True)  # the route goes to todos.add
    assert result.handed_back and result.gate is not None and result.gate.rule == "unsure"
    assert "goes to todos.add" in result.gate.reason and result.gate.candidates[0].skill == "todos.add"
    assert written(workspace) == before and not list((workspace.root / "data" / "drafts").glob("*"))
    reads = runner.run(FREE, skill="calendar.list_events", proposed=True)  # a skill that reads runs
    assert not reads.handed_back and reads.gate is not None and reads.gate.rule == "reads"
