"""Labels from people, and the runs of a decision log as records.

A person who reads a run back can say where its request should have gone
(a skill, or no skill at all) and what really happened (success or failure).
That judgement is one ``kind: "label"`` row appended to the decision log, with
the run's ``run_id``; earlier rows are never rewritten. When the log is read,
a run's label rows are folded in log order, the latest winning field by field:
a later label that only gives the outcome keeps an earlier label's skill.
A run taken back with ``semif undo`` (a ``kind: "undo"`` row) is marked
undone, with what the undo said was unwanted: the route (it folds in as a
label of its outcome, ``failure``: the request should not have gone there;
also an old undo row, which gave no reason) or only the result (the skill
was right: it folds in as no label at all, so nothing about the route is learned).
A person's labels taken back (``semif label --undo``, a ``kind: "unlabel"``
row) fold as if they had never been given: the run is unlabelled again, and
what a client or the assessment said of it counts as before.

In a label row, ``"skill": null`` means no skill fits the request; a label
that says nothing about the skill has no ``skill`` key at all (the same
convention as the routing datasets of ``semif eval``).

A run whose outcome row is missing (the log was cut by a crash, or the run
is still going) still names the skill it went to: the one its decision rows
routed to.

Pure functions over rows: :class:`~semif_agent.records.log.DecisionLog` reads
and writes them.
"""

from __future__ import annotations

import getpass
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypedDict, Unpack

from ..engine.decisions import NONE_ID
from ..errors import UserError
from .kinds import OUTCOME_KIND, ROUTE_KIND, is_run_record
from .rows import (
    LABEL_OUTCOMES,
    LABEL_SOURCES,
    SOURCE_RANK,
    DecisionRow,
    LabelRow,
    LogRow,
    OutcomeRow,
    UndoRow,
    UnlabelRow,
)

AMBIGUOUS_SHOWN = 5
OUTCOME_MISSING = "outcome missing: the log was cut, or the run is still going"
FIND_KIND = "shortlist"
FIND_KINDS = frozenset({FIND_KIND, "activate"})
"""The kinds of the rows a client's find logs: the skills it was offered for a request (:data:`FIND_KIND`), then
the one it loaded, if any (``activate``). A client's rows of these kinds alone, and no outcome, make a find, not a
run: nothing was done, so it has no outcome to miss."""
FIND_SHOWN = "a find: the skills a client was offered, not a run"


@dataclass(frozen=True)
class Label:
    """What was said about one run, its label rows folded field by field: the latest wins, unless a label of a
    higher rank said it (:data:`~.rows.SOURCE_RANK`: a person's over a client's report over a client's pick)."""

    by: str
    skill: str | None = None
    has_skill: bool = False
    outcome: str | None = None
    note: str | None = None
    undone: bool = False  # the run was taken back (``semif undo``)
    undo_reason: str | None = None  # what its undo said was unwanted: "route" or "result" (None: an old undo, a route)
    skill_source: str = "person"  # who said the skill: see LabelRow (implicit: only a client's pick after a find)
    outcome_source: str = "person"  # who said the outcome (an undo is a person's)
    wrong: str | None = None  # a skill the request should not go to (implicit labels)
    client: str | None = None  # the client whose words the label keeps (a report's or a pick's ``by``), if any

    @property
    def source(self) -> str:
        """Who said the label: who said its skill, else who said its outcome."""
        return self.skill_source if self.has_skill else self.outcome_source

    def to_dict(self) -> dict[str, Any]:
        """``{skill?, outcome?, by?, note?, undone?, undo_reason?, source?}``: only what a label said (``skill: None``: no
        skill fits)."""
        joined: dict[str, Any] = {}
        if self.has_skill:
            joined["skill"] = self.skill
        if self.outcome is not None:
            joined["outcome"] = self.outcome
        if self.by:
            joined["by"] = self.by
        if self.note is not None:
            joined["note"] = self.note
        if self.undone:
            joined["undone"] = True
            joined["undo_reason"] = self.undo_reason or "route"
        if self.source != "person":
            joined["source"] = self.source
        return joined


