"""A workspace's skills for an agent: every leaf of its tree, on demand, chosen as ``semif run`` chooses.

::

    runner = SkillRunner(workspace)
    agent = Agent("openai/gpt-4o-mini").with_skills(runner)   # or with_skills(workspace)

The agent gets each leaf of the workspace's :class:`~semif_agent.tree.SkillTree`
as an on-demand :class:`~.skill.Skill` named by its leaf id:

- a code skill carries one tool, ``skill__<category>__<leaf>`` taking one
  ``request`` string, that runs it through the skill loop
  (:meth:`SkillRunner.arun <semif_agent.loop.SkillRunner.arun>`: predict,
  act, observe, assess, every decision logged); its instructions say so;
- a SKILL.md skill is its folder (instructions, files, scripts).

Discovery works on the workspace's own tree, ranking with the scorer and
routing settings ``semif run`` uses (the same engine, examples folded in the
same way, the tuned threshold), so the skill the agent is offered first is
the one ``semif run`` would route to; and every shortlist and activation is
a row of the workspace's decision log.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...tree.manifests import SkillManifest
from .code_tools import skill_tool
from .skill import Skill

if TYPE_CHECKING:
    from ...loop.runner import SkillRunner
    from .toolset import SkillToolset


def workspace_runner(source: object) -> SkillRunner | None:
    """The :class:`SkillRunner` ``source`` stands for: itself, or a new one over a Workspace; None for anything else."""
    from ...loop.runner import SkillRunner
    from ...workspace import Workspace

    if isinstance(source, SkillRunner):
        return source
    return SkillRunner(source) if isinstance(source, Workspace) else None


def add_workspace(
    skills: SkillToolset, runner: SkillRunner, taken: Mapping[str, str], *, allow_scripts: bool = False
) -> None:
    """Give ``skills`` those of ``runner``'s workspace, ranked as it routes; their scripts run in the workspace."""
    skills.registry().discovery.configure(**discovery_settings(runner))
    skills.add_skills(workspace_skills(runner), taken, allow_scripts=allow_scripts)
    skills.registry().use_workspace(runner.workspace.root)


def workspace_skills(runner: SkillRunner, *, include_stubs: bool = False) -> list[Skill]:
    """The leaves of ``runner``'s tree as on-demand skills, in the tree's order (stubs left out: they cannot act)."""
    skills = []
    for leaf in runner.tree.skills.values():
        if leaf.is_skill_md:
            if leaf.source is not None:
                skills.append(Skill.from_path(leaf.source.parent).model_copy(update={"name": leaf.name}))
        elif include_stubs or not leaf.is_stub:
            skills.append(code_skill(runner, leaf))
    return skills


def code_skill(runner: SkillRunner, leaf: SkillManifest) -> Skill:
    """A code skill as an on-demand skill whose one tool runs it through the skill loop."""
    item = skill_tool(runner, leaf)
    instructions = (
        f"Run this skill with the tool {item.name}: pass the user's request, in plain words and with every "
        "detail it needs. The tool runs the skill and tells you what it did and how the run was judged. When the "
        "skill writes and the request is a question, or the routing is not sure of it, the tool does nothing and "
        "hands the request back with the likelier skills: ask the user, or call it again naming the skill."
    )
    return Skill(
        name=leaf.name, description=leaf.description, instructions=instructions, tools=(item,), activation="on_demand"
    )


def discovery_settings(runner: SkillRunner) -> dict[str, object]:
    """Discovery settings that rank as ``runner`` routes: its tree and scorer (the learned router's when it routes),
    threshold, temperature, and its decision log."""
    strategy = runner.strategy
    scorer = getattr(strategy, "scorer", None)
    settings: dict[str, Any] = {"tree": runner.tree, "log": runner.log}
    if scorer is not None:
        settings.update(
            engine=scorer.engine,
            scorer=scorer,
            examples=scorer.examples,
            threshold=getattr(strategy, "threshold", None),
            temperature=getattr(strategy, "temperature", None),
        )
    return settings
