"""LLMEngine and the judge, against the loopback server (and the scripted provider)."""

from __future__ import annotations

import asyncio
import math

import pytest
from support.wire_server import WireReply

from semif_agent.engine import DecisionRequest, Option, create_engine
from semif_agent.errors import DecisionError
from semif_agent.llm import (
    LLMEngine,
    LLMJudge,
    ScriptedProvider,
    ScriptedReply,
    SyncInAsyncError,
    TooManyOptionsError,
    assess_request,
    create_judge,
    override_provider,
)
from semif_agent.records import DecisionRow

ROUTING = DecisionRequest(
    state="User request: email Alice the quarterly numbers",
    question="Which skill handles this request?",
    options=[
        Option("email", "Compose and send emails"),
        Option("calendar", "Create and move meetings"),
        Option("notes", "Write notes to files"),
        Option("none", "None of the above"),
    ],
)
PRICING = {"openai/test-model": {"input": 1.0, "output": 2.0}, "anthropic/test-model": {"input": 3.0, "output": 15.0}}


def _letter(token, logprob, top):
    return {"token": token, "logprob": logprob, "top": top}


def test_probabilities_from_logprobs_sum_to_one_over_the_options(wire, provider_for):
    top = {"A": -0.3, "B": -1.6, " C": -3.0, "The": -4.0}  # D (none) is missing: it gets the floor
    wire.queue(WireReply(text="A", logprobs=(_letter("A", -0.3, top),), usage={"input": 80, "output": 1}))
    engine = LLMEngine(provider_for("openai", pricing=PRICING))
    result = engine.call(ROUTING)

    assert result.selected == "email"
    assert set(result.probabilities) == {"email", "calendar", "notes", "none"}
    assert sum(result.probabilities.values()) == pytest.approx(1.0)
    assert (
        result.probabilities["email"]
        > result.probabilities["calendar"]
        > result.probabilities["notes"]
        > result.probabilities["none"]
    )
    assert result.scores["calendar"] == pytest.approx(-1.6)
    assert result.scores["none"] == pytest.approx(-4.0 - math.log(10))  # the floor
    assert "none" in result.note and "floor" in result.note
    assert result.engine == "llm" and result.model == "openai/test-model"
    assert result.usage["input_tokens"] == 80 and result.usage["output_tokens"] == 1
    assert result.usage["cost_usd"] == pytest.approx((80 * 1.0 + 1 * 2.0) / 1e6)

    [request] = wire.posts()
    body = request.body
    assert body["max_tokens"] == 1 and body["logprobs"] is True and body["top_logprobs"] == 20
    prompt = body["messages"][-1]["content"]
    assert "A. email: Compose and send emails" in prompt and "D. none: None of the above" in prompt
    assert "email Alice the quarterly numbers" in prompt


def test_tokens_for_the_same_letter_are_summed(wire, provider_for):
    top = {"B": math.log(0.3), " B": math.log(0.3), "A": math.log(0.4)}
    wire.queue(WireReply(text="B", logprobs=(_letter("B", math.log(0.3), top),)))
    result = LLMEngine(provider_for("openai")).call(DecisionRequest("state", "Which?", [Option("a"), Option("b")]))
    assert result.selected == "b"
    assert result.probabilities["b"] == pytest.approx(0.6)


def test_enum_tool_path_returns_a_valid_id(wire, provider_for):
    wire.queue(WireReply.tool_call("choose_option", {"option": "calendar"}, usage={"input": 200, "output": 12}))
    engine = LLMEngine(provider_for("anthropic", pricing=PRICING))
    result = engine.call(ROUTING)

    assert result.selected == "calendar"
    assert result.probabilities is None
    assert "no probabilities" in result.note
    assert result.model == "anthropic/test-model"
    assert result.usage["cost_usd"] == pytest.approx((200 * 3.0 + 12 * 15.0) / 1e6)
    body = wire.posts()[0].body
    assert body["tool_choice"] == {"type": "tool", "name": "choose_option"}
    assert body["tools"][0]["input_schema"]["properties"]["option"]["enum"] == ["email", "calendar", "notes", "none"]
    assert "B. calendar: Create and move meetings" in body["messages"][0]["content"]