@dataclass(frozen=True)
class RunRecord:
    """One run of the log: what it was asked, what it chose and how it ended, and a person's label."""

    run_id: str
    request: str | None  # the request text (from the outcome row, else the first decision row's state)
    skill: str | None  # the skill the run chose (its outcome row's skill, else the one its decisions routed to)
    outcome: str | None  # the assessment's label (success/failure/unclear), as the engine judged it
    source: str  # "run" for the skill loop, "agent" for an agent turn
    label_skill: str | None = (
        None  # a person's label: the skill the request should have gone to (None: no skill fits, when label_has_skill)
    )
    label_has_skill: bool = False  # True when a label said --skill or --none
    label_outcome: str | None = None  # a person's label of the real outcome
    labelled_by: str | None = None  # who gave the latest label (an undo alone is no label)
    note: str | None = None
    evidence: Mapping[str, Any] | None = None  # what the assessment weighed (its outcome row's ``evidence``)
    outcome_missing: bool = False  # it has decisions but no outcome row (the log was cut, or it is still going)
    find: bool = False  # a client's find (:data:`FIND_KINDS` rows alone): a shortlist of skills offered, not a run
    undone: bool = False  # taken back with ``semif undo``: its label_outcome is then "failure" unless relabelled,
    # when the undo said the route was wrong (``undo_reason``)
    undo_reason: str | None = None  # when undone: "route" (a routing failure, also an old undo's) or "result" (not one)
    label_source: str | None = None  # who said the label's skill (else its outcome) when not a person: client, implicit
    label_wrong: str | None = None  # a skill the label says the request should not go to
    label_outcome_source: str | None = None  # who said the label's outcome when not a person: client
    label_client: str | None = None  # the client whose report or pick the label keeps (its ``by``)
    client: str | None = None  # the client (of semif mcp, of a Router) that asked for the find or the run

    @property
    def true_outcome(self) -> str | None:
        """The person's outcome when labelled, else the engine's."""
        return self.label_outcome if self.label_outcome is not None else self.outcome

    @property
    def assessed(self) -> str:
        """The engine's outcome as shown: the label, "-" when there is none, that the outcome row is missing, or that
        this is a find (which has none)."""
        return FIND_SHOWN if self.find else OUTCOME_MISSING if self.outcome_missing else self.outcome or "-"


class LabelGiven(TypedDict, total=False):
    """What a label says (each part optional): the skill, or that no skill fits; the outcome; a note; who gives it."""

    skill: str | None  # where the request should have gone
    no_skill: bool  # no skill fits the request
    outcome: str | None  # the real outcome: success or failure
    note: str | None
    source: str  # who gives it (:data:`~.rows.LABEL_SOURCES`): a person, or a client judging its own use


def label_row(run_id: str, *, by: str, **given: Unpack[LabelGiven]) -> LabelRow:
    """The label of ``run_id``: ``skill`` (or ``no_skill``), ``outcome``, or both; ``note`` optional.

    ``source`` says who gives it (:data:`~.rows.LABEL_SOURCES`): a person (the default), or a client judging its own use.
    """
    unknown = sorted(given.keys() - LabelGiven.__optional_keys__)
    if unknown:
        raise TypeError(f"label_row() got unexpected keyword arguments: {', '.join(unknown)}")
    skill, no_skill = given.get("skill"), given.get("no_skill", False)
    outcome, note = given.get("outcome"), given.get("note")
    source = given.get("source", "person")
    if skill is not None and no_skill:
        raise UserError("a label names the skill that fits or says that none does, not both")
    if skill is None and not no_skill and outcome is None:
        raise UserError("a label needs a skill, 'no skill fits', or an outcome")
    if outcome is not None and outcome not in LABEL_OUTCOMES:
        raise UserError(f"a label's outcome is {' or '.join(LABEL_OUTCOMES)}, not {outcome!r}")
    if not by.strip():
        raise UserError("a label needs the name of who gives it")
    if source not in LABEL_SOURCES:
        raise UserError(f"a label's source is one of {', '.join(LABEL_SOURCES)}, not {source!r}")
    return LabelRow(
        run_id=run_id,
        by=by.strip(),
        skill=skill,
        has_skill=skill is not None or no_skill,
        outcome=outcome,
        note=note.strip() if note is not None and note.strip() else None,
        source=source,
    )


def login_name() -> str:
    """Who labels when nobody says: the user's login name, or "person" when the system does not know it."""
    try:
        return getpass.getuser() or "person"
    except (OSError, KeyError, ImportError):  # no login variable and no password entry
        return "person"


@dataclass(frozen=True)
class RunRows:
    """One run's rows by kind: its decisions and steps, its (last) outcome row, its label rows, other records of it."""

    decisions: list[LogRow]  # its decisions and steps, in log order
    outcome: OutcomeRow | None  # None: no outcome row yet
    labels: list[LabelRow | UnlabelRow]  # its label rows and the rows taking labels back, in log order
    others: list[LogRow]  # records about the run other than its outcome and labels, shown as they are


