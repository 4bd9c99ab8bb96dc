"""The one seam where ready-made tool groups (memory, retrieval) become a skill.

:func:`memory_skill <semif_agent.agent.memory_skill>` and
:func:`rag_skill <semif_agent.agent.rag_skill>` hand their tools here with
the skill's name, description, instructions and activation. When the agent's
``Skill`` type (:mod:`semif_agent.agent.skills`) is present this returns a
``Skill``; without it, the tools themselves (a list ready for
``Agent.with_tools``; the instructions are then not used).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from .tools import AgentTool


def skill_from_tools(
    name: str,
    description: str,
    tools: Sequence[AgentTool],
    *,
    instructions: str = "",
    activation: Literal["always", "on_demand"] = "always",
    tags: Sequence[str] = (),
) -> Any:
    """A ``Skill`` named ``name`` made of ``tools`` (the list of tools where the agent has no ``Skill`` type)."""
    try:
        from .skills import Skill  # type: ignore[import-not-found]  # the skills half of the agent
    except ImportError:
        return list(tools)
    return Skill(
        name=name,
        description=description,
        instructions=instructions,
        tools=tuple(tools),
        activation=activation,
        tags=tuple(tags),
    )
