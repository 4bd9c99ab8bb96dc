"""The engine a routing command (``semif run``, ``semif route``) decides with (``--engine``, ``--model``, the workspace's),
and the runner ``semif run`` runs requests with, on one machine or on a cluster's workers."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from ._strategy_option import StrategyName
from .workspace_cmds import load_tree

if TYPE_CHECKING:
    from ..engine.base import Engine
    from ..loop.runner import SkillRunner
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


def engine_settings(ws: Workspace, engine_name: str | None, model: str | None) -> tuple[dict[str, Any], str | None]:
    """``(settings, engine name)`` for ``--engine``/``--model`` over the workspace's ``[engine]`` table.

    ``--model`` implies ``--engine llm``. An LLM engine that no setting gives
    a model gets the model of the provider the environment (or semif.toml)
    sets up, said in one line on stderr.
    """
    from ..llm.settings import default_model, provider_table

    settings = ws.engine_settings
    if model:
        settings["model"] = model
        engine_name = engine_name or "llm"
    if (engine_name or settings.get("name")) == "llm" and not (
        settings.get("model") or provider_table(settings).get("model")
    ):
        choice = default_model(settings)
        settings["model"] = choice.model
        engine_name = "llm"  # built here, with that model, rather than from the workspace's settings alone
        click.echo(f"semif: {choice.describe()}", err=True)
    return settings, engine_name


def build_engine(settings: dict[str, Any], engine_name: str | None) -> Engine | None:
    """The engine ``--engine`` names, or None: the workspace's own (the runner builds it)."""
    from ..engine.registry import create_engine

    return create_engine(engine_name, settings) if engine_name else None


def skill_runner(
    ws,
    engine_name: str | None,
    model: str | None,
    strategy: str | None,
    allow_scripts: bool | None,
    **options: Any,
) -> SkillRunner:
    """The runner ``semif run`` runs requests with (``options``: more :class:`SkillRunner` arguments, e.g. ``log``)."""
    from ..loop.confined import start_body_workers
    from ..loop.runner import SkillRunner, default_judge

    start_body_workers()  # a code skill's body runs in a warm worker: it starts while the tree loads
    settings, engine_name = engine_settings(ws, engine_name, model)
    engine = build_engine(settings, engine_name)
    judge = default_judge(engine, settings) if engine is not None else None
    return SkillRunner(
        ws,
        engine=engine,
        judge=judge,
        tree=load_tree(ws, engine=engine),
        strategy=strategy,
        skill_md_executor=agent_executor(ws, settings, engine_name),
        allow_scripts=allow_scripts,
        **options,
    )


def agent_executor(ws, settings: dict[str, Any], engine_name: str | None):
    """The Agent follows SKILL.md skills when a model is configured (or the engine is one), judged by the LLM judge; else None."""
    from ..llm.settings import provider_table

    if not (engine_name == "llm" or settings.get("model") or provider_table(settings).get("model")):
        return None
    from ..agent.skills.runs import AgentSkillExecutor
    from ..llm.calllog import logged
    from ..llm.engine import build_provider
    from ..llm.judge import create_judge

    return AgentSkillExecutor(logged(build_provider(settings), ws, purpose="run"), judge=create_judge(settings))
