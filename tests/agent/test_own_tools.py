"""An agent's own tools (:class:`OwnTools`): tools, specs and schema tokens kept in step, one name check, claims; frozen AgentSettings."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, replace

import pytest
from pydantic import BaseModel

from semif_agent.agent import Agent, AgentConfigError, ToolNameCollisionError, tool
from semif_agent.agent._config import AgentSettings
from semif_agent.agent.own_tools import OwnTools
from semif_agent.llm import ScriptedProvider


@tool
def alpha(text: str) -> str:
    """First tool."""
    return text


@tool(defer_loading=True)
def beta(text: str) -> str:
    """A deferred tool."""
    return text


@tool
def final_result(text: str) -> str:
    """Takes the structured-output tool's name."""
    return text


def test_specs_and_schema_tokens_follow_the_tools_in_and_out():
    tools = OwnTools()
    assert tools.add_tools([alpha, beta]) == [beta]  # deferred ones are handed back, not shown
    assert [s.name for s in tools.specs] == ["alpha"] and tools.schema_tokens == alpha.schema_tokens
    before = tools.version
    tools.remove_tools(["alpha", "unknown"])
    assert (tools.specs, tools.schema_tokens, len(tools)) == ((), 0, 0) and tools.version > before


def test_one_name_check_covers_tools_claims_and_what_the_owner_reserves():
    tools = OwnTools(reserved=lambda: {"task": "the task meta-tool"})
    tools.add_tools([alpha])
    with pytest.raises(ToolNameCollisionError, match="already used by another tool"):
        tools.add_tools([alpha])
    with pytest.raises(ToolNameCollisionError, match="the task meta-tool"):
        tools.check(["task"])
    with pytest.raises(ToolNameCollisionError, match="already used by another tool"):
        tools.check(["x", "x"])
    tools.claim("final_result", "structured output in tool mode")
    with pytest.raises(ToolNameCollisionError, match="structured output"):
        tools.add_tools([final_result])
    tools.release("final_result")
    tools.add_tools([final_result])
    assert [t.name for t in tools] == ["alpha", "final_result"]


class Answer(BaseModel):
    text: str


def test_the_agent_claims_final_result_only_in_tool_mode():
    agent = Agent(llm=ScriptedProvider()).with_output_model(Answer)
    with pytest.raises(ToolNameCollisionError):
        agent.with_tools([final_result])
    agent.with_output_model(Answer, mode="prompted").with_tools([final_result])
    with pytest.raises(ToolNameCollisionError):
        agent.with_output_model(Answer)


def test_settings_are_frozen_checked_and_copied_with_replace():
    settings = AgentSettings(max_rounds=4)
    with pytest.raises(FrozenInstanceError):
        settings.max_rounds = 5  # type: ignore[misc]  # the point: it is frozen
    assert replace(settings, max_rounds=2).as_dict() == {**settings.as_dict(), "max_rounds": 2}
    for bad in ({"max_rounds": 0}, {"max_tokens": True}, {"tool_timeout": -1}, {"tool_result_max_tokens": 1.5}):
        with pytest.raises(AgentConfigError):
            AgentSettings(**bad)
    with pytest.raises(AgentConfigError):
        replace(settings, max_response_tokens=0)


def test_the_turn_config_is_rebuilt_only_when_the_options_or_the_tools_change():
    agent = Agent(llm=ScriptedProvider()).with_system_prompt("Be brief.")
    first = agent._turn_config()
    assert agent._turn_config() is first
    agent.with_scope({"include": ["/a"]})
    second = agent._turn_config()
    assert second is not first and second.scope is not None and second.system_prompt == "Be brief."
    agent.with_tools([alpha])
    third = agent._turn_config()
    assert third is not second and list(third.tools) == ["alpha"]
    agent.with_hooks(pre_tool_use=[lambda name, tool_input: None])
    assert len(agent._turn_config().pre_hooks) == 1 and third.pre_hooks == ()  # a turn keeps its snapshot
