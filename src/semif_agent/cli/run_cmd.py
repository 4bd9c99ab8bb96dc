"""``semif run``: route a request through the skill tree, run the skill, assess it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from .._text import inert, plural
from ..errors import UserError
from ._cluster import ray_option
from ._common import StageBars, json_option, print_json, workspace_option
from ._engines import routing_options, run_settings, skill_runner
from ._run_lines import chosen, without_shared_tail
from ._run_lines import print_field as _field
from .workspace_cmds import open_workspace

if TYPE_CHECKING:
    from ..loop.runner import RunResult, SkillRunner

_LABEL_COLOURS = {"success": "green", "failure": "red", "unclear": "yellow", "handed_back": "yellow"}


@click.command()
@click.argument("text", required=False)
@workspace_option
@routing_options
@click.option("--skill", metavar="NAME", help="Skip routing and run this skill.")
@click.option(
    "--create",
    is_flag=True,
    help="When no skill fits, have the code model write one (checked against the contract), then run it.",
)
@click.option("--code-model", metavar="PROVIDER/MODEL", help="The model that writes skills for --create.")
@click.option(
    "--allow-scripts",
    is_flag=True,
    default=None,
    help="Let a SKILL.md skill's script run (sandboxed) when no model follows it (default: [skills] allow_scripts).",
)
@click.option(
    "--yes",
    is_flag=True,
    help="Act even when the act gate would hand the request back (unsure, a question to a skill that writes...).",
)
@click.option(
    "--act-threshold",
    type=float,
    metavar="P",
    help="How sure a route must be for a skill that writes to act, 0 to 1 (default: [routing] act_threshold, "
    "else measured on the workspace's examples and labels).",
)
@click.option("--no-log", is_flag=True, help="Do not write decision rows.")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Only route: show each decision's top candidates and their probabilities; run nothing, write "
    "nothing, log nothing (the same as semif route TEXT).",
)
@click.option(
    "--batch",
    "batch_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help='Run every request of FILE instead of TEXT: JSON lines {"text"}, optionally with "skill" (run it '
    'without routing) and "id" (the run\'s id). One logged run each, in order.',
)
@ray_option
@json_option
def run(
    text: str | None,
    workspace: str | None,
    engine_name: str | None,
    model: str | None,
    skill: str | None,
    strategy: str | None,
    create: bool,
    code_model: str | None,
    allow_scripts: bool | None,
    yes: bool,
    act_threshold: float | None,
    no_log: bool,
    dry_run: bool,
    batch_file: Path | None,
    ray_address: str | None,
    as_json: bool,
) -> None:
    """Route TEXT to a skill, run it, and assess the result.

    Without -w, uses $SEMIF_WORKSPACE, else the current directory if it has
    semif.toml, else your own workspace (made on first use). Every decision is
    logged as a training row. Each route line shows what a decision chose and
    the probability the engine gave it, e.g. "-> email.compose (p 82%)".

    The tree holds the workspace's code skills and its SKILL.md skills (skills/,
    .agents/skills/, [skills] folders, ~/.agents/skills). A SKILL.md skill is
    followed by the agent when a model is configured (--model, --engine llm, or
    a model in semif.toml); without one its instructions are printed (or its
    script is run, with --allow-scripts). --engine llm without a model uses
    the provider the environment sets up (the line on stderr says which).

    A skill that writes acts only when the route is sure enough and the request
    asks for a change: otherwise the request is handed back with the likeliest
    skills (logged as handed_back, exit 0); --yes acts all the same.

    --batch FILE runs many requests, one logged run each (--yes and
    --act-threshold apply to every one); with --ray they are spread over a Ray
    cluster and the log is written here, once per request.
    """
    from ..loop.runner import SkillRunner
    from ..skills import check_request

    if batch_file is not None:
        if text is not None or skill or create or dry_run:
            raise UserError("--batch runs the requests of its file: leave out TEXT, --skill, --create and --dry-run")
        from ._batch_run import run_batch_file

        run_batch_file(
            batch_file,
            workspace,
            engine_name,
            model,
            strategy,
            allow_scripts,
            no_log,
            ray_address,
            as_json,
            yes=yes,
            act_threshold=act_threshold,
        )
        return
    if ray_address is not None:
        raise UserError("--ray spreads a batch over a cluster: give the requests with --batch FILE.jsonl")
    if text is None:
        raise UserError('say what you want done, e.g. semif run "Add milk to my todo list" (or --batch FILE.jsonl)')
    if dry_run:
        if skill or create:
            raise UserError("--dry-run only routes: leave out --skill and --create")
        from .route_cmd import show_route

        show_route(
            text,
            workspace=workspace,
            engine_name=engine_name,
            model=model,
            strategy=strategy,
            as_json=as_json,
            act_threshold=act_threshold,
            allow_scripts=allow_scripts,
            yes=yes,
        )
        return
    if not text.strip():
        raise UserError('the request is empty: say what you want done, e.g. semif run "Add milk to my todo list"')
    check_request(text)  # undecodable bytes or over the size cap: one line, before anything loads
    ws = open_workspace(workspace, create_default=True)
    settings = run_settings(
        ws,
        engine=engine_name,
        model=model,
        strategy=strategy,
        allow_scripts=allow_scripts,
        log=False if no_log else None,
        act_threshold=act_threshold,
    )
    runner = skill_runner(settings, act_lock=_act_lock(ws))
    with StageBars(only_on_terminal=True) as bars:  # the act threshold, when this tree's is not measured yet
        runner.progress = bars
        result = runner.run(text, skill=skill, yes=yes)
        runner.progress = None
    created = None
    if create and result.skill is None:
        created = _create(ws, runner, text, code_model, result.run_id, quiet=as_json)
        rerun = SkillRunner.from_settings(settings, engine=runner.engine, judge=runner.judge, log=runner.log)
        result = rerun.run(text, skill=created.manifest["name"])
    if as_json:
        print_json({**result.to_dict(), "created": created.manifest if created else None})
    else:
        _print_run(result, logged=not no_log)


def _act_lock(ws):
    """The workspace's act lock; a run kept waiting for another to finish acting says so on stderr."""
    from ..loop.act_lock import ActLock

    return ActLock.of(
        ws, on_wait=lambda: click.echo("waiting for another run in this workspace to finish acting...", err=True)
    )


