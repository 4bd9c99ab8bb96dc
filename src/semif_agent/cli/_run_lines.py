"""How runs and decisions read: a run on one line (request, chosen skill, outcome, who labelled it), a decision's choice."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from .._text import inert, inert_but_colour, percent
from ._common import one_line

if TYPE_CHECKING:
    from ..records import DecisionRow, RunRecord

REQUEST_ROOM = 48


def verdict(
    outcome: str | None,
    *,
    by: str | None = None,
    label_outcome: str | None = None,
    label_has_skill: bool = False,
    label_skill: str | None = None,
    missing: bool = False,
    source: str | None = None,
) -> str:
    """How a run ended and who says so: "success (engine)", or "failure, labelled by alice: should be notes.add".

    ``by`` is who labelled the run (None: nobody); the label's outcome, when it
    gave one, replaces the engine's. ``missing``: the run's outcome row is missing.
    ``source``: the label's when not a person's ("picked by bob": a client's pick,
    "reported by bob": a client's report).
    """
    from ..records.runs import OUTCOME_MISSING

    ended = label_outcome or (f"{outcome} (engine)" if outcome else OUTCOME_MISSING if missing else "-")
    if by is None:
        return ended
    ended += f", {'picked' if source == 'implicit' else 'reported' if source == 'client' else 'labelled'} by {by}"
    if label_has_skill:
        ended += f": should be {label_skill}" if label_skill else ": no skill fits"
    return ended


def describe_run(record: RunRecord) -> str:
    """One line for a run: id, request, chosen skill, and its :func:`verdict` (and the label's note); for a client's
    find, its request and the skill the client picked."""
    from ..records.rows import UNDO_SHOWN

    request = json.dumps(one_line(record.request or "", REQUEST_ROOM), ensure_ascii=False)
    if record.find:  # nothing was run: what the client picked of the skills it was offered, if it said
        picked = f"picked {record.label_skill or 'none'}" if record.label_has_skill else "nothing picked yet"
        by = f" by {record.client}" if record.client else ""
        return f"{record.run_id}  find{by} {request}  [{picked}]"
    agent = "agent " if record.source == "agent" else ""
    ended = verdict(
        record.outcome,
        by=record.labelled_by,
        label_outcome=record.label_outcome,
        label_has_skill=record.label_has_skill,
        label_skill=record.label_skill,
        missing=record.outcome_missing,
        source=record.label_source,
    ) + (f", undone: {UNDO_SHOWN.get(record.undo_reason or 'route', 'wrong route')}" if record.undone else "")
    note = f"  ({one_line(record.note, REQUEST_ROOM)})" if record.note else ""
    asked = f"  (asked by {record.client})" if record.client else ""
    return f"{record.run_id}  {agent}{request}  -> {record.skill or 'none'}  [{ended}]{note}{asked}"


def ranked_options(row: DecisionRow) -> list[tuple[str, float | None, float | None]]:
    """A decision's options as ``(id, probability, score)``, most likely first (by score when it has no probabilities)."""
    probabilities = row.probabilities or {}
    scores = row.scores or {}
    ids = [str(option.get("id")) for option in row.options] or list(probabilities or scores)
    ranked = [(option, probabilities.get(option), scores.get(option)) for option in ids]
    return sorted(ranked, key=lambda item: -(item[1] if item[1] is not None else item[2] if item[2] is not None else 0))


def chosen(row: DecisionRow) -> str:
    """``email.compose (p 82%)``: what a decision chose and how likely the engine found it."""
    probability = (row.probabilities or {}).get(row.selected)
    return row.selected + (f" (p {percent(probability)})" if isinstance(probability, (int, float)) else "")


def runners_up(row: DecisionRow, count: int = 2) -> str:
    """``next: notes 9%, files 4%``: the most likely options a decision did not choose ("" when there are none)."""
    others = [(option, p) for option, p, _ in ranked_options(row) if option != row.selected and p is not None]
    return "next: " + ", ".join(f"{option} {percent(p)}" for option, p in others[:count]) if others else ""


FIELD_WIDTH = 11


def print_field(name: str, value: str, *, styled: bool = False) -> None:
    """``name`` in a bold column, then ``value`` (:func:`inert`), its further lines indented under the first.

    ``styled``: ``value`` carries colour of our own around text already made inert; the colour is kept.
    """
    value = (inert_but_colour(value) if styled else inert(value)).replace("\n", "\n" + " " * (FIELD_WIDTH + 1))
    click.echo(f"{click.style(f'{name:<{FIELD_WIDTH}}', bold=True)} {value}")


def without_shared_tail(action_log: str, new_state: str) -> str:
    """The action log less the lines it ends with that the result also ends with, so a listing is printed once."""
    action, state = action_log.splitlines(), new_state.splitlines()
    shared = 0
    while shared < len(action) - 1 and shared < len(state) and action[-1 - shared] == state[-1 - shared]:
        shared += 1
    return "\n".join(action[: len(action) - shared])
