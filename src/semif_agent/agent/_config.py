"""The settings one turn runs with: a frozen snapshot of the agent's configuration.

The agent rebuilds it only when its configuration changes, so starting a
turn costs nothing per tool; a turn keeps its snapshot even if the agent is
reconfigured while it runs. :class:`AgentSettings` holds the agent's
numeric settings (a subagent copies its parent's with
:func:`dataclasses.replace`); :class:`TurnSession` is what a turn asks of
the session that changes what the model is shown from round to round.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from ..llm.messages import ToolSpec
from .budget import TokenBudget
from .compaction import Compaction
from .errors import AgentConfigError
from .hooks import AgentCallback, ApprovalCallback, PostToolHook, PreToolHook
from .output import OutputSpec
from .scope import RetrievalScope
from .tools import AgentTool
from .usage import UsageLimits, estimate_json_tokens, estimate_tokens

if TYPE_CHECKING:
    from ._session import TurnPrepared
    from .pipeline import Step


@dataclass(frozen=True, slots=True)
class AgentSettings:
    """An agent's numeric settings (see :class:`~semif_agent.agent.Agent`), checked when made."""

    max_tokens: int = 16384
    max_response_tokens: int = 1024
    max_rounds: int = 10
    tool_timeout: float | None = None
    tool_result_max_tokens: int | None = 10_000

    def __post_init__(self) -> None:
        _positive("max_tokens", self.max_tokens)
        _positive("max_response_tokens", self.max_response_tokens)
        _positive("max_rounds", self.max_rounds)
        timeout = self.tool_timeout
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0
        ):
            raise AgentConfigError("tool_timeout must be a number of seconds above 0, or None")
        if self.tool_result_max_tokens is not None:
            _positive("tool_result_max_tokens", self.tool_result_max_tokens)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _positive(name: str, value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise AgentConfigError(f"{name} must be a whole number above 0, got {value!r}")


@dataclass(frozen=True, slots=True)
class TurnOptions:
    """What an agent's ``with_*`` methods set for its turns. Frozen: each change is a new one (``replace``),
    so an agent knows its turn config is stale by identity alone."""

    system_prompt: str = ""
    output: OutputSpec | None = None
    limits: UsageLimits | None = None
    pre_hooks: tuple[PreToolHook, ...] = ()
    post_hooks: tuple[PostToolHook, ...] = ()
    approval: ApprovalCallback | None = None
    callbacks: tuple[AgentCallback, ...] = ()
    context_management: Mapping[str, object] | None = None
    compaction: Compaction | None = None
    scope: RetrievalScope | None = None
    budget: TokenBudget | None = None
    context_steps: tuple[Step, ...] = ()  # the context pipeline's steps before the conversation (see .pipeline)

    def turn_fields(self) -> dict[str, object]:
        """The options a :class:`TurnConfig` takes as they are (the prompt and output are built into it)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _BUILT}


_BUILT = frozenset({"system_prompt", "output", "context_steps"})


class TurnSession(Protocol):
    """What a turn asks of the session that moves within it (skills, deferred tools, subagents)."""

    async def prepare(self, message: str, *, run_id: str = "", model: str | None = None) -> TurnPrepared:
        """What the session needs for ``message`` before the first round (the skill shortlist, ...)."""
        ...

    def configure(self, base: TurnConfig, prepared: TurnPrepared | None) -> TurnConfig:
        """The config a round runs with: ``base`` extended with the session as it stands now."""
        ...

    async def run_step_hooks(self, hook_type: str, turn_id: str, index: int) -> None:
        """Run the ``hook_type`` lifecycle hooks (``pre_step``, ``post_step``) of the active skills for a round."""
        ...

    def finish(self, prepared: TurnPrepared | None, *, stopped_by: str, text: str) -> None:
        """The turn ended."""
        ...


@dataclass(frozen=True, kw_only=True)
class TurnConfig:
    """Everything a turn reads from its agent, fixed when the turn starts."""

    system_prompt: str = ""
    tools: Mapping[str, AgentTool] = field(default_factory=lambda: MappingProxyType({}))
    specs: tuple[ToolSpec, ...] = ()  # what the model is shown: the tools, then final_result in tool mode
    schema_tokens: int = 0
    limits: UsageLimits | None = None
    pre_hooks: tuple[PreToolHook, ...] = ()
    post_hooks: tuple[PostToolHook, ...] = ()
    approval: ApprovalCallback | None = None
    callbacks: tuple[AgentCallback, ...] = ()
    output: OutputSpec | None = None
    context_management: Mapping[str, object] | None = None
    max_tokens: int = 16384
    max_response_tokens: int = 1024
    max_rounds: int = 10
    tool_timeout: float | None = None
    tool_result_max_tokens: int | None = 10_000
    scope: RetrievalScope | None = None
    budget: TokenBudget | None = None
    system_tokens: int = 0  # the system prompt's estimated size
    session: TurnSession | None = None  # the agent's session (skills, deferred tools, subagents): see extended()
    compaction: Compaction | None = None

    @classmethod
    def build(
        cls,
        *,
        tools: Mapping[str, AgentTool],
        output: OutputSpec | None,
        system_prompt: str,
        specs: tuple[ToolSpec, ...] | None = None,
        schema_tokens: int | None = None,
        **settings: Any,
    ) -> TurnConfig:
        """The config for ``tools``; ``specs`` and ``schema_tokens`` may come precomputed (the agent keeps them)."""
        if specs is None or schema_tokens is None:
            specs = tuple(t.to_tool_schema() for t in tools.values())
            schema_tokens = sum(t.schema_tokens for t in tools.values())
        if output is not None and output.mode == "tool":
            final = output.tool_spec()
            specs += (final,)
            schema_tokens += estimate_tokens(final.description) + estimate_json_tokens(final.input_schema)
        if output is not None and output.mode == "prompted":
            system_prompt = f"{system_prompt}\n\n{output.instructions()}".strip()
        system_tokens = estimate_tokens(system_prompt)
        budget = settings.get("budget")
        if budget is not None and budget.system_tokens is not None and system_tokens > budget.system_tokens:
            raise AgentConfigError(
                f"the system prompt is about {system_tokens} tokens, over the budget's "
                f"system_tokens ({budget.system_tokens})"
            )
        return cls(
            system_tokens=system_tokens,
            system_prompt=system_prompt,
            tools=MappingProxyType(dict(tools)),
            specs=specs,
            schema_tokens=schema_tokens,
            output=output,
            **settings,
        )

    def extended(
        self, *, system: str = "", tools: Mapping[str, AgentTool] | None = None, pre_hooks: tuple[PreToolHook, ...] = ()
    ) -> TurnConfig:
        """This config with more system prompt text, more tools and earlier pre-hooks (a session's round view).

        ``final_result`` stays the last spec; the hooks given run before the agent's own.
        """
        tools = dict(tools or {})
        specs = tuple(t.to_tool_schema() for t in tools.values())
        base = self.specs[:-1] if self.tool_output is not None else self.specs
        final = self.specs[-1:] if self.tool_output is not None else ()
        return replace(
            self,
            system_prompt="\n\n".join(part for part in (self.system_prompt, system) if part),
            tools=MappingProxyType({**self.tools, **tools}),
            specs=base + specs + final,
            schema_tokens=self.schema_tokens + sum(t.schema_tokens for t in tools.values()),
            pre_hooks=tuple(pre_hooks) + self.pre_hooks,
        )

    @property
    def tool_output(self) -> OutputSpec | None:
        """The output spec when it is carried by the ``final_result`` tool."""
        return self.output if self.output is not None and self.output.mode == "tool" else None

    def result_cap(self, tool: AgentTool | None) -> int | None:
        """The token cap for ``tool``'s results: its own, else the agent's."""
        cap = (
            tool.max_result_tokens
            if tool is not None and tool.max_result_tokens is not None
            else self.tool_result_max_tokens
        )
        return self.budget.result_cap(cap) if self.budget is not None else cap
