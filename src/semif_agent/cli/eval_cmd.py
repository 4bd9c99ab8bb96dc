"""``semif eval``: measure routing strategies on a labelled dataset, and tune their thresholds."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .._text import plural
from ..errors import UserError
from ..routing.names import MEASURES
from ._cluster import StatusLine, cluster_pool, ray_option
from ._common import json_option, one_line, print_json, workspace_option
from ._engines import run_settings
from ._strategy_option import StrategyName
from .workspace_cmds import load_tree, open_workspace

if TYPE_CHECKING:
    from ..loop.settings import RunSettings
    from ..routing.learned import LearnedHead
    from ..tree.tree import SkillTree
    from ..workspace import Workspace

COLUMNS = [
    ("accuracy", "overall", "requests routed right: to their skill, or to none when no skill fits"),
    ("balanced_accuracy", "balanced", "the mean of leaf and oos R (out-of-scope requests cannot inflate it)"),
    ("leaf_accuracy", "leaf", "requests that have a skill, routed to it"),
    ("category_accuracy", "category", "requests that have a skill, routed into its top-level category"),
    ("out_of_scope_precision", "oos P", "of the requests routed to none, those that fit no skill"),
    ("out_of_scope_recall", "oos R", "of the requests that fit no skill, those routed to none"),
    ("decisions_per_request", "decisions", "decisions made per request"),
    ("latency_ms_p50", "p50 ms", "median milliseconds to route one request"),
    ("latency_ms_p90", "p90 ms", "90th percentile of the milliseconds"),
    ("prompt_tokens_per_request", "tokens", "prompt tokens per request (model engines)"),
    (
        "calibration_error",
        "ECE",
        "calibration error: how far the last decision's probability is from how often it is right",
    ),
]
"""(key in the report, column heading, what it measures): the table and its legend."""
GATE_COLUMNS = [
    ("acted", "acted", "requests a skill would run on: the route ends at a skill and the act gate lets it act"),
    ("acted_accuracy", "acted right", "of those, the ones run by their own skill"),
    (
        "handed_back",
        "handed back",
        "requests nothing would run on: the gate handed them back, or the route ended at none",
    ),
]
"""The act gate's trade-off at the act threshold in force, a short table after the first."""
SOURCES = {
    "set": "set by [routing] act_threshold or --act-threshold",
    "measured": "measured on the workspace's examples and labels",
    "default": "the default: too few examples to measure",
}
PERCENT_KEYS = {
    "accuracy",
    "balanced_accuracy",
    "leaf_accuracy",
    "category_accuracy",
    "out_of_scope_precision",
    "out_of_scope_recall",
    "calibration_error",
    "validation",
    *(key for key, _, _ in GATE_COLUMNS),
}


def _help() -> str:
    """The command's help: what it does, and the legend of the table's columns (from :data:`COLUMNS`)."""
    legend = "\n".join(f"  {heading:<10}{meaning}" for _, heading, meaning in COLUMNS)
    gate = "\n".join(f"  {heading:<12}{meaning}" for _, heading, meaning in GATE_COLUMNS)
    return (
        'Route every request of DATASET (JSON lines {"text", "skill"}) and report how well each strategy did.\n\n'
        "\b\nOne row per strategy; the columns (percentages, but for decisions, milliseconds and tokens):\n"
        f"{legend}\n\n"
        "\b\nThen what the act gate (semif run's) gives at the act threshold in force, per strategy:\n"
        f"{gate}\n\nThe same legends are printed under the tables. --errors lists what each strategy "
        "got wrong; --tune tunes each strategy's none threshold."
    )


