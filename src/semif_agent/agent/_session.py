"""An agent's session: its toolsets, and what the model is shown of them as the conversation goes.

The agent's configuration is fixed per turn (:class:`~._config.TurnConfig`);
the session holds what moves within it: the agent's toolsets
(:mod:`.toolsets`: skills, deferred tools, subagents, MCP servers, the
memory tool, ... each one class). It knows none of them by name: before a
turn it lets each ``open`` and ``prepare`` for the message, and at the start
of each round :meth:`AgentSession.configure` extends the agent's config
with every toolset's view (its system prompt text, its tools, its pre-tool
hooks), in the order the toolsets were added.

The config is cached until a toolset's ``version`` (or the toolsets) change,
so an unchanged round costs a comparison. The session is the agent's, not
the turn's: an activation in one turn holds in the next, until
:meth:`reset` (``Agent.clear_history``) starts a new session.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar

from ._config import TurnConfig
from .allowed_tools import allowed_tools_hook
from .errors import AgentConfigError, ToolNameCollisionError
from .hooks import PreToolHook
from .output import FINAL_RESULT
from .tools import AgentTool
from .toolsets import AgentToolset

STATE_VERSION = 1

ToolsetT = TypeVar("ToolsetT", bound=AgentToolset)
TurnPrepared = tuple[tuple[AgentToolset, object], ...]
"""What each toolset prepared for a turn's message."""


