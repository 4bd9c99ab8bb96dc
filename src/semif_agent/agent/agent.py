"""The :class:`Agent`: configuration and the public methods, over one async loop.

::

    from semif_agent.agent import Agent, tool

    @tool
    def greet(name: str) -> str:
        \"\"\"Greet someone by name.\"\"\"
        return f"Hello, {name}!"

    agent = Agent(model="anthropic/claude-haiku-4-5").with_system_prompt("You are friendly.").with_tools([greet])
    for chunk in agent.chat("Please greet Alice"):
        print(chunk, end="", flush=True)

``astream`` is the loop (see :mod:`semif_agent.agent._turn`); ``stream`` is
it through the one sync bridge, ``achat``/``chat`` are its text, and
``arun``/``run`` consume it for the structured output.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from .._sync import iter_sync, run_sync
from ..llm.messages import Message, ToolSpec, UserMessage
from ..llm.protocol import LLMProvider
from ..llm.registry import FallbackSpec, create_provider
from ..llm.settings import DEFAULT_MODELS, FALLBACK_PROVIDER, ModelChoice, default_model
from ._config import TurnConfig
from ._context_config import ContextConfig
from ._skill_config import SkillConfig
from ._session import AgentSession
from ._turn import Turn, message_tokens
from .budget import TokenBudget
from .compaction import Compaction
from .errors import AgentConfigError, OutputMissingError, ToolNameCollisionError
from .events import TextDelta, TurnFinished
from .hooks import AgentCallback, ApprovalCallback, PostToolHook, PreToolHook
from .memory import MemoryManager
from .memory_tool import MEMORY_PROTOCOL
from .output import FINAL_RESULT, OutputSpec
from .scope import RetrievalScope
from .skill_registry import SkillRegistry
from .tools import AgentTool
from .usage import TurnDiagnostics, UsageLimits

if TYPE_CHECKING:
    from .mcp import MCPServers

DEFAULT_MODEL = DEFAULT_MODELS[FALLBACK_PROVIDER]
"""The model used when none is named and the environment does not point at one provider (see :func:`default_model`)."""


class Agent(SkillConfig, ContextConfig):
    """A model with tools, in a loop: streams typed events, keeps the conversation between turns.

    ``model`` is ``"provider/model"`` (well-known bare names work), built on
    the first call with ``api_key`` and ``fallbacks``; or pass a ready
    provider as ``llm``. Without either, the model is that of the provider
    the environment sets up (only ``OPENAI_API_KEY`` or ``OPENAI_BASE_URL``:
    an OpenAI model; only ``ANTHROPIC_API_KEY``: an Anthropic one; both or
    neither: :data:`DEFAULT_MODEL`); :attr:`model_choice` says which and why. ``max_tokens`` is the conversation's budget: earlier
    turns are dropped, oldest first, to keep the messages under it (an
    estimate; the system prompt and tool schemas are not counted).
    ``max_response_tokens`` caps each model answer, ``max_rounds`` the
    rounds of one turn, ``tool_timeout`` (seconds) each tool call, and
    ``tool_result_max_tokens`` each tool result (``None``: no cap).

    The ``with_*`` methods configure it and return it. Turns hold their own
    state, so an agent may run several at once; each finished turn joins
    the conversation whole (its tool calls and results included).
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        api_key: str | None = None,
        llm: LLMProvider | None = None,
        fallbacks: Sequence[FallbackSpec] | None = None,
        max_tokens: int = 16384,
        max_response_tokens: int = 1024,
        max_rounds: int = 10,
        tool_timeout: float | None = None,
        tool_result_max_tokens: int | None = 10_000,
    ) -> None:
        _positive("max_tokens", max_tokens)
        _positive("max_response_tokens", max_response_tokens)
        _positive("max_rounds", max_rounds)
        if tool_timeout is not None and not tool_timeout > 0:
            raise AgentConfigError("tool_timeout must be a number of seconds above 0, or None")
        if tool_result_max_tokens is not None:
            _positive("tool_result_max_tokens", tool_result_max_tokens)
        self.model_choice: ModelChoice | None = None
        if model is None and llm is None:
            self.model_choice = default_model()
            model = self.model_choice.model
        self.model = model or DEFAULT_MODEL
        self._api_key = api_key
        self._fallbacks = list(fallbacks or ())
        self._llm = llm
        self._owns_llm = llm is None
        self._settings = {"max_tokens": max_tokens, "max_response_tokens": max_response_tokens, "max_rounds": max_rounds,
                          "tool_timeout": tool_timeout, "tool_result_max_tokens": tool_result_max_tokens}
        self._system_prompt = ""
        self._tools: dict[str, AgentTool] = {}
        self._specs: tuple[ToolSpec, ...] = ()  # the tools' specs and schema tokens, kept as tools are added
        self._schema_tokens = 0
        self._limits: UsageLimits | None = None
        self._pre_hooks: list[PreToolHook] = []
        self._post_hooks: list[PostToolHook] = []
        self._approval: ApprovalCallback | None = None
        self._output: OutputSpec | None = None
        self._callbacks: list[AgentCallback] = []
        self._context_management: dict[str, Any] | None = None
        self._session = AgentSession()  # skills, deferred tools, subagents
        self._compaction: Compaction | None = None
        self._config: TurnConfig | None = None
        self._history: list[tuple[tuple[Message, ...], int]] = []  # finished turns: (messages, estimated tokens)
        self._last_turn: TurnDiagnostics | None = None
        self._last_output: BaseModel | None = None
        self._memory: MemoryManager | None = None
        self._memory_protocol = False
        self._scope: RetrievalScope | None = None
        self._budget: TokenBudget | None = None
        self._mcp: MCPServers | None = None

    # -- configuration -------------------------------------------------------

    def with_system_prompt(self, prompt: str) -> Agent:
        """Set the system prompt (replacing any earlier one)."""
        self._system_prompt = str(prompt)
        return self._changed()

    def with_tools(self, tools: Sequence[AgentTool]) -> Agent:
        """Add tools (``defer_loading`` ones wait for ``search_tools``). A taken name is a :class:`ToolNameCollisionError`."""
        tools = list(tools)
        for item in tools:
            if not isinstance(item, AgentTool):
                raise AgentConfigError(f"with_tools takes AgentTool values (use @tool), got {type(item).__name__}")
        taken = {**self._session.reserved(), **self._taken_names()}
        for item in tools:
            if item.name in taken:
                raise ToolNameCollisionError(f"tool name {item.name!r} is already used by {taken[item.name]}; tool names must be unique")
            taken[item.name] = "another tool"
        deferred = [t for t in tools if t.defer_loading]
        tools = [t for t in tools if not t.defer_loading]
        self._session.add_deferred(deferred, taken)
        self._tools.update((t.name, t) for t in tools)
        self._specs += tuple(t.to_tool_schema() for t in tools)
        self._schema_tokens += sum(t.schema_tokens for t in tools)
        return self._changed()

    def with_usage_limits(self, limits: UsageLimits | Mapping[str, Any]) -> Agent:
        """Limit what each turn (and every subagent turn inside it) may spend: see :class:`UsageLimits`."""
        self._limits = limits if isinstance(limits, UsageLimits) else UsageLimits(**dict(limits))
        return self._changed()

    def with_hooks(self, *, pre_tool_use: Sequence[PreToolHook] | None = None,
                   post_tool_use: Sequence[PostToolHook] | None = None) -> Agent:
        """Add hooks around tool calls (see :mod:`semif_agent.agent.hooks`)."""
        for hook in [*(pre_tool_use or ()), *(post_tool_use or ())]:
            if not callable(hook):
                raise AgentConfigError(f"a hook must be callable, got {type(hook).__name__}")
        self._pre_hooks.extend(pre_tool_use or ())
        self._post_hooks.extend(post_tool_use or ())
        return self._changed()

    def with_approval(self, callback: ApprovalCallback | None) -> Agent:
        """Set the approval callback for ``requires_approval`` tools and calls a hook sends to ``ask``."""
        if callback is not None and not callable(callback):
            raise AgentConfigError("the approval callback must be callable")
        self._approval = callback
        return self._changed()

    def with_output_model(self, output_model: type[BaseModel], *, mode: str = "tool", max_output_retries: int = 1) -> Agent:
        """Require structured output validated by ``output_model`` (see :mod:`semif_agent.agent.output`)."""
        spec = OutputSpec.build(output_model, mode, max_output_retries)
        if spec.mode == "tool" and FINAL_RESULT in self._tools:
            raise ToolNameCollisionError(f"a tool is named {FINAL_RESULT!r}, the name structured output uses in tool mode")
        self._output = spec
        return self._changed()

    def with_callbacks(self, callbacks: Sequence[AgentCallback]) -> Agent:
        """Add observers of the loop (their exceptions are logged and swallowed)."""
        self._callbacks.extend(callbacks)
        return self._changed()

    def with_context_management(self, config: Mapping[str, Any]) -> Agent:
        """Pass an Anthropic ``context_management`` config with every request.

        It reaches providers that declare ``supports_context_management``;
        the others ignore it.
        """
        self._context_management = dict(config)
        return self._changed()

    def _changed(self) -> Agent:
        self._config = None
        return self

    def _taken_names(self) -> dict[str, str]:
        taken = {name: "another tool" for name in self._tools}
        if self._output is not None and self._output.mode == "tool":
            taken[FINAL_RESULT] = "the structured-output tool"
        return taken

    def _turn_config(self, output: OutputSpec | None = None) -> TurnConfig:
        """The config turns run with (``output`` overrides the agent's for a one-off config)."""
        if self._config is not None and output is None:
            return self._config
        chosen = output or self._output
        if self._memory is not None and chosen is not None and chosen.mode == "prompted":
            raise AgentConfigError("structured output in prompted mode needs an agent without with_memory; use mode='tool'")
        system_prompt = self._system_prompt
        if self._memory_protocol:
            system_prompt = f"{system_prompt}\n\n{MEMORY_PROTOCOL}".strip()
        config = TurnConfig.build(
            tools=self._tools, specs=self._specs, schema_tokens=self._schema_tokens, output=chosen,
            system_prompt=system_prompt, limits=self._limits, scope=self._scope, budget=self._budget,
            pre_hooks=tuple(self._pre_hooks), post_hooks=tuple(self._post_hooks), approval=self._approval,
            callbacks=tuple(self._callbacks), context_management=self._context_management,
            session=self._session, compaction=self._compaction, **self._settings,
        )
        if output is None:
            self._config = config
        return config

    # -- state ---------------------------------------------------------------

    @property
    def llm(self) -> LLMProvider:
        """The provider (built from ``model`` on first use)."""
        if self._llm is None:
            self._llm = create_provider(self.model, api_key=self._api_key, fallbacks=self._fallbacks or None)
        return self._llm

    @property
    def tools(self) -> tuple[AgentTool, ...]:
        return tuple(self._tools.values())

    @property
    def skills(self) -> SkillRegistry:
        """This agent's skills: registration, activation state, discovery."""
        return self._session.skill_registry()

    def save_state(self) -> dict[str, Any]:
        """The session as JSON-ready data: skill activation (the catalog runtime's state), skills shown, deferred tools loaded."""
        return self._session.to_state()

    def restore_state(self, state: Mapping[str, Any]) -> None:
        """Restore what :meth:`save_state` saved (into an agent configured the same way)."""
        self._session.load_state(dict(state))

    @property
    def last_turn(self) -> TurnDiagnostics | None:
        """The diagnostics of the last turn that ended (also when its stream was abandoned)."""
        return self._last_turn

    @property
    def last_output(self) -> BaseModel | None:
        """The structured output of the last turn that ended (``None`` if it had none)."""
        return self._last_output

    @property
    def history(self) -> tuple[Message, ...]:
        """The conversation so far (with memory: its session's), tool calls and results included."""
        if self._memory is not None:
            return tuple(self._memory.messages())
        return tuple(m for messages, _ in self._history for m in messages)

    def clear_history(self) -> None:
        """Start a new session: forget the conversation (with memory, its session's history), the skills activated
        and the tools loaded (the configuration stays)."""
        self._history.clear()
        self._session.reset()
        if self._memory is not None:
            self._memory.clear_history()

    def _context_for(self, message: str, config: TurnConfig) -> list[Message]:
        """The earlier turns that fit ``max_tokens`` (and a :class:`TokenBudget`) with ``message``, oldest dropped first."""
        settings = self._settings
        message_size = message_tokens(UserMessage(content=message))
        room = settings["max_tokens"] - settings["max_response_tokens"] - message_size
        if config.budget is not None:
            capped = config.budget.history_room(system=config.system_tokens, schemas=config.schema_tokens if config.specs else 0,
                                                message=message_size, response=settings["max_response_tokens"])
            room = room if capped is None else min(room, capped)
        if self._memory is not None:
            turns = self._memory.recent_turns(max(room, 0))
            return [m for messages, _ in turns for m in messages]
        kept: list[tuple[Message, ...]] = []
        for messages, tokens in reversed(self._history):
            if tokens > room:
                break
            room -= tokens
            kept.append(messages)
        return [m for messages in reversed(kept) for m in messages]

    def _remember(self, turn: Turn) -> None:
        self._last_turn = turn.diagnostics
        self._last_output = turn.output
        if turn.stopped_by != "error":
            if turn.compacted:  # the turn's messages start with the summary of everything before
                self._history.clear()
                if self._memory is not None:
                    self._memory.clear_history()
            messages = tuple(turn.new_messages)
            tokens = sum(message_tokens(m) for m in messages)
            if self._memory is not None:
                self._memory.add_turn(messages, tokens)
            else:
                self._history.append((messages, tokens))

    # -- the loop ------------------------------------------------------------

    async def astream(self, message: str) -> AsyncIterator[Any]:
        """Run a turn; yield its events (:data:`~semif_agent.agent.events.AgentEvent`), ``TurnFinished`` last."""
        if self._mcp is not None:
            await self._mcp.connect(self)
        config = self._turn_config()
        turn = Turn(config, self.llm, str(message), history=self._context_for(str(message), config), on_finish=self._remember)
        async with aclosing(turn.events()) as events:
            async for event in events:
                yield event

    def stream(self, message: str) -> Iterator[Any]:
        """:meth:`astream` for sync code (not inside a running event loop)."""
        self._refuse_sync_with_mcp("Agent.stream and Agent.chat")
        self.llm  # noqa: B018 - built here, in the caller's context (where override_provider applies)
        return iter_sync(self.astream(message), "Agent.stream")

    async def achat(self, message: str) -> AsyncIterator[str]:
        """The text of :meth:`astream` as it arrives. Raises the provider's error if the turn failed."""
        async with aclosing(self.astream(message)) as events:
            async for event in events:
                if text := _text_of(event):
                    yield text

    def chat(self, message: str) -> Iterator[str]:
        """The text of :meth:`stream` as it arrives. Raises the provider's error if the turn failed."""
        for event in self.stream(message):
            if text := _text_of(event):
                yield text

    async def arun(self, message: str) -> BaseModel:
        """Run a turn; return its validated structured output (needs :meth:`with_output_model`).

        Raises the provider's error if the turn failed, and
        :class:`OutputMissingError` if it ended without valid output.
        """
        if self._output is None:
            raise AgentConfigError("run() and arun() need with_output_model(...); use chat() or stream() for text")
        last: Any = None
        async for last in self.astream(message):
            pass
        return _output_of(last)

    def run(self, message: str) -> BaseModel:
        """:meth:`arun` for sync code (not inside a running event loop)."""
        self._refuse_sync_with_mcp("Agent.run")
        if self._output is not None:
            self.llm  # noqa: B018 - built here, in the caller's context (where override_provider applies)
        return run_sync(self.arun(message), "Agent.run")

    async def aclose(self) -> None:
        """Close MCP connections and the session's resources; release the provider this agent built
        (one passed as ``llm`` is the caller's to close)."""
        if self._mcp is not None:
            await self._mcp.aclose(self)
        await self._session.aclose()
        if self._owns_llm and self._llm is not None:
            close = getattr(self._llm, "aclose", None)
            self._llm = None
            if close is not None:
                await close()

    async def __aenter__(self) -> Agent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        model = getattr(self._llm, "model_ref", None) or self.model
        return f"<Agent {model} tools={len(self._tools)}>"


def _text_of(event: Any) -> str:
    """What ``chat`` shows of an event: top-level text; a failed turn's error is raised."""
    if isinstance(event, TextDelta):
        return event.text if event.parent_tool_call_id is None else ""
    if isinstance(event, TurnFinished) and event.exception is not None and event.parent_tool_call_id is None:
        raise event.exception
    return ""


def _output_of(finished: Any) -> BaseModel:
    if not isinstance(finished, TurnFinished):  # pragma: no cover - a turn always ends with TurnFinished
        raise OutputMissingError("the turn ended without finishing")
    if finished.exception is not None:
        raise finished.exception
    if finished.output is None:
        stopped = finished.diagnostics.stopped_by
        raise OutputMissingError(f"the turn ended without valid structured output (stopped_by={stopped!r})",
                                 diagnostics=finished.diagnostics)
    return finished.output


def _positive(name: str, value: Any) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise AgentConfigError(f"{name} must be a whole number above 0, got {value!r}")