def run_rows(rows: Iterable[LogRow]) -> RunRows:
    """Split one run's rows (in log order) into its decisions, outcome (None when none yet), labels and others."""
    rows = list(rows)
    return RunRows(
        decisions=[row for row in rows if not is_run_record(row.kind)],
        outcome=next((row for row in reversed(rows) if isinstance(row, OutcomeRow)), None),
        labels=[row for row in rows if isinstance(row, (LabelRow, UnlabelRow))],
        others=[
            row for row in rows if is_run_record(row.kind) and not isinstance(row, (OutcomeRow, LabelRow, UnlabelRow))
        ],
    )


def fold_labels(rows: Iterable[LogRow]) -> dict[str, Label]:
    """Each labelled (or undone) run's :class:`Label`: its label rows folded in order, field by field.

    A field takes the latest label's word unless a label of a higher rank
    (:data:`~.rows.SOURCE_RANK`) said it: a client's report never replaces
    what a person said, only what a client said before. An implicit label (a
    client's pick) adds nothing to a run anyone else labelled, and any later
    judgement replaces it whole. An undo row says the run was undone and
    why; one that says the route was wrong (``route``, or no reason: a row
    written before undos asked) also says the outcome was a failure (a
    person's word), which training reads as a failure of the route. One that
    says only the result was unwanted (``result``) says nothing of the route
    or the outcome: the run teaches what it taught before. An undo names
    nobody as the labeller. An unlabel row takes back every person's label of the run
    before it: they are skipped, the rest folds as it would have without them.
    Fields of the wrong type (a hand-edited row) were read as their defaults, not trusted.
    """
    rows = list(rows)
    taken_back = {row.run_id: at for at, row in enumerate(rows) if isinstance(row, UnlabelRow)}
    labels: dict[str, Label] = {}
    for at, row in enumerate(rows):
        if not isinstance(row, (LabelRow, UndoRow)):
            continue
        run_id = row.run_id
        if isinstance(row, LabelRow) and at < taken_back.get(run_id, -1) and row.source == "person":
            continue
        before = labels.get(run_id) or Label(by="")
        if isinstance(row, UndoRow):
            reason = "route" if row.route_failure else "result"
            undone = replace(before, undone=True, undo_reason=reason)
            labels[run_id] = (
                replace(undone, outcome="failure", outcome_source="person") if row.route_failure else undone
            )
            continue
        said = row
        if said.source == "implicit" and before.by and before.source != "implicit":
            continue
        if said.source != "implicit" and before.has_skill and before.skill_source == "implicit":
            before = replace(before, skill=None, has_skill=False, wrong=None)  # a judgement replaces a client's pick
        rank = SOURCE_RANK[said.source]
        takes_skill = said.has_skill and (not before.has_skill or SOURCE_RANK[before.skill_source] <= rank)
        takes_outcome = said.outcome is not None and (
            before.outcome is None or SOURCE_RANK[before.outcome_source] <= rank
        )
        if not (takes_skill or takes_outcome):
            continue  # it says only what someone of a higher rank said already
        folded = Label(
            by=said.by,
            skill=said.skill if takes_skill else before.skill,
            has_skill=takes_skill or before.has_skill,
            outcome=said.outcome if takes_outcome else before.outcome,
            note=said.note if said.note is not None else before.note,
            undone=before.undone,
            undo_reason=before.undo_reason,
            skill_source=said.source if takes_skill else before.skill_source,
            outcome_source=said.source if takes_outcome else before.outcome_source,
            wrong=said.wrong if said.source == "implicit" else None,
        )
        clients = (folded.has_skill and folded.skill_source != "person") or (
            folded.outcome is not None and folded.outcome_source != "person"
        )
        labels[run_id] = replace(
            folded, client=(said.by if said.source != "person" else before.client) if clients else None
        )
    return labels


def persons_labels(rows: Iterable[LogRow], run_id: str) -> int:
    """How many labels people gave ``run_id`` that stand (given after its latest unlabel row, if any)."""
    count = 0
    for row in rows:
        if row.run_id != run_id:
            continue
        if isinstance(row, UnlabelRow):
            count = 0
        elif isinstance(row, LabelRow) and row.source == "person":
            count += 1
    return count


def routed_to(row: LogRow) -> str | None:
    """The skill a decision row says its run went to: a routing decision's leaf (not of a route set aside for the
    request's plain reading), else the skill the row names."""
    if row.extra_field("set_aside"):
        return None
    if isinstance(row, DecisionRow) and row.kind == ROUTE_KIND and row.level == "skill":
        return row.selected if row.selected != NONE_ID else None
    skill = getattr(row, "skill", None)
    return skill if isinstance(skill, str) else None