class AgentSession:
    """The toolsets of one agent, and each round's view of them."""

    def __init__(self, toolsets: Iterable[AgentToolset] = ()) -> None:
        self.toolsets: list[AgentToolset] = []
        # the last config, and what it was built from: the base, what the toolsets prepared, their versions
        self._cache: tuple[TurnConfig, TurnPrepared | None, tuple[object, ...], TurnConfig] | None = None
        for toolset in toolsets:
            self.add(toolset, {})

    @property
    def active(self) -> bool:
        """True when any toolset has something to add to a turn."""
        return any(toolset.active for toolset in self.toolsets)

    @property
    def async_only(self) -> list[AgentToolset]:
        """The toolsets that need the async loop."""
        return [toolset for toolset in self.toolsets if toolset.async_only]

    # -- configuration (names are checked against the agent's ``taken`` tool names) --

    def add(self, toolset: AgentToolset, taken: Mapping[str, str]) -> AgentToolset:
        """Add ``toolset`` after the others; a tool name it claims that is ``taken`` or claimed here is a collision."""
        if not isinstance(toolset, AgentToolset):
            raise AgentConfigError(f"a toolset is an AgentToolset, got {type(toolset).__name__}")
        claim(toolset.claims(), {**taken, **self.reserved()})
        self.toolsets.append(toolset)
        return toolset

    def reserved(self, *, besides: AgentToolset | None = None) -> dict[str, str]:
        """Tool names the toolsets use now (those of ``besides`` left out), with what uses them."""
        names: dict[str, str] = {}
        for toolset in self.toolsets:
            if toolset is not besides:
                names.update(toolset.claims())
        return names

    def find(self, kind: type[ToolsetT]) -> ToolsetT | None:
        """The first toolset of type ``kind``, if any."""
        return next((t for t in self.toolsets if isinstance(t, kind)), None)

    def delegates(self) -> bool:
        """True when a toolset starts subagents."""
        return any(toolset.delegates() for toolset in self.toolsets)

    # -- each turn, each round ----------------------------------------------------

    async def open(self, taken: Mapping[str, str]) -> None:
        """Let every toolset get ready before a turn (an error stops the turn before it starts); ``taken``: the
        names the agent's own tools hold."""
        for toolset in list(self.toolsets):
            await toolset.open({**taken, **self.reserved(besides=toolset)})

    async def prepare(self, message: str, *, run_id: str = "", model: str | None = None) -> TurnPrepared:
        """What each toolset needs of ``message`` (the skill shortlist, ...); turn ``run_id`` begins."""
        prepared = []
        for toolset in list(self.toolsets):
            prepared.append((toolset, await toolset.prepare(message, run_id=run_id, model=model)))
        return tuple(prepared)

    async def run_step_hooks(self, hook_type: str, turn_id: str, index: int) -> None:
        """Run the toolsets' ``hook_type`` hooks for round ``index`` of turn ``turn_id``."""
        for toolset in list(self.toolsets):
            await toolset.run_step_hooks(hook_type, turn_id, index)

    def finish(self, prepared: TurnPrepared | None, *, stopped_by: str, text: str) -> None:
        """The turn ended: every toolset is told how."""
        mine = dict(_by_identity(prepared))
        for toolset in list(self.toolsets):
            toolset.finish(mine.get(id(toolset)), stopped_by=stopped_by, text=text)

    def configure(self, base: TurnConfig, prepared: TurnPrepared | None) -> TurnConfig:
        """The config a round runs with: ``base`` extended with every toolset's view as it stands now."""
        versions = tuple([toolset.version for toolset in self.toolsets])
        cached = self._cache
        if (
            cached is not None
            and cached[0] is base
            and (cached[1] is prepared or cached[1] == prepared)
            and cached[2] == versions
        ):
            return cached[3]
        config = self._build(base, prepared) if self.active else base
        self._cache = (base, prepared, versions, config)
        return config

    def _build(self, base: TurnConfig, prepared: TurnPrepared | None) -> TurnConfig:
        """The round's config; every name the model is shown (the agent's tools, each toolset's, ``final_result``)
        is checked once, so no holder can hide another's tool."""
        mine = dict(_by_identity(prepared))
        parts: list[str] = []
        tools: dict[str, AgentTool] = {}
        holders = dict.fromkeys(base.tools, "another tool of the agent")
        if base.tool_output is not None:
            holders[FINAL_RESULT] = "structured output in tool mode"
        hooks: list[PreToolHook] = []
        always_allowed: set[str] = set()
        restrictions: dict[str, tuple[str, ...]] = {}
        gate_at = 0
        for toolset in self.toolsets:
            if not toolset.active:
                continue
            view = toolset.view(mine.get(id(toolset)))
            if view.instructions:
                parts.append(view.instructions)
            for name in view.tools:  # a toolset whose names grew past its claims cannot hide another's tool
                if name in holders:
                    raise ToolNameCollisionError(
                        f"tool name {name!r} of toolset {toolset.name!r} is already used by {holders[name]}; "
                        "tool names must be unique"
                    )
                holders[name] = f"a tool of toolset {toolset.name!r}"
            tools.update(view.tools)
            always_allowed.update(name for name in view.always_allowed if name in view.tools)
            if view.allowed_tools and not restrictions:
                gate_at = len(hooks)
            restrictions.update(view.allowed_tools)
            hooks.extend(view.pre_hooks)
        if restrictions:  # exempt by holder: a name is free only while the toolset that called it so holds it
            schemas = {name: tool.input_schema for name, tool in (*base.tools.items(), *tools.items())}
            hooks.insert(gate_at, allowed_tools_hook(restrictions, exempt=always_allowed, schemas=schemas))
        return base.extended(system="\n\n".join(parts), tools=tools, pre_hooks=tuple(hooks))

    # -- the session's life ------------------------------------------------------------

    def reset(self) -> None:
        """A new session: nothing activated, discovered or loaded by the conversation so far."""
        for toolset in self.toolsets:
            toolset.reset()

    def to_state(self) -> dict[str, object]:
        state: dict[str, object] = {"version": STATE_VERSION}
        for toolset in self.toolsets:
            state.update(toolset.to_state())
        return state

    def load_state(self, state: Mapping[str, object]) -> None:
        for toolset in self.toolsets:
            toolset.load_state(state)

    async def aclose(self) -> None:
        for toolset in self.toolsets:
            await toolset.aclose()


def claim(names: Mapping[str, str] | Iterable[str], taken: Mapping[str, str]) -> None:
    """Raise :class:`ToolNameCollisionError` for the first of ``names`` that is ``taken`` (naming what holds it)."""
    for name in names:
        if name in taken:
            raise ToolNameCollisionError(
                f"tool name {name!r} is already used by {taken[name]}; tool names must be unique"
            )


def _by_identity(prepared: TurnPrepared | None) -> Iterable[tuple[int, object]]:
    return ((id(toolset), value) for toolset, value in prepared or ())
