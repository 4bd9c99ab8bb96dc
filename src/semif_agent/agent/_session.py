"""An agent's session: what the model is shown changes as the conversation goes.

The agent's configuration is fixed per turn (:class:`~._config.TurnConfig`);
the session holds what moves within it: the skills (which are active, which
the model has been shown), the deferred tools loaded, and the subagents.
At the start of each round the turn asks :meth:`AgentSession.configure` for
the config of that round: the agent's, extended with

- the active skills' instructions, the skill listing (with the turn's
  shortlist) and the subagent and deferred-tool notes, in the system prompt;
- the skill meta-tools, the active skills' tools, ``search_tools`` and the
  deferred tools loaded so far, and ``task``;
- the ``allowed-tools`` gate, when an active skill restricts tools.

The config is cached until something it depends on changes, so an
unchanged round costs a comparison. The session is the agent's, not the
turn's: an activation in one turn holds in the next, until
:meth:`reset` (``Agent.clear_history``) starts a new session.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ._config import TurnConfig
from .agent_skills.discovery import BROWSE_SKILLS, SEARCH_SKILLS
from .agent_skills.meta_tools import (
    ACTIVATE_SKILL,
    READ_SKILL_FILE,
    RUN_SKILL_SCRIPT,
    activate_tool,
    allowed_tools_hook,
    read_file_tool,
    run_script_tool,
)
from .agent_skills.registry import SkillRegistry
from .agent_skills.skill import Skill
from .agent_skills.workspace import add_workspace, workspace_runner
from .deferred import SEARCH_TOOLS, DeferredTools
from .errors import AgentConfigError, ToolNameCollisionError
from .subagents import TASK, SubagentDefinition, Subagents, is_subagent_tool
from .tools import AgentTool

if TYPE_CHECKING:
    from ._ports import Delegate

log = logging.getLogger("semif_agent.agent")

STATE_VERSION = 1
SKILL_META_TOOLS = (ACTIVATE_SKILL, READ_SKILL_FILE, RUN_SKILL_SCRIPT, BROWSE_SKILLS, SEARCH_SKILLS)
META_TOOLS = frozenset({*SKILL_META_TOOLS, SEARCH_TOOLS, TASK})
ACTIVE_HEADER = "## Active skills\nYou are using these skills: follow their instructions."


class AgentSession:
    """Skills, deferred tools and subagents of one agent, and each round's view of them."""

    def __init__(self) -> None:
        self.skills: SkillRegistry | None = None
        self.deferred = DeferredTools()
        self.subagents: Subagents | None = None
        self._cache: tuple[TurnConfig, tuple[object, ...], TurnConfig] | None = None
        self._shown: frozenset[str] = frozenset()  # the skills the model was last shown

    def skill_registry(self, **options: Any) -> SkillRegistry:
        """The agent's skill registry (made on first use, with ``options`` for :class:`SkillRegistry`)."""
        if self.skills is None:
            self.skills = SkillRegistry(**options)
            self.deferred.engine = self.skills.discovery.settings.engine
        return self.skills

    def configure_discovery(self, **settings: Any) -> None:
        """Change the skill discovery settings (the engine ranks deferred tools too)."""
        self.skill_registry().discovery.configure(**settings)
        if "engine" in settings:
            self.deferred.engine = settings["engine"]

    @property
    def active(self) -> bool:
        """True when there is anything for the session to add to a turn."""
        return bool((self.skills is not None and len(self.skills)) or self.deferred or self.subagents)

    # -- configuration (names are checked against the agent's ``taken`` tool names) --

    def reserved(self) -> dict[str, str]:
        """Tool names the session uses now, with what uses them."""
        names: dict[str, str] = {}
        if self.skills is not None and len(self.skills):
            names.update((name, "a skill meta-tool") for name in SKILL_META_TOOLS)
            for skill in self.skills.skills():
                names.update((t.name, f"a tool of skill {skill.name!r}") for t in skill.tools)
        return {**names, **self._other_names()}

    def _other_names(self) -> dict[str, str]:
        """The names the deferred tools and the subagents use (skills' aside)."""
        names: dict[str, str] = {}
        if self.deferred:
            names[SEARCH_TOOLS] = "the search_tools meta-tool"
            names.update((name, "a deferred tool") for name in self.deferred.tools)
        if self.subagents:
            names[TASK] = "the task meta-tool"
        return names

    def add_source(
        self, source: Any, taken: Mapping[str, str], *, allow_scripts: bool = False, workspace: Any = None
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
            self.skill_registry().use_workspace(workspace)

    def add_skills(self, skills: Iterable[Skill], taken: Mapping[str, str], *, allow_scripts: bool = False) -> None:
        """Register skills whose tools clash with no other tool (on-demand skills may share names among themselves)."""
        skills = list(skills)
        registry = self.skill_registry()
        others = {**taken, **self._other_names()}  # on-demand skills may share tool names with each other
        _claim(SKILL_META_TOOLS, taken)
        always = {t.name: s.name for s in registry.skills() if s.activation == "always" for t in s.tools}
        for skill in skills:
            if not isinstance(skill, Skill):
                raise AgentConfigError(f"with_skills takes Skill values, got {type(skill).__name__}")
            _claim(skill.tool_names, others)
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
        self, path: Any, taken: Mapping[str, str], *, allow_scripts: bool = False, workspace: Any = None
    ) -> list[str]:
        _claim(SKILL_META_TOOLS, taken)
        registry = self.skill_registry()
        if workspace is not None:
            registry.use_workspace(workspace)
        return registry.load_directory(path, allow_scripts=allow_scripts)

    def add_deferred(self, tools: list[AgentTool], taken: Mapping[str, str]) -> None:
        if tools:
            if not self.deferred:  # the first deferred tools bring search_tools
                _claim([SEARCH_TOOLS], taken)
            self.deferred.add(tools)

    def add_subagents(
        self,
        spawn: Callable[[SubagentDefinition], Delegate],
        definitions: list[SubagentDefinition],
        taken: Mapping[str, str],
    ) -> None:
        """Register subagents; ``spawn`` builds a definition's agent on its first task."""
        _claim([TASK], taken)
        if self.subagents is None:
            self.subagents = Subagents(spawn)
        self.subagents.add(definitions)

    def runs_subagents(self, tools: Iterable[AgentTool]) -> bool:
        """True when subagents are registered, or a subagent tool is among ``tools``, the deferred or the skills' tools."""
        every = [*tools, *self.deferred.tools.values()]
        if self.skills is not None:
            every += [t for skill in self.skills.skills() for t in skill.tools]
        return bool(self.subagents) or any(is_subagent_tool(t) for t in every)

    # -- each turn, each round ----------------------------------------------------

    async def prepare(self, message: str, *, run_id: str = "", model: str | None = None) -> tuple[str, ...]:
        """The skill shortlist for ``message`` (empty when every skill is listed anyway); turn ``run_id`` begins."""
        if self.skills is None or not self.skills.on_demand_skills():
            return ()
        return await self.skills.discovery.preselect(message, run_id=run_id, model=model)

    async def run_step_hooks(self, hook_type: str, turn_id: str, index: int) -> None:
        """Run the SKILL.md ``hook_type`` hooks of the active skills allowed to run scripts, for round ``index`` of turn
        ``turn_id`` (nothing when none are); one that fails is logged."""
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

    def finish(self, *, stopped_by: str, text: str) -> None:
        """The turn ended: its skill choices are complete (logged when discovery has a decision log)."""
        if self.skills is not None:
            inactive = [name for name in self._shown if not self.skills.is_active(name)]
            self.skills.discovery.record_turn(inactive, stopped_by=stopped_by, text=text)

    def configure(self, base: TurnConfig, shortlist: tuple[str, ...] | None) -> TurnConfig:
        """The config a round runs with: ``base`` extended with the session as it stands now."""
        if not self.active:
            return base
        shortlist = shortlist or ()
        key = self._key(shortlist)
        cached = self._cache
        if cached is not None and cached[0] is base and cached[1] == key:
            return cached[2]
        parts: list[str] = []
        tools: dict[str, AgentTool] = {}
        hooks: tuple[Any, ...] = ()
        skills = self.skills
        if skills is not None and len(skills):
            hooks = self._skills_view(skills, shortlist, parts, tools)
        if self.deferred:
            hint = self.deferred.hint()
            if hint:
                parts.append(hint)
            tools[SEARCH_TOOLS] = self.deferred.tool()
            tools.update(self.deferred.loaded_tools())
        if self.subagents:
            parts.append(self.subagents.listing())
            tools[TASK] = self.subagents.tool()
        config = base.extended(system="\n\n".join(parts), tools=tools, pre_hooks=hooks)
        self._cache = (base, key, config)
        return config

    def _skills_view(
        self, skills: SkillRegistry, shortlist: tuple[str, ...], parts: list[str], tools: dict[str, AgentTool]
    ) -> tuple[Any, ...]:
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
        restrictions = skills.restrictions()
        if not restrictions:
            return ()
        return (allowed_tools_hook(restrictions, exempt=META_TOOLS | {t.name for t in own}),)

    def _key(self, shortlist: tuple[str, ...]) -> tuple[object, ...]:
        skills = self.skills
        skill_key = (skills.version, skills.discovery.version, id(skills.runtime)) if skills is not None else None
        subagents = self.subagents.version if self.subagents is not None else None
        return (shortlist, skill_key, self.deferred.version, subagents)

    # -- the session's life ------------------------------------------------------------

    def reset(self) -> None:
        """A new session: no skill activated, nothing discovered, no deferred tool loaded."""
        if self.skills is not None:
            self.skills.reset()
            self.skills.discovery.forget()
        self.deferred.reset()

    def to_state(self) -> dict[str, object]:
        skills = self.skills
        return {
            "version": STATE_VERSION,
            "skills": skills.to_state() if skills is not None else None,
            "discovered": sorted(skills.discovery.discovered) if skills is not None else [],
            "deferred_loaded": list(self.deferred.loaded),
        }

    def load_state(self, state: dict[str, Any]) -> None:
        if self.skills is not None:
            if state.get("skills"):
                self.skills.load_state(state["skills"])
            self.skills.discovery.forget()
            self.skills.discovery._shown(name for name in state.get("discovered", ()) if name in self.skills)
        self.deferred.reset()
        self.deferred.load(state.get("deferred_loaded", ()))

    async def aclose(self) -> None:
        if self.subagents is not None:
            await self.subagents.aclose()


def _claim(names: Iterable[str], taken: Mapping[str, str]) -> None:
    for name in names:
        if name in taken:
            raise ToolNameCollisionError(
                f"tool name {name!r} is already used by {taken[name]}; tool names must be unique"
            )
