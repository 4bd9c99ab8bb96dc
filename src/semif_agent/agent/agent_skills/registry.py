"""One agent's skills: :class:`SkillRegistry`, over the SKILL.md catalog and a per-agent runtime.

::

    registry = agent.skills                 # or SkillRegistry() on its own
    registry.register(Skill(name="sql", description="Query the warehouse.", activation="on_demand"))
    registry.activate("sql")                # what the activate_skill tool does
    registry.active_tools()                 # the tools of every active skill
    state = registry.to_state()             # and back: registry.load_state(state)

There is one mechanism under it, not two. Every skill, made in Python or
read from a SKILL.md folder, is an entry of a
:class:`semif_agent.catalog.SkillCatalog` (the catalog, which may be
shared by many agents), and visibility and activation are the state of
this agent's :class:`semif_agent.catalog.AgentSkillRuntime`: activation
reads the skill's document through the runtime, the active skills'
instructions are the runtime's ``activated_skill_content_xml()``, files are
read and scripts run (sandboxed) through it, and its ``to_state`` /
``from_state`` save and restore the session. This class adds what the
agent needs on top: the :class:`~.skill.Skill` objects with their tools,
``always`` versus ``on_demand``, and names as the model uses them.
"""

from __future__ import annotations

import os
import tempfile
import uuid
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ...catalog.environment import EnvironmentRouter
from ...catalog.errors import SkillCatalogWarning, SkillCollisionError, SkillsPathNotFound
from ...catalog.loader import find_skill_md, search_skill_folders
from ...catalog.locations import CUSTOM_NAMESPACE
from ...catalog.registry import SkillCatalog
from ...catalog.runtime import AgentSkillRuntime
from ...errors import InvalidArgumentError, check_type
from ...sandbox.results import ScriptRunResult
from ..errors import (
    AgentConfigError,
    SkillActivationError,
    SkillNameCollisionError,
    SkillNotRegisteredError,
    ToolNameCollisionError,
)
from ..tools import AgentTool
from .discovery import DiscoverySettings, SkillDiscovery
from .skill import Skill, catalog_namespace, has_skill_md, python_descriptor

STATE_VERSION = 1


