"""Usage: per-round accounting, limits with one wrap-up round, tool calls cut before they run, the run pool."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from semif_agent.agent import Agent, RoundUsage, UsageLimits, UsagePool, tool
from semif_agent.llm import ScriptedProvider, ScriptedReply, ToolResultMessage, Usage

from ._support import calls, collect, of_type, types

ran: list[int] = []


@tool
def step(n: int) -> str:
    """One step."""
    ran.append(n)
    return f"step {n} done"


@pytest.fixture(autouse=True)
def _fresh() -> None:
    ran.clear()


def test_round_usage_comes_from_the_provider_with_cache_counts_and_cost():
    usage = Usage(input_tokens=100, output_tokens=20, cache_write_tokens=30, cache_read_tokens=50)
    provider = ScriptedProvider(
        [calls(("step", {"n": 1}), usage=usage), ScriptedReply(text="ok", usage=usage)],
        pricing={"scripted/scripted": {"input": 1.0, "output": 2.0}},
    )
    events = collect(Agent(llm=provider).with_tools([step]).stream("go"))
    first = of_type(events, "round_finished")[0].usage
    assert (first.prompt_tokens, first.completion_tokens, first.cache_creation_tokens, first.cache_read_tokens) == (
        100,
        20,
        30,
        50,
    )
    assert first.total_tokens == 200 and first.tool_calls == 1 and not first.estimated
    assert first.cost_usd == pytest.approx((100 + 30 + 50) * 1.0 / 1e6 + 20 * 2.0 / 1e6)
    assert first.tool_schema_tokens > 0 and first.tool_result_tokens == 3  # "step 1 done": 11 chars
    diagnostics = events[-1].diagnostics
    assert diagnostics.total_tokens == 400 and diagnostics.total_tool_calls == 1
    assert diagnostics.total_cost_usd == pytest.approx(2 * first.cost_usd)


def test_without_reported_usage_tokens_are_estimated():
    provider = ScriptedProvider([calls(("step", {"n": 1}), text="x" * 40), "y" * 8])
    events = collect(Agent(llm=provider).with_tools([step]).stream("z" * 400))
    first, second = (e.usage for e in of_type(events, "round_finished"))
    assert first.estimated and first.completion_tokens == 10 + 2  # 40 chars of text + '{"n": 1}'
    assert first.prompt_tokens >= 100 + first.tool_schema_tokens
    assert second.prompt_tokens > first.prompt_tokens


def test_limits_are_checked():
    with pytest.raises(ValidationError):
        UsageLimits(total_tokens_limit=0)
    with pytest.raises(ValidationError):
        UsageLimits(cost_limit=-1)
    assert UsageLimits(tool_calls_limit=0).tool_calls_limit == 0


def test_a_token_breach_emits_the_event_grants_one_wrap_up_round_and_ends_without_raising():
    big = Usage(input_tokens=600, output_tokens=10)
    provider = ScriptedProvider(
        [
            calls(("step", {"n": 1}), usage=big),
            calls(("step", {"n": 2}), usage=big),
            ScriptedReply(text="Here is what I have.", usage=big),
        ]
    )
    agent = Agent(llm=provider).with_tools([step]).with_usage_limits(UsageLimits(total_tokens_limit=1000))
    events = collect(agent.stream("go"))
    kinds = types(events)
    at = kinds.index("usage_limit_reached")
    assert kinds[at - 1] == "round_finished" and kinds[at + 1] == "round_started"
    [breach] = of_type(events, "usage_limit_reached")
    assert (breach.kind, breach.used, breach.limit, breach.scope) == ("total_tokens", 1220, 1000, "run")
    assert ran == [1, 2]
    wrap_up = provider.requests[-1]
    assert wrap_up.tool_choice == "none" and "Final round: the usage limit is reached" in wrap_up.messages[-1].content
    final = events[-1]
    assert final.diagnostics.stopped_by == "usage_limit" and final.text == "Here is what I have."
    assert len(final.diagnostics.rounds) == 3


def test_a_batch_past_the_tool_call_limit_is_cut_before_it_runs_and_the_model_is_told():
    provider = ScriptedProvider([calls(("step", {"n": 1}), ("step", {"n": 2}), ("step", {"n": 3})), "Two of three."])
    agent = Agent(llm=provider).with_tools([step]).with_usage_limits(UsageLimits(tool_calls_limit=2))
    events = collect(agent.stream("go"))
    assert ran == [1, 2]
    returned = [m for m in provider.requests[1].messages if isinstance(m, ToolResultMessage)]
    assert returned[2].is_error and "not run: this run's tool call limit is reached" in returned[2].content
    [breach] = of_type(events, "usage_limit_reached")
    assert (breach.kind, breach.used, breach.limit) == ("tool_calls", 3, 2)
    assert provider.requests[1].tool_choice == "none"
    assert events[-1].diagnostics.stopped_by == "usage_limit"
    assert events[-1].diagnostics.total_tool_calls == 2
    assert [f.ran for f in of_type(events, "tool_finished")] == [False, True, True]  # the cut call is reported first


def test_a_zero_tool_call_limit_runs_no_tool():
    provider = ScriptedProvider([calls(("step", {"n": 1})), "Fine."])
    events = collect(Agent(llm=provider).with_tools([step]).with_usage_limits({"tool_calls_limit": 0}).stream("go"))
    assert ran == [] and events[-1].diagnostics.stopped_by == "usage_limit"


def test_a_cost_breach_reads_usd():
    costly = Usage(input_tokens=1000, output_tokens=0)
    provider = ScriptedProvider(
        [calls(("step", {"n": 1}), usage=costly), ScriptedReply(text="ok", usage=costly)],
        pricing={"scripted/scripted": {"input": 10.0, "output": 10.0}},
    )
    agent = Agent(llm=provider).with_tools([step]).with_usage_limits(UsageLimits(cost_limit=0.005))
    events = collect(agent.stream("go"))
    [breach] = of_type(events, "usage_limit_reached")
    assert breach.kind == "cost" and breach.used == pytest.approx(0.01) and breach.limit == 0.005


def test_a_final_answer_that_crosses_a_limit_just_ends():
    provider = ScriptedProvider([ScriptedReply(text="ok", usage=Usage(input_tokens=5000))])
    events = collect(Agent(llm=provider).with_usage_limits(UsageLimits(total_tokens_limit=10)).stream("go"))
    assert "usage_limit_reached" not in types(events) and events[-1].diagnostics.stopped_by == "stop"


def test_child_pools_debit_the_run_and_the_narrowest_limit_speaks_first():
    run = UsagePool(UsageLimits(total_tokens_limit=100, tool_calls_limit=5))
    child = run.child(UsageLimits(tool_calls_limit=2))
    child.debit(tokens=60, tool_calls=2)
    assert (run.tokens, run.tool_calls) == (60, 2)
    assert child.tool_calls_left() == 0 and run.tool_calls_left() == 3
    assert child.breach() is None
    child.refuse(1)
    assert child.breach() == ("tool_calls", 3, 2, "turn")
    sibling = run.child()
    sibling.debit(tokens=50)
    assert sibling.breach() == ("total_tokens", 110, 100, "run")
    assert UsagePool().breach() is None and UsagePool().tool_calls_left() is None


def test_a_turn_inside_a_tool_call_takes_a_child_of_the_run_pool():
    inner_agent = Agent(llm=ScriptedProvider([ScriptedReply(text="inner", usage=Usage(input_tokens=70))]))
    seen = {}

    @tool
    async def delegate() -> str:
        """Runs another agent's turn inside this call."""
        events = [e async for e in inner_agent.astream("sub task")]
        seen["inner"] = events[-1].diagnostics
        return events[-1].text

    outer = ScriptedProvider(
        [
            calls(("delegate", {}), usage=Usage(input_tokens=40)),
            ScriptedReply(text="outer", usage=Usage(input_tokens=10)),
        ]
    )
    agent = Agent(llm=outer).with_tools([delegate]).with_usage_limits(UsageLimits(total_tokens_limit=100))
    events = collect(agent.stream("go"))
    # the child's 70 tokens debited the run pool: 40 + 70 > 100, so the outer turn wraps up
    [breach] = of_type(events, "usage_limit_reached")
    assert (breach.kind, breach.used, breach.scope) == ("total_tokens", 110, "run")
    assert seen["inner"].total_tokens == 70 and events[-1].diagnostics.stopped_by == "usage_limit"


def test_round_usage_total_counts_every_token_once():
    usage = RoundUsage(
        round=0,
        prompt_tokens=10,
        completion_tokens=5,
        cache_creation_tokens=2,
        cache_read_tokens=3,
        tool_schema_tokens=7,
        tool_result_tokens=1,
    )
    assert usage.total_tokens == 20
