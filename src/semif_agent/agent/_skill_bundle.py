"""The one seam where ready-made tool groups (memory, retrieval) become a skill.

:func:`memory_skill <semif_agent.agent.memory_skill>` and
:func:`rag_skill <semif_agent.agent.rag_skill>` build their tools and hand
them here with the skill's name, description, instructions and activation.
Until the agent has a ``Skill`` type this returns the tools themselves (a
list ready for ``Agent.with_tools``); wiring the skill type in means
returning ``Skill(name=..., description=..., instructions=..., tools=tuple(tools),
activation=activation, tags=tags)`` from :func:`skill_from_tools`, and
nothing else changes.
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
    """A skill named ``name`` made of ``tools`` (for now: the list of tools)."""
    del name, description, instructions, activation, tags  # carried by the skill type once it exists
    return list(tools)
