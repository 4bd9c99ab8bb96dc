"""Deferred tools: hidden until search_tools finds them, then loaded for the rest of the session."""

from __future__ import annotations

import pytest

from semif_agent.agent import Agent, AgentTool, ToolNameCollisionError, tool
from semif_agent.llm import ScriptedProvider

from ._skill_support import system_of, tool_names
from ._support import calls, collect, of_type

ran: list[str] = []


@tool
def search_web(query: str) -> str:
    """Search the web."""
    return "results"


@tool(defer_loading=True)
def export_ledger(year: int) -> str:
    """Export the general ledger of a year as a CSV spreadsheet."""
    ran.append(f"ledger {year}")
    return "ledger.csv"


@tool(defer_loading=True)
def resize_image(path: str, width: int) -> str:
    """Resize a photo or picture to a new width in pixels."""
    return "resized"


@pytest.fixture(autouse=True)
def _fresh() -> None:
    ran.clear()


def agent_with(provider) -> Agent:
    return (
        Agent(llm=provider).with_tools([search_web, export_ledger, resize_image]).with_skill_discovery(engine="lexical")
    )


def test_deferred_tools_are_hidden_until_searched_then_stay_loaded():
    provider = ScriptedProvider(
        [
            calls(("export_ledger", {"year": 2024})),  # not loaded yet: an unknown tool
            calls(("search_tools", {"query": "export the ledger as csv"})),
            calls(("export_ledger", {"year": 2024})),
            "Exported.",
            "Still here.",
        ]
    )
    agent = agent_with(provider)
    events = collect(agent.stream("Export the 2024 ledger"))
    first, _, third, _ = provider.requests
    assert tool_names(first) == ["search_web", "search_tools"]
    assert "2 more tools are available but not loaded" in system_of(first)
    unknown, found, exported = of_type(events, "tool_finished")
    assert unknown.is_error and "unknown tool 'export_ledger'" in unknown.result
    assert (
        found.result.startswith("Loaded these tools") and "- export_ledger: Export the general ledger" in found.result
    )
    assert "resize_image" not in found.result
    assert tool_names(third) == ["search_web", "search_tools", "export_ledger"]
    assert "1 more tools are available" in system_of(third)
    assert not exported.is_error and ran == ["ledger 2024"]
    collect(agent.stream("again"))
    assert "export_ledger" in tool_names(provider.requests[-1])  # the next turn too
    state = agent.save_state()
    assert state["deferred_loaded"] == ["export_ledger"]
    agent.clear_history()  # a new session unloads them
    provider.push("fresh")
    collect(agent.stream("new"))
    assert "export_ledger" not in tool_names(provider.requests[-1])
    agent.restore_state(state)
    provider.push("restored")
    collect(agent.stream("restored"))
    assert "export_ledger" in tool_names(provider.requests[-1])


def test_a_search_that_matches_nothing_loads_nothing():
    provider = ScriptedProvider([calls(("search_tools", {"query": "zzz qqq"})), "none"])
    agent = agent_with(provider)
    [result] = of_type(collect(agent.stream("x")), "tool_finished")
    assert result.result == "No deferred tool matches; try other words."
    assert tool_names(provider.requests[-1]) == ["search_web", "search_tools"]


def test_deferred_names_are_checked_like_any_tool():
    with pytest.raises(ToolNameCollisionError):
        Agent(llm=ScriptedProvider()).with_tools([export_ledger]).with_tools([tool(name="export_ledger")(lambda: "")])
    with pytest.raises(ToolNameCollisionError, match="search_tools"):
        Agent(llm=ScriptedProvider()).with_tools([tool(name="search_tools")(lambda query: ""), export_ledger])
    plain = Agent(llm=ScriptedProvider(["ok"])).with_tools([search_web])
    assert (
        isinstance(plain.tools[0], AgentTool) and not plain._session.active
    )  # nothing deferred: the session adds nothing


def test_deferred_tools_may_come_in_several_batches_and_search_tools_stays_one_name():
    agent = Agent(llm=ScriptedProvider()).with_tools([export_ledger]).with_tools([resize_image])
    assert sorted(agent._deferred.tools) == ["export_ledger", "resize_image"]

    @tool
    def search_tools(query: str) -> str:
        """A tool taking the meta-tool's name."""
        return query

    with pytest.raises(ToolNameCollisionError, match="search_tools"):
        agent.with_tools([search_tools])
    with pytest.raises(ToolNameCollisionError, match="search_tools"):
        Agent(llm=ScriptedProvider()).with_tools([search_tools]).with_tools([export_ledger])
