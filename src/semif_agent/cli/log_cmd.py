"""``semif log``: read the decision log back: list, filter, export training rows."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..workspace import find_workspace
from ._common import json_option, print_json_lines, workspace_option


@click.command("log")
@workspace_option
@json_option
@click.option("--run", "run_id", help="Only this run's rows.")
@click.option("--skill", help="Only rows of this skill.")
@click.option("--kind", type=click.Choice(["route", "predict", "act", "assess", "create", "propose", "generate"]),
              help="Only this kind of row.")
@click.option("--outcome", type=click.Choice(["success", "failure", "unclear"]), help="Only runs assessed so.")
@click.option("--engine", help="Only decisions answered by this engine.")
@click.option("--last", type=click.IntRange(min=0), help="Only the last N runs.")
@click.option("--export", "export_to", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the rows as JSON lines to this file (training data).")
@click.option("--calls", is_flag=True, help="List the model calls (generation, chat) instead of the decisions.")
def log(workspace, as_json, run_id, skill, kind, outcome, engine, last, export_to, calls) -> None:  # noqa: ANN001
    """List the logged decisions, each a training row with the run's outcome (or, with --calls, the model calls)."""
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
    rows = DecisionLog(ws.log_path).filter(
        run_id=run_id, skill=skill, kind=kind, outcome=outcome, engine=engine, last_runs=last
    )
    if as_json or export_to is not None:
        _emit(rows, export_to)
        return
    if not rows:
        click.echo(f"no decisions logged in {ws.log_path}")
        return
    for row in rows:
        if "question" not in row:  # a generation step, not a decision
            verdict = "admitted" if row.get("admitted") else ", ".join(row.get("violations", [])[:2]) or ""
            click.echo(f"{row.get('run_id')}  {row.get('kind'):<9} {row.get('skill')} "
                       f"{('#' + str(row['attempt'])) if 'attempt' in row else ''} {verdict}".rstrip())
            continue
        score = (row.get("scores") or {}).get(row.get("selected"))
        shown = f" ({score:.2f})" if isinstance(score, (int, float)) else ""
        click.echo(
            f"{row.get('run_id')}  #{row.get('step')} {row.get('kind'):<7} "
            f"{row.get('question')} -> {row.get('selected')}{shown}  [{row.get('engine')}; {row.get('outcome') or '-'}]"
        )


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