def _create(ws, runner: SkillRunner, text: str, model: str | None, run_id: str, *, quiet: bool):
    from .._sync import run_sync
    from ..forge.create import acreate_for
    from ..forge.generator import GenerationFailed
    from .forge_cmds import provider_for

    if not quiet:
        click.echo("no skill fits: asking the code model for a new one...", err=True)
    try:
        created = run_sync(
            acreate_for(ws, text, provider=provider_for(ws, model), engine=runner.engine, log=runner.log, run_id=run_id)
        )
    except GenerationFailed as exc:
        raise UserError(str(exc)) from None
    if not quiet:
        click.echo(
            f"admitted {created.manifest['name']} ({plural(len(created.attempts), 'attempt')}); running it", err=True
        )
    return created


def _print_run(result: RunResult, *, logged: bool) -> None:
    from ..records import DecisionRow

    click.echo(click.style("route", bold=True))
    decisions = [row for row in result.rows if isinstance(row, DecisionRow)]
    for row in decisions:
        click.echo(f"  {row.step}. [{row.kind}] {row.question} -> {click.style(chosen(row), bold=True)}")
    _field("skill", result.skill or "(none)")
    if result.handed_back and result.gate is not None:
        said = result.gate.summary(result.run_id if logged else None)
        _field("not acted", click.style(inert(said), fg="yellow", bold=True), styled=True)
    if result.prediction is not None:
        _field("prediction", result.prediction.text)
    action, outcome = result.action.action_log, result.action.new_state
    _field("action", without_shared_tail(action, outcome))
    _field("result", "(the request, handed back unchanged)" if outcome == result.request.text else outcome)
    if not result.changes.empty:
        _field("changes", result.changes.summary())
    label = result.assessment.label
    coloured = click.style(label, fg=_LABEL_COLOURS.get(label), bold=True)
    _field("assessment", f"{coloured} ({inert(result.assessment.reason)})", styled=True)
    where = f"-> {result.log_path}" if logged else "(not logged: --no-log)"
    _field("log", f"{plural(len(decisions), 'decision row')} + 1 outcome row {where}")
    if result.instructions is not None:
        source = result.route.skill.source if result.route.skill is not None else None
        click.echo(click.style(f"\ninstructions of {result.skill} ({source}):", bold=True))
        click.echo(result.instructions)


COMMANDS = [run]