class SkillRegistry:
    """The skills one agent has: registration, activation (per agent, per session), discovery.

    ``catalog`` is the SKILL.md catalog the skills are entered in (a new
    one by default; pass one to share it between agents). ``agent_id``
    names this agent in the runtime's state and traces. ``env_router``
    answers the scripts and hooks of environment skills (``env:<name>@...``;
    see :mod:`semif_agent.catalog.environment`).
    """

    def __init__(
        self,
        *,
        catalog: SkillCatalog | None = None,
        agent_id: str | None = None,
        discovery: DiscoverySettings | None = None,
        env_router: EnvironmentRouter | None = None,
    ) -> None:
        check_type("catalog", catalog, SkillCatalog, optional=True)
        check_type("discovery", discovery, DiscoverySettings, optional=True)
        self._catalog = catalog if catalog is not None else SkillCatalog()
        self._agent_id = agent_id or f"agent-{uuid.uuid4().hex[:12]}"
        self._runtime = AgentSkillRuntime(self._agent_id, self._catalog, env_router=env_router)
        self._skills: dict[str, Skill] = {}
        self._ids: dict[str, str] = {}  # name -> catalog skill id
        self._scripts: set[str] = set()  # skills whose scripts may run
        self._workspace: Path | None = None
        self.version = 0  # bumped by every change the model's view depends on
        self.discovery = SkillDiscovery(self, discovery)

    # -- the seed's methods -------------------------------------------------

    def register(self, skill: Skill) -> None:
        """Register a skill. A name already registered raises :class:`SkillNameCollisionError` (a ``ValueError``)."""
        if not isinstance(skill, Skill):
            raise AgentConfigError(f"register takes a Skill, got {type(skill).__name__}")
        if skill.name in self._skills:
            raise SkillNameCollisionError(f"a skill named {skill.name!r} is already registered")
        self._add(skill, self._enter(skill))

    def activate(self, name: str) -> Skill:
        """Mark an on-demand skill active (its instructions and tools join the session); return it.

        Raises :class:`SkillNotRegisteredError` (a ``KeyError``) for an unknown
        name and :class:`ToolNameCollisionError` when one of its tools has the
        name of another active skill's tool. Always-on skills are already active.
        """
        skill = self._require(name)
        if skill.activation == "always" or self.is_active(name):
            return skill
        active_tools([*self.active_skills(), skill])
        ok, _, _ = self._runtime.activate_skill(self._ids[name])
        if not ok:
            raise SkillActivationError(f"skill {name!r} cannot be activated: its SKILL.md cannot be read")
        self.version += 1
        return skill

    def deactivate(self, name: str) -> None:
        """Remove an on-demand skill from the active set (always-on skills stay active)."""
        skill = self._require(name)
        if skill.activation == "always":
            return
        removed, _ = self._runtime.deactivate_skill(self._ids[name])
        if removed:
            self.version += 1

    def reset(self) -> None:
        """Clear all activation state (registrations stay; always-on skills stay active)."""
        self._runtime.set_activated_skills(
            self._ids[name] for name, skill in self._skills.items() if skill.activation == "always"
        )
        self.version += 1

    def get(self, name: str) -> Skill | None:
        """The skill registered under ``name``, or None."""
        return self._skills.get(name)

    def is_active(self, name: str) -> bool:
        """True when the skill's instructions and tools are in play now (always-on skills always are)."""
        skill = self._skills.get(name)
        if skill is None:
            return False
        return skill.activation == "always" or self._ids[name] in self._runtime.activated_skill_ids()

    def active_tools(self) -> list[AgentTool]:
        """The tools of every active skill. Two with one name raise :class:`ToolNameCollisionError` (a ``ValueError``)."""
        return active_tools(self.active_skills())

    def on_demand_skills(self) -> list[Skill]:
        """The skills that need activation, in registration order."""
        return [skill for skill in self._skills.values() if skill.activation == "on_demand"]

    def skill_discovery_prompt(self) -> str:
        """The discovery text for the system prompt ('' when there are no on-demand skills); see :mod:`.discovery`."""
        return self.discovery.listing().text

    # -- more queries ---------------------------------------------------------

    def __len__(self) -> int:
        return len(self._skills)

    def __contains__(self, name: object) -> bool:
        return name in self._skills

    def skills(self) -> list[Skill]:
        """Every registered skill, in registration order."""
        return list(self._skills.values())

    def active_skills(self) -> list[Skill]:
        """The active skills, in registration order."""
        activated = self._runtime.activated_skill_ids()
        return [s for name, s in self._skills.items() if s.activation == "always" or self._ids[name] in activated]

    def skill_id(self, name: str) -> str:
        """The catalog id of a registered skill (``python@name``, ``custom@name``, ...)."""
        self._require(name)
        return self._ids[name]

    def instructions_prompt(self) -> str:
        """The active skills' documents, as the runtime renders them (``<skill_content>`` blocks)."""
        return self._runtime.activated_skill_content_xml()

    def restrictions(self) -> dict[str, tuple[str, ...]]:
        """``allowed-tools`` patterns of the active skills that declare some, by skill name."""
        return {skill.name: skill.allowed_tools for skill in self.active_skills() if skill.allowed_tools}

    def scripts_allowed(self, name: str) -> bool:
        return name in self._scripts

    def allow_scripts(self, name: str) -> None:
        """Let the model run the scripts of skill ``name`` (sandboxed, while it is active)."""
        self._require(name)
        self._scripts.add(name)

    @property
    def any_scripts(self) -> bool:
        """True when some skill may run its scripts."""
        return bool(self._scripts)

    @property
    def catalog(self) -> SkillCatalog:
        """The SKILL.md catalog the skills are entered in."""
        return self._catalog

    @property
    def runtime(self) -> AgentSkillRuntime:
        """This agent's view of the catalog: visibility and activation."""
        return self._runtime

    # -- loading ------------------------------------------------------------

    def load_directory(self, path: str | os.PathLike[str], *, allow_scripts: bool = False) -> list[str]:
        """Register every SKILL.md skill under ``path`` (a skill folder, or a tree of them) as on-demand.

        A broken skill is reported (:class:`~semif_agent.catalog.SkillCatalogWarning`)
        and skipped, and so is one whose name is already registered; the rest
        load. Returns the names registered. ``allow_scripts`` lets the model
        run their scripts (sandboxed) with ``run_skill_script``.
        """
        root = Path(path).expanduser()
        if not root.is_dir():
            raise SkillsPathNotFound(f"{root}: no such folder of skills")
        root = root.resolve()
        if find_skill_md(root) is not None:
            folders, left_out = [root], []
        else:
            search = search_skill_folders(root)
            folders, left_out = [folder for _, folder in search.found], search.reported()
        known = {str(d.root) for d in self._catalog.list_all() if d.skill_md is not None}
        new = [folder for folder in folders if os.path.realpath(folder) not in known]
        if new and len(new) == len(folders) and folders != [root]:
            self._catalog.scan_custom(root)  # one layer for the whole folder of skills: it reports what it leaves out
        else:
            for folder in new:
                self._catalog.scan_folder(folder)  # not rescanning what the catalog holds
            for folder, why in left_out if new else ():
                warnings.warn(f"{folder}: skipped: {why}", SkillCatalogWarning, stacklevel=2)
        by_root = {str(d.root): d for d in self._catalog.list_all() if d.skill_md is not None}
        added: list[str] = []
        for folder in folders:
            descriptor = by_root.get(os.path.realpath(folder))
            if descriptor is None:
                continue  # skipped or shadowed: the catalog has said why
            if descriptor.name in self._skills:
                if self._ids[descriptor.name] != descriptor.skill_id:
                    warnings.warn(
                        f"{folder}: a skill named {descriptor.name!r} is already registered; skipped",
                        SkillCatalogWarning,
                        stacklevel=2,
                    )
                continue
            self._add(Skill.from_descriptor(descriptor), descriptor.skill_id)
            added.append(descriptor.name)
        if allow_scripts:
            self._scripts.update(added)
        return added

    def share(self, other: SkillRegistry, names: Iterable[str]) -> None:
        """Register skills of ``other`` (same catalog) here, with their script permission (for subagents)."""
        if other._catalog is not self._catalog:
            raise AgentConfigError("skills can only be shared between registries over the same catalog")
        for name in names:
            skill = other._require(name)
            if name in self._skills:
                raise SkillNameCollisionError(f"a skill named {name!r} is already registered")
            self._add(skill, other._ids[name])
            if other.scripts_allowed(name):
                self._scripts.add(name)
        self._workspace = self._workspace or other._workspace

    def use_workspace(self, workspace: str | os.PathLike[str] | None) -> None:
        """Where skill scripts run (default: a private temporary folder made on first use)."""
        self._workspace = Path(workspace).expanduser().resolve() if workspace is not None else None
        if self._workspace is not None:
            self._runtime.bind_workspace(workspace_root=self._workspace)

    # -- files and scripts -----------------------------------------------------

    def read_file(self, name: str, relative_path: str) -> str:
        """A file of a registered skill; raises :class:`~semif_agent.errors.InvalidArgumentError` (a ``ValueError``) saying why not."""
        skill = self._require(name)
        if skill.path is None:
            raise InvalidArgumentError(f"skill {name!r} has no folder, so no files")
        text = self._runtime.read_skill_file(self._ids[name], relative_path)
        if not text:
            target = Path(skill.path) / relative_path
            if not (
                os.path.isfile(target) and os.path.realpath(target).startswith(os.path.realpath(skill.path) + os.sep)
            ):
                raise InvalidArgumentError(f"no readable file {relative_path!r} in skill {name!r}")
        return text

    async def run_script(
        self, name: str, script: str, args: Iterable[str], *, timeout_sec: float = 30
    ) -> ScriptRunResult:
        """Run a script of an active skill whose scripts are allowed, in the runtime's sandbox."""
        self._require(name)
        if name not in self._scripts:
            raise InvalidArgumentError(f"running the scripts of skill {name!r} is not allowed")
        if not self.is_active(name):
            raise InvalidArgumentError(f"skill {name!r} is not active: activate it (and read its instructions) first")
        self._bind()
        return await self._runtime.run_skill_script(self._ids[name], script, list(args), timeout_sec=timeout_sec)

    async def run_hooks(
        self, hook_type: str, args: Iterable[str] = (), *, timeout_sec: float = 30
    ) -> dict[str, ScriptRunResult]:
        """Run the ``hook_type`` hook (``pre_step``, ``post_step``, ...) of every active skill that declares it and whose
        scripts are allowed, concurrently, in the runtime's sandbox; the results by skill name."""
        declaring = self._runtime.active_hook_skills(hook_type)  # active, visible, declaring it: usually none
        if not declaring:
            return {}
        allowed = {self._ids[name]: name for name in self._scripts if name in self._ids}
        names = {info.skill_id: allowed[info.skill_id] for info in declaring if info.skill_id in allowed}
        if not names:
            return {}
        self._bind()
        results = await self._runtime.run_active_hooks(hook_type, list(args), timeout_sec=timeout_sec, skill_ids=names)
        return {names[skill_id]: result for skill_id, result in results.items()}

    def _bind(self) -> None:
        """Give the runtime a workspace (a temporary folder when none was given) before a script runs."""
        if not self._runtime.is_initialized:
            self.use_workspace(self._workspace or tempfile.mkdtemp(prefix="semif-agent-skills-"))

    # -- saved state ------------------------------------------------------------

    def to_state(self) -> dict[str, object]:
        """This agent's activation state (the runtime's ``to_state``), JSON-ready."""
        return {"version": STATE_VERSION, "runtime": self._runtime.to_state()}

    def load_state(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`to_state` saved, through ``AgentSkillRuntime.from_state``.

        Skills registered since stay visible; skills no longer registered are
        dropped; always-on skills stay active.
        """
        saved = dict(state.get("runtime", state))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # skills of other agents sharing the catalog are not ours to restore
            runtime = AgentSkillRuntime.from_state(
                saved, self._catalog, agent_id=self._agent_id, env_router=self._runtime.env_router
            )
        activated = runtime.activated_skill_ids() & set(self._ids.values())
        runtime.set_visible_skills(self._ids.values())
        runtime.set_activated_skills(
            activated | {self._ids[n] for n, s in self._skills.items() if s.activation == "always"}
        )
        if self._workspace is not None:
            runtime.bind_workspace(workspace_root=self._workspace)
        self._runtime = runtime
        self.version += 1

    # -- internals ----------------------------------------------------------------

    def _require(self, name: str) -> Skill:
        skill = self._skills.get(name)
        if skill is None:
            raise SkillNotRegisteredError(f"no skill named {name!r} is registered")
        return skill

    def _enter(self, skill: Skill) -> str:
        """Enter ``skill`` in the catalog (or find it there); its catalog id."""
        if has_skill_md(skill):
            entered = catalog_namespace(skill)  # an environment's skill keeps its namespace: it routes by it
            try:
                return self._catalog.register_folder(skill.path, namespace=entered or CUSTOM_NAMESPACE)  # type: ignore[arg-type]  # has_skill_md(skill) means skill.path is set
            except SkillCollisionError:
                for descriptor in self._catalog.find_by_name(skill.name):
                    if os.path.realpath(descriptor.root) == os.path.realpath(skill.path):  # type: ignore[arg-type]  # has_skill_md(skill) means skill.path is set
                        return descriptor.skill_id
                if entered is not None:
                    raise SkillNameCollisionError(
                        f"the catalog already holds another skill {entered}@{skill.name}"
                    ) from None
            # another folder's skill has the same SKILL.md name: this one is entered under the name the agent gives it
            namespace = f"{CUSTOM_NAMESPACE}~{skill.name}"
            try:
                return self._catalog.register_folder(skill.path, namespace=namespace)  # type: ignore[arg-type]  # has_skill_md(skill) means skill.path is set
            except SkillCollisionError:
                raise SkillNameCollisionError(f"the catalog already holds another skill named {skill.name!r}") from None
        descriptor, doc = python_descriptor(skill)
        held = self._catalog.get(descriptor.skill_id)
        if held is None:
            return self._catalog.register(descriptor, doc=doc)
        if held == descriptor and self._catalog.read_skill_doc(descriptor.skill_id) == doc:
            return descriptor.skill_id  # the same skill, entered by an agent sharing the catalog
        raise SkillNameCollisionError(f"the catalog already holds another skill {descriptor.skill_id!r}")

    def _add(self, skill: Skill, skill_id: str) -> None:
        self._skills[skill.name] = skill
        self._ids[skill.name] = skill_id
        self._runtime.add_visible_skill(skill_id)
        if skill.activation == "always":
            ok, _, _ = self._runtime.activate_skill(skill_id)
            if not ok:
                del self._skills[skill.name], self._ids[skill.name]
                self._runtime.remove_visible_skill(skill_id)
                raise SkillActivationError(f"skill {skill.name!r} cannot be activated: its SKILL.md cannot be read")
        self.version += 1

    def __repr__(self) -> str:
        return f"<SkillRegistry skills={len(self._skills)} active={len(self.active_skills())}>"


def active_tools(skills: Iterable[Skill]) -> list[AgentTool]:
    """The tools of ``skills``; a name provided twice raises :class:`ToolNameCollisionError`."""
    owners: dict[str, str] = {}
    tools: list[AgentTool] = []
    for skill in skills:
        for item in skill.tools:
            if item.name in owners:
                raise ToolNameCollisionError(
                    f"tool {item.name!r} is provided by both active skills {owners[item.name]!r} and {skill.name!r}"
                )
            owners[item.name] = skill.name
            tools.append(item)
    return tools
