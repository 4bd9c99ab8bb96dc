"""An agent's own tools: the tools, the specs the model is shown, their schema tokens, and the names claimed.

Tool names are unique across everything a model can be shown in a turn: the
agent's tools, its skills' tools and meta-tools, ``search_tools`` and the
deferred tools, ``task``, and ``final_result`` in tool-mode structured
output. An :class:`OwnTools` checks every name it is given against its own
tools, the names claimed on it (:meth:`OwnTools.claim`) and the names its
``reserved`` callable reports (the agent's session), and raises
:class:`~semif_agent.agent.errors.ToolNameCollisionError` naming what holds
the name. Specs and schema token estimates are kept as tools come and go,
so a turn's config costs nothing per tool to build.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from types import MappingProxyType

from ..llm.messages import ToolSpec
from .errors import ToolNameCollisionError
from .tools import AgentTool

_TOOL = "another tool"


def _nothing_reserved() -> Mapping[str, str]:
    return {}


class OwnTools:
    """The tools an agent always shows, with their specs and schema tokens, and the claims on tool names."""

    def __init__(self, reserved: Callable[[], Mapping[str, str]] = _nothing_reserved) -> None:
        self._tools: dict[str, AgentTool] = {}
        self._specs: tuple[ToolSpec, ...] = ()
        self._schema_tokens = 0
        self._claims: dict[str, str] = {}
        self._reserved = reserved
        self.version = 0  # bumped on every change

    # -- reading ---------------------------------------------------------------

    @property
    def tools(self) -> Mapping[str, AgentTool]:
        return MappingProxyType(self._tools)

    @property
    def specs(self) -> tuple[ToolSpec, ...]:
        """The tools' specs, in the order they were added."""
        return self._specs

    @property
    def schema_tokens(self) -> int:
        """About how many prompt tokens the specs take."""
        return self._schema_tokens

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[AgentTool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def taken(self) -> dict[str, str]:
        """The names held here (tools and claims), with what holds each."""
        return {**{name: _TOOL for name in self._tools}, **self._claims}

    # -- names -----------------------------------------------------------------

    def check(self, names: Iterable[str]) -> None:
        """Raise :class:`ToolNameCollisionError` if any of ``names`` is taken (here, by the session, or twice in ``names``)."""
        taken = {**self._reserved(), **self.taken()}
        for name in names:
            if name in taken:
                raise ToolNameCollisionError(
                    f"tool name {name!r} is already used by {taken[name]}; tool names must be unique"
                )
            taken[name] = _TOOL

    def claim(self, name: str, holder: str) -> None:
        """Hold ``name`` for ``holder`` (no tool may take it); a tool already named so is a collision."""
        if name in self._tools:
            raise ToolNameCollisionError(f"a tool is named {name!r}, the name {holder} uses")
        self._claims[name] = holder
        self.version += 1

    def release(self, name: str) -> None:
        if self._claims.pop(name, None) is not None:
            self.version += 1

    # -- changing ----------------------------------------------------------------

    def add_tools(self, tools: Iterable[AgentTool]) -> list[AgentTool]:
        """Check every name, then add the tools; the ``defer_loading`` ones are not added but handed back."""
        tools = list(tools)
        self.check(t.name for t in tools)
        direct = [t for t in tools if not t.defer_loading]
        self._tools.update((t.name, t) for t in direct)
        self._specs += tuple(t.to_tool_schema() for t in direct)
        self._schema_tokens += sum(t.schema_tokens for t in direct)
        self.version += 1
        return [t for t in tools if t.defer_loading]

    def remove_tools(self, names: Iterable[str]) -> None:
        """Take the named tools off (names not here are ignored)."""
        gone = {name for name in names if name in self._tools}
        if not gone:
            return
        for name in gone:
            self._schema_tokens -= self._tools.pop(name).schema_tokens
        self._specs = tuple(spec for spec in self._specs if spec.name not in gone)
        self.version += 1
