"""A workspace's code skills as agent tools, run through the skill loop.

::

    from semif_agent.loop import SkillRunner
    from semif_agent.agent import Agent

    runner = SkillRunner(workspace)
    agent = Agent("openai/gpt-4o-mini").with_skills(runner)   # skills on demand (see .workspace)
    agent = Agent("openai/gpt-4o-mini").with_tools(skill_tools(runner))   # or every code skill as a tool

Each skill ``category.leaf`` becomes the tool ``skill__category__leaf``
taking one ``request`` string (the skill's own allowed inputs and examples
are in its description). Calling it runs that skill on the request through
:meth:`SkillRunner.arun <semif_agent.loop.SkillRunner.arun>` (predict, act,
observe, assess, every decision logged) and returns the run's outcome as
JSON. Skills may write, so their calls run one at a time. Stubs (manifests
without a body) are left out: they cannot act.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from ..tools import AgentTool

if TYPE_CHECKING:
    from ...loop.runner import RunResult, SkillRunner
    from ...tree.manifests import SkillManifest

PREFIX = "skill__"
_EXAMPLES = 3
_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "request": {
            "type": "string",
            "description": "The request for this skill in plain words, with every detail it needs (names, dates, text).",
        },
    },
    "required": ["request"],
    "additionalProperties": False,
}
# What a tool result keeps of RunResult.to_dict(): the outcome, not the decision rows.
_RESULT_KEYS = ("skill", "prediction", "action_log", "new_state", "changes", "assessment", "error")


def skill_tool_name(skill: str) -> str:
    """The tool name for skill ``skill`` (``email.compose`` -> ``skill__email__compose``), at most 64 characters."""
    name = PREFIX + skill.replace(".", "__")
    if len(name) <= 64:
        return name
    digest = hashlib.sha1(skill.encode()).hexdigest()[:8]
    return f"{name[:55]}_{digest}"


def skill_tools(runner: SkillRunner, *, include_stubs: bool = False) -> list[AgentTool]:
    """One tool per code skill of ``runner``'s tree, in name order."""
    skills = sorted(runner.tree.skills.values(), key=lambda s: s.name)
    return [skill_tool(runner, s) for s in skills if include_stubs or not s.is_stub]


def skill_tool(runner: SkillRunner, skill: SkillManifest) -> AgentTool:
    """The tool that runs ``skill`` on a request."""
    name = skill.name

    async def run_skill(request: str) -> str:
        result = await runner.arun(request, skill=name)
        return json.dumps(run_summary(result), ensure_ascii=False, default=str)

    run_skill.__name__ = skill_tool_name(name)
    return AgentTool(
        name=skill_tool_name(name),
        description=_description(skill),
        input_schema=_INPUT_SCHEMA,
        fn=run_skill,
    )


def run_summary(result: RunResult) -> dict[str, object]:
    """What the model is told about a skill run: what it did and how it was assessed."""
    data = result.to_dict()
    summary = {key: data.get(key) for key in _RESULT_KEYS}
    assessment = summary.get("assessment") or {}
    summary["assessment"] = {k: assessment.get(k) for k in ("label", "reason")}
    return summary


def _description(skill: SkillManifest) -> str:
    parts = [skill.description.strip() or f"The {skill.name} skill."]
    if skill.allowed_inputs:
        inputs = skill.allowed_inputs if isinstance(skill.allowed_inputs, str) else json.dumps(skill.allowed_inputs)
        parts.append(f"Takes: {inputs}")
    if skill.examples:
        parts.append("For example: " + "; ".join(f'"{e}"' for e in skill.examples[:_EXAMPLES]))
    return " ".join(parts)
