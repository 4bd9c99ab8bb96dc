"""The scripted provider, the sync wrappers, and the retry/fallback wrappers without a network."""

from __future__ import annotations

import asyncio
import warnings

import pytest

from semif_agent.llm import (
    FallbackProvider,
    InvalidModelRequestError,
    LLMProvider,
    RateLimitError,
    ResponseError,
    RetryingProvider,
    RetryPolicy,
    ScriptedProvider,
    ScriptedReply,
    ServerError,
    StreamInterruptedError,
    SyncInAsyncError,
    TextChunk,
    ToolResultMessage,
    Usage,
    UserMessage,
    create_provider,
)


def test_plays_back_a_queue_and_records_requests():
    provider = ScriptedProvider(
        [
            "Hello!",
            ScriptedReply(
                tool_calls=[{"name": "route", "arguments": {"to": "mail"}}],
                usage={"input_tokens": 7, "output_tokens": 2},
            ),
        ]
    )
    assert isinstance(provider, LLMProvider)
    assert provider.invoke("Hi").text == "Hello!"
    response = provider.invoke(
        [UserMessage(content="Mail Bob")], tools=[{"name": "route"}], tool_choice="route", max_tokens=9
    )
    assert response.stop_reason == "tool_use"
    assert response.tool_calls[0].name == "route" and response.tool_calls[0].arguments == {"to": "mail"}
    assert response.usage == Usage(input_tokens=7, output_tokens=2, cost_usd=None)
    assert [r.messages[-1].content for r in provider.requests] == ["Hi", "Mail Bob"]
    assert provider.last_request.tool_choice == "route" and provider.last_request.max_tokens == 9
    assert provider.remaining == 0


def test_a_function_answers_each_request():
    provider = ScriptedProvider(fn=lambda request: request.messages[-1].content.upper())
    assert provider.invoke("shout").text == "SHOUT"
    assert provider.invoke([{"role": "user", "content": "again"}]).text == "AGAIN"


def test_scripted_errors_are_raised_and_retried_by_the_wrapper():
    sleeps = []

    async def record(seconds):
        sleeps.append(seconds)

    scripted = ScriptedProvider([RateLimitError("slow down", retry_after=3.0), "done"])
    provider = RetryingProvider(scripted, RetryPolicy(max_retries=1, sleep=record))
    assert provider.invoke("hi").text == "done"
    assert sleeps == [3.0]
    assert len(scripted.requests) == 2


def test_retry_after_longer_than_allowed_is_not_waited():
    scripted = ScriptedProvider([RateLimitError("come back tomorrow", retry_after=86400), "never"])
    with pytest.raises(RateLimitError):
        RetryingProvider(scripted, RetryPolicy(max_retries=3, max_retry_after=60)).invoke("hi")
    assert len(scripted.requests) == 1


def test_stream_in_pieces_then_usage_then_stop():
    provider = ScriptedProvider([ScriptedReply(text="abcdefghij", usage={"output_tokens": 3})], chunk_size=4)
    chunks = list(provider.stream("hi"))
    assert [c.text for c in chunks if isinstance(c, TextChunk)] == ["abcd", "efgh", "ij"]
    assert [c.type for c in chunks[-2:]] == ["usage", "stop"]
    assert chunks[-1].response.usage.output_tokens == 3


def test_broken_stream_is_an_error_after_the_chunks_that_came():
    provider = ScriptedProvider([ScriptedReply(text="abcdefghij", break_after=2)], chunk_size=2)
    received = []
    with pytest.raises(StreamInterruptedError):
        for chunk in provider.stream("hi"):
            received.append(chunk)
    assert [c.text for c in received] == ["ab", "cd"]


def test_broken_stream_is_not_retried_nor_fallen_back_once_started():
    scripted = ScriptedProvider([ScriptedReply(text="abcdef", break_after=1), "again"], chunk_size=2)
    backup = ScriptedProvider(["backup"])
    provider = FallbackProvider([RetryingProvider(scripted, RetryPolicy(max_retries=3, initial_delay=0)), backup])
    with pytest.raises(StreamInterruptedError):
        list(provider.stream("hi"))
    assert len(scripted.requests) == 1 and backup.requests == []


def test_fallback_takes_over_and_says_who_answered():
    primary = ScriptedProvider([ServerError("down", status=500)], model="primary")
    backup = ScriptedProvider(["from backup"], model="backup", name="other")
    response = FallbackProvider([primary, backup]).invoke("hi")
    assert (response.text, response.model_ref) == ("from backup", "other/backup")


def test_logprobs_and_stop_reason_from_a_script():
    reply = ScriptedReply(text="B", logprobs=[{"token": "B", "logprob": -0.1, "top": {"B": -0.1, "A": -2.0}}])
    response = ScriptedProvider([reply]).invoke("pick")
    assert response.logprobs[0].top[1].token == "A"


def test_default_and_exhausted_script():
    assert ScriptedProvider(default="same").invoke("x").text == "same"
    with pytest.raises(ResponseError, match="no reply left"):
        ScriptedProvider().invoke("x")


def test_registered_like_any_provider():
    provider = create_provider("scripted/my-model", replies=["hi"], retry=False)
    response = provider.invoke("x")
    assert (response.text, response.model_ref) == ("hi", "scripted/my-model")


def test_sync_methods_refuse_a_running_loop_and_async_ones_work_there():
    provider = ScriptedProvider(["a", "b"])

    async def inside():
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # an un-awaited coroutine would warn
            with pytest.raises(SyncInAsyncError, match="await"):
                provider.invoke("x")
            with pytest.raises(SyncInAsyncError):
                provider.stream("x")
        return (await provider.ainvoke("x")).text

    assert asyncio.run(inside()) == "a"


def test_abandoned_sync_stream_is_closed():
    provider = ScriptedProvider([ScriptedReply(text="abcdefgh")], chunk_size=1)
    stream = provider.stream("x")
    assert next(stream).text == "a"
    stream.close()  # no error, no warning
    assert provider.remaining == 0


def test_messages_are_checked():
    provider = ScriptedProvider(default="x")
    with pytest.raises(InvalidModelRequestError, match="non-system"):
        provider.invoke([{"role": "system", "content": "only instructions"}])
    with pytest.raises(InvalidModelRequestError, match="not one of the tools"):
        provider.invoke("x", tools=[{"name": "a"}], tool_choice="b")
    with pytest.raises(InvalidModelRequestError, match="role"):
        provider.invoke([{"role": "robot", "content": "beep"}])
    provider.invoke(
        [
            {"role": "assistant", "content": "", "tool_calls": [{"id": "1", "name": "a", "arguments": "{}"}]},
            {"role": "tool", "tool_call_id": "1", "content": "ok"},
        ]
    )
    assert isinstance(provider.last_request.messages[-1], ToolResultMessage)
