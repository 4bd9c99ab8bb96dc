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

An agent holds a few parts, each owning one concern: its
:class:`~.own_tools.OwnTools` (tools, specs, schema tokens, name claims), its
:class:`~._config.TurnOptions` (what the ``with_*`` methods set; frozen,
replaced on change) and :class:`~._config.AgentSettings` (the numbers), its
session (its toolsets, asked every round: :mod:`._session`, :mod:`.toolsets`)
and its :class:`~._conversation.Conversation`. Its skills
(:mod:`.agent_skills`) and deferred tools are toolsets it always holds; the
``with_*`` methods of subagents, MCP servers and the memory tool add theirs,
and :meth:`Agent.add_toolset` adds any other. Subagents see it only through
the protocols of :mod:`._ports`; memory, retrieval and MCP live in
:mod:`.toolkits`.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, Iterator, Mapping, Sequence
from contextlib import aclosing
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from pydantic import BaseModel

from .._sync import iter_sync, run_sync
from ..llm.messages import Message
from ..llm.protocol import LLMProvider
from ..llm.registry import FallbackSpec, create_provider
from ..llm.settings import DEFAULT_MODELS, FALLBACK_PROVIDER, ModelChoice, default_model
from ._config import AgentSettings, TurnConfig, TurnOptions
from ._conversation import Conversation
from ._run_context import effective_scope
from ._session import AgentSession, claim
from ._turn import Turn
from .agent_skills.registry import SkillRegistry
from .agent_skills.skill import Skill
from .agent_skills.toolset import SkillToolset
from .budget import TokenBudget
from .compaction import CompactFn, Compaction
from .deferred import SEARCH_TOOLS, DeferredTools
from .errors import AgentConfigError, OutputMissingError
from .events import AgentEvent, TextDelta, TurnFinished
from .hooks import AgentCallback, ApprovalCallback, PostToolHook, PreToolHook
from .output import FINAL_RESULT, OutputSpec
from .own_tools import OwnTools
from .pipeline import ContextPipeline, ContextWindow, Step, history_step
from .scope import RetrievalScope
from .subagents import TASK, SubagentDefinition, Subagents, agent_tool, is_subagent_tool
from .toolkits.memory import FileMemoryBackend, MemoryManager, memory_toolset
from .tools import AgentTool
from .toolsets import AgentToolset
from .usage import TurnDiagnostics, UsageLimits

if TYPE_CHECKING:
    from ..catalog.environment import EnvironmentRouter
    from ..loop.runner import SkillRunner
    from ..workspace import Workspace
    from .toolkits.mcp import MCPServerConfig

    Folder = str | os.PathLike[str]
    SkillSource = Sequence[Skill] | Folder | Workspace | SkillRunner  # what with_skills takes

DEFAULT_MODEL = DEFAULT_MODELS[FALLBACK_PROVIDER]
"""The model used when none is named and the environment does not point at one provider (see :func:`default_model`)."""


class AgentOptions(TypedDict, total=False):
    """The numeric settings :class:`~semif_agent.agent.Agent` takes as keywords (what helpers that build one pass on)."""

    max_tokens: int
    max_response_tokens: int
    max_rounds: int
    tool_timeout: float | None
    tool_result_max_tokens: int | None


