"""End to end: ``astream`` through the official SDKs against the loopback wire server, with a tool round trip."""

from __future__ import annotations

import asyncio
import json

import pytest
from support.wire_server import APIS, WireReply

from semif_agent.agent import Agent, UsageLimits, tool

from ._support import of_type, types


@tool(read_only=True)
def weather(city: str) -> str:
    """Today's weather in a city.

    Args:
        city: The city's name.
    """
    return f"Sunny in {city}, 24C"


@pytest.mark.parametrize("api", APIS)
def test_astream_runs_a_tool_round_trip_over_the_wire(api, wire, provider_for):
    wire.queue(
        WireReply.tool_call("weather", {"city": "Lisbon"}, text="Let me check.", usage={"input": 50, "output": 12}),
        WireReply(text="It is sunny in Lisbon, 24C.", usage={"input": 80, "output": 9}),
    )
    agent = Agent(llm=provider_for(api)).with_system_prompt("Be brief.").with_tools([weather])

    async def turn():
        return [event async for event in agent.astream("What's the weather in Lisbon?")]

    events = asyncio.run(turn())
    assert types(events)[:3] == ["turn_started", "round_started", "text_delta"]
    [started] = of_type(events, "tool_started")
    [finished] = of_type(events, "tool_finished")
    assert started.tool_call_id == finished.tool_call_id and started.tool_input == {"city": "Lisbon"}
    assert finished.result == "Sunny in Lisbon, 24C"
    final = events[-1]
    assert final.text == "It is sunny in Lisbon, 24C." and final.diagnostics.stopped_by == "stop"
    assert [r.total_tokens for r in final.diagnostics.rounds] == [62, 89]
    assert not any(r.estimated for r in final.diagnostics.rounds)

    first, second = (p.body for p in wire.posts())
    assert first["stream"] is True
    if api == "anthropic":
        assert first["system"] == "Be brief." and first["tool_choice"] == {"type": "auto"}
        assert first["tools"][0]["input_schema"]["properties"]["city"]["description"] == "The city's name."
        call = second["messages"][1]["content"][-1]
        result = second["messages"][2]["content"][0]
        assert call["type"] == "tool_use" and call["input"] == {"city": "Lisbon"}
        assert result == {
            "type": "tool_result",
            "tool_use_id": call["id"],
            "content": "Sunny in Lisbon, 24C",
            "is_error": False,
        }
    else:
        assert first["messages"][0] == {"role": "system", "content": "Be brief."}
        assert first["tools"][0]["function"]["name"] == "weather"
        call = second["messages"][2]["tool_calls"][0]
        assert json.loads(call["function"]["arguments"]) == {"city": "Lisbon"}
        assert second["messages"][3] == {"role": "tool", "tool_call_id": call["id"], "content": "Sunny in Lisbon, 24C"}


@pytest.mark.parametrize("api", APIS)
def test_a_wrap_up_round_reaches_the_wire_as_tool_choice_none(api, wire, provider_for):
    wire.queue(
        WireReply.tool_call("weather", {"city": "Oslo"}, usage={"input": 500, "output": 10}),
        WireReply(text="Cold, probably."),
    )
    agent = Agent(llm=provider_for(api)).with_tools([weather]).with_usage_limits(UsageLimits(total_tokens_limit=100))
    events = list(agent.stream("Weather in Oslo?"))
    assert events[-1].diagnostics.stopped_by == "usage_limit"
    last = wire.posts()[-1].body
    assert last["tool_choice"] == ({"type": "none"} if api == "anthropic" else "none")
    assert "Final round" in json.dumps(last["messages"][-1])


def test_a_server_error_ends_the_stream_with_a_turn_finished_that_says_so(wire, provider_for):
    wire.queue(WireReply.unauthorized())
    events = list(Agent(llm=provider_for("openai")).stream("hi"))
    final = events[-1]
    assert final.type == "turn_finished" and final.diagnostics.stopped_by == "error"
    assert (final.diagnostics.error.kind, final.diagnostics.error.status) == ("AuthenticationError", 401)
