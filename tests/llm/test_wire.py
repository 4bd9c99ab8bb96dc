"""Both APIs through the official SDKs against the loopback server: the happy paths."""

from __future__ import annotations

import asyncio

import pytest
from support.wire_server import APIS, WireReply

from semif_agent.llm import (
    AssistantMessage,
    StopChunk,
    SystemMessage,
    TextChunk,
    ToolCall,
    ToolCallDelta,
    ToolResultMessage,
    UsageChunk,
    UserMessage,
)

ROUTE_TOOL = {
    "name": "route",
    "description": "Send the request to a skill.",
    "input_schema": {"type": "object", "properties": {"to": {"type": "string"}}, "required": ["to"]},
}


@pytest.mark.parametrize("api", APIS)
def test_plain_text(api, wire, provider_for):
    wire.queue(WireReply(text="Hello, Alice."))
    response = provider_for(api).invoke("Say hello to Alice")
    assert response.text == "Hello, Alice."
    assert response.stop_reason == "stop"
    assert (response.provider, response.model) == (api, "test-model")
    assert response.tool_calls == ()
    [request] = wire.posts()
    assert request.api == api and not request.stream


@pytest.mark.parametrize("api", APIS)
def test_streamed_text(api, wire, provider_for):
    wire.queue(WireReply(text="One two three four"))
    chunks = list(provider_for(api).stream("Count to four"))
    deltas = [c.text for c in chunks if isinstance(c, TextChunk)]
    assert len(deltas) > 1, "the answer should arrive in pieces"
    assert "".join(deltas) == "One two three four"
    assert isinstance(chunks[-1], StopChunk) and isinstance(chunks[-2], UsageChunk)
    assert chunks[-1].response.text == "One two three four"
    assert wire.posts()[0].stream


@pytest.mark.parametrize("api", APIS)
def test_async_stream(api, wire, provider_for):
    wire.queue(WireReply(text="async works"))
    provider = provider_for(api)

    async def collect():
        return [chunk async for chunk in provider.astream("hi")]

    chunks = asyncio.run(collect())
    assert chunks[-1].response.text == "async works"


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_tool_call(api, streamed, wire, provider_for):
    wire.queue(WireReply.tool_call("route", {"to": "email"}, text="Routing."))
    provider = provider_for(api)
    kwargs = {"tools": [ROUTE_TOOL], "tool_choice": "route"}
    if streamed:
        chunks = list(provider.stream("Email Bob", **kwargs))
        assert any(isinstance(c, ToolCallDelta) and c.name == "route" for c in chunks)
        response = chunks[-1].response
    else:
        response = provider.invoke("Email Bob", **kwargs)
    assert response.stop_reason == "tool_use"
    [call] = response.tool_calls
    assert call.name == "route" and call.arguments == {"to": "email"} and call.id
    body = wire.posts()[0].body
    if api == "anthropic":
        assert body["tool_choice"] == {"type": "tool", "name": "route"}
        assert body["tools"][0]["input_schema"] == ROUTE_TOOL["input_schema"]
    else:
        assert body["tool_choice"] == {"type": "function", "function": {"name": "route"}}
        assert body["tools"][0]["function"]["parameters"] == ROUTE_TOOL["input_schema"]


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(
    ("choice", "anthropic_wire", "openai_wire"),
    [
        ("auto", {"type": "auto"}, "auto"),
        ("any", {"type": "any"}, "required"),
        ("none", {"type": "none"}, "none"),
    ],
)
def test_tool_choice_modes(api, choice, anthropic_wire, openai_wire, wire, provider_for):
    wire.queue(WireReply(text="ok"))
    provider_for(api).invoke("hi", tools=[ROUTE_TOOL], tool_choice=choice)
    assert wire.posts()[0].body["tool_choice"] == (anthropic_wire if api == "anthropic" else openai_wire)


