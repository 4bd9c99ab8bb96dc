"""Subagents: other agents an orchestrator delegates to, through ``task(agent_name, task)`` or ``Agent.as_tool``.

::

    researcher = SubagentDefinition(name="researcher", description="Finds facts on the web.",
                                    system_prompt="Cite your sources.", tools=(search_web,))
    agent = Agent(llm=provider).with_subagents([researcher])      # adds the task tool
    summarizer = Agent(llm=provider).with_system_prompt("Summarise.").as_tool("summarize", "Summarise a text.")

- **Isolated, clean, lazy.** Each definition becomes its own :class:`Agent`
  (own system prompt, tools and skills, no memory of the orchestrator's
  conversation), built on its first task. Every task starts from a clean
  context: the task text is the child's whole conversation, and no skill
  activated (nor deferred tool loaded) by an earlier task is carried over.
  An agent wrapped with ``as_tool`` is the caller's: each call is a clean
  turn too, but its session (skills activated) is its own to reset.
- **No nesting.** A subagent cannot start subagents: definitions whose tools
  include a subagent tool, and ``as_tool`` on an agent with subagents, are
  refused at registration (:class:`SubagentNestingError`); a subagent tool
  called inside a subagent run is refused again at call time.
- **One budget.** A child turn runs inside the orchestrator's tool call and
  takes a child of its run pool (:mod:`.usage`): every token and tool call
  a child spends is debited to the whole run, and a child's own
  ``usage_limits`` can only narrow it.
- **Visible.** The child's events are forwarded into the orchestrator's
  stream as they come, flat, with ``parent_tool_call_id`` set to the task
  call's id; its :class:`ChildTurn` (with its diagnostics, also when it died
  mid-turn) is on the orchestrator's ``TurnDiagnostics.children``.
- **Partial results are marked.** A child cut by a limit, the round cap or
  a stuck loop still answers (after its wrap-up round), and the result the
  orchestrator sees starts with ``[partial result: ...]``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import aclosing
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..errors import InvalidArgumentError
from ._run_context import SUBAGENT_MARK, current_run, inside_subagent, runs_subagent
from ._schema import model_schema
from ._validated import ValidatedModel
from .agent_skills.skill import Skill
from .errors import AgentConfigError, AgentError, SubagentNestingError, ToolNameCollisionError
from .output import OutputSpec
from .scope import RetrievalScope
from .tools import AgentTool
from .toolsets import AgentToolset, Prepared, ToolsetView
from .usage import ChildTurn, UsageLimits

if TYPE_CHECKING:
    from ._ports import Delegate
    from ._turn import Turn

TASK = "task"
PARTIAL = "[partial result: {who} stopped early ({why}); the answer below may be incomplete]"


class SubagentDefinition(ValidatedModel):
    """A subagent for :meth:`Agent.with_subagents` (the Agent API's fields, plus ``skills``).

    ``model`` ``None`` inherits the orchestrator's provider. ``tools`` and
    ``skills`` are all the child has: ``skills`` holds :class:`Skill`
    objects, or names of the orchestrator's skills (shared through its
    catalog). ``usage_limits`` are narrower per-turn limits on top of the
    run's. ``scope`` is handed to the child's ``with_scope`` when agents
    have one.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    name: str
    description: str
    system_prompt: str = ""
    model: str | None = None
    tools: tuple[AgentTool, ...] = ()
    output_model: type[BaseModel] | None = None
    max_rounds: int = Field(default=6, ge=1)
    usage_limits: UsageLimits | None = None
    scope: RetrievalScope | Mapping[str, object] | None = None
    skills: tuple[Skill | str, ...] = ()

    @field_validator("name")
    @classmethod
    def _check_name(cls, name: str) -> str:
        if not name.strip() or any(c.isspace() for c in name):
            raise ValueError(f"subagent name {name!r} must be a non-empty word")
        return name


class _TaskInput(BaseModel):
    agent_name: str = Field(description="Which subagent does the task.")
    task: str = Field(description="The task, with every detail the subagent needs: it sees nothing else.")


class _AsToolInput(BaseModel):
    task: str = Field(description="The task, with every detail needed: the agent sees nothing else.")


def is_subagent_tool(item: AgentTool) -> bool:
    """True for a tool that runs a subagent (``task``, or an ``as_tool`` tool)."""
    return runs_subagent(item.fn)


