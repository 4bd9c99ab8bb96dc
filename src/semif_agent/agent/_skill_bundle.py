"""The one seam where ready-made tool groups (memory, retrieval) become a skill.

:func:`memory_skill <semif_agent.agent.memory_skill>` and
:func:`rag_skill <semif_agent.agent.rag_skill>` hand their tools here with
the skill's name, description, instructions and activation, and get back a
:class:`~semif_agent.agent.skills.Skill`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from .skills import Skill
from .tools import AgentTool


def skill_from_tools(
    name: str,
    description: str,
    tools: Sequence[AgentTool],
    *,
    instructions: str = "",
    activation: Literal["always", "on_demand"] = "always",
    tags: Sequence[str] = (),
) -> Skill:
    """A ``Skill`` named ``name`` made of ``tools``."""
    return Skill(
        name=name,
        description=description,
        instructions=instructions,
        tools=tuple(tools),
        activation=activation,
        tags=tuple(tags),
    )
