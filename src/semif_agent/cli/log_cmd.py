"""``semif log``: read the decision log back: one line per run (or per decision, or per model call), filter, export."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .._json import json_line
from .._text import plural
from ..errors import UserError
from ..records.kind_names import listed_kinds
from ._common import SemifGroup, json_option, print_json_lines, workspace_option
from ._run_lines import chosen, describe_run, verdict
from .workspace_cmds import open_workspace

if TYPE_CHECKING:
    from ..records import DecisionLog


DEFAULT_LIMIT = 20
"""Runs shown on the screen when --limit is not given (--json and --export give them all)."""


@click.group("log", cls=SemifGroup, invoke_without_command=True)
@workspace_option
@json_option(shape="JSON lines (one object per run; per decision row with --decisions, per call with --calls)")
@click.option(
    "--decisions",
    "by_decision",
    is_flag=True,
    help="One line per decision (a training row: question, choice, engine) instead of one per run.",
)
@click.option("--calls", is_flag=True, help="List the model calls (generation, chat) instead of the runs.")
@click.option(
    "--finds",
    is_flag=True,
    help="List the finds instead of the runs: the skills a client (the MCP server, a Router) was offered for a "
    "request, and the one it picked.",
)
@click.option("--runs", "by_run", is_flag=True, hidden=True, help="One line per run (the default).")
@click.option(
    "--run", "run_id", help="Only this run (its id, or a unique prefix of it); `semif log show RUN` shows it whole."
)
@click.option("--skill", help="Only runs (or rows) of this skill.")
@click.option(
    "--kind",
    type=click.Choice(listed_kinds()),
    help="Only this kind of decision (runs that made one).",
)
@click.option(
    "--outcome",
    type=click.Choice(["success", "failure", "unclear", "handed_back"]),
    help="Only runs that ended so (a person's label beats the assessment); handed_back: the act gate held it back.",
)
@click.option(
    "--labelled/--unlabelled", default=None, help="Only runs a person labelled (or only those not labelled yet)."
)
@click.option("--engine", help="Only decisions answered by this engine.")
@click.option(
    "--to-label",
    "to_label",
    is_flag=True,
    help="The runs whose label would teach the router most (undone, handed back, contradicted, close routing "
    "calls), best first; runs a person labelled are left out.",
)
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    metavar="N",
    help=f"Only the last N runs (calls with --calls); 0 for all (default: {DEFAULT_LIMIT} on the screen, "
    "all with --json or --export).",
)
@click.option("--last", type=click.IntRange(min=0), hidden=True, help="The older name of --limit.")
@click.option(
    "--export",
    "export_to",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write what is listed as JSON lines to this file (its folder is made if missing); with "
    "--decisions, training rows.",
)
@click.pass_context
def log(
    ctx: click.Context,
    workspace,
    as_json,
    by_decision,
    calls,
    finds,
    by_run,
    run_id,
    skill,
    kind,
    outcome,
    labelled,
    engine,
    to_label,
    limit,
    last,
    export_to,
) -> None:
    """List the logged runs, one line each: request, chosen skill, outcome and who judged it, label.

    \b
    Each line starts with the run's id (its date and time, then a random
    part; `semif label` and `semif log show` take it, or a unique prefix),
    then the request, the skill it went to, and how it ended: "success
    (engine)" as assessed, or "failure, labelled by alice: should be
    notes.add" once a person labelled it (`semif label`). --decisions lists
    the decisions instead (the training rows), --calls the model calls,
    --finds a client's finds (the skills it was offered for a request: no
    run, nothing done, so they are not among the runs).

    \b
      semif log                      the last 20 runs
      semif log --limit 0 --outcome failure
      semif log show 20261130-1015   one run whole: route, prediction, action, changes, assessment, label
      semif log --decisions --export rows.jsonl
      semif log --to-label           the runs worth labelling first
    """
    if ctx.invoked_subcommand is not None:
        return
    from ..records import DecisionLog, DecisionRow, GenerateRow

    if sum(map(bool, (by_decision, calls, finds))) > 1 or (by_decision or calls) and by_run:
        raise UserError("give one of --decisions, --calls, --finds (the runs are listed by default)")
    limit = last if limit is None else limit
    everything = as_json or export_to is not None
    shown = limit if limit is not None else (None if everything else DEFAULT_LIMIT)
    ws = open_workspace(workspace)
    if calls:
        _list_calls(DecisionLog(ws.model_calls_path), shown or None, as_json=as_json, export_to=export_to)
        return
    decisions = DecisionLog.for_workspace(ws)
    if to_label:
        _list_to_label(decisions, shown or None, as_json=as_json, export_to=export_to)
        return
    if run_id is not None:
        run_id = decisions.run(run_id).run_id
    if not by_decision:
        _list_runs(
            decisions,
            run_id=run_id,
            skill=skill,
            kind=kind,
            outcome=outcome,
            labelled=labelled,
            engine=engine,
            last=shown or None,
            as_json=as_json,
            export_to=export_to,
            finds=finds,
        )
        return
    rows = decisions.filter(
        run_id=run_id,
        skill=skill,
        kind=kind,
        outcome=outcome,
        engine=engine,
        last_runs=shown or None,
        labelled=labelled,
    )
    if everything:
        _emit([joined.to_dict() for joined in rows], export_to)
        return
    if not rows:
        click.echo(f"no decisions logged in {ws.log_path}")
        return
    for joined in rows:
        row = joined.row
        if not isinstance(row, DecisionRow):  # a generation step, not a decision
            skill = getattr(row, "skill", None)
            if isinstance(row, GenerateRow):
                admitted = "admitted" if row.admitted else ", ".join(row.violations[:2])
                click.echo(f"{row.run_id}  {row.kind:<9} {skill} #{row.attempt} {admitted}".rstrip())
            else:
                click.echo(f"{row.run_id}  {row.kind:<9} {skill}".rstrip())
            continue
        label = joined.label
        ended = verdict(
            joined.outcome,
            by=(label.by or None) if label is not None else None,
            label_outcome=label.outcome if label is not None else None,
            label_has_skill=label is not None and label.has_skill,
            label_skill=label.skill if label is not None else None,
        )
        click.echo(f"{row.run_id}  #{row.step} {row.kind:<7} {row.question} -> {chosen(row)}  [{row.engine}; {ended}]")


def _list_calls(calls: DecisionLog, last: int | None, *, as_json: bool, export_to: Path | None) -> None:
    """``--calls``: the model calls, one line each (or JSON lines), each with its messages whole."""
    from ..llm.calllog import read_calls

    rows = list(read_calls(calls))
    rows = rows[-last:] if last else rows
    if as_json or export_to is not None:
        _emit([row.to_dict() for row in rows], export_to)
        return
    if not rows:
        click.echo(f"no model calls logged in {calls.path}")
    for row in rows:
        usage = row.usage or {}
        ended = row.error or f"{usage.get('input_tokens', 0)} in / {usage.get('output_tokens', 0)} out"
        purpose = row.context.get("purpose", "-")
        click.echo(
            f"{purpose:<9} {row.provider}/{row.model}  "
            f"{plural(len(row.messages), 'message')}  {ended}  {row.latency_ms} ms"
        )


def _list_runs(
    decisions: DecisionLog,
    *,
    run_id: str | None,
    skill: str | None,
    kind: str | None,
    outcome: str | None,
    labelled: bool | None,
    engine: str | None,
    last: int | None,
    as_json: bool,
    export_to: Path | None,
    finds: bool = False,
) -> None:
    """One line (or JSON object) per run, the last ``last`` of those that match; ``--skill`` is the skill the run chose.
    A client's find is no run: only ``finds`` (or ``--kind shortlist``, or ``--run`` naming one) lists finds."""
    from ..records.runs import FIND_KIND

    every = decisions.runs()
    finds = finds or kind == FIND_KIND
    records = [r for r in every if r.find == finds or r.run_id == run_id]
    left_out = len(every) - len(records)
    what = "find" if finds else "run"
    if kind is not None or engine is not None:
        having = {joined.row.run_id for joined in decisions.filter(kind=kind, engine=engine)}
        records = [r for r in records if r.run_id in having]
    records = [
        r
        for r in records
        if (run_id is None or r.run_id == run_id)
        and (skill is None or r.skill == skill)
        and (outcome is None or r.true_outcome == outcome)
        and (labelled is None or (r.labelled_by is not None) == labelled)
    ]
    earlier = max(0, len(records) - last) if last else 0
    records = records[earlier:]
    if as_json or export_to is not None:
        _emit([{**asdict(r), "true_outcome": r.true_outcome} for r in records], export_to)
    elif not records:
        click.echo(
            f"no {what}s match in {decisions.path}"
            if any(r.find == finds for r in every)
            else f"no finds logged yet in {decisions.path}"
            if finds
            else f"no runs logged yet in {decisions.path} (semif run TEXT logs one)"
        )
    else:
        if earlier:
            click.echo(f"({plural(earlier, 'earlier ' + what)} not shown: --limit 0 shows all)", err=True)
        for record in records:
            click.echo(describe_run(record))
    if left_out and not finds and run_id is None and not (as_json or export_to is not None):
        click.echo(f"({plural(left_out, 'find')} of a client not listed: --finds lists them)", err=True)


