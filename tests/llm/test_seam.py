"""The provider seam: one request object, handed through the wrappers; provider options, declared and checked."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from support.wire_server import WireReply

from semif_agent.agent import Agent, tool
from semif_agent.errors import SemifError
from semif_agent.llm import (
    FallbackProvider,
    InvalidModelRequestError,
    LLMProvider,
    ModelRequest,
    RateLimitError,
    Response,
    RetryingProvider,
    ScriptedProvider,
    StopChunk,
    TextChunk,
    UnsupportedOptionError,
    UserMessage,
    as_provider,
)
from semif_agent.llm.calllog import LoggedProvider, read_calls
from semif_agent.records import DecisionLog

CONTEXT = {"edits": [{"type": "clear_tool_uses_20250919"}]}


def stream(provider, request: ModelRequest) -> list:
    async def collect():
        return [chunk async for chunk in provider.request_stream(request)]

    return asyncio.run(collect())


@tool
def step(n: int) -> str:
    """Take step n."""
    return f"step {n} done"


def test_the_wrappers_hand_the_same_request_object_on(tmp_path: Path, fast_retry) -> None:
    primary = ScriptedProvider([RateLimitError("slow down", retry_after=0.0), "Hello!"])
    backup = ScriptedProvider(["unused"])
    provider = LoggedProvider(
        FallbackProvider([RetryingProvider(primary, fast_retry), backup]), DecisionLog(tmp_path / "calls.jsonl")
    )
    assert isinstance(provider, LLMProvider)
    request = ModelRequest(messages=(UserMessage(content="Hi"),), max_tokens=50)
    assert asyncio.run(provider.request(request)).text == "Hello!"
    assert primary.requests == [request, request] and all(r is request for r in primary.requests)
    assert backup.requests == []
    chunks = stream(LoggedProvider(ScriptedProvider(["Streamed."]), DecisionLog(tmp_path / "more.jsonl")), request)
    assert isinstance(chunks[-1], StopChunk) and chunks[-1].response.text == "Streamed."


def test_the_keyword_face_builds_the_request_and_unknown_keywords_are_our_error() -> None:
    provider = ScriptedProvider(["a", "b"])
    assert provider.invoke("Hi", max_tokens=5, stop="END").text == "a"
    assert (provider.last_request.max_tokens, provider.last_request.stop) == (5, ("END",))
    refused = r"scripted/scripted does not take the option 'max_token' \(it takes no provider options\)"
    with pytest.raises(UnsupportedOptionError, match=refused) as caught:
        provider.invoke("Hi", max_token=5)
    assert isinstance(caught.value, SemifError) and not isinstance(caught.value, TypeError)
    takes = ScriptedProvider(["c"], supported_options=["context_management"])
    assert takes.invoke("Hi", context_management=CONTEXT).text == "c"
    assert takes.last_request.options == {"context_management": CONTEXT}


def test_providers_written_before_the_seam_still_answer_behind_wrappers_and_in_an_agent() -> None:
    class Old:
        """Only the keyword face, as providers were written before."""

        provider_name, model_id = "old", "m"

        def __init__(self) -> None:
            self.seen: list[dict] = []

        async def ainvoke(self, messages, **options):
            self.seen.append(options)
            return Response(text=f"{len(messages)} messages")

        async def astream(self, messages, **options):
            self.seen.append(options)
            yield TextChunk(text="streamed")
            yield StopChunk(stop_reason="stop", response=Response(text="streamed"))

    old = Old()
    request = ModelRequest(messages=(UserMessage(content="Hi"),), temperature=0.5)
    assert asyncio.run(RetryingProvider(old).request(request)).text == "1 messages"
    assert old.seen[-1]["temperature"] == 0.5
    assert "".join(Agent(llm=FallbackProvider([old])).chat("hello")) == "streamed"
    with pytest.raises(SemifError, match="is not a model provider"):
        as_provider(object())


def test_an_option_goes_to_the_providers_of_a_chain_that_take_it() -> None:
    takes = ScriptedProvider([RateLimitError("slow down")], supported_options=["context_management"])
    plain = ScriptedProvider(["from the fallback"])
    chain = FallbackProvider([takes, plain])
    assert chain.supported_options == {"context_management"}
    assert chain.invoke("Hi", context_management=CONTEXT).text == "from the fallback"
    assert takes.last_request.options == {"context_management": CONTEXT} and plain.last_request.options == {}
    with pytest.raises(UnsupportedOptionError, match="'thinking'"):
        chain.invoke("Hi", thinking={"type": "enabled"})
    assert len(takes.requests) == 1  # refused before any call


def test_agent_context_management_reaches_only_providers_that_take_it() -> None:
    takes = ScriptedProvider(["ok"], supported_options=["context_management"])
    assert "".join(Agent(llm=RetryingProvider(takes)).with_context_management(CONTEXT).chat("hi")) == "ok"
    assert takes.last_request.options == {"context_management": CONTEXT}
    plain = ScriptedProvider(["ok"])
    assert "".join(Agent(llm=plain).with_context_management(CONTEXT).chat("hi")) == "ok"
    assert plain.last_request.options == {}


def test_anthropic_takes_context_management_on_the_wire(wire, provider_for) -> None:
    wire.queue(WireReply.tool_call("step", {"n": 1}), WireReply(text="Done."))
    agent = Agent(llm=provider_for("anthropic")).with_tools([step]).with_context_management(CONTEXT)
    assert "".join(agent.chat("Take a step.")) == "Done."
    posts = wire.posts()
    assert len(posts) == 2
    for post in posts:
        assert post.body["context_management"] == CONTEXT
        assert "context-management-2025-06-27" in post.headers.get("anthropic-beta", "")
    wire.queue(WireReply(text="Plain."))
    assert provider_for("anthropic").invoke("Hi", temperature=0.2).text == "Plain."
    plain = wire.posts()[-1]
    assert "context_management" not in plain.body and plain.body["temperature"] == 0.2
    assert "anthropic-beta" not in plain.headers
    wire.queue(WireReply(text="Both."))
    other_beta = provider_for("anthropic", default_headers={"anthropic-beta": "context-1m-2025-08-07"})
    assert other_beta.invoke("Hi", context_management=CONTEXT).text == "Both."
    assert wire.posts()[-1].headers["anthropic-beta"] == "context-1m-2025-08-07,context-management-2025-06-27"


def test_provider_options_are_validated_by_the_provider_that_answers(wire, provider_for) -> None:
    anthropic = provider_for("anthropic")
    assert anthropic.supported_options == {"context_management"}
    with pytest.raises(InvalidModelRequestError, match="context_management") as caught:
        anthropic.invoke("Hi", context_management="clear everything")
    assert type(caught.value).__module__.startswith("semif_agent") and caught.value.__cause__ is not None
    with pytest.raises(
        UnsupportedOptionError, match=r"openai/test-model does not take the option 'context_management'"
    ):
        provider_for("openai").invoke("Hi", context_management=CONTEXT)
    assert wire.posts() == []  # nothing was sent
    openai_agent = Agent(llm=provider_for("openai")).with_context_management(CONTEXT)
    wire.queue(WireReply(text="fine"))
    assert "".join(openai_agent.chat("Hi")) == "fine" and "context_management" not in wire.posts()[-1].body


def test_a_long_turn_is_logged_as_it_grows_and_read_back_whole(tmp_path: Path) -> None:
    rounds = 12
    replies = [{"tool_calls": [{"id": f"c{k}", "name": "step", "arguments": {"n": k}}]} for k in range(rounds)]
    model = ScriptedProvider([*replies, "All done."])
    log = DecisionLog(tmp_path / "calls.jsonl")
    agent = (
        Agent(llm=LoggedProvider(model, log), max_rounds=rounds + 2).with_system_prompt("Be brief.").with_tools([step])
    )
    assert "".join(agent.chat("Take the steps.")) == "All done."
    written = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    assert len(written) == rounds + 1
    assert "continues" not in written[0] and len(written[0]["messages"]) == 2
    for before, row in zip(written, written[1:], strict=False):
        assert row["continues"] == before["call_id"] and len(row["messages"]) == 2  # the answer and its tool result
        assert "tools" not in row  # the same tools as the row it continues
    whole = list(read_calls(log))
    for row, request in zip(whole, model.requests, strict=True):
        assert [m["content"] for m in row.messages] == [m.content for m in request.messages]
        assert row.tools == ["step"] and row.continues is None
    lines = (tmp_path / "calls.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "calls.jsonl").write_text("".join(lines[1:]))  # the first row lost: the second is given as written
    second, third = list(read_calls(log))[:2]
    assert second.continues == written[0]["call_id"] and len(second.messages) == 2
    assert third.continues == written[1]["call_id"] and len(third.messages) == 2
