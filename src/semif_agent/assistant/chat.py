"""The agent ``semif chat`` talks to: a workspace's skills on demand, behind a system prompt that says how to use them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Unpack

from ..agent.agent import DEFAULT_MODEL, Agent, AgentOptions

if TYPE_CHECKING:
    from ..llm.protocol import LLMProvider
    from ..loop.runner import SkillRunner

SYSTEM_PROMPT = (
    "You are the assistant of a semif workspace. Its skills each do one kind of task (email, notes, calendar, "
    "files, to-dos, and whatever else the workspace holds). When the user asks for something a skill does, "
    "activate that skill, then follow its instructions (a code skill is run with its tool, given a complete "
    "request); tell the user briefly what was done, from the result. Otherwise, answer directly."
)


def skill_agent(
    runner: SkillRunner,
    llm: LLMProvider | None = None,
    *,
    model: str | None = None,
    allow_scripts: bool = False,
    **options: Unpack[AgentOptions],
) -> Agent:
    """An :class:`Agent` with ``runner``'s workspace skills on demand (:meth:`Agent.with_skills`).

    ``llm`` is a provider (else ``model`` is built on first use); ``options``
    go to :class:`Agent` (``max_rounds``, ``tool_timeout``, ...).
    """
    agent = Agent(model or DEFAULT_MODEL, llm=llm, **options)
    return agent.with_system_prompt(SYSTEM_PROMPT).with_skills(runner, allow_scripts=allow_scripts)
