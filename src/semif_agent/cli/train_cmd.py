"""``semif train``: fit the workspace's router from its examples, labelled datasets and decision log."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import click

from .._text import percent_figure, plural
from ._cluster import StatusLine, cluster_pool, ray_option
from ._common import StageBars, json_option, print_json, workspace_option


@click.command("train")
@click.argument("datasets", nargs=-1, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@workspace_option
@click.option("--no-log", "skip_log", is_flag=True, help="Do not learn from the decision log's runs.")
@click.option(
    "--no-clients",
    "skip_clients",
    is_flag=True,
    help="Do not learn from clients' picks and reports (semif mcp, Router): only from people, examples and assessments.",
)
@click.option(
    "--held-out",
    type=click.FloatRange(0.05, 0.5),
    default=0.2,
    show_default=True,
    help="Share of the labelled requests kept aside to measure before and after.",
)
@click.option(
    "--force", is_flag=True, help="Switch to the new router even when it breaks requests the routing in use gets right."
)
@click.option(
    "--encoder",
    "tune_encoder",
    is_flag=True,
    help="Also fine-tune the embedded encoder on the same evidence, on this machine's CPU (needs semif-agent[tune]), "
    "and train the router on it; both switch in only together, when the replay shows a gain beyond noise.",
)
@click.option(
    "--epochs",
    type=click.IntRange(1, 20),
    default=None,
    help="With --encoder: at most this many passes over the requests (default 3; it stops early when the held-out "
    "loss stops falling).",
)
@click.option(
    "--layers",
    type=click.IntRange(1, 6),
    default=None,
    help="With --encoder: tune only this many of the model's 6 layers, the top ones (default 6; 2 is about three "
    "times as fast).",
)
@ray_option
@json_option
def train(
    datasets: tuple[Path, ...],
    workspace: str | None,
    skip_log: bool,
    skip_clients: bool,
    held_out: float,
    force: bool,
    tune_encoder: bool,
    epochs: int | None,
    layers: int | None,
    ray_address: str | None,
    as_json: bool,
) -> None:
    """Fit the workspace's router from everything it knows, and measure it on held-out requests.

    \b
    It learns from:
      the example requests of the workspace's skills (manifests' and SKILL.md skills' "examples"),
      and the tree's "none_examples" (requests no skill serves) for "no skill fits",
      DATASETS: labelled requests, JSON lines {"text", "skill"} ("skill": null teaches "no skill fits"),
      the decision log: runs a person labelled (semif label) first, runs judged a success as weaker
      evidence, runs judged a failure as evidence against the skill they chose;
      and clients (semif mcp, Router): their picks and reports, once per request, each client's at
      most 5% of the rest's weight and all clients' at most 25%, never over what a person said.

    Before it switches, every request whose right route is known (examples, datasets, labelled
    and successful runs) is routed by the routing in use and by the new router, and the flips are
    listed ("now right", "now wrong"); clients' requests are listed too, marked as a client's pick
    or report, and never counted. It keeps the routing in use, writes nothing and says why when
    the new router gets wrong a request a person labelled that was right, whatever the fixes; when
    it gets wrong a request that was right and its fixes do not outnumber such breaks beyond noise
    (McNemar's exact test, p < 0.05); or when, trained without the held-out requests, it does
    worse on them than the untrained examples. It then names the label behind the breaks, if one
    is (refitted without each of the latest five labels people gave), and how to take it back
    (semif label RUN --undo). Labelled requests the new router still gets wrong are listed as
    "not learned". --force switches anyway.

    With --encoder the embedded model itself is fine-tuned first (contrastive: each request towards its
    skill's name and description and its skill's other requests, away from the skills the routing in
    use confused it with; held-out requests aside, stopping when their loss stops falling), written in
    the engine's ONNX int8 format, and the router trained on it. It switches in only when the replay
    fixes more than it breaks beyond noise and breaks nothing a person labelled (--force: anyway); the
    tuned encoder then lives in data/encoder/ and semif encoder off goes back to the installed one.

    The router is stored in the workspace (data/router.json says on what, and when) and
    routes from then on: semif run, semif eval (strategy "learned") and the agent's skill
    discovery use it, and the runs it learned from become their skills' learned examples in
    data/categories.json (semif skills show NAME). Skills added later are scored the untrained way until the next training.
    With --ray the requests are embedded and scored on a cluster; the fit is the same.
    """
    from ..loop.learned_examples import learn, lesson_of
    from ..loop.settings import RunSettings
    from ..records import DecisionLog
    from ..records.runs import persons_word
    from ..routing.evaluate import load_dataset
    from ..routing.training import examples_from_dataset, examples_from_log, examples_from_tree, train_workspace
    from .workspace_cmds import load_tree, open_workspace

    ws = open_workspace(workspace)
    settings = RunSettings.resolve(ws, engine="local")
    if (epochs is not None or layers is not None) and not tune_encoder:
        raise click.UsageError("--epochs and --layers are for --encoder")
    engine = settings.build_engine()
    tree = load_tree(ws, engine=engine)
    current = settings.build_strategy(tree, engine)
    rows = examples_from_tree(tree)
    for dataset in datasets:
        rows += examples_from_dataset(load_dataset(dataset), tree)
    runs = [] if skip_log else DecisionLog.for_workspace(ws).runs()
    rows += [row for row in examples_from_log(runs, tree) if not (skip_clients and row.client is not None)]
    tuning = None
    with cluster_pool(ray_address) as pool, StageBars(only_on_terminal=True) as bars, StatusLine("text") as status:
        progress: Callable[[str, int, int], None] = bars
        cluster = None
        if pool is not None:  # the embedding's progress is the cluster's status line
            from ..distributed.jobs import encoder as cluster_encoder

            def cluster(options: Mapping[str, object]) -> Any:
                return cluster_encoder(pool, tree, {**settings.engine_options(), **options}, status=status)

            def bars_but_embedding(stage: str, done: int, total: int) -> None:
                if stage != "embedding":
                    bars(stage, done, total)

            progress = bars_but_embedding
        if tune_encoder:
            from ..routing.encoder.tuning import TuneSettings
            from ..routing.encoder.workspace_tuning import tune_workspace

            _router, report, path, tuning = tune_workspace(
                ws,
                tree,
                rows,
                engine,
                current=current,
                force=force,
                held_out=held_out,
                settings=TuneSettings(
                    **{key: value for key, value in (("epochs", epochs), ("layers", layers)) if value is not None}
                ),
                progress=progress,
                say=lambda line: click.echo(line, err=True),
                cluster=cluster,
            )
        else:
            _router, report, path = train_workspace(
                ws,
                tree,
                rows,
                engine,
                current=current,
                force=force,
                held_out=held_out,
                progress=progress,
                encoder=cluster({}) if cluster is not None else None,
            )
    if tuning is not None and report is None:  # nothing tuned, or tuning gained nothing
        if as_json:
            print_json({"encoder": tuning.to_dict(), "saved_to": None})
        else:
            click.echo(tuning.note)
        return
    assert report is not None and _router is not None
    if path is not None and tuning is not None:  # the tuned encoder routes from now on
        engine = RunSettings.resolve(ws, engine="local").build_engine()
    learned = None
    if path is not None:  # switched: the runs it learned from join their skills' learned examples
        # as people and the engine said, never a client: not its reports, nor the verdict on a skill it picked
        # (a client reports only on its own runs, so any run with a client's label is one it picked); and only
        # where the router switched to routes the request as they said: what it learned
        from ..routing.learned import Learned, LearnedScorer
        from ..routing.switching import routed_skills

        switched_to = Learned(tree, engine, LearnedScorer(tree, engine, _router))
        learned = learn(
            ws,
            (lesson_of(persons_word(run), judged=run.label_client is None) for run in runs),
            routes=lambda texts: routed_skills(switched_to, texts),
        )
    about_encoder = {} if tuning is None else {"encoder": tuning.to_dict()}
    if as_json:
        if learned:
            click.echo(learned.summary(), err=True)
        print_json({**report.to_dict(), **about_encoder, "saved_to": None if path is None else str(path)})
        return
    if tuning is not None:
        _print_tuning(tuning.to_dict())
    _print_report(report.to_dict(), path)
    if tuning is not None:
        click.echo(
            "the tuned encoder routes from now on (data/encoder/); semif encoder off goes back to the installed one"
            if path is not None
            else "the tuned encoder was not kept"
        )
    if learned:
        click.echo(learned.summary())


# What one training row of each source is called when counted (the sources of ``routing.training.SOURCES``, and
# ``none``: requests that go to no skill); a source not named here is counted under its own name.
ROW_NOUNS = {
    "dataset": ("dataset request", "dataset requests"),
    "examples": ("example", "examples"),
    "failure": ("failure", "failures"),
    "implicit": ("implicit label", "implicit labels"),
    "label": ("label", "labels"),
    "none": ("none", "none"),
    "reported": ("reported outcome", "reported outcomes"),
    "success": ("success", "successes"),
}


def _print_tuning(tuning: dict[str, Any]) -> None:
    tune = tuning["tune"]
    losses = tune["held_out_loss"]
    stopped = ", stopped early" if tune["stopped_early"] else ""
    click.echo(
        f"tuned the encoder on {plural(tuning['pairs'], 'pair')} in {tune['seconds']:.0f} s "
        f"({plural(tune['epochs'], 'epoch')}{stopped}): held-out loss {losses[0]:.3f} -> "
        f"{losses[tune['best_epoch']]:.3f} (best after epoch {tune['best_epoch']})"
    )


def _print_report(report: dict[str, Any], path: Path | None) -> None:
    from ..routing.switching import flip_lines, label_lines

    counts = ", ".join(
        plural(n, *ROW_NOUNS.get(source, (source, source))) for source, n in sorted(report["counts"].items()) if n
    )
    click.echo(f"learned {plural(report['classes'], 'skill')} from {counts}")
    if report["held_out"]:
        before, after, calibration = report["before"], report["after"], report["calibration"]
        click.echo(f"held out {plural(report['held_out'], 'request')}:")
        click.echo(f"  {'':<11}{'overall':>9}{'in scope':>10}{'out of scope recall':>21}")
        for name, metrics in (("untrained", before), ("learned", after)):
            click.echo(
                f"  {name:<11}{percent_figure(metrics['accuracy']):>9}{percent_figure(metrics['in_scope_accuracy']):>10}"
                f"{percent_figure(metrics['out_of_scope_recall']):>21}"
            )
        click.echo(
            f"  calibration: temperature {calibration['temperature']} brings the error from "
            f"{calibration['calibration_error_before']} to {calibration['calibration_error_after']}"
        )
    else:
        chosen = f"; regularisation chosen by {report['folds']}-fold cross-validation" if report["folds"] > 1 else ""
        click.echo(f"too few labelled requests to hold any out: nothing was measured{chosen}")
    decision = report["decision"]
    click.echo(
        f"replayed {plural(decision['replayed'], 'request')} with a known route: {decision['current']} gets "
        f"{decision['right_before']} right, the new router {decision['right_after']}"
    )
    for line in flip_lines(decision):
        click.echo(line)
    click.echo(decision["reason"])
    for line in label_lines(decision):
        click.echo(line)
    seconds = report["seconds"]
    where = f"saved to {path}" if path is not None else "nothing saved"
    click.echo(f"took {seconds['embedding']} s embedding and {seconds['fitting']} s fitting; {where}")


COMMANDS = [train]
