"""Memory: facts and history in SQLite, the fact tools in a turn, with_memory's persistent conversation."""

from __future__ import annotations

import threading

import pytest
from pydantic import BaseModel

from semif_agent.agent import (
    Agent,
    AgentConfigError,
    FactNotFoundError,
    MemoryManager,
    memory_skill,
    memory_tools,
)
from semif_agent.llm import AssistantMessage, RateLimitError, ScriptedProvider, ToolResultMessage, UserMessage

from ._support import calls, collect, of_type


@pytest.fixture(params=[True, False], ids=["fts5", "like"])
def memory(request, tmp_path):
    manager = MemoryManager(tmp_path / "memory.sqlite3", fts5=request.param)
    yield manager
    manager.close()


def test_facts_are_saved_searched_updated_and_deleted(memory):
    assert memory.full_text_search in ("fts5", "like")
    tea = memory.save_fact("Ana prefers green tea in the morning", ["preference", "ana"])
    memory.save_fact("The quarterly report is due on Friday")
    assert tea.id == 1 and tea.tags == ("preference", "ana")
    assert [f.id for f in memory.search_facts("what tea does Ana drink?")] == [1]
    assert [f.id for f in memory.search_facts("preference")] == [1]  # tags are searched too
    assert memory.search_facts("unrelated words entirely") == []
    assert memory.search_facts("   ") == []
    updated = memory.update_fact(1, "Ana prefers black coffee")
    assert updated.content == "Ana prefers black coffee" and updated.tags == ("preference", "ana")
    assert memory.search_facts("tea") == [] and [f.id for f in memory.search_facts("coffee")] == [1]
    assert memory.delete_fact(1).content == "Ana prefers black coffee"
    assert [f.content for f in memory.facts()] == ["The quarterly report is due on Friday"]
    with pytest.raises(FactNotFoundError):
        memory.update_fact(1, "again")
    with pytest.raises(FactNotFoundError):
        memory.delete_fact(99)
    with pytest.raises(ValueError):
        memory.save_fact("   ")


def test_search_ranks_better_matches_first_and_honours_limit(memory):
    for n in range(8):
        memory.save_fact(f"note {n} about gardening")
    memory.save_fact("tomato gardening tips for the balcony garden")
    found = memory.search_facts("tomato gardening", limit=3)
    assert len(found) == 3 and found[0].content.startswith("tomato")


def test_query_syntax_is_taken_as_plain_words(memory):
    memory.save_fact('He said "NEAR" and OR-ed AND stuff*')
    for query in ['"', "NEAR(", "a OR", "*", "col:umn", "AND", "'; DROP TABLE facts; --"]:
        memory.search_facts(query)  # never a syntax error
    assert memory.search_facts("near")


def test_the_store_outlives_the_manager_and_sessions_share_facts(tmp_path):
    path = tmp_path / "m.sqlite3"
    with MemoryManager(path) as first:
        first.save_fact("The user's name is Rui")
        first.add_turn([UserMessage(content="hello"), AssistantMessage(content="hi Rui")])
        other = first.session("other")
        other.add_turn([UserMessage(content="elsewhere")])
    again = MemoryManager(path)
    assert [f.content for f in again.facts()] == ["The user's name is Rui"]
    assert [m.content for m in again.messages()] == ["hello", "hi Rui"]
    assert [m.content for m in again.session("other").messages()] == ["elsewhere"]
    assert again.session("other").facts() == again.facts()
    again.clear_history()
    assert again.messages() == [] and again.session("other").messages()
    again.close()


def test_many_threads_can_use_one_manager():
    memory = MemoryManager()
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for k in range(20):
                memory.save_fact(f"thread {n} fact {k}")
                memory.search_facts(f"thread {n}")
        except BaseException as exc:  # noqa: BLE001 - every failure in a thread is collected
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and len(memory.facts()) == 120


def test_a_turn_saves_a_fact_then_finds_it():
    memory = MemoryManager()
    provider = ScriptedProvider(
        [
            calls(("save_fact", {"content": "The user is allergic to peanuts", "tags": ["health"]})),
            calls(("search_facts", {"query": "peanuts allergy"})),
            "Noted: you are allergic to peanuts.",
        ]
    )
    agent = Agent(llm=provider).with_tools(memory_tools(memory))
    events = collect(agent.stream("Remember that I'm allergic to peanuts, then check it is saved."))
    finished = of_type(events, "tool_finished")
    assert [(e.name, e.is_error) for e in finished] == [("save_fact", False), ("search_facts", False)]
    assert finished[0].result == "Saved fact [1] The user is allergic to peanuts (tags: health)"
    assert "[1] The user is allergic to peanuts" in finished[1].result
    assert [f.content for f in memory.facts()] == ["The user is allergic to peanuts"]
    assert events[-1].text == "Noted: you are allergic to peanuts."


