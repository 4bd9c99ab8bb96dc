"""An agent's skills as a toolset: the listing, the meta-tools and the active skills' instructions and tools.

Each round the :class:`SkillToolset` shows the model

- the active skills' instructions and the skill listing (with the turn's
  shortlist, made by :meth:`SkillToolset.prepare` from the message), in the
  system prompt;
- the skill meta-tools (``activate_skill`` when some skill is on demand,
  ``read_skill_file`` when one has a folder, ``run_skill_script`` when one
  may run scripts, ``browse_skills``/``search_skills`` when the listing
  overflows) and the active skills' tools;
- the active skills' ``allowed-tools`` restrictions, which the session
  gates the round's calls by (:mod:`..allowed_tools`).

The registry is made on first use (:meth:`SkillToolset.registry`), so an
agent with no skills pays nothing.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from .._session import claim
from ..errors import AgentConfigError, ToolNameCollisionError
from ..subagents import is_subagent_tool
from ..tools import AgentTool
from ..toolsets import EMPTY_VIEW, AgentToolset, Prepared, ToolsetView
from ..tracing import traced_shortlist
from .discovery import BROWSE_SKILLS, SEARCH_SKILLS, DiscoverySettings
from .meta_tools import (
    ACTIVATE_SKILL,
    READ_SKILL_FILE,
    RUN_SKILL_SCRIPT,
    activate_tool,
    read_file_tool,
    run_script_tool,
)
from .registry import SkillRegistry
from .skill import Skill
from .workspace import add_workspace, workspace_runner

if TYPE_CHECKING:
    from ...catalog import SkillCatalog
    from ...catalog.environment import EnvironmentRouter
    from ...engine.base import Engine
    from ...loop.runner import SkillRunner
    from ...workspace import Workspace

    Folder = str | os.PathLike[str]
    SkillSource = Iterable[Skill] | Folder | Workspace | SkillRunner

log = logging.getLogger("semif_agent.agent")

SKILL_META_TOOLS = (ACTIVATE_SKILL, READ_SKILL_FILE, RUN_SKILL_SCRIPT, BROWSE_SKILLS, SEARCH_SKILLS)
ACTIVE_HEADER = "## Active skills\nYou are using these skills: follow their instructions."


class SkillToolset(AgentToolset):
    """One agent's skills (a :class:`SkillRegistry`, made on first use) and each round's view of them."""

    name = "skills"

    def __init__(self) -> None:
        self.skills: SkillRegistry | None = None
        self._shown: frozenset[str] = frozenset()  # the skills the model was last shown

    def registry(
        self,
        *,
        catalog: SkillCatalog | None = None,
        discovery: DiscoverySettings | None = None,
        env_router: EnvironmentRouter | None = None,
    ) -> SkillRegistry:
        """The skill registry (made on first use, on ``catalog``, with ``discovery`` settings and ``env_router`` when
        given)."""
        if self.skills is None:
            self.skills = SkillRegistry(catalog=catalog, discovery=discovery, env_router=env_router)
        return self.skills

    @property
    def engine(self) -> Engine | str | None:
        """The engine skills are ranked with (``None`` before any skill: the default)."""
        return self.skills.discovery.settings.engine if self.skills is not None else None

    @property
    def active(self) -> bool:
        return self.skills is not None and len(self.skills) > 0

    @property
    def version(self) -> object:
        skills = self.skills
        return (skills.version, skills.discovery.version, id(skills.runtime)) if skills is not None else None

    def claims(self) -> Mapping[str, str]:
        names: dict[str, str] = {}
        if self.skills is not None and len(self.skills):
            names.update((name, "a skill meta-tool") for name in SKILL_META_TOOLS)
            for skill in self.skills.skills():
                names.update((t.name, f"a tool of skill {skill.name!r}") for t in skill.tools)
        return names

    def delegates(self) -> bool:
        return self.skills is not None and any(is_subagent_tool(t) for s in self.skills.skills() for t in s.tools)

    # -- registering (``taken``: the names every other tool and toolset of the agent holds) --

    def add_source(
        self,
        source: SkillSource,
        taken: Mapping[str, str],
        *,
        allow_scripts: bool = False,
        workspace: Folder | None = None,
    ) -> None:
        """Register the skills of ``source``: skills, a folder of SKILL.md skills (or one skill's), or a workspace.

        ``workspace`` is where their scripts run (by default a workspace's own folder, else a temporary one).
        """
        if isinstance(source, (str, os.PathLike)):
            self.load_skills(source, taken, allow_scripts=allow_scripts, workspace=workspace)
            return
        runner = None if isinstance(source, (list, tuple)) else workspace_runner(source)
        if runner is not None:
            add_workspace(self, runner, taken, allow_scripts=allow_scripts)
        elif isinstance(source, Iterable):
            self.add_skills(source, taken, allow_scripts=allow_scripts)
        else:
            raise AgentConfigError(
                "with_skills takes a list of Skill, a folder of SKILL.md skills, a Workspace or a SkillRunner, "
                f"got {type(source).__name__}"
            )
        if workspace is not None:
            self.registry().use_workspace(workspace)

    def add_skills(self, skills: Iterable[Skill], taken: Mapping[str, str], *, allow_scripts: bool = False) -> None:
        """Register skills whose tools clash with no other tool (on-demand skills may share names among themselves)."""
        skills = list(skills)
        registry = self.registry()
        claim(SKILL_META_TOOLS, taken)
        always = {t.name: s.name for s in registry.skills() if s.activation == "always" for t in s.tools}
        for skill in skills:
            if not isinstance(skill, Skill):
                raise AgentConfigError(f"with_skills takes Skill values, got {type(skill).__name__}")
            claim(skill.tool_names, taken)
            if skill.activation == "always":
                clash = [name for name in skill.tool_names if name in always]
                if clash:
                    raise ToolNameCollisionError(
                        f"tool {clash[0]!r} of always-on skill {skill.name!r} is also a tool "
                        f"of always-on skill {always[clash[0]]!r}"
                    )
                always.update((name, skill.name) for name in skill.tool_names)
            registry.register(skill)
            if allow_scripts:
                registry.allow_scripts(skill.name)

    def load_skills(
        self, path: Folder, taken: Mapping[str, str], *, allow_scripts: bool = False, workspace: Folder | None = None
    ) -> list[str]:
        """Register the SKILL.md skills of folder ``path``; the names loaded."""
        claim(SKILL_META_TOOLS, taken)
        registry = self.registry()
        if workspace is not None:
            registry.use_workspace(workspace)
        return registry.load_directory(path, allow_scripts=allow_scripts)

    # -- each turn, each round ----------------------------------------------------

    async def prepare(self, message: str, *, run_id: str = "", model: str | None = None) -> Prepared:
        """The skill shortlist for ``message`` (empty when every skill is listed anyway); turn ``run_id`` begins."""
        if self.skills is None or not self.skills.on_demand_skills():
            return ()
        return await traced_shortlist(self.skills.discovery.preselect(message, run_id=run_id, model=model))

    async def run_step_hooks(self, hook_type: str, turn_id: str, index: int) -> None:
        """Run the SKILL.md ``hook_type`` hooks of the active skills allowed to run scripts (nothing when none are);
        one that fails is logged."""
        if self.skills is None or not self.skills.any_scripts:
            return
        results = await self.skills.run_hooks(hook_type, ("--turn", turn_id, "--round", str(index)))
        for skill, result in results.items():
            if not result.ok:
                log.warning(
                    "the %s hook of skill %r failed (%s): %s",
                    hook_type,
                    skill,
                    result.error_type,
                    result.stderr.strip()[-500:],
                )

    def finish(self, prepared: Prepared, *, stopped_by: str, text: str) -> None:
        """The turn ended: its skill choices are complete (logged when discovery has a decision log)."""
        if self.skills is not None:
            inactive = [name for name in self._shown if not self.skills.is_active(name)]
            self.skills.discovery.record_turn(inactive, stopped_by=stopped_by, text=text)

    def view(self, prepared: Prepared) -> ToolsetView:
        skills = self.skills
        if skills is None or not len(skills):
            return EMPTY_VIEW
        shortlist = tuple(str(name) for name in prepared) if isinstance(prepared, tuple) else ()
        parts: list[str] = []
        tools: dict[str, AgentTool] = {}
        instructions = skills.instructions_prompt()
        if instructions:
            parts.append(f"{ACTIVE_HEADER}\n{instructions}")
        listing = skills.discovery.listing(shortlist)
        if listing.text:
            parts.append(listing.text)
        if skills.on_demand_skills():
            self._shown = listing.offered | skills.discovery.discovered
            tools[ACTIVATE_SKILL] = activate_tool(skills, self._shown)
        if any(skill.path is not None for skill in skills.skills()):
            tools[READ_SKILL_FILE] = read_file_tool(skills)
        if skills.any_scripts:
            tools[RUN_SKILL_SCRIPT] = run_script_tool(skills)
        if listing.overflow:
            tools.update((t.name, t) for t in skills.discovery.tools())
        own = skills.active_tools()
        tools.update((t.name, t) for t in own)
        always_allowed = frozenset(name for name in tools if name in SKILL_META_TOOLS) | {t.name for t in own}
        return ToolsetView(
            "\n\n".join(parts), tools, always_allowed=always_allowed, allowed_tools=skills.restrictions()
        )

    # -- the session's life ------------------------------------------------------------

    def reset(self) -> None:
        """No skill activated, nothing discovered."""
        if self.skills is not None:
            self.skills.reset()
            self.skills.discovery.forget()

    def to_state(self) -> dict[str, object]:
        skills = self.skills
        return {
            "skills": skills.to_state() if skills is not None else None,
            "discovered": sorted(skills.discovery.discovered) if skills is not None else [],
        }

    def load_state(self, state: Mapping[str, object]) -> None:
        if self.skills is None:
            return
        saved = state.get("skills")
        if isinstance(saved, dict) and saved:
            self.skills.load_state(saved)
        self.skills.discovery.forget()
        discovered = state.get("discovered")
        names = discovered if isinstance(discovered, (list, tuple)) else ()
        self.skills.discovery._shown(name for name in names if name in self.skills)
