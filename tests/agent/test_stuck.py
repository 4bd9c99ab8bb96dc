"""Stuck detection: identical calls with identical results get one nudge, then a wrap-up."""

from __future__ import annotations

import itertools

from semif_agent.agent import Agent, tool
from semif_agent.agent._stuck import REPEATS
from semif_agent.llm import ScriptedProvider, UserMessage

from ._support import calls, collect

counter = itertools.count()


@tool
def status() -> str:
    """The same answer every time."""
    return "pending"


@tool
def poll() -> str:
    """A new answer every time."""
    return f"tick {next(counter)}"


def nudges(provider: ScriptedProvider) -> list[str]:
    return [
        m.content
        for m in provider.requests[-1].messages
        if isinstance(m, UserMessage) and "same arguments" in m.content
    ]


def test_repeating_a_call_with_the_same_result_is_nudged_once_then_wrapped_up():
    provider = ScriptedProvider([calls(("status", {})) for _ in range(REPEATS + 1)] + ["It is still pending."])
    events = collect(Agent(llm=provider, max_rounds=20).with_tools([status]).stream("is it done?"))
    final = events[-1]
    assert final.diagnostics.stopped_by == "stuck" and final.text == "It is still pending."
    assert len(provider.requests) == REPEATS + 2
    assert len(nudges(provider)) == 1
    nudge_at = provider.requests[REPEATS].messages[-1]
    assert "called status with the same arguments 3 rounds in a row" in nudge_at.content
    last = provider.requests[-1]
    assert last.tool_choice == "none" and "repeated identical tool calls" in last.messages[-1].content


def test_a_call_whose_result_changes_is_not_stuck():
    provider = ScriptedProvider([calls(("poll", {})) for _ in range(REPEATS + 3)] + ["Done polling."])
    events = collect(Agent(llm=provider, max_rounds=20).with_tools([poll]).stream("poll it"))
    assert events[-1].diagnostics.stopped_by == "stop" and nudges(provider) == []


def test_moving_on_after_the_nudge_re_arms_it():
    script = (
        [calls(("status", {})) for _ in range(REPEATS)]
        + [calls(("poll", {}))]
        + [calls(("status", {})) for _ in range(REPEATS)]
        + ["ok"]
    )
    provider = ScriptedProvider(script)
    events = collect(Agent(llm=provider, max_rounds=20).with_tools([status, poll]).stream("go"))
    assert events[-1].diagnostics.stopped_by == "stop"
    assert len(nudges(provider)) == 2
