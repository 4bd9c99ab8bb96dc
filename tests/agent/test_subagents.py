"""Subagents: task and as_tool, lazy children, no nesting, one run-wide pool, partial results, ChildTurn, flat events."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from semif_agent.agent import (
    Agent,
    Skill,
    SubagentDefinition,
    SubagentNestingError,
    ToolNameCollisionError,
    UsageLimits,
    tool,
)
from semif_agent.agent.subagents import Subagents, run_subagent
from semif_agent.llm import ModelRequest, ProviderError, ScriptedProvider, ScriptedReply, Usage

from ._skill_support import system_of, tool_names
from ._support import calls, collect, of_type


@tool(read_only=True)
def lookup(term: str) -> str:
    """Look a term up."""
    return f"{term} means something"


def by_system(routes: dict[str, list]):
    """A provider answering each agent (told apart by its system prompt's first word) from its own queue."""
    queues = {key: list(replies) for key, replies in routes.items()}

    def answer(request: ModelRequest):
        system = system_of(request)
        key = system.split()[0] if system else ""
        return queues[key].pop(0)

    return ScriptedProvider(fn=answer)


RESEARCHER = SubagentDefinition(
    name="researcher", description="Looks terms up.", system_prompt="Researcher: be exact.", tools=(lookup,)
)


def test_task_runs_a_lazily_built_child_and_forwards_its_events_flat():
    provider = by_system(
        {
            "Orchestrator:": [
                calls(("task", {"agent_name": "researcher", "task": "Define entropy."}, "t1")),
                "Entropy is disorder.",
            ],
            "Researcher:": [calls(("lookup", {"term": "entropy"})), "Entropy: a measure of disorder."],
        }
    )
    agent = Agent(llm=provider).with_system_prompt("Orchestrator: delegate.").with_subagents([RESEARCHER])
    assert agent._session.find(Subagents)._agents == {}  # built on first use
    events = collect(agent.stream("What is entropy?"))
    first = provider.requests[0]
    assert tool_names(first) == ["task"] and first.tools[0].input_schema["properties"]["agent_name"]["enum"] == [
        "researcher"
    ]
    assert "## Subagents" in system_of(first) and "- researcher: Looks terms up." in system_of(first)
    started = next(i for i, e in enumerate(events) if e.type == "tool_started" and e.name == "task")
    finished = next(i for i, e in enumerate(events) if e.type == "tool_finished" and e.name == "task")
    child = events[started + 1 : finished]
    assert [e.type for e in child][0] == "turn_started" and child[-1].type == "turn_finished"
    assert {e.parent_tool_call_id for e in child} == {"t1"} and child[-1].turn_id != events[0].turn_id
    assert any(e.type == "tool_finished" and e.name == "lookup" for e in child)
    assert events[finished].result == "Entropy: a measure of disorder." and not events[finished].is_error
    [child_turn] = events[-1].diagnostics.children
    assert (child_turn.tool_call_id, child_turn.name, child_turn.diagnostics.stopped_by) == ("t1", "researcher", "stop")
    assert len(child_turn.diagnostics.rounds) == 2
    assert events[-1].diagnostics.run_total_tokens > events[-1].diagnostics.total_tokens
    top_text = "".join(e.text for e in of_type(events, "text_delta") if e.parent_tool_call_id is None)
    assert top_text == "Entropy is disorder." and events[-1].text == top_text  # what chat() shows
    child_request = next(r for r in provider.requests if system_of(r).startswith("Researcher:"))
    assert [m.role for m in child_request.messages] == ["system", "user"]  # a clean context: the task only


def test_children_debit_the_run_pool_and_a_cut_child_returns_a_marked_partial_result():
    big = Usage(input_tokens=700, output_tokens=10)
    provider = by_system(
        {
            "Orchestrator:": [
                calls(("task", {"agent_name": "researcher", "task": "Dig."}), usage=big),
                "Partial is fine.",
            ],
            "Researcher:": [
                calls(("lookup", {"term": "a"}), usage=big),
                calls(("lookup", {"term": "b"}), usage=big),
                calls(("lookup", {"term": "c"}), usage=big),
                ScriptedReply(text="What I found so far.", usage=big),
            ],
        }
    )
    agent = (
        Agent(llm=provider)
        .with_system_prompt("Orchestrator:")
        .with_subagents([RESEARCHER])
        .with_usage_limits(UsageLimits(total_tokens_limit=1500))
    )
    events = collect(agent.stream("go"))
    child_limit = [e for e in of_type(events, "usage_limit_reached") if e.parent_tool_call_id]
    assert child_limit and child_limit[0].scope == "run"  # the orchestrator's budget cut the child
    task = next(e for e in of_type(events, "tool_finished") if e.name == "task")
    assert task.result.startswith("[partial result: subagent 'researcher' stopped early (stopped_by=usage_limit)")
    assert task.result.endswith("What I found so far.")
    final = events[-1].diagnostics
    assert final.children[0].diagnostics.stopped_by == "usage_limit" and final.stopped_by == "usage_limit"


def test_a_childs_own_narrower_limit_is_a_turn_scoped_cut():
    narrow = RESEARCHER.model_copy(update={"usage_limits": UsageLimits(tool_calls_limit=1)})
    provider = by_system(
        {
            "Orchestrator:": [calls(("task", {"agent_name": "researcher", "task": "Dig."})), "ok"],
            "Researcher:": [calls(("lookup", {"term": "a"}), ("lookup", {"term": "b"})), "Half done."],
        }
    )
    events = collect(Agent(llm=provider).with_system_prompt("Orchestrator:").with_subagents([narrow]).stream("go"))
    [limit] = of_type(events, "usage_limit_reached")
    assert limit.scope == "turn" and limit.parent_tool_call_id is not None
    assert next(e for e in of_type(events, "tool_finished") if e.name == "task").result.startswith("[partial result:")


def test_nesting_is_refused_at_registration_and_at_call_time():
    helper = Agent(llm=ScriptedProvider()).as_tool("helper", "Helps.")
    with pytest.raises(SubagentNestingError):
        Agent(llm=ScriptedProvider()).with_subagents([SubagentDefinition(name="x", description="X.", tools=(helper,))])
    with pytest.raises(SubagentNestingError):
        Agent(llm=ScriptedProvider()).with_subagents([RESEARCHER]).as_tool("boss", "Bosses.")
    with pytest.raises(SubagentNestingError):
        Agent(llm=ScriptedProvider()).with_tools([helper]).as_tool("boss", "Bosses.")
    with pytest.raises(ToolNameCollisionError):
        Agent(llm=ScriptedProvider()).with_subagents([RESEARCHER, RESEARCHER])

    inner = Agent(llm=ScriptedProvider(["inner"]))
    wrapped_later = Agent(llm=ScriptedProvider(["never"]))
    late_tool = wrapped_later.as_tool("late", "Late.")
    wrapped_later.with_subagents([RESEARCHER])  # after wrapping: caught when called

    @tool
    async def sneaky(text: str) -> str:
        """Starts a subagent from a plain tool."""
        return await run_subagent(inner, text, "inner")

    child = Agent(llm=ScriptedProvider([calls(("sneaky", {"text": "hi"})), "child done"])).with_tools([sneaky])
    provider = ScriptedProvider([calls(("late", {"task": "x"}), ("child", {"task": "y"})), "done"])
    events = collect(Agent(llm=provider).with_tools([late_tool, child.as_tool("child", "Child.")]).stream("go"))
    late = next(e for e in of_type(events, "tool_finished") if e.name == "late")
    assert late.is_error and "has subagents of its own" in late.result
    sneaky_result = next(e for e in of_type(events, "tool_finished") if e.name == "sneaky")
    assert sneaky_result.is_error and "subagent 'child' cannot start subagent 'inner'" in sneaky_result.result


def test_a_child_that_fails_is_an_error_result_and_still_in_the_diagnostics():
    provider = by_system(
        {
            "Orchestrator:": [calls(("task", {"agent_name": "researcher", "task": "Dig."})), "Could not."],
            "Researcher:": [calls(("lookup", {"term": "a"})), ProviderError("the model is down", provider="scripted")],
        }
    )
    events = collect(Agent(llm=provider).with_system_prompt("Orchestrator:").with_subagents([RESEARCHER]).stream("go"))
    task = next(e for e in of_type(events, "tool_finished") if e.name == "task")
    assert task.is_error and "subagent 'researcher' failed:" in task.result and "the model is down" in task.result
    [child] = events[-1].diagnostics.children
    assert child.diagnostics.stopped_by == "error" and len(child.diagnostics.rounds) == 1


class Verdict(BaseModel):
    ok: bool
    reason: str


def test_as_tool_with_an_output_model_retries_invalid_output():
    reviewer = Agent(llm=ScriptedProvider(["Looks fine to me.", '{"ok": true, "reason": "tests pass"}']))
    review = reviewer.as_tool("review", "Review a change.", output_model=Verdict, max_output_retries=1)
    provider = ScriptedProvider([calls(("review", {"task": "Review PR 7"})), "Approved."])
    events = collect(Agent(llm=provider).with_tools([review]).stream("go"))
    result = next(e for e in of_type(events, "tool_finished") if e.name == "review")
    assert Verdict.model_validate_json(result.result) == Verdict(ok=True, reason="tests pass")
    child_requests = reviewer.llm.requests
    assert "JSON Schema" in system_of(child_requests[0]) and "does not match" in child_requests[1].messages[-1].content
    assert reviewer.history == ()  # a tool call does not join the wrapped agent's conversation


def test_subagents_get_the_orchestrators_skills_by_name_with_their_own_activation():
    sheets = Skill(name="sheets", description="Spreadsheets.", instructions="Keep headers.", activation="on_demand")
    mail = Skill(name="mail", description="Send mail.", activation="on_demand")
    clerk = SubagentDefinition(
        name="clerk", description="Office work.", system_prompt="Clerk:", skills=("sheets", mail)
    )
    provider = by_system(
        {
            "Orchestrator:": [
                calls(("task", {"agent_name": "clerk", "task": "Fix the sheet."})),
                "done",
                calls(("task", {"agent_name": "clerk", "task": "Another."})),
                "done again",
            ],
            "Clerk:": [calls(("activate_skill", {"name": "sheets"})), "fixed", "nothing to activate"],
        }
    )
    agent = Agent(llm=provider).with_system_prompt("Orchestrator:").with_skill(sheets).with_subagents([clerk])
    collect(agent.stream("go"))
    clerk_first = next(r for r in provider.requests if system_of(r).startswith("Clerk:"))
    assert "- sheets: Spreadsheets." in system_of(clerk_first) and "- mail: Send mail." in system_of(clerk_first)
    child = agent._session.find(Subagents).agent("clerk")
    assert child.skills.is_active("sheets") and not agent.skills.is_active("sheets")
    assert child.skills.catalog is agent.skills.catalog  # one catalog, two runtimes
    collect(agent.stream("again"))
    clerk_again = [r for r in provider.requests if system_of(r).startswith("Clerk:")][-1]
    assert "Keep headers." not in system_of(clerk_again)  # a new task starts with nothing activated


def test_a_definition_with_a_model_gets_its_own_provider_and_output_model():
    from semif_agent.llm import override_provider

    child_provider = ScriptedProvider([calls(("final_result", {"ok": False, "reason": "flaky"}))])
    parent_provider = ScriptedProvider([calls(("task", {"agent_name": "judge", "task": "Judge it."})), "Judged."])
    judge = SubagentDefinition(name="judge", description="Judges.", model="openai/gpt-4o-mini", output_model=Verdict)
    agent = Agent(llm=parent_provider).with_subagents([judge])
    with override_provider(child_provider):  # what create_provider("openai/...") builds here
        events = collect(agent.stream("go"))
    task = next(e for e in of_type(events, "tool_finished") if e.name == "task")
    assert Verdict.model_validate_json(task.result) == Verdict(ok=False, reason="flaky")
    assert len(child_provider.requests) == 1 and len(parent_provider.requests) == 2


def test_child_events_reach_the_parent_stream_while_the_child_runs():
    import asyncio

    async def scenario() -> list[str]:
        gate = asyncio.Event()

        @tool
        async def wait_for_parent() -> str:
            """Waits until the orchestrator's consumer has seen this call start."""
            await asyncio.wait_for(gate.wait(), 5)
            return "released"

        waiter = SubagentDefinition(
            name="waiter", description="Waits.", system_prompt="Waiter:", tools=(wait_for_parent,)
        )
        provider = by_system(
            {
                "Orchestrator:": [calls(("task", {"agent_name": "waiter", "task": "Wait."})), "done"],
                "Waiter:": [calls(("wait_for_parent", {})), "waited"],
            }
        )
        agent = Agent(llm=provider).with_system_prompt("Orchestrator:").with_subagents([waiter])
        seen = []
        async for event in agent.astream("go"):
            seen.append(f"{event.type}:{getattr(event, 'name', '')}")
            if event.type == "tool_started" and event.name == "wait_for_parent":
                gate.set()  # only possible if the child's event arrived before its tool returned
        return seen

    seen = asyncio.run(scenario())
    assert (
        seen.index("tool_started:wait_for_parent")
        < seen.index("tool_finished:wait_for_parent")
        < seen.index("tool_finished:task")
    )
