"""Environment skills (``env:<name>@...``) registered on an Agent: their scripts and hooks are still asked of the
host's environment router, in the agent's turns and in its subagents', never run as processes."""

from __future__ import annotations

import sys

import pytest

from semif_agent.agent import Agent, Skill, SubagentDefinition
from semif_agent.catalog import EnvironmentQuery, SkillCatalog
from semif_agent.llm import ScriptedProvider

from ._skill_support import write_skill
from ._support import calls, collect, of_type

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the sandbox is POSIX")

SCRIPT = """
    from pathlib import Path
    Path("script-ran").write_text("the script ran")
    print("from the script")
"""


class Market:
    """A host's environment: answers trades, records what it was asked."""

    def __init__(self) -> None:
        self.asked: list[EnvironmentQuery] = []

    def ask_env(self, query: EnvironmentQuery) -> str:
        self.asked.append(query)
        return f"{query.env_name} filled: {query.instruction}"


@pytest.fixture
def trade(tmp_path) -> Skill:
    """The market's ``trade`` skill, scanned as an environment's skill (``env:market@trade``)."""
    write_skill(
        tmp_path / "market-skills",
        "trade",
        "Buy or sell on the market.",
        extra="script: scripts/trade.py",
        files={"scripts/trade.py": SCRIPT},
    )
    catalog = SkillCatalog()
    assert catalog.scan_env(tmp_path / "market-skills", "market") == ["env:market@trade"]
    return Skill.from_descriptor(catalog.get("env:market@trade"))


TRADING = [
    calls(("activate_skill", {"name": "trade"})),
    calls(("run_skill_script", {"name": "trade", "args": ["buy", "10 ACME"]})),
    "Bought.",
]


def test_an_env_skill_run_by_the_model_is_asked_of_the_agents_environment(trade, tmp_path):
    market = Market()
    agent = Agent(llm=ScriptedProvider(TRADING)).with_skills(
        [trade], allow_scripts=True, workspace=tmp_path / "work", env_router=market
    )
    events = collect(agent.stream("Buy 10 ACME"))
    _, ran = of_type(events, "tool_finished")
    assert not ran.is_error and "market filled: buy 10 ACME" in ran.result
    assert [(q.skill_id, q.env_name, q.argv) for q in market.asked] == [
        ("env:market@trade", "market", ("buy", "10 ACME"))
    ]
    assert agent.skills.skill_id("trade") == "env:market@trade"
    assert not (tmp_path / "work" / "script-ran").exists()


def test_an_env_skill_shared_with_a_subagent_keeps_the_environment(trade, tmp_path):
    market = Market()
    # one model for both: the subagent inherits it, and its turn runs between the parent's two rounds
    provider = ScriptedProvider([calls(("task", {"agent_name": "trader", "task": "Buy 10 ACME"})), *TRADING, "Done."])
    agent = (
        Agent(llm=provider)
        .with_skills([trade], allow_scripts=True, workspace=tmp_path / "work", env_router=market)
        .with_subagents([SubagentDefinition(name="trader", description="Trades.", model=None, skills=("trade",))])
    )
    collect(agent.stream("Have the trader buy"))
    assert [(q.skill_id, q.argv) for q in market.asked] == [("env:market@trade", ("buy", "10 ACME"))]
    assert not (tmp_path / "work" / "script-ran").exists()


def test_a_skill_made_in_python_for_an_environment_is_asked_of_it_too(tmp_path):
    market = Market()
    quote = Skill(name="quote", description="Ask the market for a quote.", environment="market", activation="on_demand")
    provider = ScriptedProvider(
        [
            calls(("activate_skill", {"name": "quote"})),
            calls(("run_skill_script", {"name": "quote", "args": ["ACME"]})),
            "101.5",
        ]
    )
    agent = Agent(llm=provider).with_skills([quote], allow_scripts=True, env_router=market)
    _, ran = of_type(collect(agent.stream("Quote ACME")), "tool_finished")
    assert not ran.is_error and "market filled: ACME" in ran.result
    assert [(q.skill_id, q.env_name) for q in market.asked] == [("env:market@quote", "market")]


def test_an_env_skill_without_a_router_says_so_in_one_line(trade, tmp_path):
    agent = Agent(llm=ScriptedProvider(TRADING)).with_skills([trade], allow_scripts=True, workspace=tmp_path / "work")
    _, ran = of_type(collect(agent.stream("Buy 10 ACME")), "tool_finished")
    assert ran.is_error and "is an environment skill, answered by ask_env" in ran.result
    assert not (tmp_path / "work" / "script-ran").exists()
