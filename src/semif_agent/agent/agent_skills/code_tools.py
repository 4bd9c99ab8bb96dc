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

The model's choice passes the act gate ``semif run`` routes pass
(:func:`semif_agent.loop.gate.gate_choice`): a skill that writes, called for a
question or on a route unsure of it, does nothing, and the tool returns
``{"handed_back": true, "reason", "candidates": [{"skill", "probability",
"effects"}]}``. Called again with ``"skill"`` naming it, as ``semif run
--skill`` does, it acts.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from ...errors import InvalidArgumentError
from ...skills import REQUEST_BYTES, check_request
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
            "maxLength": REQUEST_BYTES,  # characters; the cap itself is on UTF-8 bytes (check_request)
        },
    },
    "required": ["request"],
    # "skill" is added per tool: naming the tool's own skill runs it as named, past the act gate
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
    """The tool that runs ``skill`` on a request, past the act gate (or as named, with ``"skill"``)."""
    name = skill.name

    async def run_skill(request: str, skill: str | None = None) -> str:
        if skill is not None and skill != name:
            raise InvalidArgumentError(f"this tool runs {name}; run {skill} with its own tool")
        check_request(request)  # over the cap: an error the model sees, and nothing runs or is logged
        result = await runner.arun(request, skill=name, proposed=skill is None)
        return json.dumps(run_summary(result), ensure_ascii=False, default=str)

    run_skill.__name__ = skill_tool_name(name)
    named = {
        "type": "string",
        "enum": [name],
        "description": f"Only after a call was handed back: {name!r}, to run this skill all the same when you are "
        "sure it is the right one (or the user said so).",
    }
    schema = {**_INPUT_SCHEMA, "properties": {**_INPUT_SCHEMA["properties"], "skill": named}}
    return AgentTool(name=skill_tool_name(name), description=_description(skill), input_schema=schema, fn=run_skill)


def run_summary(result: RunResult) -> dict[str, object]:
    """What the model is told about a skill run: what it did and how it was assessed; for a run the act gate
    handed back, that nothing was done, why, and the skills the route weighed."""
    gate = result.gate
    if result.handed_back and gate is not None:
        return {
            "skill": result.skill,
            "handed_back": True,
            "reason": gate.reason,
            "candidates": [c.to_dict() for c in gate.candidates],
            "next": f"Nothing was done. Ask the user, or call this tool again with skill={result.skill!r} if you "
            "are sure it is the right skill.",
        }
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
