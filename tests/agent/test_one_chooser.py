"""One chooser: the Agent's discovery and `semif run` pick the same skill for the same request, and the Agent's choices are rows."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from semif_agent._sync import run_sync
from semif_agent.agent import Agent
from semif_agent.llm import ScriptedProvider
from semif_agent.loop import SkillRunner
from semif_agent.records import DecisionLog, DecisionRow, OutcomeRow
from semif_agent.starter import create_workspace
from semif_agent.workspace import Workspace

from ._support import calls

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "skills-corpus"
REQUESTS = [
    "debug a failing test",
    "Email Alice that the quarterly report is ready",
    "write an implementation plan for the new login page",
    "fix the failing CI checks on my pull request",
    "capture these meeting notes into our Notion wiki",
    "add buy milk to my to-do list",
    "review this code before I merge it",
]


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> SkillRunner:
    root = create_workspace(tmp_path_factory.mktemp("one-chooser") / "ws")
    for skill_md in CORPUS.glob("*/*/SKILL.md"):
        shutil.copytree(skill_md.parent, root / "skills" / skill_md.parent.name)
    return SkillRunner(Workspace.load(root))


def test_the_agent_is_offered_first_what_semif_run_routes_to(runner: SkillRunner) -> None:
    agent = Agent(llm=ScriptedProvider([])).with_workspace(runner)
    discovery = agent.skills.discovery
    assert len(agent.skills) >= 24 + 10  # every SKILL.md skill and every code skill with a body
    for text in REQUESTS:
        route = run_sync(runner.strategy.aroute(text))
        [(first, score)] = discovery._chooser(discovery._state()).rank(text, 1)
        if route.skill is not None:
            assert first == route.skill.name, text
        else:
            assert score <= discovery._chooser(discovery._state()).threshold, text
    assert run_sync(runner.strategy.aroute("debug a failing test")).skill.name == "systematic-debugging"


def test_every_choice_of_a_turn_is_a_row_joined_to_its_outcome(runner: SkillRunner, tmp_path: Path) -> None:
    log = DecisionLog(tmp_path / "decisions.jsonl")
    provider = ScriptedProvider([calls(("activate_skill", {"name": "systematic-debugging"})), "I will bisect it."])
    agent = (
        Agent(llm=provider).with_workspace(runner).with_skill_discovery(log=log, prompt_budget=600)
    )  # not every skill fits: a shortlist is offered
    events = list(agent.stream("debug a failing test"))
    assert events[-1].type == "turn_finished"
    rows = list(log.read(with_outcomes=True))
    kinds = [r.row.kind for r in rows]
    assert kinds == ["shortlist", "activate"]
    shortlist, activation = (r.row for r in rows)
    assert isinstance(shortlist, DecisionRow) and isinstance(activation, DecisionRow)
    assert shortlist.selected == "systematic-debugging" and shortlist.engine == runner.strategy.scorer.engine.name
    assert shortlist.options[-1]["id"] == "none" and len(shortlist.options) <= 16
    assert activation.selected == "systematic-debugging" and activation.engine == "agent"
    assert activation.model == provider.model_id and activation.state == "debug a failing test"
    assert {r.row.run_id for r in rows} == {shortlist.run_id} and all(r.outcome == "unclear" for r in rows)
    system = "\n".join(m.content for m in provider.requests[0].messages if m.role == "system")
    assert "Likely skills for this request:\n- systematic-debugging" in system


def test_a_turn_that_activates_nothing_is_a_none_row(runner: SkillRunner, tmp_path: Path) -> None:
    log = DecisionLog(tmp_path / "decisions.jsonl")
    agent = Agent(llm=ScriptedProvider(["Paris."])).with_workspace(runner).with_skill_discovery(log=log)
    list(agent.stream("what is the capital of France?"))
    rows = list(log.read())
    declined = [r for r in rows if isinstance(r, DecisionRow) and r.kind == "activate"]
    assert [r.selected for r in declined] == ["none"]
    assert isinstance(rows[-1], OutcomeRow) and rows[-1].reason == "agent turn ended: stop"
    assert json.dumps([row.to_dict() for row in rows])  # every row is plain JSON


def test_ranking_a_part_of_a_tree_keeps_the_trees_order_of_merit(runner: SkillRunner) -> None:
    from semif_agent.agent.agent_skills.chooser import Chooser
    from semif_agent.agent.agent_skills.workspace import workspace_skills

    skills = workspace_skills(runner)
    engine = runner.strategy.scorer.engine
    whole = Chooser.for_skills(skills, engine, tree=runner.tree)
    part = Chooser.for_skills(skills[::3], engine, tree=runner.tree)
    assert part.tree is runner.tree
    kept = {s.name for s in skills[::3]}
    for text in REQUESTS:
        expected = [(n, round(v, 6)) for n, v in whole.rank(text, len(skills)) if n in kept][:5]
        assert [(n, round(v, 6)) for n, v in part.rank(text, 5)] == expected
