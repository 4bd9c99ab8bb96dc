"""What a client picked after a ``find``: an implicit label for the request it asked about.

A ``find`` logs its shortlist as a ``shortlist`` decision under its choice
id. The first ``load`` or ``run`` that follows it (the same choice id, the
same request, or else the client's latest ``find``) logs, under that id, an
``activate`` decision (the skill the client's model took among those shown)
and a label row with ``source: "implicit"``: the request's skill is the one
picked, at a weight below a person's label (see
:mod:`semif_agent.routing.training`). A pick of a skill the shortlist did not
rank first names that first one as ``wrong`` for the request.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..engine.decisions import NONE_ID, DecisionRequest, DecisionResult, Option
from ..records import DecisionRow, LabelRow
from ..routing.strategies import MAX_OPTIONS
from ..tree.tree import NONE_SKILL

FIND_QUESTION = "Which skills might this request need?"
PICK_QUESTION = "Which skill did the client take for this request?"
MAX_PENDING = 1000  # finds remembered while they await a pick


@dataclass
class Find:
    """One ``find`` not yet followed by a pick: its id, request, client, and the options it showed."""

    choice_id: str
    request: str
    client: str
    options: list[Option]
    first: str | None  # the skill ranked first (None: none fitted best)
    steps: int = 1


@dataclass
class Picks:
    """The finds of one router awaiting a pick, by choice id, with each client's latest."""

    pending: dict[str, Find] = field(default_factory=dict)
    latest: dict[str, str] = field(default_factory=dict)  # client -> choice id

    def add(self, find: Find) -> None:
        self.pending[find.choice_id] = find
        self.latest[find.client] = find.choice_id
        while len(self.pending) > MAX_PENDING:  # the oldest find nobody followed up teaches nothing more
            oldest = next(iter(self.pending.values()))
            del self.pending[oldest.choice_id]
            if self.latest.get(oldest.client) == oldest.choice_id:
                del self.latest[oldest.client]

    def follow(self, client: str, *, choice_id: str | None = None, request: str | None = None) -> Find | None:
        """The find a pick by ``client`` follows, taken off the pending ones (None: none does)."""
        found = self.pending.get(choice_id) if choice_id else None
        if found is None and request is not None:
            found = next((f for f in reversed(self.pending.values()) if f.request == request), None)
        if found is None and choice_id is None:
            latest = self.latest.get(client)
            found = self.pending.get(latest) if latest else None
        if found is not None:
            del self.pending[found.choice_id]
            if self.latest.get(found.client) == found.choice_id:
                del self.latest[found.client]
        return found


def pick_rows(find: Find, skill: str, description: str, client: str, source: str) -> list[dict[str, object]]:
    """The rows a pick of ``skill`` after ``find`` appends: the ``activate`` decision and the implicit label."""
    options = [o for o in find.options if o.id != NONE_ID]
    if skill not in {o.id for o in options}:
        options = options[: MAX_OPTIONS - 2] + [Option(skill, description)]
    activate = DecisionRow.of(
        run_id=find.choice_id,
        step=find.steps + 1,
        kind="activate",
        skill=skill,
        request=DecisionRequest(find.request, PICK_QUESTION, [*options, NONE_SKILL]),
        result=DecisionResult(skill, engine=source, model=client),
        source=source,
        client=client,
    ).to_row()
    wrong = find.first if find.first is not None and find.first != skill else None
    label = LabelRow(find.choice_id, by=client, skill=skill, has_skill=True, source="implicit", wrong=wrong)
    return [activate, label.to_row()]
