"""``semif route`` (and ``semif run --dry-run``): where a request would go, acting on nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from .._text import inert, percent
from ..engine.decisions import NONE_ID
from ..errors import UserError
from ._common import json_option, print_json, workspace_option
from ._engines import routing_options, run_settings
from ._run_lines import ranked_options
from .workspace_cmds import load_tree, open_workspace

if TYPE_CHECKING:
    from ..loop.gate import Verdict
    from ..tree.router import Route, RoutedDecision

DEFAULT_TOP = 5


@click.command("route")
@click.argument("text")
@workspace_option
@routing_options
@click.option(
    "--top",
    type=click.IntRange(min=1),
    default=DEFAULT_TOP,
    show_default=True,
    metavar="N",
    help="Candidates shown at each decision.",
)
@json_option
def route(
    text: str,
    workspace: str | None,
    engine_name: str | None,
    model: str | None,
    strategy: str | None,
    top: int,
    as_json: bool,
) -> None:
    """Show where TEXT would go: each decision's top candidates and their probabilities; nothing is run or logged.

    The same routing as `semif run` (same workspace, engine and strategy),
    stopped before the skill: no skill runs, no file is written, nothing is
    logged. `semif run TEXT --dry-run` is the same.
    """
    show_route(
        text, workspace=workspace, engine_name=engine_name, model=model, strategy=strategy, top=top, as_json=as_json
    )


def show_route(
    text: str,
    *,
    workspace: str | None,
    engine_name: str | None,
    model: str | None,
    strategy: str | None,
    top: int = DEFAULT_TOP,
    as_json: bool = False,
    act_threshold: float | None = None,
    allow_scripts: bool | None = None,
    yes: bool = False,
) -> None:
    """Route ``text`` as ``semif run`` would, read it with the act gate as the run would, and print the decisions
    and the verdict (:meth:`~semif_agent.loop.runner.SkillRunner.adecide`, the run's own); act on nothing."""
    from ..loop.runner import SkillRunner
    from ..skills import check_request
    from ._engines import agent_executor

    if not text.strip():
        raise UserError('the request is empty: say what you want routed, e.g. semif route "Add milk to my todo list"')
    check_request(text)
    ws = open_workspace(workspace)
    settings = run_settings(
        ws,
        engine=engine_name,
        model=model,
        strategy=strategy,
        log=False,
        act_threshold=act_threshold,
        allow_scripts=allow_scripts,
    )
    engine = settings.build_engine()
    runner = SkillRunner.from_settings(
        settings, engine=engine, tree=load_tree(ws, engine=engine), skill_md_executor=agent_executor(settings)
    )
    data = route_json(text, runner.decide(text, yes=yes))
    if as_json:
        print_json(data)
    else:
        _print_route(data, top)


def route_json(text: str, verdict: Verdict) -> dict[str, Any]:
    """The route as JSON: what a run would do (the skill or None, whether it acts, and why, as ``semif run --json``
    and ``find_skills`` say it) and each decision with every option, most likely first."""
    from ..records import ROUTE_KIND, DecisionRow

    found = verdict.route
    decisions = []
    for at, step in enumerate(found.decisions):
        row = DecisionRow.of(
            run_id="", step=at + 1, kind=ROUTE_KIND, skill=None, request=step.request, result=step.result
        )
        decisions.append(
            {
                "level": step.level,
                "question": step.request.question,
                "selected": step.result.selected,
                "engine": step.result.engine,
                "model": step.result.model,
                "options": [
                    {"id": option, "probability": p, "score": score} for option, p, score in ranked_options(row)
                ],
                "why": why_chosen(step, found, first=at == 0),
            }
        )
    return {
        "request": text,
        **verdict.to_dict(),
        "gate": verdict.gate.to_dict() if verdict.gate is not None else None,
        "decisions": decisions,
    }


def why_chosen(step: RoutedDecision, route: Route, *, first: bool) -> str | None:
    """Why a decision chose an option less probable than another it shows (None: it chose the most probable).

    A decision derived from the leaves takes the branch of the likeliest skill, while an option's probability is
    its skills' sum, and below the first decision ``none``'s holds the rest (no skill, or one of another branch); an
    engine's decision is its own, the probabilities those of the leaves it was calibrated on."""
    from ..routing.strategies import derived_from_leaves

    probabilities = step.result.probabilities or {}
    selected = step.result.selected
    own = probabilities.get(selected)
    above = [k for k, p in probabilities.items() if k != selected and own is not None and p > own]
    if not above:
        return None
    if not derived_from_leaves(step.result):
        calibrated = "; the probabilities shown are those of the leaves it was calibrated on" if step.whole else ""
        return f"the engine chose {selected}{calibrated}"
    leaf = route.skill.name if route.skill is not None else None
    if selected == NONE_ID:
        parts = ["no skill scores above the threshold"]
    elif selected == leaf:
        parts = [f"{selected} is the likeliest skill"]
    else:
        parts = [f"{selected} holds the likeliest skill" + (f", {leaf}" if leaf is not None else "")]
    if NONE_ID in above:
        rest = "the rest: no skill, or one of another branch" if not first else "that no skill serves the request"
        parts.append(f"none's {percent(probabilities[NONE_ID])} is {rest}")
    branches = [k for k in above if k != NONE_ID]
    if branches:
        other = max(branches, key=probabilities.__getitem__)
        parts.append(f"{other}'s {percent(probabilities[other])} is its skills' together")
    return "; ".join(parts)


def _print_route(data: dict[str, Any], top: int) -> None:
    click.echo(
        click.style("route", bold=True) + click.style("  (dry run: nothing was run, written or logged)", dim=True)
    )
    for number, decision in enumerate(data["decisions"], start=1):
        click.echo(f"  {number}. {decision['question']}")
        shown = decision["options"][:top]
        shown += [o for o in decision["options"][top:] if o["id"] == decision["selected"]]  # the choice, always
        width = max(len(option["id"]) for option in shown)
        for option in shown:
            mark = click.style("  <- chosen", bold=True) if option["id"] == decision["selected"] else ""
            click.echo(f"       {option['id']:<{width}}  {_likelihood(option):>5}{mark}")
        if len(decision["options"]) > len(shown):
            click.echo(click.style(f"       … {len(decision['options']) - len(shown)} more (--top)", dim=True))
        if decision["why"]:
            click.echo(click.style(f"       chosen: {inert(decision['why'])}", dim=True))
    if data["acts"]:
        click.echo(f"{click.style('would run', bold=True)}  {data['skill']} ({inert(data['reason'])})")
    else:
        skill = data["skill"] or "no skill"
        click.echo(
            f"{click.style('would hand back', bold=True)}  {skill}: {inert(data['reason'])} (nothing would be done)"
        )


def _likelihood(option: dict[str, Any]) -> str:
    """The option's probability as a percentage, else its raw score, else "-"."""
    if option["probability"] is not None:
        return percent(option["probability"])
    return f"{option['score']:.2f}" if option["score"] is not None else "-"


COMMANDS = [route]