def run_source(row: LogRow) -> str | None:
    """Who made the run ``row`` is part of (``"agent"`` for an agent turn), as the row says."""
    source = row.source if isinstance(row, OutcomeRow) else row.extra_field("source")
    return source if isinstance(source, str) else None


def run_records(rows: Iterable[LogRow]) -> list[RunRecord]:
    """One :class:`RunRecord` per run, in the order runs first appear; label rows alone make no run."""
    rows = list(rows)
    labels = fold_labels(rows)
    order: dict[str, None] = {}
    first_decision: dict[str, LogRow] = {}
    routed: dict[str, str] = {}
    outcomes: dict[str, OutcomeRow] = {}
    agent: set[str] = set()
    kinds: dict[str, set[str]] = {}
    clients: dict[str, str] = {}
    for row in rows:
        run_id, kind = row.run_id, row.kind
        if not isinstance(run_id, str) or (is_run_record(kind) and kind != OUTCOME_KIND):
            continue
        order.setdefault(run_id)
        client = row.extra_field("client")
        if isinstance(client, str) and client:
            clients.setdefault(run_id, client)
        if isinstance(row, OutcomeRow):
            outcomes[run_id] = row
        else:
            first_decision.setdefault(run_id, row)
            kinds.setdefault(run_id, set()).add(kind)
            skill = routed_to(row)
            if skill is not None:
                routed.setdefault(run_id, skill)
        if run_source(row) == "agent":
            agent.add(run_id)
    records = []
    for run_id in order:
        ending, opening = outcomes.get(run_id), first_decision.get(run_id)
        label = labels.get(run_id)
        shown = kinds.get(run_id, set())
        find = ending is None and run_id not in agent and FIND_KIND in shown and shown <= FIND_KINDS
        state = opening.state if isinstance(opening, DecisionRow) else None
        records.append(
            RunRecord(
                run_id=run_id,
                request=ending.request if ending is not None and ending.request is not None else state,
                skill=ending.skill if ending is not None else routed.get(run_id),
                outcome=ending.outcome if ending is not None else None,
                source="agent" if run_id in agent else "run",
                label_skill=label.skill if label else None,
                label_has_skill=label.has_skill if label else False,
                label_outcome=label.outcome if label else None,
                labelled_by=(label.by or None) if label else None,
                note=label.note if label else None,
                evidence=ending.evidence if ending is not None else None,
                outcome_missing=ending is None and not find,
                find=find,
                undone=label.undone if label else False,
                undo_reason=label.undo_reason if label and label.undone else None,
                label_source=label.source if label and label.by and label.source != "person" else None,
                label_wrong=label.wrong if label else None,
                label_outcome_source=(
                    label.outcome_source
                    if label and label.outcome is not None and label.outcome_source != "person"
                    else None
                ),
                label_client=label.client if label else None,
                client=clients.get(run_id),
            )
        )
    return records


def persons_word(run: RunRecord) -> RunRecord:
    """``run`` with only what a person said of it (what a client reported or picked taken out), for what learns from
    labels as a person's word: a client's claims never become a skill's learned examples."""
    if run.label_client is None:
        return run
    skill_theirs = run.label_has_skill and run.label_source is not None
    outcome_theirs = run.label_outcome is not None and run.label_outcome_source is not None
    return replace(
        run,
        label_skill=None if skill_theirs else run.label_skill,
        label_has_skill=run.label_has_skill and not skill_theirs,
        label_outcome=None if outcome_theirs else run.label_outcome,
        label_source=None,
        label_outcome_source=None,
        label_wrong=None,
        label_client=None,
    )


def resolve_run_id(wanted: str, run_ids: Iterable[str], *, where: str = "the decision log") -> str:
    """The run id ``wanted`` names: itself, or the one run id it is a prefix of.

    An unknown id, or a prefix of several, is a :class:`UserError` (the latter lists a few).
    """
    wanted = wanted.strip()
    known = list(dict.fromkeys(run_ids))
    if wanted in known:
        return wanted
    matches = [run_id for run_id in known if wanted and run_id.startswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UserError(f"no run {wanted!r} in {where}")
    shown = ", ".join(matches[:AMBIGUOUS_SHOWN]) + (", ..." if len(matches) > AMBIGUOUS_SHOWN else "")
    raise UserError(f"run id {wanted!r} is ambiguous: {len(matches)} runs start with it ({shown})")