@click.command("eval", help=_help())
@click.argument("dataset", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@workspace_option
@click.option(
    "--tree",
    "tree_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A tree file (categories.json shape) to route on instead of a workspace's.",
)
@click.option("--engine", "engine_name", metavar="NAME", help="SemIf engine (default: the workspace's, else local).")
@click.option(
    "--strategy",
    default="all",
    show_default=True,
    type=StrategyName("all"),
    help="Routing strategy to measure.",
)
@click.option(
    "--threshold",
    type=float,
    help="The none threshold (default: the tuned one for the tuned strategy, else the engine's).",
)
@click.option(
    "--act-threshold",
    type=float,
    metavar="P",
    help="The act threshold to show the gate's trade-off at, 0 to 1 (default: the one semif run acts at).",
)
@click.option(
    "--tune",
    is_flag=True,
    help="Tune each strategy's threshold on half the data, compare the best with the "
    "current routing on the other half, and store it in the workspace only if it is really better.",
)
@click.option(
    "--measure",
    default="accuracy",
    show_default=True,
    type=click.Choice(list(MEASURES)),
    help="What --tune maximises: overall accuracy, balanced accuracy (in-scope and out-of-scope alike), "
    "or in-scope (leaf) accuracy.",
)
@click.option(
    "--errors",
    "show_errors",
    is_flag=True,
    help="Also list the misrouted requests of each strategy: the request, the skill expected, the one it got "
    '(--json: an "errors" list per strategy).',
)
@click.option(
    "--report", "report_file", type=click.Path(dir_okay=False, path_type=Path), help="Also write the report as JSON."
)
@ray_option
@json_option
def eval_(
    dataset: Path,
    workspace: str | None,
    tree_file: Path | None,
    engine_name: str | None,
    strategy: str,
    threshold: float | None,
    act_threshold: float | None,
    tune: bool,
    measure: str,
    show_errors: bool,
    report_file: Path | None,
    ray_address: str | None,
    as_json: bool,
) -> None:
    from .._sync import run_sync
    from ..loop.act_threshold import gate_routes
    from ..loop.settings import default_strategy
    from ..routing.create import strategy_spec, usable_strategies
    from ..routing.evaluate import check_labels, load_dataset, route_all, split, summarize
    from ..routing.tune import DEFAULT_GRID, save_tuned, tune_routing
    from ..tree.tree import SkillTree

    examples = load_dataset(dataset)
    ws = None
    if tree_file is not None:
        skill_tree = SkillTree.load(tree_file, tree_file.parent / "skills")
    else:
        ws = open_workspace(workspace)
        skill_tree = load_tree(ws)
    # tuning compares with the routing in use: the workspace's, not --threshold
    settings = run_settings(ws, engine=engine_name, threshold=None if tune else threshold, act_threshold=act_threshold)
    check_labels(examples, skill_tree)
    router = _router(ws, skill_tree, strategy, settings)
    names = usable_strategies(router) if strategy == "all" else [strategy]

    def make(name: str, cut: float | None, temperature: float | None = None):
        routed = settings.routed(name, cut, temperature)
        return routed.build_strategy(skill_tree, routed.build_engine(), router=router)

    report: dict[str, Any] = {"dataset": str(dataset), "examples": len(examples), "strategies": {}}
    if tune and show_errors:
        raise UserError("--errors lists the errors of a measurement: run it without --tune")
    if tune and ray_address is not None:
        raise UserError("--ray measures on a cluster; --tune runs here: leave out one of them")
    if tune:
        validation, test = split(examples)
        report.update(validation=len(validation), test=len(test), measure=measure)
        current: dict[str, Any] = {
            "strategy": settings.strategy or default_strategy(settings.build_engine()),
            **{k: v for k in ("threshold", "temperature") if (v := getattr(settings, k)) is not None},
        }
        # a strategy with a router learns its none threshold; it is not tuned (see semif train)
        names = [n for n in names if "router" not in strategy_spec(n).needs]
        with _bar(len(names) * len(DEFAULT_GRID), "tuning") as bar:
            now, trials, decision = run_sync(
                tune_routing(make, names, current, validation, test, skill_tree, measure=measure, progress=bar.update)
            )
        report["strategies"] = {t.strategy: {**t.settings, "validation": t.validation, **t.metrics} for t in trials}
        report["current"] = {**now.settings, **now.metrics}
        report["candidate"] = {**decision.candidate.settings, **decision.candidate.metrics}
        report.update(
            decision="changed" if decision.changed else "kept",
            reason=decision.reason,
            gain=decision.gain,
            p_value=round(decision.p_value, 4),
            held_out=decision.held_out,
        )
        if decision.changed and ws is not None:
            stored = {
                **decision.candidate.settings,
                "engine": settings.engine.split(":")[0],
                "measure": measure,
                "test_accuracy": decision.candidate.metrics["accuracy"],
            }
            report["saved_to"] = str(save_tuned(ws, stored))
    else:
        act_at = report["act_threshold"] = run_sync(_act_threshold(settings, skill_tree, ws, router))
        with cluster_pool(ray_address) as pool, _bar(len(names) * len(examples), "routing", pool) as bar:
            for name in names:
                measured = settings.measured(name)
                arguments = (name, measured.threshold, measured.temperature)
                if pool is None:
                    routing = make(*arguments)
                    outcomes = run_sync(
                        route_all(routing, examples, progress=bar.update, on_route=gate_routes(routing))
                    )
                else:
                    from ..distributed.jobs import route_all as route_on_cluster

                    outcomes = route_on_cluster(pool, make, arguments, examples, progress=bar, stage=name)
                    bar.close()  # one line per strategy
                gated = [o.gated for o in outcomes if o.gated is not None]
                report["strategies"][name] = {**summarize(outcomes, skill_tree), **_gate(gated, act_at)}
                if show_errors:
                    report["strategies"][name]["errors"] = [
                        {"text": o.example.text, "expected": o.example.skill, "got": o.predicted}
                        for o in outcomes
                        if not o.correct
                    ]
    if report_file is not None:
        report_file.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if as_json:
        print_json(report)
    else:
        _print_table(report)


async def _act_threshold(
    settings: RunSettings, tree: SkillTree, ws: Workspace | None, router: LearnedHead | None
) -> dict[str, Any]:
    """The act threshold ``semif run`` acts at with ``settings`` (or the one given), where it comes from, and
    for which strategy."""
    from ..loop.act_threshold import Measuring, threshold_in_force
    from ..loop.settings import default_strategy

    engine = settings.build_engine()
    strategy = settings.build_strategy(tree, engine, router=router)
    log = settings.build_log() if ws is not None else None
    found, source = await threshold_in_force(Measuring(settings, tree, engine, strategy, ws, log))
    name = settings.strategy or default_strategy(engine)
    return {**found.to_dict(), "source": source, "strategy": name}


def _gate(pairs: list[tuple[float, bool]], act_at: dict[str, Any]) -> dict[str, Any]:
    """What the act gate gives on the dataset at the threshold in force (see :func:`~..loop.act_threshold.gate_pair`)."""
    from ..loop.act_threshold import trade_off

    found = trade_off(pairs, act_at["threshold"])
    handed_back = None if found.acted is None else 1 - found.acted
    return {"acted": found.acted, "acted_accuracy": found.accuracy, "handed_back": handed_back}


def _router(ws: Workspace | None, tree: SkillTree, strategy: str, settings: RunSettings) -> LearnedHead | None:
    """The workspace's learned router when it fits the tree and the encoder in use; asked for by name without one,
    an error."""
    from ..loop.settings import check_router
    from ..routing.create import strategy_spec
    from ..routing.learned import RouterMismatch, stored_router

    needs_router = strategy != "all" and "router" in strategy_spec(strategy).needs
    if ws is None:
        if needs_router:
            raise UserError(f"the {strategy} strategy routes with a workspace's trained router: pass -w, not --tree")
        return None
    try:
        router = stored_router(ws)
        if router is not None:
            check_router(router, tree, settings.build_engine())
    except RouterMismatch as exc:
        if needs_router:
            raise
        click.echo(f"warning: {exc}; the learned strategy is left out", err=True)
        return None
    return router


def _bar(length: int, label: str, pool: object = None):
    """A progress bar here; on a cluster (``pool``), a status line of the requests done, the rate and the failures."""
    if pool is not None:
        return StatusLine()
    return click.progressbar(length=length, label=label, file=sys.stderr)


def _print_table(report: dict[str, Any]) -> None:
    tuning = "test" in report
    scope = (
        f" (tuned on {report['validation']}, measured on {report['test']}, by {report['measure']})" if tuning else ""
    )
    click.echo(f"{plural(report['examples'], 'example')}{scope}")
    click.echo(
        f"{'strategy':<11}" + ("thresh  validation" if tuning else "") + "".join(f"{t:>10}" for _, t, _ in COLUMNS)
    )
    rows = ({"current": report["current"]} if tuning else {}) | report["strategies"]
    for name, metrics in rows.items():
        line = f"{name:<11}"
        if tuning:
            line += f"{_figure('threshold', metrics.get('threshold')):<8}{_figure('validation', metrics.get('validation')):>10}"
        line += "".join(f"{_figure(key, metrics.get(key)):>10}" for key, _, _ in COLUMNS)
        click.echo(line)
    click.echo()
    for _, heading, meaning in COLUMNS:
        click.echo(click.style(f"  {heading:<10}{meaning}", dim=True))
    click.echo(click.style("  (percentages; '-' where the dataset has no such request)", dim=True))
    if "act_threshold" in report:
        _print_gate(report)
    for name, metrics in report["strategies"].items():
        if "errors" in metrics:
            _print_errors(name, metrics["errors"])
    if tuning:
        candidate = report["candidate"]
        if candidate.get("temperature"):
            click.echo(
                f"calibration of {candidate['strategy']}: temperature {candidate['temperature']} brings the ECE from "
                f"{_figure('calibration_error', candidate['calibration_error_untuned'])} to "
                f"{_figure('calibration_error', candidate['calibration_error'])}"
            )
        if "saved_to" in report:
            click.echo(f"{report['reason']} (saved to {report['saved_to']})")
        else:
            click.echo(report["reason"] + (" (nothing saved: no workspace)" if report["decision"] == "changed" else ""))


def _print_gate(report: dict[str, Any]) -> None:
    """The act gate's trade-off per strategy, at the threshold in force (and where that comes from)."""
    act_at = report["act_threshold"]
    rows = {name: m for name, m in report["strategies"].items() if "acted" in m}
    if not rows:
        return
    source = SOURCES[act_at["source"]]
    click.echo(
        f"\nact gate at threshold {act_at['threshold']:g} ({source}; semif run routes with {act_at['strategy']}):"
    )
    click.echo(f"{'strategy':<11}" + "".join(f"{t:>13}" for _, t, _ in GATE_COLUMNS))
    for name, metrics in rows.items():
        click.echo(f"{name:<11}" + "".join(f"{_figure(key, metrics.get(key)):>13}" for key, _, _ in GATE_COLUMNS))
    click.echo()
    for _, heading, meaning in GATE_COLUMNS:
        click.echo(click.style(f"  {heading:<12}{meaning}", dim=True))


def _print_errors(strategy: str, errors: list[dict[str, Any]]) -> None:
    """``--errors``: each misrouted request, the skill expected and the one it got."""
    click.echo(click.style(f"\n{strategy}: {plural(len(errors), 'misrouted request')}", bold=True))
    if not errors:
        return
    room = max(len(json.dumps(e["text"], ensure_ascii=False)) for e in errors)
    room = min(room, 60)
    expected = max(len(str(e["expected"] or "none")) for e in errors)
    click.echo(f"  {'request':<{room}}  {'expected':<{expected}}  got")
    for error in errors:
        text = json.dumps(one_line(error["text"], room - 2), ensure_ascii=False)
        click.echo(f"  {text:<{room}}  {error['expected'] or 'none':<{expected}}  {error['got'] or 'none'}")


def _figure(key: str, value: float | None) -> str:
    """A figure of the table: a percentage or a number, to one decimal ("-" when there is none)."""
    if value is None:
        return "-"
    if key in PERCENT_KEYS:
        return f"{value:.1%}"
    if key == "threshold":
        return format(value, "g")
    if key == "prompt_tokens_per_request":
        return f"{value:.0f}"
    return "<0.1" if 0 < value < 0.05 else f"{value:.1f}"


COMMANDS = [eval_]
