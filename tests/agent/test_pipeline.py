"""The context pipeline: steps in order, the budget cutting what does not fit, the scope reaching retriever steps."""

from __future__ import annotations

import asyncio

import pytest

from semif_agent.agent import Agent, AgentConfigError, RetrievalScope, SQLiteRetriever, TokenBudget, current_scope
from semif_agent.agent.pipeline import (
    CONTEXT_HEADER,
    ContextItem,
    ContextPipeline,
    PipelineState,
    history_step,
    retriever_step,
)
from semif_agent.llm import ScriptedProvider, SystemMessage, UserMessage

from ._support import collect
from .test_retrieval import DOCS


def docs() -> SQLiteRetriever:
    retriever = SQLiteRetriever()
    retriever.add(DOCS)
    return retriever


def test_steps_run_in_order_each_seeing_what_came_before() -> None:
    seen: list[list[str]] = []

    def first(state: PipelineState) -> None:
        state.add_context([ContextItem("one", "first")])

    async def second(state: PipelineState) -> None:
        seen.append([item.text for item in state.context])
        state.add_context([ContextItem("two", "second")])

    window = ContextPipeline([first, second]).build("question", system_prompt="Be brief.")
    assert seen == [["one"]]
    assert [item.source for item in window.context] == ["first", "second"]
    assert window.system_prompt == f"Be brief.\n\n{CONTEXT_HEADER}\n\n[first]\none\n\n[second]\ntwo"
    assert window.history == () and window.dropped == 0
    with pytest.raises(AgentConfigError, match="must be callable"):
        ContextPipeline(["not a step"])  # type: ignore[list-item]  # a wrong step on purpose


def test_the_budget_leaves_out_what_does_not_fit() -> None:
    items = [ContextItem("a" * 400, "big"), ContextItem("b" * 40, "small"), ContextItem("c" * 40, "small")]
    small = items[1].tokens

    def add(state: PipelineState) -> None:
        state.add_context(items)

    window = ContextPipeline([add], budget=TokenBudget(context_tokens=2 * small)).build("q")
    assert [item.text[0] for item in window.context] == ["b", "c"] and window.dropped == 1
    unlimited = ContextPipeline([add]).build("q")
    assert len(unlimited.context) == 3 and unlimited.tokens > window.tokens

    class Turns:
        def turns(self):
            return [(UserMessage(content="old " * 40),), (UserMessage(content="new"),)]

    query = "q"
    fixed = ContextPipeline().build(query).tokens  # the query alone
    window = ContextPipeline(
        [add, history_step(Turns())], budget=TokenBudget(total_tokens=fixed + small + 10, context_tokens=small)
    ).build(query)
    assert [item.text[0] for item in window.context] == ["b"], "the total holds one small passage"
    assert [m.content for m in window.history] == ["new"], "and the latest turn; the older one is left out"
    assert window.dropped == 3 and window.tokens <= fixed + small + 10


def test_the_scope_reaches_a_retriever_step_and_is_published_for_the_build() -> None:
    published = []

    def look(state: PipelineState) -> None:
        published.append((current_scope(), state.scope))

    scope = RetrievalScope(include=("/campaign-1",), exclude=("/campaign-1/gm-notes",))
    window = asyncio.run(ContextPipeline([retriever_step(docs()), look]).abuild("dragon", scope=scope))
    assert [item.id for item in window.context] == ["c1-s1"]
    assert published == [(scope, scope)]
    assert current_scope() is None, "the scope is published for the build only"

    class Careless:  # a retriever that ignores scopes still cannot leak
        def search(self, query, *, limit=5, scope=None, embedding=None):
            return DOCS

    leaked = ContextPipeline([retriever_step(Careless())]).build("dragon", scope=scope)
    assert [item.id for item in leaked.context] == ["c1-s1"]
    everything = ContextPipeline([retriever_step(docs(), limit=2)]).build("dragon")
    assert len(everything.context) == 2
    with pytest.raises(AgentConfigError, match="search"):
        retriever_step(object())


def test_an_agent_turn_is_built_on_the_pipeline() -> None:
    provider = ScriptedProvider(default="noted")
    agent = (
        Agent(llm=provider)
        .with_system_prompt("You run a campaign.")
        .with_context_steps([retriever_step(docs())])
        .with_scope({"include": ["/campaign-1"], "exclude": ["/campaign-1/gm-notes"]})
    )
    collect(agent.stream("What happened with the dragon?"))
    system = provider.requests[-1].messages[0]
    assert isinstance(system, SystemMessage)
    assert system.content.startswith(f"You run a campaign.\n\n{CONTEXT_HEADER}")
    assert "id=c1-s1" in system.content and "c1-gm" not in system.content and "c10-s1" not in system.content
    collect(agent.stream("And then?"))
    sent = provider.requests[-1].messages
    assert [m.content for m in sent[1:]] == ["What happened with the dragon?", "noted", "And then?"]
    assert all(CONTEXT_HEADER not in m.content for m in agent.history), "passages are the turn's, never history"
    agent.with_budget(TokenBudget(context_tokens=1))
    collect(agent.stream("dragon"))
    assert provider.requests[-1].messages[0].content == "You run a campaign."


def test_agent_pipeline_is_what_the_next_turn_is_built_on() -> None:
    provider = ScriptedProvider(default="noted")
    agent = Agent(llm=provider).with_context_steps([retriever_step(docs())]).with_scope({"include": ["/campaign-1"]})
    window = agent.pipeline.build("What happened with the dragon?", scope=RetrievalScope(include=("/campaign-1",)))
    assert isinstance(agent.pipeline, ContextPipeline) and window.history == ()
    assert "c1-s1" in [item.id for item in window.context]
    assert all(item.namespace.startswith("/campaign-1/") for item in window.context)
    collect(agent.stream("What happened with the dragon?"))
    after = agent.pipeline.build("And then?")
    assert [m.content for m in after.history] == ["What happened with the dragon?", "noted"]
    agent.with_budget(TokenBudget(context_tokens=1))
    assert agent.pipeline.budget == TokenBudget(context_tokens=1)
    assert agent.pipeline.build("dragon").context == ()
