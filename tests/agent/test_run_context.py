"""One run context per tool call: pool, scope, the call and the subagent, published together and gone after."""

from __future__ import annotations

from semif_agent.agent import Agent, RetrievalScope, SubagentDefinition, tool
from semif_agent.agent._run_context import OUTSIDE, current_run
from semif_agent.llm import ModelRequest, ScriptedProvider

from ._skill_support import system_of
from ._support import calls, collect


def test_a_tool_call_sees_one_context_with_its_pool_scope_and_call():
    seen = []

    @tool(read_only=True)
    def where() -> str:
        """Report where it runs."""
        seen.append(current_run())
        return "ok"

    scope = RetrievalScope(include=("/a",))
    provider = ScriptedProvider([calls(("where", {}, "first"), ("where", {}, "second")), "done"])
    collect(Agent(llm=provider).with_tools([where]).with_scope(scope).stream("go"))
    assert sorted(c.call.tool_call_id for c in seen) == ["first", "second"]
    assert all(c.scope == scope and c.pool is not None and c.subagent is None for c in seen)
    assert seen[0].pool is seen[1].pool  # one run, one pool
    assert current_run() is OUTSIDE


def test_a_call_inside_a_subagent_knows_which_subagent_it_belongs_to():
    seen = []

    @tool
    def where() -> str:
        """Report where it runs."""
        seen.append(current_run())
        return "ok"

    replies = {
        "Parent.": [calls(("task", {"agent_name": "helper", "task": "look"})), "done"],
        "Child.": [calls(("where", {})), "child done"],
    }

    def answer(request: ModelRequest):
        return replies[system_of(request).split()[0]].pop(0)

    helper = SubagentDefinition(name="helper", description="Helps.", system_prompt="Child.", tools=(where,))
    events = collect(
        Agent(llm=ScriptedProvider(fn=answer)).with_system_prompt("Parent.").with_subagents([helper]).stream("go")
    )
    assert events[-1].diagnostics.stopped_by == "stop"
    [inside] = seen
    assert inside.subagent == "helper" and inside.call.name == "where"
    assert inside.pool is not None and inside.pool.parent is not None  # the child's pool debits the run's