def test_tool_mode_on_an_openai_server(wire, provider_for):
    wire.queue(WireReply.tool_call("choose_option", {"option": "notes"}))
    result = LLMEngine(provider_for("openai"), mode="tool").call(ROUTING)
    assert result.selected == "notes" and result.probabilities is None
    assert wire.posts()[0].body["tool_choice"] == {"type": "function", "function": {"name": "choose_option"}}


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_out_of_set_answer_is_retried_once_then_accepted(api, wire, provider_for):
    if api == "openai":
        wire.queue(
            WireReply(
                text="The", logprobs=(_letter("The", -0.1, {"The": -0.1, "I": -2.0}),), usage={"input": 10, "output": 1}
            ),
            WireReply(
                text="C", logprobs=(_letter("C", -0.05, {"C": -0.05, "A": -3.0}),), usage={"input": 30, "output": 1}
            ),
        )
    else:
        wire.queue(
            WireReply.tool_call("choose_option", {"option": "banana"}, usage={"input": 10, "output": 5}),
            WireReply.tool_call("choose_option", {"option": "notes"}, usage={"input": 30, "output": 5}),
        )
    result = LLMEngine(provider_for(api)).call(ROUTING)
    assert result.selected == "notes"
    assert result.usage["calls"] == 2 and result.usage["input_tokens"] == 40
    second = wire.posts()[1].body["messages"]
    assert "is not one of the options" in str(second[-1])


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_out_of_set_answer_twice_is_refused(api, wire, provider_for):
    if api == "openai":
        bad = WireReply(text="Sure", logprobs=(_letter("Sure", -0.1, {"Sure": -0.1, "Z": -1.0}),))
    else:
        bad = WireReply.tool_call("choose_option", {"option": "banana"})
    wire.queue(bad, bad, WireReply(text="never asked"))
    with pytest.raises(DecisionError) as caught:
        LLMEngine(provider_for(api)).call(ROUTING)
    message = str(caught.value)
    assert "outside the options" in message and "email, calendar, notes, none" in message
    assert len(wire.posts()) == 2


def test_more_than_sixteen_options_asks_the_caller_to_narrow(wire, provider_for):
    options = [Option(f"skill{i}") for i in range(17)]
    with pytest.raises(TooManyOptionsError, match="17 options.*at most 16.*narrow"):
        LLMEngine(provider_for("openai")).call(DecisionRequest("s", "Which?", options))
    assert wire.posts() == []
    sixteen = DecisionRequest("s", "Which?", options[:16])
    wire.queue(WireReply(text="P", logprobs=(_letter("P", -0.01, {"P": -0.01}),)))
    assert LLMEngine(provider_for("openai")).call(sixteen).selected == "skill15"


def test_auto_mode_without_logprobs_falls_back_to_the_tool():
    provider = ScriptedProvider(
        [
            ScriptedReply(text="Sure"),
            ScriptedReply(tool_calls=[{"name": "choose_option", "arguments": {"option": "email"}}]),
            ScriptedReply(tool_calls=[{"name": "choose_option", "arguments": {"option": "notes"}}]),
        ],
        supports_logprobs=True,  # says so, but answers without them (as some servers do)
    )
    engine = LLMEngine(provider)
    assert engine.call(ROUTING).selected == "email"
    assert engine.call(ROUTING).selected == "notes"
    assert [r.tools != () for r in provider.requests] == [
        False,
        True,
        True,
    ]  # the second decision went straight to the tool


def test_a_bare_letter_without_logprobs_is_taken():
    provider = ScriptedProvider([ScriptedReply(text=" C")], supports_logprobs=True)
    result = LLMEngine(provider).call(ROUTING)
    assert result.selected == "notes" and result.probabilities is None


def test_decisions_through_create_engine_on_the_loopback_server(wire):
    engine = create_engine(
        "llm",
        {
            "model": "openai/test-model",
            "provider": {"base_url": wire.base_url("openai"), "api_key": "x", "pricing": PRICING},
        },
    )
    assert isinstance(engine, LLMEngine) and engine.model == "openai/test-model"
    top = {"A": -2.0, "B": -0.2, "C": -3.5, "D": -5.0}
    wire.queue(WireReply(text="B", logprobs=(_letter("B", -0.2, top),), usage={"input": 150, "output": 1}))
    routing = DecisionRequest(
        "User request: move my 3pm meeting with Bob to Friday",
        "Which skill handles this request?",
        ROUTING.options,
    )
    result = engine.call(routing)
    assert result.selected == "calendar"
    assert sum(result.probabilities.values()) == pytest.approx(1.0)

    row = DecisionRow.of(run_id="r-1", step=0, kind="route", skill=None, request=routing, result=result).to_row()
    assert row["model"] == "openai/test-model" and row["engine"] == "llm"
    assert row["usage"]["input_tokens"] == 150 and row["usage"]["output_tokens"] == 1
    assert row["usage"]["cost_usd"] == pytest.approx((150 * 1.0 + 1 * 2.0) / 1e6)


