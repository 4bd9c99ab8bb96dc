"""Compaction: older messages become one summary; calls stay with their results; skill instructions stay; costs count."""

from __future__ import annotations

import pytest

from semif_agent.agent import Agent, AgentConfigError, Skill, UsageLimits, tool
from semif_agent.agent.compaction import SUMMARIZER, Compaction, TierCompactor, transcript
from semif_agent.llm import (
    AssistantMessage,
    ModelRequest,
    ScriptedProvider,
    ScriptedReply,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

from ._skill_support import system_of
from ._support import calls, collect, of_type, types


@tool
def fetch(page: int) -> str:
    """Fetch a page of the report."""
    return f"page {page}: " + "lorem ipsum " * 60  # ~ 180 tokens a result


def paging(pages: int, final: str = "All read.") -> list[ScriptedReply | str]:
    return [calls(("fetch", {"page": n}, f"call-{n}")) for n in range(1, pages + 1)] + [final]


def test_older_messages_become_one_summary_and_the_last_ones_stay():
    seen: list[str] = []

    def summarize(text: str) -> str:
        seen.append(text)
        return "The user wants the report read; pages 1-2 were fetched."

    provider = ScriptedProvider(paging(4))
    agent = Agent(llm=provider).with_tools([fetch]).with_compaction(400, keep_last=2, compact_fn=summarize)
    events = collect(agent.stream("Read the whole report"))
    kinds = types(events)
    assert kinds.count("compaction_started") == kinds.count("compaction_finished") >= 1
    started = kinds.index("compaction_started")
    assert kinds[started - 1] == "round_started" and kinds[started + 1] == "compaction_finished"
    finished = of_type(events, "compaction_finished")[0]
    assert finished.tokens_after < finished.tokens_before
    assert "user: Read the whole report" in seen[0] and 'assistant called fetch({"page": 1})' in seen[0]
    assert "tool result of fetch: page 1:" in seen[0]
    after = provider.requests[kinds[:started].count("round_started")]  # the call right after the first compaction
    assert after.messages[0] == UserMessage(
        content="[Conversation summary]\nThe user wants the report read; pages 1-2 were fetched."
    )
    assert not isinstance(after.messages[1], ToolResultMessage)
    assert events[-1].diagnostics.stopped_by == "stop" and events[-1].text == "All read."
    assert agent.history[0].content.startswith("[Conversation summary]")  # the agent goes on from the summary


def test_a_tool_call_is_never_split_from_its_result():
    call = AssistantMessage(
        tool_calls=(
            ToolCall(id="a", name="fetch", arguments={"page": 1}),
            ToolCall(id="b", name="fetch", arguments={"page": 2}),
        )
    )
    messages = [
        UserMessage(content="go"),
        call,
        ToolResultMessage(tool_call_id="a", content="1"),
        ToolResultMessage(tool_call_id="b", content="2"),
        AssistantMessage(content="done"),
    ]
    compaction = Compaction.build(10, keep_last=2)
    assert compaction.boundary(messages) == 1  # not 3: the kept part starts at the call, with both results
    assert Compaction.build(10, keep_last=1).boundary(messages) == 4
    assert Compaction.build(10, keep_last=4).boundary(messages) == 1
    assert Compaction.build(10, keep_last=5).boundary(messages) == 0
    provider = ScriptedProvider(paging(5))
    collect(
        Agent(llm=provider).with_tools([fetch]).with_compaction(300, keep_last=3, compact_fn=lambda t: "S").stream("go")
    )
    for request in provider.requests:  # every result the model is sent follows its call
        called: set[str] = set()
        for message in request.messages:
            if isinstance(message, AssistantMessage):
                called.update(c.id for c in message.tool_calls)
            if isinstance(message, ToolResultMessage):
                assert message.tool_call_id in called


def test_active_skill_instructions_are_never_pruned():
    skill = Skill(
        name="reports", description="Read long reports.", instructions="Quote page numbers.", activation="on_demand"
    )
    provider = ScriptedProvider([calls(("activate_skill", {"name": "reports"})), *paging(4)])
    agent = (
        Agent(llm=provider)
        .with_tools([fetch])
        .with_skill(skill)
        .with_compaction(300, keep_last=2, compact_fn=lambda t: "S")
    )
    events = collect(agent.stream("Read it"))
    assert of_type(events, "compaction_finished")
    last = provider.requests[-1]
    assert "Quote page numbers." in system_of(last) and last.messages[1].content.startswith("[Conversation summary]")
    assert not any("activate_skill" in str(m) for m in last.messages[1:])  # the activation itself was summarised


def test_the_default_compactor_uses_the_agents_model_and_its_tokens_count_against_limits():
    summaries: list[ModelRequest] = []
    replies = iter(paging(6))

    def answer(request: ModelRequest):
        if request.messages[0].content == SUMMARIZER:
            summaries.append(request)
            return ScriptedReply(text="Summary so far.", usage=Usage(input_tokens=5000, output_tokens=100))
        return next(replies)

    agent = (
        Agent(llm=ScriptedProvider(fn=answer))
        .with_tools([fetch])
        .with_compaction(400, keep_last=2)
        .with_usage_limits(UsageLimits(total_tokens_limit=4000))
    )
    events = collect(agent.stream("Read the report"))
    assert len(summaries) == 1 and "fetch" in summaries[0].messages[1].content
    compacted_round = of_type(events, "round_finished")[-2].usage
    assert compacted_round.total_tokens >= 5100  # the summary's call is in the round it preceded
    [breach] = of_type(events, "usage_limit_reached")
    assert breach.kind == "total_tokens" and events[-1].diagnostics.stopped_by == "usage_limit"


def test_a_tier_compactor_of_another_model_summarises_and_what_it_spends_counts():
    summaries: list[ModelRequest] = []

    def summarise(request: ModelRequest) -> ScriptedReply:
        summaries.append(request)
        return ScriptedReply(text="Summary so far.", usage=Usage(input_tokens=5000, output_tokens=100))

    agent_model = ScriptedProvider(paging(6))
    agent = (
        Agent(llm=agent_model)
        .with_tools([fetch])
        .with_compaction(400, keep_last=2, compact_fn=TierCompactor(ScriptedProvider(fn=summarise)))
    )
    events = collect(agent.stream("Read the report"))
    assert summaries and all(r.messages[0].content == SUMMARIZER for r in summaries)
    assert all(r.messages[0].content != SUMMARIZER for r in agent_model.requests)  # the agent's model only answers
    compacted = [r.usage for r in of_type(events, "round_finished") if r.usage.total_tokens >= 5100]
    assert len(compacted) == len(summaries)  # each summary's call counts in the round it preceded
    assert "Summary so far." in agent.history[0].content


def test_a_failing_summary_leaves_the_messages_as_they_were():
    def broken(text: str) -> str:
        raise RuntimeError("no summariser today")

    provider = ScriptedProvider(paging(4))
    events = collect(
        Agent(llm=provider).with_tools([fetch]).with_compaction(300, keep_last=2, compact_fn=broken).stream("go")
    )
    [finished] = of_type(events, "compaction_finished")  # tried once, not every round
    assert finished.tokens_after == finished.tokens_before
    assert events[-1].text == "All read." and provider.requests[-1].messages[0].content == "go"


def test_async_compactors_and_the_transcript():
    async def summarize(text: str) -> str:
        return "async summary"

    provider = ScriptedProvider(paging(4))
    collect(
        Agent(llm=provider).with_tools([fetch]).with_compaction(300, keep_last=2, compact_fn=summarize).stream("go")
    )
    assert any(m.content == "[Conversation summary]\nasync summary" for r in provider.requests for m in r.messages)
    text = transcript([UserMessage(content="hi"), ToolResultMessage(tool_call_id="x", content="boom", is_error=True)])
    assert text == "user: hi\n\ntool error of x: boom"


def test_settings_are_checked():
    for bad in (
        {"trigger_tokens": 0},
        {"trigger_tokens": 10, "keep_last": -1},
        {"trigger_tokens": 10, "compact_fn": "x"},
    ):
        with pytest.raises(AgentConfigError):
            Agent(llm=ScriptedProvider()).with_compaction(**bad)


class _SeamOnly:
    """A provider with only the two seam methods (no keyword face), over a scripted one."""

    def __init__(self, inner: ScriptedProvider) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.provider_name = "seam-only"

    async def request(self, request: ModelRequest):
        return await self.inner.request(request)

    def request_stream(self, request: ModelRequest):
        return self.inner.request_stream(request)


def test_the_default_compactor_works_with_a_provider_that_has_only_the_seam():
    def answer(request: ModelRequest):
        if request.messages[0].content == SUMMARIZER:
            return ScriptedReply(text="Summary from the seam.")
        return next(replies)

    replies = iter(paging(4))
    inner = ScriptedProvider(fn=answer)
    events = collect(Agent(llm=_SeamOnly(inner)).with_tools([fetch]).with_compaction(400, keep_last=2).stream("go"))
    [finished, *_] = of_type(events, "compaction_finished")
    assert finished.tokens_after < finished.tokens_before  # summarised, not left as it was after a failure
    assert any(m.content == "[Conversation summary]\nSummary from the seam." for m in inner.requests[-1].messages)