class Subagents(AgentToolset):
    """An orchestrator's subagent definitions, the agents built from them (by ``spawn``), and the ``task`` tool.

    As a toolset it shows the model the subagents' listing and ``task`` while any is registered.
    """

    name = "subagents"

    def __init__(self, spawn: Callable[[SubagentDefinition], Delegate]) -> None:
        self._spawn = spawn
        self.definitions: dict[str, SubagentDefinition] = {}
        self._agents: dict[str, Delegate] = {}
        self.changes = 0
        self._tool: AgentTool | None = None

    def __bool__(self) -> bool:
        return bool(self.definitions)

    def add(self, definitions: list[SubagentDefinition]) -> None:
        """Register definitions (names unique; no subagent tools in them: no nesting)."""
        fresh: dict[str, SubagentDefinition] = {}
        for definition in definitions:
            if not isinstance(definition, SubagentDefinition):
                raise AgentConfigError(
                    f"with_subagents takes SubagentDefinition values, got {type(definition).__name__}"
                )
            if definition.name in self.definitions or definition.name in fresh:
                raise ToolNameCollisionError(f"a subagent named {definition.name!r} is already registered")
            nested = [t.name for t in definition.tools if is_subagent_tool(t)]
            nested += [
                t.name for s in definition.skills if isinstance(s, Skill) for t in s.tools if is_subagent_tool(t)
            ]
            if nested:
                raise SubagentNestingError(
                    f"subagent {definition.name!r} would have subagent tools of its own "
                    f"({', '.join(nested)}); subagents cannot start subagents"
                )
            fresh[definition.name] = definition
        self.definitions.update(fresh)
        self._tool = None
        self.changes += 1

    @property
    def version(self) -> object:
        return self.changes

    @property
    def active(self) -> bool:
        return bool(self.definitions)

    def claims(self) -> Mapping[str, str]:
        return {TASK: "the task meta-tool"} if self.definitions else {}

    def delegates(self) -> bool:
        return bool(self.definitions)

    def view(self, prepared: Prepared) -> ToolsetView:
        return ToolsetView(self.listing(), {TASK: self.tool()}, always_allowed=frozenset({TASK}))

    def listing(self) -> str:
        lines = [f"- {d.name}: {' '.join(d.description.split())}" for d in self.definitions.values()]
        return (
            "## Subagents\nDelegate a self-contained task to a subagent with the task tool: it starts with a clean "
            "context, so give it every detail it needs. Subagents:\n" + "\n".join(lines)
        )

    def tool(self) -> AgentTool:
        if self._tool is None:
            subagents = self
            schema = model_schema(_TaskInput)
            schema["properties"]["agent_name"]["enum"] = list(self.definitions)
            schema["additionalProperties"] = False

            async def task(agent_name: str, task: str) -> str:
                return await subagents.run(agent_name, task)

            setattr(task, SUBAGENT_MARK, True)
            self._tool = AgentTool(
                name=TASK,
                fn=task,
                input_model=_TaskInput,
                input_schema=schema,
                description="Delegate a task to one of your subagents; returns its answer.",
            )
        return self._tool

    async def run(self, name: str, task: str) -> str:
        if name not in self.definitions:
            raise InvalidArgumentError(f"no subagent named {name!r}; the subagents are: {', '.join(self.definitions)}")
        child = self.agent(name)
        child.clear_history()  # isolated: nothing activated or loaded by an earlier task carries over
        return await run_subagent(child, task, name)

    def agent(self, name: str) -> Delegate:
        """The agent of definition ``name``, built the first time it is asked for."""
        built = self._agents.get(name)
        if built is None:
            built = self._agents[name] = self._spawn(self.definitions[name])
        return built

    async def aclose(self) -> None:
        for child in self._agents.values():
            await child.aclose()


def agent_tool(
    agent: Delegate, name: str, description: str, output_model: type[BaseModel] | None, max_output_retries: int
) -> AgentTool:
    """``agent`` as a tool taking one task (see :meth:`Agent.as_tool`)."""
    if agent.delegates:
        raise SubagentNestingError("an agent with subagents (or subagent tools) cannot be wrapped as a subagent tool")
    output = OutputSpec.build(output_model, "prompted", max_output_retries) if output_model is not None else None

    async def run(task: str) -> str:
        return await run_subagent(agent, task, name, output=output)

    setattr(run, SUBAGENT_MARK, True)
    return AgentTool(
        name=name, description=description, fn=run, input_model=_AsToolInput, input_schema=model_schema(_AsToolInput)
    )


async def run_subagent(agent: Delegate, task: str, name: str, *, output: OutputSpec | None = None) -> str:
    """Run one clean turn of ``agent`` on ``task`` inside the current tool call; the text the orchestrator sees."""
    run = current_run()
    inside = run.subagent
    if inside is not None:
        raise SubagentNestingError(f"subagent {inside!r} cannot start subagent {name!r}: subagents do not nest")
    if agent.delegates:
        raise SubagentNestingError(f"{name!r} has subagents of its own; subagents do not nest")
    call = run.call
    turn = agent.task_turn(task, output=output, parent_tool_call_id=call.tool_call_id if call else None)
    try:
        with inside_subagent(name):
            async with aclosing(turn.events()) as events:
                async for event in events:
                    if call is not None:
                        call.emit(event)
    finally:
        if call is not None and turn.diagnostics is not None:
            call.add_child(ChildTurn(tool_call_id=call.tool_call_id, name=name, diagnostics=turn.diagnostics))
    return child_result(turn, name)


def child_result(turn: Turn, name: str) -> str:
    """What the orchestrator sees of a child turn: its answer (its output as JSON), marked when it was cut."""
    if turn.stopped_by == "error":
        reason = turn.error.message if turn.error is not None else "unknown error"
        raise AgentError(f"subagent {name!r} failed: {reason}")
    answer = turn.output.model_dump_json() if turn.output is not None else turn.text
    if turn.stopped_by == "stop":
        return answer
    marker = PARTIAL.format(who=f"subagent {name!r}", why=f"stopped_by={turn.stopped_by}")
    return f"{marker}\n{answer}" if answer else marker