@pytest.mark.parametrize("api", APIS)
def test_conversation_with_tool_results_reaches_the_wire(api, wire, provider_for):
    wire.queue(WireReply(text="Sent."))
    call = ToolCall(id="call_1", name="route", arguments={"to": "email"})
    messages = [
        SystemMessage(content="You route requests."),
        UserMessage(content="Email Bob"),
        AssistantMessage(content="", tool_calls=(call,)),
        ToolResultMessage(tool_call_id="call_1", content="routed", is_error=False),
    ]
    provider_for(api).invoke(messages, tools=[ROUTE_TOOL], max_tokens=50, temperature=0.2, stop=["END"])
    body = wire.posts()[0].body
    if api == "anthropic":
        assert body["system"] == "You route requests."
        assert body["max_tokens"] == 50 and body["temperature"] == 0.2 and body["stop_sequences"] == ["END"]
        assert body["messages"][1] == {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "call_1", "name": "route", "input": {"to": "email"}}],
        }
        assert body["messages"][2]["content"][0]["type"] == "tool_result"
        assert body["messages"][2]["content"][0]["tool_use_id"] == "call_1"
    else:
        assert body["messages"][0] == {"role": "system", "content": "You route requests."}
        assert body["max_tokens"] == 50 and body["temperature"] == 0.2 and body["stop"] == ["END"]
        assert body["messages"][2]["tool_calls"][0]["function"] == {"name": "route", "arguments": '{"to": "email"}'}
        assert body["messages"][3] == {"role": "tool", "tool_call_id": "call_1", "content": "routed"}


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_usage_is_normalised_and_priced(api, streamed, wire, provider_for):
    # 100 uncached input tokens, 300 read from cache, 50 written to it (Anthropic only), 20 out.
    usage = {"input": 100, "output": 20, "cache_read": 300, "cache_write": 50 if api == "anthropic" else 0}
    wire.queue(WireReply(text="cached answer", usage=usage))
    pricing = {f"{api}/test-model": {"input": 2.0, "output": 10.0, "cache_read": 0.5, "cache_write": 4.0}}
    provider = provider_for(api, pricing=pricing)
    response = list(provider.stream("hi"))[-1].response if streamed else provider.invoke("hi")
    got = response.usage
    assert (got.input_tokens, got.output_tokens, got.cache_read_tokens) == (100, 20, 300)
    assert got.cache_write_tokens == usage["cache_write"]
    assert got.total_tokens == 100 + 20 + 300 + usage["cache_write"]
    expected = (100 * 2.0 + 20 * 10.0 + 300 * 0.5 + usage["cache_write"] * 4.0) / 1_000_000
    assert got.cost_usd == pytest.approx(expected)


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_openai_logprobs(streamed, wire, provider_for):
    logprobs = ({"token": "B", "logprob": -0.2, "top": {"B": -0.2, "A": -1.9, "C": -4.0}},)
    wire.queue(WireReply(text="B", logprobs=logprobs))
    provider = provider_for("openai")
    if streamed:
        response = list(provider.stream("pick", max_tokens=1, top_logprobs=3))[-1].response
    else:
        response = provider.invoke("pick", max_tokens=1, top_logprobs=3)
    body = wire.posts()[0].body
    assert body["logprobs"] is True and body["top_logprobs"] == 3
    [position] = response.logprobs
    assert (position.token, position.logprob) == ("B", -0.2)
    assert {t.token: t.logprob for t in position.top} == {"B": -0.2, "A": -1.9, "C": -4.0}


def test_anthropic_has_no_logprobs(wire, provider_for):
    wire.queue(WireReply(text="B"))
    response = provider_for("anthropic").invoke("pick", top_logprobs=5)
    assert response.logprobs is None
    assert "logprobs" not in wire.posts()[0].body


@pytest.mark.parametrize("api", APIS)
def test_consecutive_sync_calls(api, wire, provider_for):
    wire.queue(WireReply(text="one"), WireReply(text="two"))
    provider = provider_for(api)
    assert [provider.invoke("a").text, provider.invoke("b").text] == ["one", "two"]


@pytest.mark.parametrize("api", APIS)
def test_clients_close_with_their_event_loop(api, wire, provider_for):
    provider = provider_for(api, timeout=7.0)  # an endpoint and key of its own: a client of its own
    wire.queue(WireReply(text="one"), WireReply(text="two"))
    before = wire.open_connections
    assert asyncio.run(provider.ainvoke("a")).text == "one"
    assert wire.wait_for_connections(at_most=before), "the client's connection outlived its event loop"
    assert asyncio.run(provider.ainvoke("b")).text == "two"  # a new loop gets a new client
    assert wire.wait_for_connections(at_most=before)


@pytest.mark.parametrize("api", APIS)
def test_providers_with_the_same_endpoint_share_a_client(api, wire, provider_for):
    wire.queue(*[WireReply(text=str(n)) for n in range(6)])
    before, made = wire.open_connections, wire.connections_made

    async def many():
        return [(await provider_for(api, timeout=9.0).ainvoke("x")).text for _ in range(6)]

    assert asyncio.run(many()) == ["0", "1", "2", "3", "4", "5"]
    assert wire.connections_made - made == 1  # six providers, one client, one kept-alive connection
    assert wire.wait_for_connections(at_most=before)