def test_engine_name_may_carry_the_model(wire):
    wire.queue(WireReply.tool_call("choose_option", {"option": "email"}))
    engine = create_engine(
        "llm:anthropic/test-model",
        {
            "model": "openai/ignored",
            "mode": "tool",
            "provider": {"anthropic": {"base_url": wire.base_url("anthropic"), "api_key": "x"}},
        },
    )
    assert engine.model == "anthropic/test-model"
    assert engine.call(ROUTING).selected == "email"


def test_decisions_fall_back_to_a_second_provider(wire):
    wire.queue(WireReply.unauthorized(), WireReply(text="A"))  # the fallback has no logprobs, but a letter will do
    engine = create_engine(
        "llm",
        {
            "model": "openai/test-model",
            "fallbacks": ["anthropic/backup-model"],
            "provider": {
                "retry_initial_delay": 0.001,
                "openai": {"base_url": wire.base_url("openai"), "api_key": "bad"},
                "anthropic": {"base_url": wire.base_url("anthropic"), "api_key": "good"},
            },
        },
    )
    result = engine.call(ROUTING)
    assert result.selected == "email" and result.model == "anthropic/backup-model"
    assert result.probabilities is None and "no log-probabilities" in result.note
    assert [p.api for p in wire.posts()] == ["openai", "anthropic"]
    # The primary keeps its log-probability path; a fallback answer that is no letter sends the
    # decision through the tool (primary first again, then the fallback).
    wire.reset()
    wire.queue(
        WireReply.unauthorized(),
        WireReply(text="Hmm"),
        WireReply.unauthorized(),
        WireReply.tool_call("choose_option", {"option": "notes"}),
    )
    assert engine.call(ROUTING).selected == "notes"
    assert [p.api for p in wire.posts()] == ["openai", "anthropic", "openai", "anthropic"]


def test_acall_is_native_and_call_refuses_a_running_loop():
    engine = LLMEngine(
        ScriptedProvider([ScriptedReply(tool_calls=[{"name": "choose_option", "arguments": {"option": "none"}}])])
    )

    async def decide():
        with pytest.raises(SyncInAsyncError):
            engine.call(ROUTING)
        return await engine.acall(ROUTING)

    assert asyncio.run(decide()).selected == "none"


def test_bad_mode_is_a_config_error():
    from semif_agent.errors import EngineConfigError

    with pytest.raises(EngineConfigError, match="mode"):
        LLMEngine(ScriptedProvider(), mode="guess")


# -- the judge ------------------------------------------------------------------


def test_judge_answers_an_assess_request_on_the_loopback_server(wire):
    judge = create_judge(
        {
            "model": "openai/test-model",
            "provider": {"base_url": wire.base_url("openai"), "api_key": "x"},
        }
    )
    assert isinstance(judge, LLMJudge) and judge.name == "llm-judge"
    request = assess_request(
        request="Email Alice the quarterly numbers",
        action_log="compose(to=alice@example.com, attachment=q3.xlsx); send()",
        before="outbox: empty",
        after="sent: 1 message to alice@example.com with q3.xlsx",
    )
    assert request.option_ids == ["success", "failure", "unclear"]
    top = {"A": -0.05, "B": -3.2, "C": -4.1}
    wire.queue(WireReply(text="A", logprobs=(_letter("A", -0.05, top),)))
    verdict = judge.call(request)
    assert verdict.selected == "success" and verdict.engine == "llm-judge"
    assert sum(verdict.probabilities.values()) == pytest.approx(1.0)
    system, user = wire.posts()[0].body["messages"]
    assert "judge" in system["content"]
    assert "Observation after:\nsent: 1 message" in user["content"]
    assert "A. success: The evidence shows" in user["content"]


def test_judge_takes_bare_verdict_options_and_its_own_model():
    fake = ScriptedProvider([ScriptedReply(tool_calls=[{"name": "choose_option", "arguments": {"option": "unclear"}}])])
    with override_provider(fake):
        judge = create_judge({"model": "openai/router", "judge": {"model": "anthropic/judge-model", "mode": "tool"}})
    request = DecisionRequest(
        "request: archive old notes\nactions: (none)\nbefore: 3 notes\nafter: 3 notes",
        "Did it work?",
        [Option("success"), Option("failure"), Option("unclear")],
    )
    assert judge.call(request).selected == "unclear"
    assert "C. unclear: The evidence does not settle" in fake.requests[0].messages[-1].content