class Agent:
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
        toolsets: Sequence[AgentToolset] = (),
    ) -> None:
        self._settings = AgentSettings(
            max_tokens, max_response_tokens, max_rounds, tool_timeout, tool_result_max_tokens
        )
        self.model_choice: ModelChoice | None = None
        if model is None and llm is None:
            self.model_choice = default_model()
            model = self.model_choice.model
        self.model = model or DEFAULT_MODEL
        self._api_key = api_key
        self._fallbacks = list(fallbacks or ())
        self._llm = llm
        self._owns_llm = llm is None
        self._options = TurnOptions()  # what the with_* methods set, replaced on every change
        skills = self._skills = SkillToolset()
        self._deferred = DeferredTools(engine=lambda: skills.engine)  # ranked as skills are
        self._session = AgentSession([skills, self._deferred])  # the toolsets: skills, deferred tools, ...
        self._tools = OwnTools(reserved=self._session.reserved)
        self._config: tuple[TurnOptions, int, TurnConfig] | None = None  # the last config, and what it was built from
        self._conversation = Conversation()
        for toolset in toolsets:
            self.add_toolset(toolset)

    # -- configuration -------------------------------------------------------

    def add_toolset(self, toolset: AgentToolset) -> Agent:
        """Add a toolset (see :mod:`semif_agent.agent.toolsets`): each round it adds its instructions, tools and
        hooks after those added before it. A tool name it claims that is taken is a :class:`ToolNameCollisionError`."""
        self._session.add(toolset, self._tools.taken())
        return self

    def with_system_prompt(self, prompt: str) -> Agent:
        """Set the system prompt (replacing any earlier one)."""
        return self._set(system_prompt=str(prompt))

    def with_tools(self, tools: Sequence[AgentTool]) -> Agent:
        """Add tools (``defer_loading`` ones wait for ``search_tools``). A taken name is a :class:`ToolNameCollisionError`."""
        tools = list(tools)
        for item in tools:
            if not isinstance(item, AgentTool):
                raise AgentConfigError(f"with_tools takes AgentTool values (use @tool), got {type(item).__name__}")
        self._tools.check(t.name for t in tools)
        deferred = [t for t in tools if t.defer_loading]
        if deferred and not self._deferred.tools:  # the first deferred tools bring search_tools
            claim(
                [SEARCH_TOOLS],
                {**self._session.reserved(), **self._tools.taken(), **{t.name: "another tool" for t in tools}},
            )
        if deferred:
            self._deferred.add(deferred)
        self._tools.add_tools([t for t in tools if not t.defer_loading])
        return self

    def with_usage_limits(self, limits: UsageLimits | Mapping[str, Any]) -> Agent:
        """Limit what each turn (and every subagent turn inside it) may spend: see :class:`UsageLimits`."""
        return self._set(limits=limits if isinstance(limits, UsageLimits) else UsageLimits(**dict(limits)))

    def with_hooks(
        self, *, pre_tool_use: Sequence[PreToolHook] | None = None, post_tool_use: Sequence[PostToolHook] | None = None
    ) -> Agent:
        """Add hooks around tool calls (see :mod:`semif_agent.agent.hooks`)."""
        for hook in [*(pre_tool_use or ()), *(post_tool_use or ())]:
            if not callable(hook):
                raise AgentConfigError(f"a hook must be callable, got {type(hook).__name__}")
        options = self._options
        return self._set(
            pre_hooks=(*options.pre_hooks, *(pre_tool_use or ())),
            post_hooks=(*options.post_hooks, *(post_tool_use or ())),
        )

    def with_approval(self, callback: ApprovalCallback | None) -> Agent:
        """Set the approval callback for ``requires_approval`` tools and calls a hook sends to ``ask``."""
        if callback is not None and not callable(callback):
            raise AgentConfigError("the approval callback must be callable")
        return self._set(approval=callback)

    def with_output_model(
        self, output_model: type[BaseModel], *, mode: str = "tool", max_output_retries: int = 1
    ) -> Agent:
        """Require structured output validated by ``output_model`` (see :mod:`semif_agent.agent.output`)."""
        spec = OutputSpec.build(output_model, mode, max_output_retries)
        if spec.mode == "tool":
            self._tools.claim(FINAL_RESULT, "structured output in tool mode")
        else:
            self._tools.release(FINAL_RESULT)
        return self._set(output=spec)

    def with_callbacks(self, callbacks: Sequence[AgentCallback]) -> Agent:
        """Add observers of the loop (their exceptions are logged and swallowed)."""
        return self._set(callbacks=(*self._options.callbacks, *callbacks))

    def with_context_management(self, config: Mapping[str, object]) -> Agent:
        """Pass an Anthropic ``context_management`` config with every request.

        It reaches providers that declare ``supports_context_management``;
        the others ignore it.
        """
        return self._set(context_management=dict(config))

    def with_memory(self, memory: MemoryManager) -> Agent:
        """Keep the conversation in ``memory``'s session (it outlives the agent); facts via ``memory_tools``/``memory_skill``."""
        if not isinstance(memory, MemoryManager):
            raise AgentConfigError(f"with_memory takes a MemoryManager, got {type(memory).__name__}")
        if self._options.output is not None and self._options.output.mode == "prompted":
            raise AgentConfigError("with_memory cannot be combined with prompted structured output; use mode='tool'")
        self._conversation.memory = memory
        return self

    def with_memory_tool(self, backend: FileMemoryBackend | str | os.PathLike[str]) -> Agent:
        """Add the ``memory`` tool over ``backend`` (or its base path) and the memory protocol to the system prompt."""
        return self.add_toolset(memory_toolset(backend))

    def with_scope(self, scope: RetrievalScope | Mapping[str, object] | None) -> Agent:
        """Set the scope published during each tool call; a subagent's is intersected with its parent's."""
        return self._set(scope=RetrievalScope.coerce(scope))

    def with_budget(self, budget: TokenBudget | Mapping[str, object] | None) -> Agent:
        """Cap what enters the context window (see :class:`~semif_agent.agent.TokenBudget`; ``None``: no caps)."""
        return self._set(budget=TokenBudget.coerce(budget))

    def with_context_steps(self, steps: Sequence[Step]) -> Agent:
        """Add context pipeline steps (additive): each turn runs them on the message before the conversation is
        fitted in, e.g. :func:`~semif_agent.agent.pipeline.retriever_step`; their passages count against the
        budget's ``context_tokens`` and ``total_tokens``."""
        checked = ContextPipeline(steps).steps
        return self._set(context_steps=(*self._options.context_steps, *checked))

    def with_mcp_servers(self, servers: Sequence[str | MCPServerConfig]) -> Agent:
        """Add MCP servers (configs, URLs or command lines), connected on the first async turn."""
        from .toolkits.mcp import MCPServers

        servers = [servers] if isinstance(servers, str) else list(servers)
        known = self._session.find(MCPServers)
        if known is None:
            return self.add_toolset(MCPServers(servers))
        known.add(servers)
        return self

    def with_skills(
        self,
        skills: SkillSource,
        *,
        allow_scripts: bool = False,
        workspace: Folder | None = None,
        env_router: EnvironmentRouter | None = None,
    ) -> Agent:
        """Register skills (see :mod:`semif_agent.agent.agent_skills`): a list of :class:`Skill`; a folder (``str`` or
        ``Path``) of SKILL.md skills, or of one, on demand (broken ones are reported and skipped); or a
        :class:`~semif_agent.workspace.Workspace` (or its :class:`~semif_agent.loop.SkillRunner`): its every
        skill on demand behind its own tree, ranked as ``semif run`` routes, the choices logged in its
        decision log (see :mod:`semif_agent.agent.agent_skills.workspace`).

        ``allow_scripts`` lets the model run SKILL.md scripts, sandboxed, in ``workspace`` (default: the
        Workspace's folder, else a temporary one), and runs active skills' ``pre_step``/``post_step`` hooks
        around each round. A taken name is a ``SkillNameCollisionError``; a tool clash a ``ToolNameCollisionError``.
        ``env_router`` answers the scripts and hooks of environment skills (a :class:`Skill` whose ``environment``
        is set, as one read from a catalog's ``env:<name>@...`` skills is) in place of running them; it is the
        agent's, for every skill and its subagents (see :mod:`semif_agent.catalog.environment`).
        """
        if env_router is not None:
            self.skills.runtime.set_env_router(env_router)
        self._skills.add_source(
            skills, self._taken(besides=self._skills), allow_scripts=allow_scripts, workspace=workspace
        )
        return self

    def with_skill(self, skill: Skill) -> Agent:
        """:meth:`with_skills` of one skill."""
        return self.with_skills([skill])

    def with_skills_directory(
        self,
        path: str | os.PathLike[str],
        *,
        allow_scripts: bool = False,
        workspace: str | os.PathLike[str] | None = None,
    ) -> Agent:
        """:meth:`with_skills` of a folder of SKILL.md skills."""
        return self.with_skills(path, allow_scripts=allow_scripts, workspace=workspace)

    def with_skill_from_path(
        self,
        path: str | os.PathLike[str],
        *,
        activation: Literal["always", "on_demand"] = "on_demand",
        allow_scripts: bool = False,
    ) -> Agent:
        """:meth:`with_skills` of the SKILL.md skill in one folder (raises when it cannot be loaded)."""
        return self.with_skills([Skill.from_path(path, activation=activation)], allow_scripts=allow_scripts)

    def with_workspace(self, workspace: Workspace | SkillRunner, *, allow_scripts: bool = False) -> Agent:
        """:meth:`with_skills` of a workspace (or its :class:`~semif_agent.loop.SkillRunner`)."""
        return self.with_skills(workspace, allow_scripts=allow_scripts)

    def with_skill_discovery(self, **settings: object) -> Agent:
        """Tune skill discovery (see :class:`~semif_agent.agent.agent_skills.discovery.DiscoverySettings`).

        ``prompt_budget`` (tokens), ``shortlist``, ``search_results``, ``engine`` (it also ranks deferred tools),
        ``log`` (a decision log or its path: every shortlist and activation becomes a training row).
        """
        self._skills.registry().discovery.configure(**settings)
        return self

    def with_subagents(self, definitions: Sequence[SubagentDefinition]) -> Agent:
        """Register subagents and the ``task(agent_name, task)`` tool (see :mod:`semif_agent.agent.subagents`)."""
        subagents = self._session.find(Subagents)
        claim([TASK], self._taken(besides=subagents))
        if subagents is None:
            subagents = Subagents(self._spawn)
            self.add_toolset(subagents)
        subagents.add(list(definitions))
        return self

    def with_compaction(self, trigger_tokens: int, *, keep_last: int = 4, compact_fn: CompactFn | None = None) -> Agent:
        """Summarise older messages when a turn's messages pass ``trigger_tokens`` (see :mod:`semif_agent.agent.compaction`)."""
        return self._set(compaction=Compaction.build(trigger_tokens, keep_last, compact_fn))

    def as_tool(
        self, name: str, description: str, *, output_model: type[BaseModel] | None = None, max_output_retries: int = 1
    ) -> AgentTool:
        """This agent as a tool taking one ``task``: each call is a clean turn (see :mod:`semif_agent.agent.subagents`)."""
        return agent_tool(self, name, description, output_model, max_output_retries)

    def _taken(self, *, besides: AgentToolset | None = None) -> dict[str, str]:
        """The tool names held by the agent's own tools and its toolsets (``besides`` left out)."""
        return {**self._tools.taken(), **self._session.reserved(besides=besides)}

    def _set(self, **options: Any) -> Agent:
        self._options = replace(self._options, **options)
        return self

    def _turn_config(self, output: OutputSpec | None = None) -> TurnConfig:
        """The config turns run with (``output`` overrides the agent's for a one-off config)."""
        options, version, cached = self._options, self._tools.version, self._config
        if cached is not None and output is None and cached[0] is options and cached[1] == version:
            return cached[2]
        chosen = output or options.output
        if self._conversation.memory is not None and chosen is not None and chosen.mode == "prompted":
            raise AgentConfigError(
                "structured output in prompted mode needs an agent without with_memory; use mode='tool'"
            )
        system_prompt = options.system_prompt
        config = TurnConfig.build(
            tools=self._tools.tools,
            specs=self._tools.specs,
            schema_tokens=self._tools.schema_tokens,
            output=chosen,
            system_prompt=system_prompt,
            session=self._session,
            **options.turn_fields(),
            **self._settings.as_dict(),
        )
        if output is None:
            self._config = (options, version, config)
        return config

    def _spawn(self, definition: SubagentDefinition) -> Agent:
        """The agent of a subagent definition: this one's settings, the definition's prompt, tools, skills and limits."""
        settings = replace(self._settings, max_rounds=definition.max_rounds)
        child = Agent(definition.model or self.model, llm=None if definition.model else self.llm, **settings.as_dict())
        child.with_system_prompt(definition.system_prompt).with_tools(list(definition.tools))
        if definition.skills:
            registry = child._skills.registry(
                catalog=self.skills.catalog,
                discovery=self.skills.discovery.settings,
                env_router=self.skills.runtime.env_router,
            )
            registry.share(self.skills, [s for s in definition.skills if isinstance(s, str)])
            child.with_skills([s for s in definition.skills if isinstance(s, Skill)])
        if definition.output_model is not None:
            child.with_output_model(definition.output_model)
        if definition.usage_limits is not None:
            child.with_usage_limits(definition.usage_limits)
        if definition.scope is not None:
            child.with_scope(definition.scope)
        return child

    # -- state ---------------------------------------------------------------

    @property
    def llm(self) -> LLMProvider:
        """The provider (built from ``model`` on first use)."""
        if self._llm is None:
            self._llm = create_provider(self.model, api_key=self._api_key, fallbacks=self._fallbacks or None)
        return self._llm

    @property
    def tools(self) -> tuple[AgentTool, ...]:
        """The agent's own tools, then those its toolsets show in every round (an MCP server's once connected)."""
        return (*self._tools, *(t for toolset in self._session.toolsets for t in toolset.fixed_tools))

    @property
    def toolsets(self) -> tuple[AgentToolset, ...]:
        """The agent's toolsets, in the order they add to a round (its skills and deferred tools first)."""
        return tuple(self._session.toolsets)

    @property
    def skills(self) -> SkillRegistry:
        """This agent's skills: registration, activation state, discovery."""
        return self._skills.registry()

    def save_state(self) -> dict[str, object]:
        """The session as JSON-ready data: skill activation (the catalog runtime's state), skills shown, deferred tools loaded."""
        return self._session.to_state()

    def restore_state(self, state: Mapping[str, object]) -> None:
        """Restore what :meth:`save_state` saved (into an agent configured the same way)."""
        self._session.load_state(dict(state))

    @property
    def last_turn(self) -> TurnDiagnostics | None:
        """The diagnostics of the last turn that ended (also when its stream was abandoned)."""
        return self._conversation.last_turn

    @property
    def last_output(self) -> BaseModel | None:
        """The structured output of the last turn that ended (``None`` if it had none)."""
        return self._conversation.last_output

    @property
    def history(self) -> tuple[Message, ...]:
        """The conversation so far (with memory: its session's), tool calls and results included."""
        return self._conversation.messages()

    def clear_history(self) -> None:
        """Start a new session: forget the conversation (with memory, its session's history), the skills activated
        and the tools loaded (the configuration stays)."""
        self._conversation.clear()
        self._session.reset()

    # -- as a subagent (the Delegate protocol) ---------------------------------

    @property
    def delegates(self) -> bool:
        """True when this agent can start subagents: registered ones, or a subagent tool among its tools or skills'."""
        return any(is_subagent_tool(t) for t in self._tools) or self._session.delegates()

    def task_turn(self, task: str, *, output: OutputSpec | None = None, parent_tool_call_id: str | None = None) -> Turn:
        """A clean turn on ``task``: no conversation before it, not remembered after (a subagent's)."""
        return Turn(self._turn_config(output), self.llm, task, parent_tool_call_id=parent_tool_call_id)

    # -- the loop ------------------------------------------------------------

    async def astream(self, message: str) -> AsyncGenerator[AgentEvent, None]:
        """Run a turn; yield its events (:data:`~semif_agent.agent.events.AgentEvent`), ``TurnFinished`` last."""
        await self._session.open(self._tools.taken())
        config = self._turn_config()
        window = await self._window(str(message), config)
        if window.context:  # the passages ride in this turn's system prompt only
            config = replace(config, system_prompt=window.system_prompt)
        turn = Turn(config, self.llm, str(message), history=window.history, on_finish=self._conversation.remember)
        async with aclosing(turn.events()) as events:
            async for event in events:
                yield event

    @property
    def pipeline(self) -> ContextPipeline:
        """The context pipeline the next turn's window is built on: the context steps, then the conversation,
        under the budget (see :mod:`semif_agent.agent.pipeline`). ``agent.pipeline.build(message)`` shows what a
        turn on ``message`` would see; it is made from the agent's settings each time it is asked for, so change
        it with :meth:`with_context_steps` and :meth:`with_budget`."""
        settings, options = self._settings, self._options
        history = history_step(self._conversation, max_tokens=settings.max_tokens - settings.max_response_tokens)
        return ContextPipeline([*options.context_steps, history], budget=options.budget)

    async def _window(self, message: str, config: TurnConfig) -> ContextWindow:
        """The window of a turn on ``message``: built under the turn's scope, counting the tool schemas and the
        answer's room apart."""
        reserved = (config.schema_tokens if config.specs else 0) + config.max_response_tokens
        return await self.pipeline.abuild(
            message, system_prompt=config.system_prompt, scope=effective_scope(config.scope), reserved=reserved
        )

    def stream(self, message: str) -> Iterator[AgentEvent]:
        """:meth:`astream` for sync code (not inside a running event loop)."""
        self._refuse_sync_with_mcp("Agent.stream and Agent.chat")
        self.llm  # noqa: B018 - built here, in the caller's context (where override_provider applies)
        return iter_sync(self.astream(message), "Agent.stream")

    async def achat(self, message: str) -> AsyncGenerator[str, None]:
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
        if self._options.output is None:
            raise AgentConfigError("run() and arun() need with_output_model(...); use chat() or stream() for text")
        last: AgentEvent | None = None
        async for last in self.astream(message):  # noqa: B007 - the last event is the result
            pass
        return _output_of(last)

    def run(self, message: str) -> BaseModel:
        """:meth:`arun` for sync code (not inside a running event loop)."""
        self._refuse_sync_with_mcp("Agent.run")
        if self._options.output is not None:
            self.llm  # noqa: B018 - built here, in the caller's context (where override_provider applies)
        return run_sync(self.arun(message), "Agent.run")

    def _refuse_sync_with_mcp(self, what: str) -> None:
        needs = self._session.async_only
        if needs:
            raise AgentConfigError(
                f"{what} cannot be used with {needs[0].name}: they need the async variant "
                "(astream, achat or arun, then aclose or `async with agent:`)"
            )

    async def aclose(self) -> None:
        """Close MCP connections and the session's resources; release the provider this agent built
        (one passed as ``llm`` is the caller's to close)."""
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
        return f"<Agent {model} tools={len(self.tools)}>"  # its own and its toolsets': what the model is shown


def _text_of(event: AgentEvent) -> str:
    """What ``chat`` shows of an event: top-level text; a failed turn's error is raised."""
    if isinstance(event, TextDelta):
        return event.text if event.parent_tool_call_id is None else ""
    if isinstance(event, TurnFinished) and event.exception is not None and event.parent_tool_call_id is None:
        raise event.exception
    return ""


def _output_of(finished: AgentEvent | None) -> BaseModel:
    if not isinstance(finished, TurnFinished):  # pragma: no cover - a turn always ends with TurnFinished
        raise OutputMissingError("the turn ended without finishing")
    if finished.exception is not None:
        raise finished.exception
    if finished.output is None:
        stopped = finished.diagnostics.stopped_by
        raise OutputMissingError(
            f"the turn ended without valid structured output (stopped_by={stopped!r})", diagnostics=finished.diagnostics
        )
    return finished.output
