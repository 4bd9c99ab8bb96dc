"""``semif log show RUN``: one logged run whole, from its request to its label."""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import click

from .._text import plural
from ._common import json_option, one_line, print_json, workspace_option
from ._run_lines import chosen, runners_up, verdict, without_shared_tail
from ._run_lines import print_field as _field
from .workspace_cmds import open_workspace

if TYPE_CHECKING:
    from ..records import DecisionRow

DIFF_SHOWN = 20  # lines of each file's diff shown on the screen


@click.command("show")
@click.argument("run_id", metavar="RUN")
@workspace_option
@json_option
def show(run_id: str, workspace: str | None, as_json: bool) -> None:
    """Show one logged run whole: its request, route, prediction, actions, changes, assessment and label.

    RUN is a run's id as `semif log` lists it, or a unique prefix of it. The
    route shows each decision's choice with its probability and the options
    that lost; the assessment, its reason and the evidence it weighed.
    --json prints the run's record, its outcome row, every decision row and
    its label rows.
    """
    from ..loop.evidence_text import evidence_lines
    from ..loop.undo import undo_said
    from ..records import DecisionLog, DecisionRow, UndoRow, run_rows
    from ..records.kinds import sections, title_of

    ws = open_workspace(workspace)
    log = DecisionLog.for_workspace(ws)
    record = log.run(run_id)
    rows = [row for row in log.read() if row.run_id == record.run_id]
    parts = run_rows(rows)
    decisions, outcome, labels = parts.decisions, parts.outcome, parts.labels
    if as_json:
        print_json(
            {
                "run": {**asdict(record), "true_outcome": record.true_outcome},
                "outcome": outcome.to_dict() if outcome is not None else None,
                "decisions": [row.to_dict() for row in decisions],
                "labels": [row.to_dict() for row in labels],
            }
        )
        return
    started = rows[0].ts if rows else None
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(started)) if isinstance(started, (int, float)) else ""
    heading = "  (a client's find: the skills it was offered; nothing was run)" if record.find else ""
    heading = "  (an agent turn)" if record.source == "agent" else heading
    _field("find" if record.find else "run", f"{record.run_id}  {when}".rstrip() + heading)
    _field("request", json.dumps(record.request or "", ensure_ascii=False))
    if record.client:
        _field("client", record.client)
    for kind, title in sections(after_outcome=False):
        _decisions(title, [row for row in decisions if isinstance(row, DecisionRow) and row.kind == kind])
    if record.find:  # no skill acted and nothing was assessed: what the client picked is all there is to tell
        picked = (record.label_skill or "none: no skill fits") if record.label_has_skill else "nothing picked yet"
        _field("picked", picked + (f" (by {record.label_client or record.labelled_by})" if record.labelled_by else ""))
        return
    _field("skill", record.skill or "(none)")
    titled = {kind for kind, _ in sections(after_outcome=False) + sections(after_outcome=True)}
    others = [row for row in decisions if row.kind not in titled] + parts.others
    for row in others:  # generation steps and other records of the run
        if isinstance(row, UndoRow):
            _field("undone", undo_said(row))
            continue
        shown = {k: v for k, v in row.to_dict().items() if k not in ("v", "ts", "run_id")}
        _field(title_of(row.kind), one_line(json.dumps(shown, ensure_ascii=False, default=str), 200))
    if outcome is not None:
        if outcome.prediction is not None:
            _field("predicted", outcome.prediction)
        action, result = outcome.action_log or "-", outcome.new_state or ""
        _field("action", without_shared_tail(action, result))
        _field("result", "(the request, handed back unchanged)" if result == record.request else result or "-")
        _field("changes", _changes(outcome.changes or {}))
        for path, lines in (outcome.diffs or {}).items():
            _field("diff", _diff(path, lines))
        if outcome.error:
            _field("error", outcome.error)
    for kind, title in sections(after_outcome=True):
        _decisions(title, [row for row in decisions if isinstance(row, DecisionRow) and row.kind == kind])
    reason = outcome.reason if outcome is not None else None
    _field("assessment", record.assessed + (f" ({reason})" if reason else ""))
    if record.evidence:
        lines = evidence_lines(record.evidence, record.skill)
        width = max((len(name) for name, _ in lines), default=0)
        _field("evidence", "\n".join(f"{name + ':':<{width + 1}} {text}" for name, text in lines))
    if record.labelled_by is None and record.undone and record.label_outcome == "failure":
        _field(  # the undo said the route was wrong: a person's failure label of the route, no one else's label
            "label",
            f"failure of its route to {record.skill or 'no skill'} (undone: wrong route); "
            f"`semif label {record.run_id} --skill NAME` says where it should have gone",
        )
    elif record.labelled_by is None:
        _field("label", f"none yet (semif label {record.run_id} --skill NAME | --none | --outcome success|failure)")
    else:
        _field(
            "label",
            verdict(
                record.outcome,
                by=record.labelled_by,
                label_outcome=record.label_outcome,
                label_has_skill=record.label_has_skill,
                label_skill=record.label_skill,
                missing=record.outcome_missing,
            )
            + (f" ({record.note})" if record.note else ""),
        )


def _decisions(title: str, rows: list[DecisionRow]) -> None:
    """Each decision on its own lines: the question, the choice with its probability, and the options that lost."""
    for index, row in enumerate(rows):
        lost = runners_up(row, count=3)
        _field(
            title if index == 0 else "",
            f"{row.step}. {row.question}\n   -> {chosen(row)}" + (f"   {lost}" if lost else ""),
        )


def _changes(changes: dict[str, Any]) -> str:
    parts = [f"{verb} {', '.join(map(str, paths))}" for verb, paths in changes.items() if paths]
    return "; ".join(parts) or "no files changed"


def _diff(path: str, lines: Any) -> str:
    """A logged diff's lines after the file's name, cut at :data:`DIFF_SHOWN` (``--json`` has them all)."""
    lines = [str(line) for line in lines] if isinstance(lines, list) else []
    body = [line for line in lines if not line.startswith(("--- ", "+++ "))]
    more = (
        f"\n... {plural(len(body) - DIFF_SHOWN, 'more line')} (--json has them all)" if len(body) > DIFF_SHOWN else ""
    )
    return "\n".join([path, *body[:DIFF_SHOWN]]) + more


COMMANDS = [show]
