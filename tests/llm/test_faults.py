"""Faults on the wire: retries, typed errors, broken streams and fallbacks, through the real SDKs."""

from __future__ import annotations

import pytest
from support.wire_server import APIS, WireReply

from semif_agent.llm import (
    AuthenticationError,
    ModelRequestsBlockedError,
    ProviderConnectionError,
    ProviderOverloadedError,
    ProviderTimeoutError,
    RateLimitError,
    RetryPolicy,
    ServerError,
    StreamInterruptedError,
    TextChunk,
    create_provider,
)


def _sdk(api):
    return pytest.importorskip(api)


@pytest.mark.parametrize("api", APIS)
def test_429_is_retried_after_the_wait_the_server_asked(api, wire, provider_for, sleeps):
    wire.queue(WireReply.rate_limited(retry_after=0.25), WireReply(text="finally"))
    assert provider_for(api).invoke("hi").text == "finally"
    assert len(wire.posts()) == 2
    assert sleeps.delays == [0.25]


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(
    "fault", [WireReply.server_error(), WireReply.overloaded(), WireReply.drop()], ids=["500", "529", "drop"]
)
def test_transient_faults_are_retried_with_backoff(api, fault, wire, provider_for, sleeps):
    wire.queue(fault, fault, WireReply(text="recovered"))
    assert provider_for(api).invoke("hi").text == "recovered"
    assert len(wire.posts()) == 3
    assert len(sleeps.delays) == 2 and sleeps.delays[1] > sleeps.delays[0] * 1.5  # exponential


@pytest.mark.parametrize("api", APIS)
def test_exhausted_retries_raise_a_typed_error_with_context(api, wire, provider_for):
    wire.queue(*[WireReply.rate_limited(retry_after=0.01)] * 3)
    with pytest.raises(RateLimitError) as caught:
        provider_for(api).invoke("hi")
    error = caught.value
    assert (error.provider, error.model, error.status) == (api, "test-model", 429)
    assert error.retry_after == pytest.approx(0.01)
    assert "rate limit reached" in str(error)
    assert error.body  # the decoded error body
    assert isinstance(error.__cause__, _sdk(api).RateLimitError)
    assert len(wire.posts()) == 3  # one try and two retries: ours only, the SDK's are off
    assert any("gave up after 2 retries" in note for note in error.__notes__)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(
    ("fault", "kind", "status"),
    [
        (WireReply.server_error(), ServerError, 500),
        (WireReply.overloaded(), ProviderOverloadedError, 529),
        (WireReply.drop(), ProviderConnectionError, None),
    ],
    ids=["500", "529", "drop"],
)
def test_each_fault_has_its_kind(api, fault, kind, status, wire, provider_for):
    wire.queue(fault)
    with pytest.raises(kind) as caught:
        provider_for(api, retry=False).invoke("hi")
    assert caught.value.status == status
    assert isinstance(caught.value.__cause__, _sdk(api).APIError)


@pytest.mark.parametrize("api", APIS)
def test_401_is_an_authentication_error_and_not_retried(api, wire, provider_for):
    wire.queue(WireReply.unauthorized(), WireReply(text="never"))
    with pytest.raises(AuthenticationError) as caught:
        provider_for(api).invoke("hi")
    assert caught.value.status == 401 and "invalid x-api-key" in str(caught.value)
    assert len(wire.posts()) == 1


@pytest.mark.parametrize("api", APIS)
def test_slow_answer_times_out(api, wire, provider_for):
    wire.queue(WireReply.slow(5.0), WireReply.slow(5.0))
    with pytest.raises(ProviderTimeoutError) as caught:
        provider_for(api, timeout=0.2, retry=RetryPolicy(max_retries=1, initial_delay=0.001)).invoke("hi")
    assert "no answer within 0.2s" in str(caught.value)
    assert len(wire.posts()) == 2  # timeouts are retried


@pytest.mark.parametrize("api", APIS)
def test_timeout_then_success(api, wire, provider_for):
    wire.queue(WireReply.slow(5.0), WireReply(text="quick this time"))
    assert provider_for(api, timeout=0.2).invoke("hi").text == "quick this time"


