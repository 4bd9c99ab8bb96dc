"""The Agent's configuration for skills, subagents and compaction (a part of :class:`~.agent.Agent`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from .compaction import CompactFn, Compaction
from .skills import Skill
from .subagents import SubagentDefinition, agent_tool
from .tools import AgentTool


if TYPE_CHECKING:
    from .agent import Agent


class SkillConfig:
    """``with_skill(s)``, ``with_skills_directory``, ``with_skill_from_path``, ``with_workspace``, ``with_skill_discovery``,
    ``with_subagents``, ``with_compaction`` and ``as_tool``. Mixed into :class:`~.agent.Agent`."""

    def with_skill(self, skill: Skill) -> Agent:
        """Register one skill (see :mod:`semif_agent.agent.skills`)."""
        return self.with_skills([skill])

    def with_skills(self, skills: Sequence[Skill]) -> Agent:
        """Register skills. A taken name is a ``SkillNameCollisionError``; a tool clash a ``ToolNameCollisionError``."""
        self._session.add_skills(skills, self._taken_names())
        return self._changed()

    def with_skills_directory(self, path: str | os.PathLike[str], *, allow_scripts: bool = False,
                              workspace: str | os.PathLike[str] | None = None) -> Agent:
        """Register the SKILL.md skills under ``path`` as on-demand skills (broken ones are reported and skipped).

        ``allow_scripts`` lets the model run their scripts, sandboxed, in ``workspace`` (default: a temporary folder).
        """
        self._session.load_skills(path, self._taken_names(), allow_scripts=allow_scripts, workspace=workspace)
        return self._changed()

    def with_skill_from_path(self, path: str | os.PathLike[str], *, activation: Literal["always", "on_demand"] = "on_demand",
                             allow_scripts: bool = False) -> Agent:
        """Register the SKILL.md skill of one folder (raises when it cannot be loaded)."""
        self._session.add_skills([Skill.from_path(path, activation=activation)], self._taken_names(), allow_scripts=allow_scripts)
        return self._changed()

    def with_workspace(self, workspace: Any, *, allow_scripts: bool = False) -> Agent:
        """Give the agent a workspace's skills, code and SKILL.md, on demand behind the workspace's own tree.

        ``workspace`` is a :class:`~semif_agent.loop.SkillRunner` (its engine,
        tree and log are used) or a :class:`~semif_agent.workspace.Workspace`.
        Skills are ranked as ``semif run`` routes, and every shortlist and
        activation is logged in the workspace's decision log (see
        :mod:`semif_agent.agent.workspace_skills`). ``allow_scripts`` lets the
        model run SKILL.md skills' scripts, sandboxed, in the workspace.
        """
        from ..loop.runner import SkillRunner
        from .workspace_skills import discovery_settings, workspace_skills

        runner = workspace if isinstance(workspace, SkillRunner) else SkillRunner(workspace)
        self._session.configure_discovery(**discovery_settings(runner))
        self._session.add_skills(workspace_skills(runner), self._taken_names(), allow_scripts=allow_scripts)
        self._session.skill_registry().use_workspace(runner.workspace.root)
        return self._changed()

    def with_skill_discovery(self, **settings: Any) -> Agent:
        """Tune skill discovery (see :class:`~semif_agent.agent.discovery.DiscoverySettings`).

        ``prompt_budget`` (tokens), ``shortlist``, ``search_results``, ``engine`` (it also ranks deferred tools),
        ``log`` (a decision log or its path: every shortlist and activation becomes a training row).
        """
        self._session.configure_discovery(**settings)
        return self._changed()

    def with_subagents(self, definitions: Sequence[SubagentDefinition]) -> Agent:
        """Register subagents and the ``task(agent_name, task)`` tool (see :mod:`semif_agent.agent.subagents`)."""
        self._session.add_subagents(self, list(definitions), self._taken_names())
        return self._changed()

    def with_compaction(self, trigger_tokens: int, *, keep_last: int = 4, compact_fn: CompactFn | None = None) -> Agent:
        """Summarise older messages when a turn's messages pass ``trigger_tokens`` (see :mod:`semif_agent.agent.compaction`)."""
        self._compaction = Compaction.build(trigger_tokens, keep_last, compact_fn)
        return self._changed()

    def as_tool(self, name: str, description: str, *, output_model: type[BaseModel] | None = None,
                max_output_retries: int = 1) -> AgentTool:
        """This agent as a tool taking one ``task``: each call is a clean turn (see :mod:`semif_agent.agent.subagents`)."""
        return agent_tool(self, name, description, output_model, max_output_retries)
