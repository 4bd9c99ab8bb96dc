"""``semif eval``: measure routing strategies on a labelled dataset, and tune their thresholds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ..routing.strategies import STRATEGIES
from ._common import json_option, print_json, workspace_option
from .workspace_cmds import load_tree

COLUMNS = [
    ("accuracy", "overall"), ("balanced_accuracy", "balanced"), ("leaf_accuracy", "leaf"), ("category_accuracy", "category"),
    ("out_of_scope_precision", "oos P"), ("out_of_scope_recall", "oos R"),
    ("decisions_per_request", "decisions"), ("latency_ms_p50", "p50 ms"), ("latency_ms_p90", "p90 ms"),
    ("prompt_tokens_per_request", "tokens"), ("calibration_error", "ECE"),
]


@click.command("eval")
@click.argument("dataset", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@workspace_option
@click.option("--tree", "tree_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A tree file (categories.json shape) to route on instead of a workspace's.")
@click.option("--engine", "engine_name", metavar="NAME", help="SemIf engine (default: the workspace's, else local).")
@click.option("--strategy", default="all", show_default=True, type=click.Choice(["all", *STRATEGIES]),
              help="Routing strategy to measure.")
@click.option("--threshold", type=float, help="The none threshold (default: the tuned one for the tuned strategy, else the engine's).")
@click.option("--tune", is_flag=True, help="Tune the threshold on half the data, report the other half, "
              "and store the best strategy and threshold in the workspace.")
@click.option("--report", "report_file", type=click.Path(dir_okay=False, path_type=Path), help="Also write the report as JSON.")
@json_option
def eval_(dataset: Path, workspace: str | None, tree_file: Path | None, engine_name: str | None, strategy: str,
          threshold: float | None, tune: bool, report_file: Path | None, as_json: bool) -> None:
    """Route every request of DATASET (JSON lines {"text", "skill"}) and report how well each strategy did."""
    from .._sync import run_sync
    from ..engine.registry import create_engine, default_engine_name
    from ..routing.evaluate import check_labels, expected_calibration_error, load_dataset, route_all, split, summarize
    from ..routing.strategies import create_strategy
    from ..routing.tune import DEFAULT_GRID, routing_settings, save_tuned, tune_temperature, tune_threshold
    from ..tree.tree import SkillTree
    from ..workspace import find_workspace

    examples = load_dataset(dataset)
    ws = None
    tuned: dict[str, Any] = {}
    if tree_file is not None:
        skill_tree = SkillTree.load(tree_file, tree_file.parent / "skills")
        settings: dict[str, Any] = {}
    else:
        ws = find_workspace(workspace)
        skill_tree = load_tree(ws)
        settings = ws.engine_settings
        used = engine_name or settings.get("name") or default_engine_name()
        tuned = routing_settings(ws, used.split(":")[0])
    check_labels(examples, skill_tree)
    names = list(STRATEGIES) if strategy == "all" else [strategy]

    def make(name: str, cut: float | None, temperature: float | None = None):
        overrides = {k: v for k, v in (("threshold", cut), ("temperature", temperature)) if v is not None}
        engine = create_engine(engine_name, {**settings, **overrides})
        return create_strategy(name, skill_tree, engine, threshold=cut, temperature=temperature)

    report: dict[str, Any] = {"dataset": str(dataset), "examples": len(examples), "strategies": {}}
    if tune:
        validation, test = split(examples)
        report["validation"], report["test"] = len(validation), len(test)
        with _bar(len(names) * len(DEFAULT_GRID), "tuning") as bar:
            for name in names:
                best, _ = run_sync(tune_threshold(lambda t, n=name: make(n, t), validation, skill_tree, progress=bar.update))
                temperature = tune_temperature(run_sync(route_all(make(name, best), validation)))
                untuned = expected_calibration_error(run_sync(route_all(make(name, best), test)))
                metrics = summarize(run_sync(route_all(make(name, best, temperature), test)), skill_tree)
                report["strategies"][name] = {"threshold": best, "temperature": temperature, **metrics,
                                              "calibration_error_untuned": untuned}
        winner = max(report["strategies"], key=lambda n: report["strategies"][n]["balanced_accuracy"] or 0)
        chosen = report["strategies"][winner]
        report["best"] = {"strategy": winner, "threshold": chosen["threshold"],
                          **({"temperature": chosen["temperature"]} if chosen["temperature"] else {})}
        if ws is not None:
            used = engine_name or settings.get("name") or default_engine_name()
            report["saved_to"] = str(save_tuned(ws, {**report["best"], "engine": used.split(":")[0],
                                                     "test_accuracy": report["strategies"][winner]["accuracy"]}))
    else:
        with _bar(len(names) * len(examples), "routing") as bar:
            for name in names:
                mine = tuned if tuned.get("strategy") == name else {}
                cut = threshold if threshold is not None else mine.get("threshold")
                outcomes = run_sync(route_all(make(name, cut, mine.get("temperature")), examples, progress=bar.update))
                report["strategies"][name] = summarize(outcomes, skill_tree)
    if report_file is not None:
        report_file.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if as_json:
        print_json(report)
    else:
        _print_table(report)


def _bar(length: int, label: str):  # noqa: ANN202
    return click.progressbar(length=length, label=label, file=click.get_text_stream("stderr"))


def _print_table(report: dict[str, Any]) -> None:
    scope = f" (tuned on {report['validation']}, measured on {report['test']})" if "test" in report else ""
    click.echo(f"{report['examples']} examples{scope}")
    header = f"{'strategy':<11}" + ("thresh  " if "test" in report else "") + "".join(f"{t:>10}" for _, t in COLUMNS)
    click.echo(header)
    for name, metrics in report["strategies"].items():
        line = f"{name:<11}" + (f"{metrics['threshold']:<8.3f}" if "test" in report else "")
        for key, _ in COLUMNS:
            value = metrics.get(key)
            shown = "-" if value is None else (f"{value:.1%}" if key.endswith(("accuracy", "precision", "recall")) else f"{value:g}")
            line += f"{shown:>10}"
        click.echo(line)
    if "best" in report:
        calibrated = report["strategies"][report["best"]["strategy"]]
        if calibrated.get("temperature"):
            click.echo(f"calibration: temperature {calibrated['temperature']} brings the ECE from "
                       f"{calibrated['calibration_error_untuned']} to {calibrated['calibration_error']}")
        click.echo(f"best: {report['best']['strategy']} at threshold {report['best']['threshold']}"
                   + (f" (saved to {report['saved_to']})" if "saved_to" in report else ""))


COMMANDS = [eval_]
