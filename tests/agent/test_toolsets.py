"""Toolsets: a new kind of tool source is one class; the agent asks each toolset every round, caching what did not change."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

import pytest
from pydantic import BaseModel

from semif_agent.agent import (
    Agent,
    AgentConfigError,
    AgentToolset,
    FunctionToolset,
    Skill,
    SQLiteRetriever,
    ToolNameCollisionError,
    ToolsetView,
    rag_toolset,
    tool,
)
from semif_agent.agent.toolkits.retrieval import RAG_INSTRUCTIONS
from semif_agent.llm import ScriptedProvider

from ._skill_support import system_of, tool_names
from ._support import calls, collect, of_type


class Counter(AgentToolset):
    """A toolset the session has never heard of: a ``count`` tool whose description and note say the count so far."""

    name = "counter"

    def __init__(self) -> None:
        self.count = 0
        self.views = 0
        self.prepared: list[str] = []
        self.finished: list[tuple[object, str]] = []

    @property
    def version(self) -> object:
        return self.count

    def claims(self) -> Mapping[str, str]:
        return {"count": "the counter's tool"}

    def view(self, prepared: object) -> ToolsetView:
        self.views += 1
        counter = self

        @tool(name="count")
        def count() -> str:
            """Count one more."""
            counter.count += 1
            return str(counter.count)

        return ToolsetView(f"## Counter\nCounted {self.count} so far.", {"count": count})

    async def prepare(self, message: str, *, run_id: str = "", model: str | None = None) -> object:
        self.prepared.append(message)
        return message.upper()

    def finish(self, prepared: object, *, stopped_by: str, text: str) -> None:
        self.finished.append((prepared, stopped_by))

    def to_state(self) -> dict[str, object]:
        return {"counter": self.count}

    def load_state(self, state: Mapping[str, object]) -> None:
        saved = state.get("counter")
        self.count = saved if isinstance(saved, int) else 0


def test_a_new_kind_of_tools_is_one_toolset_class_the_agent_asks_every_round():
    counter = Counter()
    provider = ScriptedProvider([calls(("count", {})), calls(("count", {})), "Counted twice."])
    agent = Agent(llm=provider, toolsets=[counter])
    events = collect(agent.stream("count twice"))
    assert [e.result for e in of_type(events, "tool_finished")] == ["1", "2"]
    # each round saw the count as it stood: the toolset's view is asked again when its version changes
    assert [system_of(r).rsplit("\n", 1)[-1] for r in provider.requests] == [
        "Counted 0 so far.",
        "Counted 1 so far.",
        "Counted 2 so far.",
    ]
    assert all(tool_names(r) == ["count"] for r in provider.requests)
    assert counter.prepared == ["count twice"] and counter.finished == [("COUNT TWICE", "stop")]
    assert agent.toolsets[-1] is counter


def test_an_unchanged_round_does_not_ask_the_toolset_again():
    counter = Counter()
    notes = FunctionToolset([_tool("jot")], name="notes", instructions="Keep notes short.")
    provider = ScriptedProvider([calls(("jot", {})), calls(("jot", {})), "done"])
    agent = Agent(llm=provider).add_toolset(counter).add_toolset(notes)
    collect(agent.stream("jot twice"))
    assert len(provider.requests) == 3 and counter.views == 1  # three rounds, nothing changed: one view
    system = system_of(provider.requests[0])
    assert system.index("Counted 0 so far.") < system.index("Keep notes short.")  # in the order they were added
    assert tool_names(provider.requests[0]) == ["count", "jot"]


def test_an_agents_repr_counts_the_tools_of_its_toolsets_too():
    notes = FunctionToolset([_tool("jot"), _tool("erase")], name="notes")
    agent = Agent(llm=ScriptedProvider()).with_tools([_tool("count")]).add_toolset(notes)
    assert repr(agent).endswith(" tools=3>")
    assert [t.name for t in agent.tools] == ["count", "jot", "erase"]


def test_a_toolsets_tool_names_are_checked_against_every_other_tool():
    with pytest.raises(ToolNameCollisionError, match="tool name 'jot' is already used by another tool"):
        Agent(llm=ScriptedProvider()).with_tools([_tool("jot")]).add_toolset(FunctionToolset([_tool("jot")]))
    agent = Agent(llm=ScriptedProvider()).add_toolset(FunctionToolset([_tool("jot")], name="notes"))
    with pytest.raises(ToolNameCollisionError, match="'jot' is already used by a tool of toolset 'notes'"):
        agent.with_tools([_tool("jot")])
    with pytest.raises(ToolNameCollisionError, match="'count' is already used by the counter's tool"):
        Agent(llm=ScriptedProvider(), toolsets=[Counter()]).with_skills([_skill("tally", "count")])
    skilled = Agent(llm=ScriptedProvider()).with_skills([_skill("tally", "tally_up")])
    with pytest.raises(ToolNameCollisionError, match="'activate_skill' is already used by a skill meta-tool"):
        skilled.add_toolset(FunctionToolset([_tool("activate_skill")]))
    with pytest.raises(ToolNameCollisionError, match="toolset 'twice' has two tools named 'jot'"):
        FunctionToolset([_tool("jot"), _tool("jot")], name="twice")
    with pytest.raises(AgentConfigError, match="a toolset is an AgentToolset, got list"):
        Agent(llm=ScriptedProvider(), toolsets=[[_tool("jot")]])  # type: ignore[list-item]  # a list where a toolset goes, on purpose


def test_a_toolset_showing_a_tool_it_did_not_claim_cannot_hide_another_tool():
    class Sly(AgentToolset):
        name = "sly"

        def view(self, prepared: object) -> ToolsetView:
            return ToolsetView(tools={"jot": _tool("jot")})

    agent = Agent(llm=ScriptedProvider([calls(("jot", {})), "done"]), toolsets=[Sly()]).with_tools([_tool("jot")])
    with pytest.raises(
        ToolNameCollisionError, match="tool name 'jot' of toolset 'sly' is already used by another tool"
    ):
        list(agent.chat("jot"))


def test_a_toolset_showing_final_result_cannot_shadow_the_output_tool():
    # The output tool is only a spec in tool mode; a toolset that shows a final_result of its own (without
    # claiming it) would put two final_result tools before the model.
    class Sly(AgentToolset):
        name = "sly"

        def view(self, prepared: object) -> ToolsetView:
            return ToolsetView(tools={"final_result": _tool("final_result")})

    class Verdict(BaseModel):
        verdict: str

    provider = ScriptedProvider([calls(("final_result", {"verdict": "yes"}))])
    agent = Agent(llm=provider, toolsets=[Sly()]).with_output_model(Verdict)
    with pytest.raises(
        ToolNameCollisionError,
        match="tool name 'final_result' of toolset 'sly' is already used by structured output in tool mode",
    ):
        list(agent.chat("judge"))
    assert provider.requests == []  # the model was never shown the two tools


def test_a_toolsets_state_is_saved_and_restored_with_the_sessions():
    first = Agent(llm=ScriptedProvider([calls(("count", {})), "one"]), toolsets=[Counter()])
    collect(first.stream("count"))
    state = first.save_state()
    assert state["version"] == 1 and state["counter"] == 1
    assert {"skills", "discovered", "deferred_loaded"} <= set(state)  # the skills' and deferred tools' keys as before
    counter = Counter()
    Agent(llm=ScriptedProvider(), toolsets=[counter]).restore_state(state)
    assert counter.count == 1


def test_a_toolset_that_needs_the_async_loop_is_refused_by_the_sync_methods():
    class Remote(AgentToolset):
        name = "remote tools"
        async_only = True

    agent = Agent(llm=ScriptedProvider(["x"]), toolsets=[Remote()])
    with pytest.raises(AgentConfigError, match="Agent.stream and Agent.chat cannot be used with remote tools"):
        list(agent.chat("hi"))


def test_the_retrieval_toolset_shows_search_docs_and_its_instructions_every_round():
    retriever = SQLiteRetriever()
    retriever.add({"tides": "High tide at the harbour is at 06:12 today."})
    provider = ScriptedProvider([calls(("search_docs", {"query": "high tide harbour"})), "06:12"])
    agent = Agent(llm=provider, toolsets=[rag_toolset(retriever)])
    events = asyncio.run(_drain(agent, "when is high tide?"))
    assert "06:12" in of_type(events, "tool_finished")[0].result
    assert tool_names(provider.requests[0]) == ["search_docs"] and RAG_INSTRUCTIONS in system_of(provider.requests[0])
    assert [t.name for t in agent.tools] == ["search_docs"]


async def _drain(agent: Agent, message: str) -> list[object]:
    return [event async for event in agent.astream(message)]


def _tool(name: str):
    def fn() -> str:
        return name

    fn.__doc__ = f"The {name} tool."
    return tool(name=name)(fn)


def _skill(name: str, tool_name: str) -> Skill:
    return Skill(name=name, description=f"The {name} skill.", instructions="Use it.", tools=[_tool(tool_name)])