@pytest.mark.parametrize("api", APIS)
def test_stream_is_retried_before_its_first_chunk(api, wire, provider_for):
    wire.queue(WireReply.rate_limited(retry_after=0.0), WireReply.drop(), WireReply(text="streamed fine"))
    chunks = list(provider_for(api).stream("hi"))
    assert chunks[-1].response.text == "streamed fine"
    assert len(wire.posts()) == 3


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("clean", [False, True], ids=["abrupt", "clean-but-unfinished"])
def test_stream_cut_mid_way_is_an_error_not_a_short_answer(api, clean, wire, provider_for):
    wire.queue(WireReply.cut_stream("one two three four five six", after=4, clean=clean), WireReply(text="replayed"))
    received = []
    with pytest.raises(StreamInterruptedError) as caught:
        for chunk in provider_for(api).stream("hi"):
            received.append(chunk)
    assert any(isinstance(c, TextChunk) for c in received), "some text arrived before the cut"
    assert not any(c.type == "stop" for c in received)
    assert caught.value.provider == api
    assert len(wire.posts()) == 1  # never replayed once chunks were handed on


@pytest.mark.parametrize("api", APIS)
def test_error_event_inside_a_stream(api, wire, provider_for):
    wire.queue(WireReply.stream_error("one two three four", after=4))
    with pytest.raises(StreamInterruptedError):
        list(provider_for(api).stream("hi"))


@pytest.mark.parametrize("api", APIS)
def test_error_event_before_any_content_is_retried(api, wire, provider_for):
    wire.queue(WireReply.stream_error("never shown", after=1), WireReply(text="second try"))
    chunks = list(provider_for(api).stream("hi"))
    assert chunks[-1].response.text == "second try"
    assert len(wire.posts()) == 2


@pytest.mark.parametrize(("primary", "second"), [("openai", "anthropic"), ("anthropic", "openai")])
def test_fallback_to_a_second_provider_with_its_own_key(primary, second, wire, fast_retry):
    wire.queue(*[WireReply.server_error()] * 3, WireReply(text="from the fallback"))
    provider = create_provider(
        f"{primary}/test-model",
        api_key="primary-key",
        base_url=wire.base_url(primary),
        retry=fast_retry,
        fallbacks=[{"model": f"{second}/backup-model", "api_key": "fallback-key", "base_url": wire.base_url(second)}],
    )
    response = provider.invoke("hi")
    assert (response.text, response.provider, response.model) == ("from the fallback", second, "backup-model")
    posts = wire.posts()
    assert [p.api for p in posts] == [primary] * 3 + [second]
    assert "fallback-key" in " ".join(posts[-1].headers.values())
    assert "primary-key" not in " ".join(posts[-1].headers.values())


@pytest.mark.parametrize("api", APIS)
def test_streamed_fallback_before_the_first_chunk(api, wire, provider_for):
    wire.queue(WireReply.unauthorized(), WireReply(text="backup streamed"))
    provider = provider_for(api, fallbacks=[f"{api}/backup-model"])  # same provider: inherits key and URL
    chunks = list(provider.stream("hi"))
    assert chunks[-1].response.text == "backup streamed"
    assert chunks[-1].response.model == "backup-model"


@pytest.mark.parametrize("api", APIS)
def test_when_every_provider_fails_the_last_error_is_raised_with_the_story(api, wire, provider_for):
    wire.queue(WireReply.unauthorized(), *[WireReply.overloaded()] * 3)
    provider = provider_for(api, fallbacks=[f"{api}/backup-model"])
    with pytest.raises(ProviderOverloadedError) as caught:
        provider.invoke("hi")
    assert caught.value.model == "backup-model"
    assert any("AuthenticationError" in note and "test-model" in note for note in caught.value.__notes__)


@pytest.mark.parametrize("api", APIS)
def test_real_endpoints_are_blocked_in_tests(api, wire):
    provider = create_provider(f"{api}/test-model", api_key="k", base_url="https://api.example.invalid")
    with pytest.raises(ModelRequestsBlockedError, match="blocked"):
        provider.invoke("hi")
    assert wire.posts() == []
