"""``semif run --batch FILE``: many requests, one logged run each, here or on a Ray cluster (``--ray``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .._text import plural
from ..errors import UserError
from ._cluster import StatusLine, cluster_pool
from ._common import one_line, print_json
from ._engines import run_settings
from .workspace_cmds import open_workspace

if TYPE_CHECKING:
    from ..distributed.batch import BatchRequest
    from ..loop.runner import SkillRunner

_LABEL_COLOURS = {"success": "green", "failure": "red", "unclear": "yellow", "handed_back": "yellow"}


def run_batch_file(
    batch_file: Path,
    workspace: str | None,
    engine_name: str | None,
    model: str | None,
    strategy: str | None,
    allow_scripts: bool | None,
    no_log: bool,
    ray_address: str | None,
    as_json: bool,
    *,
    yes: bool = False,
    act_threshold: float | None = None,
) -> None:
    """Run the requests of ``batch_file``; ``yes`` acts where the act gate would hand a request back,
    ``act_threshold`` is the one to act at (default: the workspace's)."""
    from ..distributed.batch import LocalPool, load_requests, run_batch

    requests = load_requests(batch_file)
    ws = open_workspace(workspace, create_default=True)
    given = (engine_name, model, strategy, allow_scripts)
    log = run_settings(  # a bad value: one line, first
        ws, **_named(*given), log=False if no_log else None, act_threshold=act_threshold
    ).build_log()
    setup = partial(batch_runner, str(ws.root), *given, act_threshold=act_threshold)
    with cluster_pool(ray_address) as pool, StatusLine() as status:
        if pool is None:  # here, one runner routes every request: embed them first, in batches
            report = run_batch(
                LocalPool(), partial(embedded_ahead, setup, requests), requests, log, progress=status, yes=yes
            )
        else:
            report = run_batch(pool, setup, requests, log, progress=status, yes=yes)
    if as_json:
        print_json(
            {
                "runs": report.runs,
                "handed_back": len(report.handed_back),
                "rows_written": report.rows_written,
                "log": str(log.path) if log.enabled else None,
            }
        )
    else:
        width = len(str(len(report.runs)))
        for entry in report.runs:
            number = f"{entry['index'] + 1:>{width}}."
            if entry.get("error_before_run"):
                click.echo(f"{number} {click.style('not run', fg='red')}: {entry['error_before_run']}")
                continue
            label = click.style(entry["outcome"], fg=_LABEL_COLOURS.get(entry["outcome"]), bold=True)
            click.echo(f"{number} {entry['skill'] or '(none)'}  {label}  {one_line(entry['text'], 60)}")
        where = f"-> {log.path}" if log.enabled else "(not logged: --no-log)"
        ran = len(report.runs) - len(report.failed)
        held = f" ({len(report.handed_back)} handed back)" if report.handed_back else ""
        click.echo(f"{plural(ran, 'run')}{held}, {plural(report.rows_written, 'row')} {where}")
    if report.failed:
        first = report.failed[0]
        raise UserError(
            f"{len(report.failed)} of {plural(len(requests), 'request')} could not run; "
            f"request {first['index'] + 1}: {first['error_before_run']}"
        )


def batch_runner(
    root: str,
    engine_name: str | None,
    model: str | None,
    strategy: str | None,
    allow_scripts: bool | None,
    *,
    act_threshold: float | None = None,
) -> SkillRunner:
    """A worker's runner for the workspace at ``root``: it logs nothing (the driver writes its rows) and acts under
    the workspace's run lock."""
    from ..distributed.batch import run_lock
    from ..loop.settings import RunSettings
    from ..workspace import Workspace
    from ._engines import skill_runner

    ws = Workspace.load(root)
    given = _named(engine_name, model, strategy, allow_scripts)
    settings = RunSettings.resolve(ws, **given, log=False, act_threshold=act_threshold)
    return skill_runner(settings, act_lock=run_lock(ws))


def embedded_ahead(setup: Callable[[], SkillRunner], requests: Sequence[BatchRequest]) -> SkillRunner:
    """``setup()``'s runner, with the requests it will route embedded first, :data:`EMBED_BATCH` to a model run
    (the embedder keeps them: routing each request then finds it embedded)."""
    from ..routing.evaluate import EMBED_BATCH, embedding_of

    runner = setup()
    embed = embedding_of(runner.strategy)
    texts = [r.text for r in requests if r.skill is None]
    if embed is not None:
        for first in range(0, len(texts), EMBED_BATCH):
            embed(texts[first : first + EMBED_BATCH])
    return runner


def _named(engine_name: str | None, model: str | None, strategy: str | None, allow_scripts: bool | None) -> dict:
    """The command line's values as :meth:`RunSettings.resolve` takes them."""
    return {"engine": engine_name, "model": model, "strategy": strategy, "allow_scripts": allow_scripts}
