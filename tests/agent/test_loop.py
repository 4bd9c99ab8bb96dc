"""The loop: rounds, events, tool errors the model sees, timeouts, result caps, cuts, provider failures."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from semif_agent.agent import (
    Agent,
    AgentTool,
    ToolNameCollisionError,
    TurnFinished,
    event_from_dict,
    event_to_dict,
    tool,
)
from semif_agent.agent._execution import cap_result
from semif_agent.llm import (
    BaseProvider,
    MissingCredentialsError,
    RateLimitError,
    Response,
    ScriptedProvider,
    ScriptedReply,
    StopChunk,
    StreamInterruptedError,
    ToolCall,
    ToolResultMessage,
)

from ._support import calls, collect, of_type, types


@tool
def add(a: int, b: int) -> str:
    """Add two numbers."""
    return str(a + b)


@tool
def boom() -> str:
    """Always fails."""
    raise ValueError("the disk is on fire")


def results(provider: ScriptedProvider, request: int = -1) -> list[ToolResultMessage]:
    return [m for m in provider.requests[request].messages if isinstance(m, ToolResultMessage)]


def test_a_tool_round_trip_streams_ordered_typed_events():
    provider = ScriptedProvider([calls(("add", {"a": 1, "b": 2}), text="Let me add."), "It is 3."])
    agent = Agent(llm=provider).with_system_prompt("Be brief.").with_tools([add])
    events = collect(agent.stream("What is 1 + 2?"))
    assert types(events) == [
        "turn_started",
        "round_started",
        "text_delta",
        "text_delta",
        "tool_started",
        "tool_finished",
        "round_finished",
        "round_started",
        "text_delta",
        "round_finished",
        "turn_finished",
    ]
    assert len({e.turn_id for e in events}) == 1 and all(e.parent_tool_call_id is None for e in events)
    started, finished = of_type(events, "tool_started")[0], of_type(events, "tool_finished")[0]
    assert started.tool_call_id == finished.tool_call_id == "call_add_0"
    assert (started.name, started.tool_input, finished.result, finished.is_error) == (
        "add",
        {"a": 1, "b": 2},
        "3",
        False,
    )
    final = events[-1]
    assert final.text == "It is 3."  # the final answer, not every round's text
    assert final.diagnostics.stopped_by == "stop" and len(final.diagnostics.rounds) == 2
    assert agent.last_turn == final.diagnostics
    first = provider.requests[0]
    assert first.system == "Be brief." and first.tool_choice == "auto" and first.max_tokens == 1024
    assert [t.name for t in first.tools] == ["add"]
    assert results(provider) == [ToolResultMessage(tool_call_id="call_add_0", content="3")]
    assert [e.timestamp for e in events] == sorted(e.timestamp for e in events)


def test_chat_is_the_text_projection_and_achat_the_async_one():
    provider = ScriptedProvider([calls(("add", {"a": 1, "b": 2}), text="Adding. "), "Three."])
    agent = Agent(llm=provider).with_tools([add])
    assert "".join(agent.chat("1+2?")) == "Adding. Three."
    provider.push("Again.")
    assert collect(agent.achat("more")) == ["Again."]


def test_events_serialise_with_one_function_and_read_back():
    provider = ScriptedProvider([calls(("add", {"a": 1, "b": 2})), "3"])
    events = collect(Agent(llm=provider).with_tools([add]).stream("1+2"))
    for event in events:
        data = event_to_dict(event)
        assert list(data)[0] == "type" and isinstance(data["timestamp"], str)
        assert event_from_dict(data) == event
    finished = event_to_dict(events[-1])
    assert finished["diagnostics"]["total_tool_calls"] == 1
    assert finished["diagnostics"]["rounds"][0]["total_tokens"] > 0


def test_unknown_tools_invalid_input_and_exceptions_are_results_the_model_sees():
    provider = ScriptedProvider([calls(("nope", {}), ("add", {"a": "x", "b": 1}), ("boom", {})), "Sorry."])
    events = collect(Agent(llm=provider).with_tools([add, boom]).stream("go"))
    first = results(provider)
    assert [r.is_error for r in first] == [True, True, True]
    assert "unknown tool 'nope'" in first[0].content and "add, boom" in first[0].content
    assert "invalid input for add: a: Input should be a valid integer" in first[1].content
    assert first[2].content == "Error: boom failed: ValueError: the disk is on fire"
    assert [(f.name, f.ran) for f in of_type(events, "tool_finished")] == [
        ("nope", False),
        ("add", False),
        ("boom", True),
    ]
    assert [s.name for s in of_type(events, "tool_started")] == ["boom"]  # only calls that run start
    assert events[-1].diagnostics.stopped_by == "stop"


class RawProvider(BaseProvider):
    """Answers with whole Responses, as they are (the scripted provider re-encodes tool arguments)."""

    provider_name = "raw"

    def __init__(self, *responses: Response) -> None:
        super().__init__("raw")
        self.responses = list(responses)

    async def _astream(self, request):
        response = self.responses.pop(0)
        yield StopChunk(stop_reason=response.stop_reason, response=response)


def test_argument_text_that_is_not_json_is_an_error_result():
    bad = ToolCall.from_json(id="bad", name="add", raw_arguments='{"a": 1, "b":')
    provider = RawProvider(Response(tool_calls=(bad,), stop_reason="tool_use"), Response(text="ok"))
    events = collect(Agent(llm=provider).with_tools([add]).stream("go"))
    [finished] = of_type(events, "tool_finished")
    assert finished.is_error and finished.result == 'Error: the arguments for add were not a JSON object: {"a": 1, "b":'


@pytest.mark.parametrize("via", ["stream", "astream"])
def test_timeouts_hold_for_sync_and_async_tools(via):
    release = threading.Event()

    @tool(timeout=0.2)
    def slow_sync() -> str:
        """Blocks."""
        release.wait(5)
        return "late"

    @tool
    async def slow_async() -> str:
        """Sleeps."""
        await asyncio.sleep(5)
        return "late"

    provider = ScriptedProvider([calls(("slow_sync", {}), ("slow_async", {})), "Gave up."])
    agent = Agent(llm=provider, tool_timeout=0.2).with_tools([slow_sync, slow_async])
    began = time.monotonic()
    events = collect(getattr(agent, via)("go"))
    release.set()
    assert time.monotonic() - began < 2
    texts = [f.result for f in of_type(events, "tool_finished")]
    assert texts == ["Error: slow_sync timed out after 0.2 seconds.", "Error: slow_async timed out after 0.2 seconds."]


def test_a_tool_raising_timeout_error_itself_is_a_failure_not_a_timeout():
    @tool
    def flaky() -> str:
        """Times out inside."""
        raise TimeoutError("socket")

    provider = ScriptedProvider([calls(("flaky", {})), "ok"])
    events = collect(Agent(llm=provider).with_tools([flaky]).stream("go"))
    assert of_type(events, "tool_finished")[0].result == "Error: flaky failed: TimeoutError: socket"


def test_a_sync_tool_raising_stop_iteration_is_a_failure_the_model_sees():
    @tool
    def exhausted() -> str:
        """Runs out."""
        raise StopIteration("empty")

    provider = ScriptedProvider([calls(("exhausted", {})), "ok"])
    events = collect(Agent(llm=provider, tool_timeout=5).with_tools([exhausted]).stream("go"))
    [finished] = of_type(events, "tool_finished")
    assert finished.result == "Error: exhausted failed: RuntimeError: the call raised StopIteration: empty"


def test_a_sync_tool_finishing_after_its_timeout_leaves_the_next_calls_their_results():
    release = threading.Event()

    @tool(timeout=0.2)
    def late(n: int) -> str:
        """Blocks the first time."""
        if n == 0:
            release.wait(5)
        return f"late {n}"

    provider = ScriptedProvider([calls(("late", {"n": 0})), calls(("late", {"n": 1})), "done"])
    agent = Agent(llm=provider).with_tools([late])
    events = []
    for event in agent.stream("go"):
        events.append(event)
        if event.type == "tool_finished":
            release.set()  # the first call ends now, its result long dropped
    texts = [f.result for f in of_type(events, "tool_finished")]
    assert texts == ["Error: late timed out after 0.2 seconds.", "late 1"]


def test_results_over_the_cap_are_cut_head_and_tail():
    text = "HEAD" + "x" * 1000 + "TAIL"
    capped = cap_result(text, 20)
    assert capped.startswith("HEAD") and capped.endswith("TAIL") and "characters cut here" in capped
    assert len(capped) < 200
    assert cap_result(text, None) == text and cap_result("short", 20) == "short"

    @tool(max_result_tokens=10)
    def big() -> str:
        """Big."""
        return text

    @tool
    def also_big() -> str:
        """Big too."""
        return text

    provider = ScriptedProvider([calls(("big", {}), ("also_big", {})), "done"])
    collect(Agent(llm=provider, tool_result_max_tokens=100).with_tools([big, also_big]).stream("go"))
    small, large = results(provider)
    assert "over the 10-token limit" in small.content and "over the 100-token limit" in large.content
    assert len(small.content) < len(large.content) < len(text)


def test_tool_names_are_one_namespace():
    other_add = AgentTool(name="add", description="", input_schema={"type": "object"}, fn=lambda: "")
    agent = Agent(llm=ScriptedProvider()).with_tools([add])
    with pytest.raises(ToolNameCollisionError, match="'add' is already used"):
        agent.with_tools([other_add])
    with pytest.raises(ToolNameCollisionError):
        Agent(llm=ScriptedProvider()).with_tools([boom, boom])
    assert [t.name for t in agent.tools] == ["add"]


def test_the_last_round_wraps_up_without_tools_and_ends_with_max_rounds():
    provider = ScriptedProvider(
        [calls(("add", {"a": i, "b": 1})) for i in range(2)] + [calls(("add", {"a": 9, "b": 9}), text="Best guess: 2.")]
    )
    events = collect(Agent(llm=provider, max_rounds=3).with_tools([add]).stream("go"))
    final = events[-1]
    assert final.diagnostics.stopped_by == "max_rounds" and final.text == "Best guess: 2."
    last = provider.requests[-1]
    assert last.tool_choice == "none"
    assert "Final round: this turn has used its 3 rounds" in last.messages[-1].content
    assert of_type(events, "tool_finished")[-1].ran is False  # asked for anyway: not run
    assert len(of_type(events, "tool_started")) == 2


def test_a_cut_answer_ends_with_max_tokens():
    provider = ScriptedProvider([ScriptedReply(text="It was a dark and", stop_reason="max_tokens")])
    events = collect(Agent(llm=provider).stream("story"))
    assert events[-1].diagnostics.stopped_by == "max_tokens"


def test_a_provider_error_ends_the_stream_with_diagnostics_and_run_and_chat_raise():
    error = RateLimitError("slow down", provider="scripted", model="m", status=429)
    provider = ScriptedProvider([calls(("add", {"a": 1, "b": 1})), error])
    agent = Agent(llm=provider).with_tools([add])
    events = collect(agent.stream("go"))
    final = events[-1]
    assert isinstance(final, TurnFinished) and final.text == ""
    assert final.diagnostics.stopped_by == "error"
    assert final.diagnostics.error.kind == "RateLimitError" and final.diagnostics.error.status == 429
    assert final.exception is error
    assert len(final.diagnostics.rounds) == 1  # the round that finished is accounted
    assert agent.history == ()  # a failed turn is not remembered
    provider.push(ScriptedReply(text="Half", break_after=1))
    with pytest.raises(StreamInterruptedError):
        list(agent.chat("again"))


def test_the_provider_is_built_on_first_use_and_a_missing_key_is_its_one_line_error():
    agent = Agent(model="openai/gpt-4o-mini")
    assert agent.model == "openai/gpt-4o-mini"
    with pytest.raises(MissingCredentialsError, match="set OPENAI_API_KEY"):
        list(agent.chat("hi"))
    default = Agent()  # no provider set up in the environment: the default model
    assert default.model == "anthropic/claude-haiku-4-5-20251001" and not default.model_choice.detected
    with pytest.raises(MissingCredentialsError, match="ANTHROPIC_API_KEY"):
        default.llm  # noqa: B018 - reading the property raises


def test_an_abandoned_stream_still_records_its_diagnostics():
    provider = ScriptedProvider([calls(("add", {"a": 1, "b": 1})), "done"])
    agent = Agent(llm=provider).with_tools([add])
    stream = agent.stream("go")
    for event in stream:
        if event.type == "tool_finished":
            break
    stream.close()
    assert agent.last_turn is not None and agent.last_turn.stopped_by == "error"
    assert agent.last_turn.error.kind == "cancelled"
    assert agent.history == ()


def test_settings_are_checked_when_the_agent_is_made():
    from semif_agent.agent import AgentConfigError

    for bad in ({"max_rounds": 0}, {"max_response_tokens": -1}, {"tool_timeout": 0}, {"tool_result_max_tokens": 0}):
        with pytest.raises(AgentConfigError):
            Agent(llm=ScriptedProvider(), **bad)
    with pytest.raises(AgentConfigError):
        Agent(llm=ScriptedProvider()).with_tools([add.fn])


def test_one_round_offers_no_tools_and_a_plain_answer_is_a_stop():
    provider = ScriptedProvider(["Straight answer."])
    events = collect(Agent(llm=provider, max_rounds=1).with_tools([add]).stream("1+1?"))
    assert provider.requests[0].tool_choice == "none" and events[-1].diagnostics.stopped_by == "stop"
    assert all("Final round" not in m.content for m in provider.requests[0].messages)


def test_context_management_reaches_providers_that_take_it_and_only_those():
    seen = []

    class Managed(ScriptedProvider):
        supports_context_management = True

        async def astream(self, messages, *, context_management=None, **options):
            seen.append(context_management)
            async for chunk in super().astream(messages, **options):
                yield chunk

    config = {"edits": [{"type": "clear_tool_uses_20250919"}]}
    collect(Agent(llm=Managed(["ok"])).with_context_management(config).stream("hi"))
    assert seen == [config]
    plain = ScriptedProvider(["ok"])  # would refuse an unknown keyword
    assert collect(Agent(llm=plain).with_context_management(config).chat("hi")) == ["ok"]


def test_model_api_key_and_fallbacks_build_the_provider():
    from semif_agent.llm import FallbackProvider

    agent = Agent("scripted/first", fallbacks=["scripted/second"])
    assert isinstance(agent.llm, FallbackProvider)
    assert Agent("openai/gpt-4o-mini", api_key="sk-test").llm.model_ref == "openai/gpt-4o-mini"
