"""Retrieval: scopes, the two built-in retrievers, search_docs with scopes and vaults, the token budget."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from semif_agent.agent import (
    Agent,
    AgentConfigError,
    Document,
    EmbeddingRetriever,
    Hit,
    RetrievalScope,
    SQLiteRetriever,
    TokenBudget,
    current_scope,
    rag_skill,
    rag_tools,
    tool,
)
from semif_agent.llm import ScriptedProvider, ToolResultMessage

from ._support import calls, collect, of_type

DOCS = [
    {"id": "c1-s1", "text": "The party fought the red dragon at the bridge.", "namespace": "/campaign-1/sessions"},
    {"id": "c1-gm", "text": "Secret: the dragon is the king's brother.", "namespace": "/campaign-1/gm-notes"},
    {"id": "c10-s1", "text": "A dragon egg was found in the market.", "namespace": "/campaign-10/sessions"},
    {"id": "rules", "text": "Dragons have resistance to fire.", "namespace": "/rules"},
]


# -- scopes --------------------------------------------------------------------


def test_prefixes_are_boundary_aware_and_exclude_wins():
    scope = RetrievalScope(include=("/campaign-1",), exclude=("/campaign-1/gm-notes",))
    assert scope.matches("/campaign-1") and scope.matches("/campaign-1/sessions/3")
    assert not scope.matches("/campaign-10") and not scope.matches("/campaign-10/sessions")
    assert not scope.matches("/campaign-1/gm-notes") and not scope.matches("/campaign-1/gm-notes/x")
    assert scope.matches("/campaign-1/gm-notes-public")
    assert RetrievalScope(include=("/a",), exclude=("/a",)).matches("/a/b") is False
    assert RetrievalScope().matches("/anything") and RetrievalScope(exclude=("/x",)).matches("/y")
    assert RetrievalScope(include=["campaign-1/", "//rules"]).include == ("/campaign-1", "/rules")
    assert RetrievalScope(include="/a").include == ("/a",)
    assert RetrievalScope(include=("/",)).matches("/whatever")
    for climbing in ("/a/../b", "./a", "/a/."):
        with pytest.raises(ValueError):
            RetrievalScope(include=(climbing,))
        with pytest.raises(ValueError):
            Document(id="x", text="t", namespace=climbing)


def test_scopes_are_frozen():
    scope = RetrievalScope(include=("/a",))
    with pytest.raises(ValidationError):
        scope.include = ("/b",)  # type: ignore[misc]  # writing a frozen field on purpose


@pytest.mark.parametrize(
    ("parent", "child", "include", "exclude"),
    [
        # the deeper prefix of each pair is kept
        (("/c1",), ("/c1/sessions",), ("/c1/sessions",), ()),
        (("/c1/sessions",), ("/c1",), ("/c1/sessions",), ()),
        # an empty include on one side leaves the other's
        ((), ("/c1",), ("/c1",), ()),
        (("/c1",), (), ("/c1",), ()),
        # pairwise over several prefixes; disjoint pairs drop out
        (("/a", "/b"), ("/a/x", "/c"), ("/a/x",), ()),
    ],
)
def test_intersection_keeps_the_deeper_prefix(parent, child, include, exclude):
    result = RetrievalScope(include=parent).intersect(RetrievalScope(include=child))
    assert (result.include, result.exclude) == (include, exclude)


def test_intersection_unites_excludes_and_disjoint_includes_match_nothing():
    parent = RetrievalScope(include=("/c1",), exclude=("/c1/gm",))
    child = RetrievalScope(exclude=("/c1/drafts",))
    both = parent.intersect(child)
    assert both.include == ("/c1",) and both.exclude == ("/c1/gm", "/c1/drafts")
    assert not both.matches("/c1/drafts/a") and both.matches("/c1/sessions")
    nothing = RetrievalScope(include=("/c1",)).intersect(RetrievalScope(include=("/c10",)))
    assert (
        nothing.matches_nothing
        and not nothing.matches("/c1")
        and not nothing.matches("/c10")
        and not nothing.matches("/")
    )
    assert str(nothing) == "nothing" and parent.intersect(None) is parent
    # a child can only narrow: whatever it asks for, it never sees more than the parent
    wide = RetrievalScope(include=("/",))
    assert not parent.intersect(wide).matches("/other") and not parent.intersect(wide).matches("/c1/gm")


# -- retrievers ----------------------------------------------------------------


@pytest.fixture(params=[True, False], ids=["fts5", "like"])
def fts(request):
    retriever = SQLiteRetriever(fts5=request.param)
    retriever.add(DOCS)
    return retriever


def test_sqlite_retriever_searches_within_a_scope(fts):
    assert {h.id for h in fts.search("dragon")} == {"c1-s1", "c1-gm", "c10-s1", "rules"}  # stemmed, or a substring
    scoped = fts.search("dragon", scope=RetrievalScope(include=("/campaign-1",), exclude=("/campaign-1/gm-notes",)))
    assert [h.id for h in scoped] == ["c1-s1"]
    assert fts.search("dragon", scope=RetrievalScope.nothing()) == []
    assert fts.search("", limit=3) == [] and fts.search("dragon", limit=0) == []
    assert all(isinstance(h, Hit) and h.score > 0 for h in fts.search("dragon"))


def test_sqlite_retriever_replaces_deletes_and_persists(tmp_path):
    path = str(tmp_path / "docs.sqlite3")
    retriever = SQLiteRetriever(path)
    retriever.add({"a": "apples are red", "b": "bananas are yellow"})
    retriever.add([Document(id="a", text="avocados are green", namespace="fruit/green", metadata={"source": "x"})])
    assert len(retriever) == 2 and retriever.search("apples") == []
    hit = retriever.search("avocados")[0]
    assert hit.namespace == "/fruit/green" and hit.document.metadata == {"source": "x"}
    assert retriever.delete(["b", "zzz"]) == 1
    retriever.close()
    again = SQLiteRetriever(path)
    assert [h.id for h in again.search("green avocados")] == ["a"] and again.get("b") is None


def test_embedding_retriever_finds_by_meaning_within_a_scope():
    retriever = EmbeddingRetriever()
    retriever.add(
        [
            {"id": "tea", "text": "Ana drinks green tea every morning.", "namespace": "/team/ana"},
            {"id": "deploy", "text": "Deployments happen on Thursdays after the standup.", "namespace": "/team/ops"},
            {"id": "cat", "text": "Ana's cat is called Miso.", "namespace": "/team/ana/private"},
        ]
    )
    assert retriever.search("what beverage does Ana like?", limit=1)[0].id == "tea"
    assert retriever.search("when do we ship releases?", limit=1)[0].id == "deploy"
    scoped = retriever.search("Ana's pet", scope=RetrievalScope(include=("/team/ana",), exclude=("/team/ana/private",)))
    assert [h.id for h in scoped] == ["tea"]
    assert -1.0 <= scoped[0].score <= 1.0
    assert retriever.delete(["cat"]) == 1 and len(retriever) == 2


# -- search_docs ---------------------------------------------------------------


class Recording:
    """A retriever that records what it is asked and ignores the scope (to prove the tool filters too)."""

    def __init__(self, docs=DOCS):
        self.calls: list[dict] = []
        self.docs = [Document(**d) for d in docs]

    def search(self, query, *, limit=5, scope=None, embedding=None):
        self.calls.append({"query": query, "limit": limit, "scope": scope, "embedding": embedding})
        return [Hit(document=d, score=1.0) for d in self.docs][:limit]


def test_search_docs_runs_under_the_agents_scope(fts):
    scope = RetrievalScope(include=("/campaign-1",), exclude=("/campaign-1/gm-notes",))
    provider = ScriptedProvider([calls(("search_docs", {"query": "dragon"})), "The party fought a dragon."])
    agent = Agent(llm=provider).with_tools(rag_tools(fts)).with_scope(scope)
    result = of_type(collect(agent.stream("What about dragons?")), "tool_finished")[0]
    assert not result.is_error and "id=c1-s1" in result.result
    assert "c1-gm" not in result.result and "c10-s1" not in result.result and "rules" not in result.result


def test_hits_outside_the_scope_are_dropped_even_if_the_retriever_ignores_it():
    recording = Recording()
    scope = RetrievalScope(include=("/rules",))
    provider = ScriptedProvider([calls(("search_docs", {"query": "dragon", "limit": 50})), "ok"])
    collect(Agent(llm=provider).with_tools(rag_tools(recording)).with_scope(scope).stream("q"))
    assert recording.calls == [{"query": "dragon", "limit": 20, "scope": scope, "embedding": None}]
    text = provider.requests[1].messages[-1].content
    assert text.startswith("1 document in") is False and "id=rules" in text and "c1-s1" not in text


def test_current_scope_is_published_only_during_tool_calls():
    seen = []

    @tool(read_only=True)
    def where() -> str:
        """Report the scope."""
        seen.append(current_scope())
        return "ok"

    @tool
    async def where_async() -> str:
        """Report the scope, async."""
        seen.append(current_scope())
        return "ok"

    scope = RetrievalScope(include=("/a",))
    provider = ScriptedProvider([calls(("where", {}), ("where", {}), ("where_async", {})), "done"])
    collect(Agent(llm=provider).with_tools([where, where_async]).with_scope(scope).stream("go"))
    assert seen == [scope, scope, scope] and current_scope() is None
    seen.clear()
    collect(Agent(llm=ScriptedProvider([calls(("where", {})), "done"])).with_tools([where]).stream("go"))
    assert seen == [None]


def test_a_subagent_runs_with_the_intersection_of_its_scope_and_its_parents():
    seen = []

    @tool(read_only=True)
    def where() -> str:
        """Report the scope."""
        seen.append(current_scope())
        return "ok"

    child = (
        Agent(llm=ScriptedProvider([calls(("where", {})), "child done"]))
        .with_tools([where])
        .with_scope(RetrievalScope(include=("/c1/sessions", "/c2"), exclude=("/c1/sessions/draft",)))
    )

    @tool
    async def delegate(task: str) -> str:
        """Hand a task to the child agent."""
        return "".join([chunk async for chunk in child.achat(task)])

    parent_scope = RetrievalScope(include=("/c1",), exclude=("/c1/gm",))
    parent = Agent(llm=ScriptedProvider([calls(("delegate", {"task": "look"})), "parent done"]))
    collect(parent.with_tools([delegate]).with_scope(parent_scope).stream("go"))
    assert seen == [RetrievalScope(include=("/c1/sessions",), exclude=("/c1/gm", "/c1/sessions/draft"))]


def test_mounted_vaults_restrict_the_vault_argument():
    legal, notes = Recording(), Recording()
    tools = rag_tools({"legal": legal, "notes": notes})
    schema = tools[0].input_schema
    assert schema["properties"]["vault"]["enum"] == ["legal", "notes"] and "vault" in schema["required"]
    provider = ScriptedProvider(
        [
            calls(
                ("search_docs", {"query": "dragon", "vault": "notes"}),
                ("search_docs", {"query": "dragon", "vault": "secrets"}),
            ),
            "ok",
        ]
    )
    events = of_type(collect(Agent(llm=provider).with_tools(tools).stream("q")), "tool_finished")
    finished = sorted(events, key=lambda e: e.tool_call_id)  # read-only calls finish in any order
    assert not finished[0].is_error and "in vault notes" in finished[0].result
    assert (
        finished[1].is_error and not finished[1].ran and "vault: must be one of 'legal', 'notes'" in finished[1].result
    )
    assert len(notes.calls) == 1 and legal.calls == []


def test_an_unmounted_vault_is_never_looked_up_even_past_validation():
    legal = Recording()
    search = rag_tools({"legal": legal})[0]

    async def run():
        return await search.fn(query="x", vault="other")

    import asyncio

    with pytest.raises(LookupError, match="not mounted"):
        asyncio.run(run())
    assert legal.calls == []


def test_embed_fn_turns_the_query_into_a_vector():
    recording = Recording()
    provider = ScriptedProvider([calls(("search_docs", {"query": "dragon"})), "ok"])
    agent = Agent(llm=provider).with_tools(rag_tools(recording, embed_fn=lambda text: [float(len(text)), 0.0]))
    collect(agent.stream("q"))
    assert recording.calls[0]["embedding"] == [6.0, 0.0]


def test_rag_tools_refuse_what_cannot_search_and_rag_skill_wraps_search_docs(fts):
    for bad in (object(), {}, {"": fts}):
        with pytest.raises(AgentConfigError):
            rag_tools(bad)
    skill = rag_skill(fts)  # a Skill where the agent has the type, else the tools themselves
    assert [t.name for t in getattr(skill, "tools", skill)] == ["search_docs"]
    if hasattr(skill, "activation"):
        assert (skill.name, skill.activation) == ("rag", "on_demand")
    assert rag_tools(fts)[0].read_only


def test_plain_results_from_a_custom_retriever_are_accepted():
    class Plain:
        def search(self, query, *, limit=5, scope=None, embedding=None):
            return [{"id": "x", "text": "plain dict", "namespace": "/n", "score": 0.5}, Document(id="y", text="doc")]

    provider = ScriptedProvider([calls(("search_docs", {"query": "q"})), "ok"])
    result = of_type(collect(Agent(llm=provider).with_tools(rag_tools(Plain())).stream("q")), "tool_finished")[0]
    assert "id=x namespace=/n score=0.500" in result.result and "id=y" in result.result


# -- the token budget ----------------------------------------------------------


def test_history_tokens_keep_only_the_latest_turns():
    provider = ScriptedProvider(default="x" * 40)
    agent = Agent(llm=provider).with_budget(TokenBudget(history_tokens=40))
    for n in range(4):
        collect(agent.stream(f"message {n}"))
    sent = [m.content for m in provider.requests[-1].messages]
    assert sent == ["message 2", "x" * 40, "message 3"]  # each earlier turn is about 20 tokens
    assert len(agent.history) == 8  # the conversation itself is kept whole


def test_total_tokens_count_the_system_prompt_and_tool_schemas():
    @tool
    def lookup(term: str) -> str:
        """Look a term up."""
        return term

    provider = ScriptedProvider(default="y" * 40)
    agent = Agent(llm=provider, max_response_tokens=100).with_tools([lookup]).with_system_prompt("s" * 400)
    for n in range(3):
        collect(agent.stream(f"message {n}"))
    assert len(provider.requests[-1].messages) == 6  # no budget: everything (under max_tokens), system included
    system, schemas = 100, agent._turn_config().schema_tokens
    agent.with_budget(TokenBudget(total_tokens=system + schemas + 100 + 8 + 25))
    collect(agent.stream("message 3"))
    assert [m.content for m in provider.requests[-1].messages[1:]] == ["message 2", "y" * 40, "message 3"]
    agent.with_budget(TokenBudget(total_tokens=system))
    collect(agent.stream("message 4"))
    assert [m.content for m in provider.requests[-1].messages[1:]] == ["message 4"]


def test_tool_results_are_capped_by_the_budget_and_the_system_prompt_checked():
    @tool(max_result_tokens=500)
    def dump() -> str:
        """A long result."""
        return "z" * 4000

    provider = ScriptedProvider([calls(("dump", {})), "ok"])
    agent = Agent(llm=provider).with_tools([dump]).with_budget({"tool_result_tokens": 50})
    collect(agent.stream("go"))
    result = [m for m in provider.requests[1].messages if isinstance(m, ToolResultMessage)][0].content
    assert len(result) < 300 and "50-token limit" in result
    agent = Agent(llm=ScriptedProvider(["ok"])).with_system_prompt("w" * 400).with_budget(TokenBudget(system_tokens=50))
    with pytest.raises(AgentConfigError, match="system_tokens"):
        collect(agent.stream("go"))
    with pytest.raises(ValidationError):
        TokenBudget(total_tokens=0)
