"""``search_docs``: the retrieval tool a model uses, over one retriever or a dict of mounted vaults.

::

    agent = Agent(...).with_tools(rag_tools(SQLiteRetriever("docs.sqlite3")))
    agent = Agent(...).with_tools(rag_tools({"legal": legal_docs, "notes": notes}))   # adds a `vault` argument
    agent = Agent(...).with_scope(RetrievalScope(include=("/campaign-1",)))           # what search_docs may read

Every search runs under the scope published for the tool call
(:func:`~semif_agent.agent.current_scope`): it is passed to the retriever as
a pre-filter, and hits outside it are dropped again here, so a retriever
that ignores scopes still cannot leak. With mounts, ``vault`` is restricted
to the mounted names: any other name is an error result and no retriever is
asked. The vault is bound here, when the tools are built; a scope only
ever narrows namespaces within it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...._json import JsonObject
from ...._text import plural
from ..._run_context import current_scope
from ..._threads import run_in_worker
from ...agent_skills.skill import Skill, skill_from_tools
from ...errors import AgentConfigError, AgentError
from ...tools import AgentTool
from ...toolsets import FunctionToolset
from .base import Document, Hit

TOOL_NAME = "search_docs"
DEFAULT_LIMIT = 5
MAX_LIMIT = 20
DOC_CHARS = 2000

RAG_INSTRUCTIONS = (
    "Search the document store with search_docs before answering questions about its contents, and base your "
    "answer on what it returns, citing document ids. If nothing relevant comes back, say so instead of guessing."
)


class UnknownVaultError(AgentError, LookupError):
    """A search named a vault that is not mounted."""


def rag_tools(
    retriever: Any,
    embed_fn: Callable[[str], Sequence[float]] | None = None,
    *,
    limit: int = DEFAULT_LIMIT,
    doc_chars: int = DOC_CHARS,
) -> list[AgentTool]:
    """The ``search_docs`` tool over ``retriever``, or over a dict of mounted retrievers (then with ``vault``).

    ``embed_fn`` turns the query into a vector passed to the retriever as
    ``embedding``. ``limit`` is the default number of results (the model
    may ask for up to 20); ``doc_chars`` caps each document's text shown.
    """
    mounts = dict(retriever) if isinstance(retriever, Mapping) else None
    if mounts is not None:
        if not mounts:
            raise AgentConfigError("rag_tools needs at least one mounted retriever")
        for name, item in mounts.items():
            if not isinstance(name, str) or not name:
                raise AgentConfigError(f"vault names must be non-empty strings, got {name!r}")
            check_retriever(item, f"vault {name!r}")
    else:
        check_retriever(retriever, "the retriever")
    if embed_fn is not None and not callable(embed_fn):
        raise AgentConfigError("embed_fn must be callable (text -> vector)")

    async def search_docs(query: str, limit: int = limit, vault: str | None = None) -> str:
        if mounts is not None:
            if vault not in mounts:
                raise UnknownVaultError(f"vault {vault!r} is not mounted; mounted vaults: {', '.join(mounts)}")
            target = mounts[vault]
        else:
            target = retriever
        scope = current_scope()
        count = max(1, min(int(limit), MAX_LIMIT))
        embedding = await run_in_worker(embed_fn, query) if embed_fn is not None else None
        hits = await search_hits(target, query, count, scope, embedding)
        if scope is not None:
            hits = [hit for hit in hits if scope.matches(hit.namespace)]
        return render_hits(hits[:count], query, vault=vault, doc_chars=doc_chars)

    properties: JsonObject = {
        "query": {"type": "string", "description": "What to look for, in a few words."},
        "limit": {
            "type": "integer",
            "description": f"How many documents to return (1-{MAX_LIMIT}).",
            "default": limit,
            "minimum": 1,
            "maximum": MAX_LIMIT,
        },
    }
    required = ["query"]
    description = "Search the document store for passages relevant to a query; returns documents with their ids."
    if mounts is not None:
        properties["vault"] = {"type": "string", "enum": list(mounts), "description": "Which mounted vault to search."}
        required.append("vault")
        description += f" Mounted vaults: {', '.join(mounts)}."
    schema: JsonObject = {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    return [AgentTool(name=TOOL_NAME, description=description, input_schema=schema, fn=search_docs, read_only=True)]


def rag_skill(retriever: Any, embed_fn: Callable[[str], Sequence[float]] | None = None) -> Skill:
    """``search_docs`` as an on-demand skill named ``rag`` (see :mod:`semif_agent.agent.agent_skills.skill`)."""
    return skill_from_tools(
        "rag",
        "Search documents: find passages relevant to a question in the document store.",
        rag_tools(retriever, embed_fn),
        instructions=RAG_INSTRUCTIONS,
        activation="on_demand",
        tags=("retrieval",),
    )


def rag_toolset(retriever: Any, embed_fn: Callable[[str], Sequence[float]] | None = None) -> FunctionToolset:
    """``search_docs`` shown in every round, with :data:`RAG_INSTRUCTIONS` for the system prompt (a toolset for
    ``Agent(toolsets=[...])``; :func:`rag_skill` is the same on demand)."""
    return FunctionToolset(rag_tools(retriever, embed_fn), name="rag", instructions=RAG_INSTRUCTIONS)


def render_hits(hits: Sequence[Hit], query: str, *, vault: str | None = None, doc_chars: int = DOC_CHARS) -> str:
    """The text the model sees for ``hits``."""
    where = f" in vault {vault}" if vault else ""
    if not hits:
        return f"No documents{where} match {query!r}."
    lines = [f"{plural(len(hits), 'document')}{where} for {query!r}:"]
    for number, hit in enumerate(hits, 1):
        text = hit.text if len(hit.text) <= doc_chars else hit.text[:doc_chars] + " [...]"
        lines.append(f"[{number}] id={hit.id} namespace={hit.namespace} score={hit.score:.3f}\n{text}")
    return "\n\n".join(lines)


async def search_hits(retriever: Any, query: str, limit: int, scope: Any, embedding: Any) -> list[Hit]:
    """``retriever``'s hits for ``query`` (its ``asearch`` when it has one, else ``search`` in a worker thread)."""
    options = {"limit": limit, "scope": scope, "embedding": embedding}
    asearch = getattr(retriever, "asearch", None)
    if asearch is not None and inspect.iscoroutinefunction(asearch):
        found = await asearch(query, **options)
    else:
        found = await run_in_worker(functools.partial(retriever.search, query, **options))
    return [_as_hit(item) for item in found or ()]


def _as_hit(item: Any) -> Hit:
    """A retriever's result as a :class:`Hit` (a hit, a document, or a dict with document fields and ``score``)."""
    if isinstance(item, Hit):
        return item
    if isinstance(item, Document):
        return Hit(document=item)
    data = dict(item)
    score = float(data.pop("score", 0.0) or 0.0)
    return Hit(document=Document(**data), score=score)


def check_retriever(item: object, what: str) -> None:
    if not callable(getattr(item, "search", None)) and not callable(getattr(item, "asearch", None)):
        raise AgentConfigError(f"{what} must have a search(query, limit=, scope=, embedding=) method")