def test_fact_tools_update_delete_and_report_unknown_ids():
    memory = MemoryManager()
    memory.save_fact("Meeting on Monday")
    provider = ScriptedProvider(
        [
            calls(("update_fact", {"fact_id": "1", "content": "Meeting on Tuesday"}), ("delete_fact", {"fact_id": 7})),
            calls(("search_facts", {"query": "monday"}), ("delete_fact", {"fact_id": 1})),
            "Done.",
        ]
    )
    agent = Agent(llm=provider).with_tools(memory_tools(memory))
    finished = of_type(collect(agent.stream("Move the meeting")), "tool_finished")
    assert finished[0].result == "Updated fact [1] Meeting on Tuesday" and not finished[0].is_error
    assert finished[1].is_error and "no fact has id 7" in finished[1].result
    assert finished[2].result == "No saved facts match 'monday'."
    assert finished[3].result == "Deleted fact [1] Meeting on Tuesday"
    assert memory.facts() == []


def test_memory_tools_and_skill_describe_four_tools():
    memory = MemoryManager()
    tools = memory_tools(memory)
    assert [t.name for t in tools] == ["save_fact", "search_facts", "update_fact", "delete_fact"]
    assert [t.read_only for t in tools] == [False, True, False, False]
    assert tools[0].input_schema["required"] == ["content"]
    skill = memory_skill(memory)  # a Skill where the agent has the type, else the tools themselves
    assert [t.name for t in getattr(skill, "tools", skill)] == [t.name for t in tools]
    if hasattr(skill, "activation"):
        assert (skill.name, skill.activation) == ("memory", "always")
    with pytest.raises(TypeError):
        memory_tools("not a manager")  # type: ignore[arg-type]  # a bad argument on purpose


def test_with_memory_keeps_the_conversation_in_the_store(tmp_path):
    path = tmp_path / "chat.sqlite3"

    @_memory_tool
    def clock() -> str:
        """The time."""
        return "09:30"

    first = ScriptedProvider([calls(("clock", {})), "It is 09:30."])
    agent = Agent(llm=first).with_memory(MemoryManager(path)).with_tools([clock])
    assert "".join(agent.chat("What time is it?")) == "It is 09:30."
    assert [m.role for m in agent.history] == ["user", "assistant", "tool", "assistant"]

    second = ScriptedProvider(["You asked for the time."])
    resumed = Agent(llm=second).with_memory(MemoryManager(path)).with_tools([clock])  # another agent, later
    assert "".join(resumed.chat("What did I ask?")) == "You asked for the time."
    sent = second.requests[0].messages
    assert [type(m).__name__ for m in sent] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "AssistantMessage",
        "UserMessage",
    ]
    assert sent[1].tool_calls[0].name == "clock" and sent[2] == ToolResultMessage(
        tool_call_id="call_clock_0", content="09:30"
    )
    assert len(MemoryManager(path).messages()) == 6

    fresh = ScriptedProvider(["Nothing yet."])
    separate = Agent(llm=fresh).with_memory(MemoryManager(path).session("bob"))
    collect(separate.stream("Anything?"))
    assert [m.content for m in fresh.requests[0].messages] == ["Anything?"]
    separate.clear_history()
    assert separate.history == () and len(resumed.history) == 6


def test_failed_turns_do_not_enter_memory():
    memory = MemoryManager()
    provider = ScriptedProvider([RateLimitError("slow down")])
    agent = Agent(llm=provider).with_memory(memory)
    events = collect(agent.stream("hi"))
    assert events[-1].diagnostics.stopped_by == "error" and memory.messages() == []


def test_memory_and_prompted_output_do_not_mix():
    class Answer(BaseModel):
        value: int

    with pytest.raises(AgentConfigError, match="prompted"):
        Agent(llm=ScriptedProvider()).with_output_model(Answer, mode="prompted").with_memory(MemoryManager())
    agent = (
        Agent(llm=ScriptedProvider(['{"value": 1}']))
        .with_memory(MemoryManager())
        .with_output_model(Answer, mode="prompted")
    )
    with pytest.raises(AgentConfigError, match="prompted"):
        agent.run("give me one")
    with pytest.raises(AgentConfigError):
        Agent().with_memory("memory.sqlite3")  # type: ignore[arg-type]  # a bad argument on purpose


def _memory_tool(fn):
    from semif_agent.agent import tool

    return tool(fn)
