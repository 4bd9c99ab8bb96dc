"""Deferred tools: ``AgentTool(defer_loading=True)`` stays out of the model's tool list until it is searched for.

::

    @tool(defer_loading=True)
    def export_ledger(year: int) -> str:
        \"\"\"Export the general ledger of a year as CSV.\"\"\"

    agent = Agent(llm=provider).with_tools([search_web, export_ledger])

The model sees the agent's other tools, a line in the system prompt saying
how many tools are deferred, and the ``search_tools(query)`` meta-tool.
Searching ranks the deferred tools by name and description with the scorer
skills are chosen with (the local model blended with BM25, or BM25 alone) and loads the
best matches: from the next round on they are in the tool list, for the
rest of the session (until ``clear_history``; saved by ``save_state``).
A deferred tool the model calls before it is loaded is an unknown tool.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from ._run_context import runs_subagent
from ._schema import model_schema
from .agent_skills.chooser import Chooser, scoring_engine
from .tools import AgentTool
from .toolsets import AgentToolset, Prepared, ToolsetView

if TYPE_CHECKING:
    from ..engine.base import Engine

SEARCH_TOOLS = "search_tools"
SEARCH_RESULTS = 5
_FLOOR = {"local": 0.2}  # an embedding score below this is no match; BM25 needs any shared word


class _SearchInput(BaseModel):
    query: str = Field(description="What the tool should do, in a few words.")


class DeferredTools(AgentToolset):
    """An agent's deferred tools, and which of them this session has loaded.

    As a toolset it shows the model, while any tool is deferred, the line
    saying how many wait, ``search_tools``, and the tools loaded so far.
    ``engine`` says what ranks them (as for skill discovery: an engine, a
    name, or ``None``), read when the ranking is first built.
    """

    name = "deferred tools"

    def __init__(self, engine: Callable[[], Engine | str | None] | None = None) -> None:
        self.tools: dict[str, AgentTool] = {}
        self.loaded: list[str] = []
        self.engine = engine or _no_engine
        self.changes = 0
        self._index: Chooser | None = None

    @property
    def version(self) -> object:
        return self.changes

    @property
    def active(self) -> bool:
        return bool(self.tools)

    def claims(self) -> Mapping[str, str]:
        if not self.tools:
            return {}
        return {SEARCH_TOOLS: "the search_tools meta-tool", **{name: "a deferred tool" for name in self.tools}}

    def delegates(self) -> bool:
        return any(runs_subagent(t.fn) for t in self.tools.values())

    def view(self, prepared: Prepared) -> ToolsetView:
        return ToolsetView(
            self.hint(), {SEARCH_TOOLS: self.tool(), **self.loaded_tools()}, always_allowed=frozenset({SEARCH_TOOLS})
        )

    def to_state(self) -> dict[str, object]:
        return {"deferred_loaded": list(self.loaded)}

    def load_state(self, state: Mapping[str, object]) -> None:
        self.reset()
        saved = state.get("deferred_loaded")
        if isinstance(saved, (list, tuple)):
            self.load(str(name) for name in saved)

    def __bool__(self) -> bool:
        return bool(self.tools)

    def add(self, tools: Iterable[AgentTool]) -> None:
        for item in tools:
            self.tools[item.name] = item
        self._index = None
        self.changes += 1

    def loaded_tools(self) -> dict[str, AgentTool]:
        return {name: self.tools[name] for name in self.loaded if name in self.tools}

    def load(self, names: Iterable[str]) -> list[str]:
        """Load the named deferred tools (unknown names are ignored); the names newly loaded."""
        new = [name for name in dict.fromkeys(names) if name in self.tools and name not in self.loaded]
        if new:
            self.loaded.extend(new)
            self.changes += 1
        return new

    def reset(self) -> None:
        """Unload every tool (a new session)."""
        self.loaded.clear()
        self.changes += 1

    def find(self, query: str, k: int = SEARCH_RESULTS) -> list[str]:
        """The names of the deferred tools that best match ``query``, best first."""
        chooser = self._ranked()
        floor = _FLOOR.get(chooser.engine_name, 0.0)
        ranked = chooser.rank(query, k)
        return [name for name, score in ranked if score > floor] or [name for name, score in ranked[:1] if score > 0]

    def search(self, query: str, k: int = SEARCH_RESULTS) -> list[AgentTool]:
        """The deferred tools that best match ``query`` (best first), loaded."""
        found = self.find(query, k)
        self.load(found)
        return [self.tools[name] for name in found]

    def hint(self) -> str:
        """The system prompt's line about the tools not loaded yet."""
        waiting = len(self.tools) - len(self.loaded_tools())
        if not waiting:
            return ""
        return (
            f"## More tools\n{waiting} more tools are available but not loaded. When you need a tool you do not "
            f"have, call {SEARCH_TOOLS} with what it should do: the tools it finds are loaded for you."
        )

    def tool(self) -> AgentTool:
        deferred = self

        async def search_tools(query: str) -> str:
            names = await asyncio.to_thread(deferred.find, query)  # ranking off the loop; loading on it
            if not names:
                return "No deferred tool matches; try other words."
            deferred.load(names)
            return "Loaded these tools; they are available from now on:\n" + _lines([deferred.tools[n] for n in names])

        return AgentTool(
            name=SEARCH_TOOLS,
            fn=search_tools,
            input_model=_SearchInput,
            read_only=True,
            input_schema=model_schema(_SearchInput),
            description="Find and load tools that are available but not loaded yet, by what they do.",
        )

    def _ranked(self) -> Chooser:
        if self._index is None:
            items = [(t.name, t.description) for t in self.tools.values()]
            self._index = Chooser.for_items(items, scoring_engine(self.engine()))
        return self._index


def _no_engine() -> None:
    return None


def _lines(tools: Sequence[AgentTool]) -> str:
    return "\n".join(f"- {t.name}: {' '.join(t.description.split())[:200]}" for t in tools)
