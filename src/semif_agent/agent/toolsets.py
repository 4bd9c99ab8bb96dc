"""Toolsets: what an agent shows the model besides its own tools, each feature one class the session asks each round.

::

    from semif_agent.agent import Agent, FunctionToolset

    notes = FunctionToolset([add_note, find_note], name="notes", instructions="Keep notes short.")
    agent = Agent(llm=provider, toolsets=[notes])      # or agent.add_toolset(notes)

An :class:`AgentToolset` gives, for a round, its part of the system prompt,
its tools and the pre-tool hooks it needs (a :class:`ToolsetView`); it
claims the tool names it uses (:meth:`AgentToolset.claims`), and says by
its :attr:`~AgentToolset.version` when its view may have changed, so an
unchanged round costs a comparison. The hooks around a turn are its too:
``open`` (before the turn, e.g. connect a server), ``prepare`` (what it
needs of the message, e.g. a skill shortlist), ``run_step_hooks`` around
each round, ``finish`` when the turn ends, and ``reset``, ``to_state``,
``load_state`` and ``aclose`` for the session's life. Every one has a
default that does nothing, so a toolset implements only what it uses.

The agent's skills (:class:`~.agent_skills.toolset.SkillToolset`), deferred
tools (:class:`~.deferred.DeferredTools`), subagents
(:class:`~.subagents.Subagents`), MCP servers
(:class:`~.toolkits.mcp.MCPServers`), the memory tool and the retrieval
tools (:func:`~.toolkits.memory.memory_toolset`,
:func:`~.toolkits.retrieval.rag_toolset`, both a :class:`FunctionToolset`)
are toolsets; the ``with_*`` methods that add them are thin calls to
:meth:`Agent.add_toolset <semif_agent.agent.Agent.add_toolset>` or to the
toolset the agent already holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ._run_context import runs_subagent
from .errors import AgentConfigError, ToolNameCollisionError
from .hooks import PreToolHook
from .tools import AgentTool

Prepared = object
"""What a toolset prepared for one turn's message (``None`` when nothing), handed back to its :meth:`view`."""


@dataclass(frozen=True, slots=True)
class ToolsetView:
    """What a toolset adds to one round: system prompt text, tools, and pre-tool hooks (run before the agent's).

    ``always_allowed`` names the tools of this view an ``allowed-tools`` restriction never refuses (its meta-tools);
    ``allowed_tools`` holds the restrictions of this view's active skills (their patterns by skill name). The session
    builds the one gate of the round from them, so a name is exempt only while this view's own tool holds it.
    """

    instructions: str = ""
    tools: Mapping[str, AgentTool] = field(default_factory=lambda: MappingProxyType({}))
    pre_hooks: tuple[PreToolHook, ...] = ()
    always_allowed: frozenset[str] = frozenset()
    allowed_tools: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        if not isinstance(self.instructions, str):
            raise AgentConfigError(f"a toolset's instructions are text, got {type(self.instructions).__name__}")
        if not isinstance(self.tools, Mapping) or not all(isinstance(t, AgentTool) for t in self.tools.values()):
            raise AgentConfigError("a toolset's view takes its tools as a mapping of name to AgentTool")
        if not all(callable(hook) for hook in self.pre_hooks):
            raise AgentConfigError("a toolset's pre-tool hooks must be callable")


EMPTY_VIEW = ToolsetView()


class AgentToolset:
    """The base of every toolset: each method has a default that adds nothing."""

    name = "toolset"
    async_only = False
    """True when the toolset needs the async loop (``astream``, ``achat``, ``arun``): ``chat``/``run`` refuse it."""

    @property
    def version(self) -> object:
        """Changes whenever :meth:`view` may give something else (compared with ``==`` each round)."""
        return 0

    @property
    def active(self) -> bool:
        """True when the toolset has anything to add to a round."""
        return True

    def claims(self) -> Mapping[str, str]:
        """The tool names this toolset uses now, with what uses each (named in a collision's message)."""
        return {}

    def view(self, prepared: Prepared) -> ToolsetView:
        """What this toolset adds to a round, given what it prepared for the turn's message."""
        return EMPTY_VIEW

    def delegates(self) -> bool:
        """True when a tool of this toolset starts a subagent (an agent with one cannot itself be a subagent)."""
        return False

    @property
    def fixed_tools(self) -> tuple[AgentTool, ...]:
        """The tools shown in every round whatever the conversation does (``Agent.tools`` lists them)."""
        return ()

    async def open(self, taken: Mapping[str, str]) -> None:
        """Get ready before a turn starts (connect, list tools); an error here stops the turn before it starts.

        ``taken`` is every tool name the agent's other tools and toolsets hold, with what holds it.
        """

    async def prepare(self, message: str, *, run_id: str = "", model: str | None = None) -> Prepared:
        """What the toolset needs of ``message`` before the turn's first round."""
        return None

    async def run_step_hooks(self, hook_type: str, turn_id: str, index: int) -> None:
        """Run the ``hook_type`` lifecycle hooks (``pre_step``, ``post_step``) for round ``index`` of a turn."""

    def finish(self, prepared: Prepared, *, stopped_by: str, text: str) -> None:
        """The turn ended (how, and with what text)."""

    def reset(self) -> None:
        """A new session: forget what the conversation activated or loaded."""

    def to_state(self) -> dict[str, object]:
        """The session's state of this toolset, as JSON-ready data (merged into ``Agent.save_state``)."""
        return {}

    def load_state(self, state: Mapping[str, object]) -> None:
        """Restore what :meth:`to_state` saved (``state`` is the whole saved state; read your own keys)."""

    async def aclose(self) -> None:
        """Release what the toolset holds (connections, subagents)."""


class FunctionToolset(AgentToolset):
    """A fixed set of tools, and the instructions that go with them in the system prompt.

    ``name`` says whose tools they are in a collision's message. Tools named
    twice in ``tools`` are a :class:`~semif_agent.agent.ToolNameCollisionError`.
    """

    def __init__(self, tools: Iterable[AgentTool], *, name: str = "tools", instructions: str = "") -> None:
        listed = list(tools)
        for item in listed:
            if not isinstance(item, AgentTool):
                raise AgentConfigError(f"a toolset takes AgentTool values (use @tool), got {type(item).__name__}")
        self.name = name
        self.tools: Mapping[str, AgentTool] = MappingProxyType({t.name: t for t in listed})
        if len(self.tools) != len(listed):
            twice = next(t.name for i, t in enumerate(listed) if t.name in {u.name for u in listed[:i]})
            raise ToolNameCollisionError(f"toolset {name!r} has two tools named {twice!r}; tool names must be unique")
        self.instructions = instructions
        self._view = ToolsetView(instructions, self.tools)

    @property
    def fixed_tools(self) -> tuple[AgentTool, ...]:
        return tuple(self.tools.values())

    def claims(self) -> Mapping[str, str]:
        return {tool_name: f"a tool of toolset {self.name!r}" for tool_name in self.tools}

    def view(self, prepared: Prepared) -> ToolsetView:
        return self._view

    def delegates(self) -> bool:
        return any(runs_subagent(t.fn) for t in self.tools.values())

    def __repr__(self) -> str:
        return f"<FunctionToolset {self.name} tools={list(self.tools)}>"
