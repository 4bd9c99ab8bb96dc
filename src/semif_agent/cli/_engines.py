"""The engine a routing command (``semif run``, ``semif route``) decides with (``--engine``, ``--model``, the workspace's),
and the runner ``semif run`` runs requests with, on one machine or on a cluster's workers."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from ._strategy_option import StrategyName
from .workspace_cmds import load_tree

if TYPE_CHECKING:
    from ..loop.runner import SkillRunner
    from ..loop.settings import RunSettings
    from ..workspace import Workspace


def routing_options(fn: Callable) -> Callable:
    """``--engine``, ``--model`` and ``--strategy``, as every command that routes a request takes them."""
    fn = click.option("--strategy", type=StrategyName(), help="How to walk the tree (default: the workspace's).")(fn)
    fn = click.option(
        "--model",
        metavar="PROVIDER/MODEL",
        help="The model that decides (implies --engine llm), e.g. openai/gpt-4o-mini.",
    )(fn)
    return click.option(
        "--engine",
        "engine_name",
        metavar="NAME",
        help="SemIf engine: local, lexical, llm, scripted:FILE, or a plug-in's (default: the workspace's, else local).",
    )(fn)


def run_settings(ws: Workspace | None, **given: Any) -> RunSettings:
    """The run settings of ``ws`` with the command line's values (see :meth:`RunSettings.resolve`).

    A model chosen for the caller (``--engine llm`` and no model set) is said in one line on stderr.
    """
    from ..loop.settings import RunSettings

    settings = RunSettings.resolve(ws, **given)
    if settings.model_note is not None:
        click.echo(f"semif: {settings.model_note}", err=True)
    return settings


def skill_runner(settings: RunSettings, **parts: Any) -> SkillRunner:
    """The runner ``semif run`` runs requests with (``parts``: more :meth:`SkillRunner.from_settings` arguments, e.g. ``log``)."""
    from ..loop.confined import start_body_workers
    from ..loop.runner import SkillRunner

    start_body_workers()  # a code skill's body runs in a warm worker: it starts while the tree loads
    engine = settings.build_engine()
    return SkillRunner.from_settings(
        settings,
        engine=engine,
        tree=load_tree(settings.needs_workspace("a runner"), engine=engine),
        skill_md_executor=agent_executor(settings),
        **parts,
    )


def agent_executor(settings: RunSettings):
    """The Agent follows SKILL.md skills when a model is configured (or the engine is one), judged by the LLM judge; else None."""
    if not settings.model_configured:
        return None
    from ..assistant.skill_runs import AgentSkillExecutor
    from ..llm.calllog import logged
    from ..llm.engine import build_provider
    from ..llm.judge import create_judge

    table = settings.engine_table
    workspace = settings.needs_workspace("the agent")
    return AgentSkillExecutor(logged(build_provider(table), workspace, purpose="run"), judge=create_judge(table))
