"""``semif log``: read the decision log back: list, filter, export training rows; one line per run."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..workspace import find_workspace
from ._common import json_option, print_json_lines, workspace_option
from ._run_lines import describe_run, verdict

if TYPE_CHECKING:
    from ..engine.log import DecisionLog


@click.command("log")
@workspace_option
@json_option
@click.option("--run", "run_id", help="Only this run's rows (its id, or a unique prefix of it).")
@click.option("--skill", help="Only rows of this skill.")
@click.option("--kind", type=click.Choice(["route", "predict", "act", "assess", "shortlist", "activate", "create", "propose", "generate"]),
              help="Only this kind of row.")
@click.option("--outcome", type=click.Choice(["success", "failure", "unclear"]),
              help="Only runs that ended so (a person's label beats the assessment).")
@click.option("--labelled/--unlabelled", default=None, help="Only runs a person labelled (or only those not labelled yet).")
@click.option("--engine", help="Only decisions answered by this engine.")
@click.option("--last", type=click.IntRange(min=0), help="Only the last N runs.")
@click.option("--export", "export_to", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the rows as JSON lines to this file (training data).")
@click.option("--calls", is_flag=True, help="List the model calls (generation, chat) instead of the decisions.")
@click.option("--runs", "by_run", is_flag=True,
              help="One line per run: request, chosen skill, outcome and who judged it, label (to choose what to label).")
def log(workspace, as_json, run_id, skill, kind, outcome, labelled, engine, last, export_to, calls, by_run) -> None:  # noqa: ANN001
    """List the logged decisions, each a training row with its run's outcome and label (or the runs, or the model calls).

    \b
    Each row ends with its engine and how its run ended: "success (engine)"
    as assessed, or "failure, labelled by alice: should be notes.add" once a
    person labelled it (`semif label`). --json rows carry the `outcome` and,
    when labelled, a `label` object.
    """
    from ..engine.log import DecisionLog

    ws = find_workspace(workspace)
    if calls:
        rows = list(DecisionLog(ws.model_calls_path).read())
        rows = rows[-last:] if last else rows
        if as_json or export_to is not None:
            _emit(rows, export_to)
        else:
            for row in rows:
                usage = row.get("usage") or {}
                outcome_text = row.get("error") or f"{usage.get('input_tokens', 0)} in / {usage.get('output_tokens', 0)} out"
                click.echo(f"{row.get('purpose', '-'):<9} {row.get('provider')}/{row.get('model')}  "
                           f"{len(row.get('messages', []))} messages  {outcome_text}  {row.get('latency_ms')} ms")
        return
    decisions = DecisionLog(ws.log_path)
    if run_id is not None:
        run_id = decisions.run(run_id).run_id
    if by_run:
        _list_runs(decisions, run_id=run_id, skill=skill, kind=kind, outcome=outcome, labelled=labelled,
                   engine=engine, last=last, as_json=as_json, export_to=export_to)
        return
    rows = decisions.filter(
        run_id=run_id, skill=skill, kind=kind, outcome=outcome, engine=engine, last_runs=last, labelled=labelled
    )
    if as_json or export_to is not None:
        _emit(rows, export_to)
        return
    if not rows:
        click.echo(f"no decisions logged in {ws.log_path}")
        return
    for row in rows:
        if "question" not in row:  # a generation step, not a decision
            admitted = "admitted" if row.get("admitted") else ", ".join(row.get("violations", [])[:2]) or ""
            click.echo(f"{row.get('run_id')}  {row.get('kind'):<9} {row.get('skill')} "
                       f"{('#' + str(row['attempt'])) if 'attempt' in row else ''} {admitted}".rstrip())
            continue
        score = (row.get("scores") or {}).get(row.get("selected"))
        shown = f" ({score:.2f})" if isinstance(score, (int, float)) else ""
        label = row.get("label") or {}
        ended = verdict(row.get("outcome"), by=label.get("by"), label_outcome=label.get("outcome"),
                        label_has_skill="skill" in label, label_skill=label.get("skill"))
        click.echo(
            f"{row.get('run_id')}  #{row.get('step')} {row.get('kind'):<7} "
            f"{row.get('question')} -> {row.get('selected')}{shown}  [{row.get('engine')}; {ended}]"
        )


def _list_runs(decisions: DecisionLog, *, run_id: str | None, skill: str | None, kind: str | None,
               outcome: str | None, labelled: bool | None, engine: str | None, last: int | None,
               as_json: bool, export_to: Path | None) -> None:
    """``--runs``: one line (or JSON object) per run; ``--skill`` is the skill the run chose."""
    records = every = decisions.runs()
    if last is not None:
        records = records[-last:] if last else []
    if kind is not None or engine is not None:
        having = {row.get("run_id") for row in decisions.filter(kind=kind, engine=engine)}
        records = [r for r in records if r.run_id in having]
    records = [
        r for r in records
        if (run_id is None or r.run_id == run_id) and (skill is None or r.skill == skill)
        and (outcome is None or r.true_outcome == outcome)
        and (labelled is None or (r.labelled_by is not None) == labelled)
    ]
    if as_json or export_to is not None:
        _emit([{**asdict(r), "true_outcome": r.true_outcome} for r in records], export_to)
    elif not records:
        click.echo(f"no runs match in {decisions.path}" if every else f"no runs logged in {decisions.path}")
    else:
        for record in records:
            click.echo(describe_run(record))


def _emit(rows: list, export_to: Path | None) -> None:
    """The rows as JSON lines: to ``export_to`` (training data), else to standard output."""
    if export_to is None:
        print_json_lines(rows)
        return
    with export_to.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    click.echo(f"wrote {len(rows)} rows to {export_to}")


COMMANDS = [log]
