"""The Agent follows a SKILL.md skill the route chose: the model-backed :class:`~semif_agent.loop.skill_md_run.SkillMdExecutor`.

::

    from semif_agent.assistant.skill_runs import AgentSkillExecutor
    runner = SkillRunner(workspace, skill_md_executor=AgentSkillExecutor(provider))

For each run, a fresh :class:`~semif_agent.agent.Agent` on ``provider`` gets
the skill registered and activated before the turn (its instructions in
the system prompt, its files readable with ``read_skill_file``, its scripts
runnable with ``run_skill_script`` in the sandbox when scripts are
allowed), and the request as its message. The turn's answer is the run's
new state; the action log says what the agent did (rounds, tools, how the
turn ended) for the assessment.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Unpack

from .._text import clip, plural
from ..agent.agent import Agent, AgentOptions
from ..agent.errors import AgentError
from ..llm.calllog import LoggedProvider
from ..loop.skill_md_run import SkillMdOutcome, SkillMdRun
from ..skills import ActionResult

if TYPE_CHECKING:
    from ..engine.base import Engine
    from ..llm.protocol import LLMProvider

SYSTEM_PROMPT = (
    "You carry out the user's request by following the active skill's instructions. The skill was chosen "
    "for this request; read its instructions (and the files they point to) before you act, and finish with "
    "a short account of what you did or found."
)
_ANSWER = 600


class AgentSkillExecutor:
    """Runs a SKILL.md leaf through an Agent on ``provider`` (``options`` go to :class:`Agent`: ``max_rounds``, ...).

    ``judge`` assesses the runs it makes (e.g. the LLM judge of the same
    settings); without one, the runner's judge does.
    """

    def __init__(self, provider: LLMProvider, *, judge: Engine | None = None, **options: Unpack[AgentOptions]) -> None:
        self.provider = provider
        self.judge = judge
        self.options = options

    async def __call__(self, run: SkillMdRun) -> SkillMdOutcome:
        provider = self.provider
        if isinstance(provider, LoggedProvider):  # the run's model calls say which run they belong to
            provider = provider.with_context(run_id=run.run_id)
        agent = Agent(llm=provider, **self.options).with_system_prompt(SYSTEM_PROMPT)
        agent.with_skill_from_path(run.folder, activation="on_demand", allow_scripts=run.allow_scripts)
        name = run.leaf.source_name or run.leaf.name
        agent.skills.use_workspace(run.workspace.root)
        agent.skills.activate(name)
        tools: list[str] = []
        finished = None
        async for event in agent.astream(run.request.text):
            if event.type == "tool_finished":
                tools.append(f"{event.name}{' (error)' if event.is_error else ''}")
            elif event.type == "turn_finished":
                finished = event
        text = (finished.text if finished is not None else "").strip()
        diagnostics = finished.diagnostics if finished is not None else None
        stopped = diagnostics.stopped_by if diagnostics is not None else "error"
        if diagnostics is not None and diagnostics.error is not None:
            raise AgentError(f"the agent's turn failed: {diagnostics.error.message}")
        rounds = len(diagnostics.rounds) if diagnostics is not None else 0
        used = f"tools: {', '.join(tools)}" if tools else "no tools"
        answer = clip(text, _ANSWER, one_line=False)
        log = (
            f"{run.leaf.name}: the agent ({agent.llm.model_id}) followed the skill's instructions in "
            f"{plural(rounds, 'round')} ({used}; ended: {stopped}). It answered: {answer or '(nothing)'}"
        )
        return SkillMdOutcome(
            ActionResult(log, text or run.request.text),
            judge=self.judge,
            details={
                "stopped_by": stopped,
                "rounds": rounds,
                "tools": tools,
                "total_tokens": diagnostics.total_tokens if diagnostics is not None else 0,
            },
        )
