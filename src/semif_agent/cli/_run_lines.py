"""How a logged run reads on one line: its request, chosen skill, outcome, and who labelled it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ._common import one_line

if TYPE_CHECKING:
    from ..engine.log import RunRecord

REQUEST_ROOM = 48


def verdict(outcome: str | None, *, by: str | None = None, label_outcome: str | None = None,
            label_has_skill: bool = False, label_skill: str | None = None) -> str:
    """How a run ended and who says so: "success (engine)", or "failure, labelled by alice: should be notes.add".

    ``by`` is who labelled the run (None: nobody); the label's outcome, when it
    gave one, replaces the engine's.
    """
    ended = label_outcome or (f"{outcome} (engine)" if outcome else "-")
    if by is None:
        return ended
    ended += f", labelled by {by}"
    if label_has_skill:
        ended += f": should be {label_skill}" if label_skill else ": no skill fits"
    return ended


def describe_run(record: RunRecord) -> str:
    """One line for a run: id, request, chosen skill, and its :func:`verdict` (and the label's note)."""
    request = json.dumps(one_line(record.request or "", REQUEST_ROOM), ensure_ascii=False)
    agent = "agent " if record.source == "agent" else ""
    ended = verdict(record.outcome, by=record.labelled_by, label_outcome=record.label_outcome,
                    label_has_skill=record.label_has_skill, label_skill=record.label_skill)
    note = f"  ({one_line(record.note, REQUEST_ROOM)})" if record.note else ""
    return f"{record.run_id}  {agent}{request}  -> {record.skill or 'none'}  [{ended}]{note}"
