"""State: per-turn state in the turn, the conversation across turns, the sync bridge, closing."""

from __future__ import annotations

import asyncio

import pytest

from semif_agent.agent import Agent, tool
from semif_agent.errors import SyncInAsyncError
from semif_agent.llm import (
    AssistantMessage,
    ModelRequest,
    ScriptedProvider,
    ScriptedReply,
    ToolResultMessage,
    UserMessage,
)

from ._support import calls, collect


@tool
def secret() -> str:
    """Reveal today's code."""
    return "code-7731"


def test_a_later_turn_sees_an_earlier_turns_real_tool_calls_and_results():
    provider = ScriptedProvider([calls(("secret", {}), text="Checking."), "Got it.", "It was code-7731."])
    agent = Agent(llm=provider).with_tools([secret])
    list(agent.chat("Fetch the code."))
    assert "".join(agent.chat("What was the code?")) == "It was code-7731."
    sent = provider.requests[-1].messages
    assert [m.role for m in sent] == ["user", "assistant", "tool", "assistant", "user"]
    assert sent[1].tool_calls[0].name == "secret" and sent[2] == ToolResultMessage(
        tool_call_id="call_secret_0", content="code-7731"
    )
    assert agent.history == (*sent, AssistantMessage(content="It was code-7731."))


def test_two_turns_on_one_agent_at_once_do_not_corrupt_each_other():
    def answer(request: ModelRequest):
        user = [m for m in request.messages if isinstance(m, UserMessage)][-1].content
        results = [m for m in request.messages if isinstance(m, ToolResultMessage)]
        if not results or results[-1].tool_call_id != f"id-{user}":
            return ScriptedReply(tool_calls=[{"id": f"id-{user}", "name": "slow_echo", "arguments": {"text": user}}])
        return f"final {results[-1].content}"

    @tool
    async def slow_echo(text: str) -> str:
        """Echo, slowly."""
        await asyncio.sleep(0.05 if text == "a" else 0.01)
        return text.upper()

    agent = Agent(llm=ScriptedProvider(fn=answer)).with_tools([slow_echo])

    async def both():
        async def one(text):
            return [e async for e in agent.astream(text)]

        return await asyncio.gather(one("a"), one("b"))

    first, second = asyncio.run(both())
    assert first[-1].text == "final A" and second[-1].text == "final B"
    assert first[-1].turn_id != second[-1].turn_id
    assert all(e.turn_id == first[-1].turn_id for e in first)
    assert [len(t[-1].diagnostics.rounds) for t in (first, second)] == [2, 2]
    history = agent.history
    assert len(history) == 8  # both turns whole: user, call, result, answer each
    assert agent.last_turn.turn_id == first[-1].turn_id  # "a" finished last


def test_earlier_turns_are_dropped_oldest_first_to_fit_max_tokens():
    provider = ScriptedProvider(default="ok")
    agent = Agent(llm=provider, max_tokens=1200, max_response_tokens=100)
    for word in ("first", "second", "third"):
        list(agent.chat(word * 300))  # ~ 1,500 characters, ~ 400 tokens a turn
    sent = provider.requests[-1].messages
    contents = [m.content[:6] for m in sent if isinstance(m, UserMessage)]
    assert contents == ["second", "thirdt"]
    assert len(agent.history) == 6  # the conversation itself keeps everything


def test_a_turn_keeps_its_configuration_when_the_agent_changes_mid_turn():
    agent = Agent(llm=ScriptedProvider([calls(("secret", {})), "done"])).with_system_prompt("v1").with_tools([secret])
    stream = agent.stream("go")
    next(stream)
    agent.with_system_prompt("v2")
    rest = list(stream)
    assert rest[-1].text == "done"
    assert [r.system for r in agent.llm.requests] == ["v1", "v1"]


def test_sync_methods_refuse_to_run_inside_an_event_loop():
    agent = Agent(llm=ScriptedProvider(default="hi"))

    async def inside():
        with pytest.raises(SyncInAsyncError):
            agent.stream("x")
        with pytest.raises(SyncInAsyncError):
            agent.run("x")
        return [c async for c in agent.achat("x")]

    assert asyncio.run(inside()) == ["hi"]


def test_async_with_closes_the_provider_the_agent_built():
    closed = []

    class Closing(ScriptedProvider):
        async def aclose(self):
            closed.append(self)

    async def use():
        async with Agent(llm=Closing(default="x")) as agent:
            assert [c async for c in agent.achat("hi")] == ["x"]
        return agent

    asyncio.run(use())
    assert closed == []  # a provider passed in is the caller's to close

    from semif_agent.llm import override_provider

    provider = Closing(default="x")
    with override_provider(provider):
        agent = Agent(model="openai/gpt-4o-mini")
        assert agent.llm is provider

    async def close_it():
        async with agent:
            pass

    asyncio.run(close_it())
    assert closed == [provider] and agent._llm is None


def test_clear_history_forgets_the_conversation():
    provider = ScriptedProvider(default="ok")
    agent = Agent(llm=provider)
    collect(agent.chat("one"))
    agent.clear_history()
    collect(agent.chat("two"))
    assert agent.history == (UserMessage(content="two"), AssistantMessage(content="ok"))
    assert [m.content for m in provider.requests[-1].messages] == ["two"]
