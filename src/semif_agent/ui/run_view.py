"""One run, whole, as its page shows it: the request, each decision with every option, what it did, how it ended.

The rows are those ``semif log show`` reads (the run's decision rows, its
outcome row and its label rows), taken from the index rather than by reading
the log again. Its undo row, if any, is read as what the undo did and why, not
shown as a record among the decisions.
"""

from __future__ import annotations

import difflib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from .._beneath import lexists_beneath
from .._files import open_regular_beneath
from ..loop.evidence_text import evidence_lines
from ..records import (
    DecisionRow,
    LabelRow,
    LogRow,
    ModelCallRow,
    OutcomeRow,
    RunRecord,
    UndoRow,
    UnlabelRow,
    persons_labels,
    resolve_run_id,
    run_rows,
)
from .index import CallIndex, LogIndex

DIFF_MAX_BYTES = 64 * 1024
DIFF_MAX_LINES = 400


@dataclass
class OptionView:
    id: str
    description: str
    probability: float | None
    score: float | None
    chosen: bool


@dataclass
class DecisionView:
    step: int | None
    kind: str
    question: str | None
    state: str
    selected: str | None
    engine: str | None
    model: str | None
    latency_ms: float | None
    options: list[OptionView] = field(default_factory=list)
    note: str | None = None
    details: str | None = None  # a generation step or other record of the run, as JSON


@dataclass
class ChangeView:
    verb: str
    path: str
    diff: list[str] | None  # unified diff lines; None when the file cannot be shown
    why: str = ""  # why there is no diff, or what it is against


@dataclass
class UndoView:
    """A run's undo: who, when, why (``reason``: route, result, or None for an old undo, a route) and what it did."""

    row: UndoRow
    when: float | None


@dataclass
class RunView:
    record: RunRecord
    started: float | None
    decisions: list[DecisionView]
    outcome: OutcomeRow | None
    changes: list[ChangeView]
    labels: list[LabelRow | UnlabelRow]
    calls: list[dict[str, object]]
    undo: UndoView | None = None
    evidence: list[tuple[str, str]] = field(default_factory=list)  # what the assessment weighed, as people read it

    @property
    def persons_labelled(self) -> bool:
        """Whether a person's label of the run stands (one the page can take back)."""
        return persons_labels(self.labels, self.record.run_id) > 0


def resolve(index: LogIndex, wanted: str) -> str:
    """The run id ``wanted`` names (itself or a unique prefix); a UserError otherwise."""
    return resolve_run_id(wanted, index.runs, where=f"the decision log {index.path}")


def run_view(index: LogIndex, calls: CallIndex | None, root: Path, run_id: str) -> RunView:
    """Everything the run page shows for ``run_id`` (already resolved)."""
    run = index.runs[run_id]
    rows = index.rows_of(run_id)
    parts = run_rows(rows)
    outcome, labels = parts.outcome, parts.labels
    decisions = [_decision(row) for row in parts.decisions + parts.others if not isinstance(row, UndoRow)]
    undo_rows = [row for row in parts.others if isinstance(row, UndoRow)]
    undo = None
    if undo_rows:
        ts = undo_rows[0].ts
        undo = UndoView(undo_rows[0], float(ts) if ts is not None else None)
    model_calls = [_decision_call(row) for row in rows if isinstance(row, DecisionRow) and row.usage]
    if calls is not None:
        model_calls += [_logged_call(row) for row in calls.calls_of(run_id, run.started, run.ended)]
    kept = (outcome.diffs if outcome is not None else None) or {}
    changes = [
        _change(root, verb, str(path), kept.get(path))
        for verb, paths in ((outcome.changes if outcome is not None else None) or {}).items()
        for path in (paths or ())
    ]
    record = run.summary()
    evidence = evidence_lines(record.evidence, record.skill) if record.evidence else []
    return RunView(record, run.started, decisions, outcome, changes, labels, model_calls, undo, evidence)


def _decision(row: LogRow) -> DecisionView:
    if not isinstance(row, DecisionRow):  # a generation step or another record of the run
        shown = {k: v for k, v in row.to_dict().items() if k not in ("v", "ts", "run_id")}
        details = json.dumps(shown, ensure_ascii=False, indent=1, default=str)
        model = getattr(row, "model", None)
        return DecisionView(None, row.kind, None, "", None, None, model, None, details=details)
    view = DecisionView(
        row.step, row.kind, row.question, row.state, row.selected, row.engine, row.model, row.latency_ms, note=row.note
    )
    probabilities = row.probabilities or {}
    scores = row.scores or {}
    for option in row.options:
        option_id = str(option.get("id"))
        description = option.get("description", "")
        view.options.append(
            OptionView(
                str(option_id),
                str(description or ""),
                _number(probabilities.get(option_id)),
                _number(scores.get(option_id)),
                option_id == row.selected,
            )
        )
    return view


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _decision_call(row: DecisionRow) -> dict[str, object]:
    usage = row.usage or {}
    return {
        "what": f"decision {row.step} ({row.kind})",
        "model": row.model,
        "input_tokens": usage.get("input_tokens"),
        "output_tokens": usage.get("output_tokens"),
        "cost_usd": usage.get("cost_usd"),
        "latency_ms": row.latency_ms,
        "error": None,
    }


def _logged_call(row: ModelCallRow) -> dict[str, object]:
    usage = row.usage or {}
    return {
        "what": row.context.get("purpose") or "model call",
        "model": f"{row.provider}/{row.model}",
        "input_tokens": usage.get("input_tokens"),
        "output_tokens": usage.get("output_tokens"),
        "cost_usd": usage.get("cost_usd"),
        "latency_ms": row.latency_ms,
        "error": row.error,
    }


_NOT_SMALL = "not shown (not a small regular file)"


def _change(root: Path, verb: str, path: str, kept: object = None) -> ChangeView:
    """A changed file and its diff: the one the run logged (``kept``), else read from the file as it is now.

    A run logs the diffs of the small text files it created or modified. For
    older runs, only regular text files inside the workspace, under 64 KiB,
    are read (never through a link): a created one is shown against nothing, a modified one as it is now.
    """
    if verb == "deleted":
        return ChangeView(verb, path, None, "deleted")
    if isinstance(kept, list) and all(isinstance(line, str) for line in kept):
        return ChangeView(verb, path, kept[:DIFF_MAX_LINES], "as the run left it")
    relative = os.path.normpath(path)
    if os.path.isabs(relative) or relative == ".." or relative.startswith(".." + os.sep):
        return ChangeView(verb, path, None, "not shown (outside the workspace)")
    handle = open_regular_beneath(root, relative)  # from the workspace's descriptor: never through a link
    if handle is None:
        return ChangeView(verb, path, None, "no longer there" if not lexists_beneath(root, relative) else _NOT_SMALL)
    if os.fstat(handle.fileno()).st_size > DIFF_MAX_BYTES:
        handle.close()
        return ChangeView(verb, path, None, _NOT_SMALL)
    try:
        with handle:
            text = handle.read(DIFF_MAX_BYTES + 1).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return ChangeView(verb, path, None, "not shown (binary)")
    lines = text.splitlines()
    if verb == "created":
        diff = list(difflib.unified_diff([], lines, "/dev/null", path, lineterm=""))
        return ChangeView(verb, path, diff[:DIFF_MAX_LINES], "against no file (its contents now: the log keeps none)")
    return ChangeView(
        verb, path, [" " + line for line in lines[:DIFF_MAX_LINES]], "as it is now (the log keeps no earlier contents)"
    )