def _list_to_label(decisions: DecisionLog, last: int | None, *, as_json: bool, export_to: Path | None) -> None:
    """``--to-label``: the queue (:mod:`semif_agent.records.to_label`), its first ``last`` runs."""
    from ..records import run_records
    from ..records.to_label import run_margins, to_label

    rows = list(decisions.read())
    queue = to_label(run_records(rows), run_margins(rows))
    shown = queue[:last] if last else queue
    if as_json or export_to is not None:
        _emit([entry.to_dict() for entry in shown], export_to)
        return
    if not queue:
        click.echo(f"nothing to label in {decisions.path}: no unlabelled run was undone, handed back or a close call")
        return
    if len(shown) < len(queue):
        click.echo(f"({plural(len(queue) - len(shown), 'more run')} not shown: --limit 0 shows all)", err=True)
    for entry in shown:
        click.echo(f"{entry.score:4.1f}  {describe_run(entry.record)}  <- {', '.join(entry.reasons)}")


def _emit(rows: list, export_to: Path | None) -> None:
    """The rows as JSON lines: to ``export_to`` (its folder made if missing), else to standard output."""
    if export_to is None:
        print_json_lines(rows)
        return
    text = "".join(json_line(row) + "\n" for row in rows)
    try:
        export_to.parent.mkdir(parents=True, exist_ok=True)
        export_to.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{export_to}: cannot write the export ({exc.strerror or exc})") from None
    click.echo(f"wrote {plural(len(rows), 'row')} to {export_to}")


COMMANDS = [log]
