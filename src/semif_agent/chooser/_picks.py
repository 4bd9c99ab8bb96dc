"""What a client picked after a ``find``: an implicit label for the request it asked about.

A ``find`` logs its shortlist as a ``shortlist`` decision under its choice
id. The first ``load`` or ``run`` by the same client, in the same session,
within :data:`PICK_SECONDS` of it, that follows it (naming its choice id, or a
``run`` of the same request, :func:`~semif_agent.routing.training.request_key`) logs, under that id, an
``activate`` decision (the skill the client's model took among those shown)
and a label row with ``source: "implicit"``: the request's skill is the one
picked, at a weight below a person's label (see
:mod:`semif_agent.routing.training`). A pick of a skill the shortlist did not
rank first names that first one as ``wrong`` for the request.

A pick never attaches to another client's or another session's find, to a
find older than :data:`PICK_SECONDS`, to a find of another request, nor, when
it names neither a find nor a request (a ``load`` with no choice id), to any
find: it is the client looking around, and a label says only what the pick it
came from said.

A find is also the answer a client was given: when it handed its best skill
back (``handed_back``), a run of that skill that follows it (its choice id,
or the same request by the same caller) hands back too, whether or not a pick
came between (:meth:`Picks.answered`). Finds are remembered for that up to
:data:`MAX_PENDING`, as long as their router lives.
"""

from __future__ import annotations

import time
from collections.abc import Hashable
from dataclasses import dataclass, field

from ..engine.decisions import NONE_ID, DecisionRequest, DecisionResult, Option
from ..records import DecisionRow, LabelRow
from ..routing.strategies import MAX_OPTIONS
from ..routing.training import request_key
from ..tree.tree import NONE_SKILL

FIND_QUESTION = "Which skills might this request need?"
PICK_QUESTION = "Which skill did the client take for this request?"
MAX_PENDING = 1000  # finds remembered while they await a pick
PICK_SECONDS = 600.0  # a pick this long after its find teaches nothing (a model picks within a turn, not an hour on)

Caller = tuple[str, Hashable]
"""Who calls: the client's name and its session (an MCP connection; None for a program's own router)."""


@dataclass
class Find:
    """One ``find`` not yet followed by a pick: its id, request, caller, and the options it showed."""

    choice_id: str
    request: str
    client: str
    options: list[Option]
    first: str | None  # the skill ranked first (None: none fitted best)
    held_back: tuple[str, str] | None = None  # the gate's rule and reason when a run of ``first`` would hand back
    steps: int = 1
    session: Hashable = None
    at: float = field(default_factory=lambda: time.monotonic())

    @property
    def caller(self) -> Caller:
        return (self.client, self.session)


@dataclass
class Picks:
    """The finds of one router awaiting a pick, by choice id."""

    pending: dict[str, Find] = field(default_factory=dict)
    finds: dict[str, Find] = field(default_factory=dict)  # every find, picked or not, the latest MAX_PENDING

    def add(self, find: Find) -> None:
        self.pending[find.choice_id] = find
        while len(self.pending) > MAX_PENDING:  # the oldest find nobody followed up teaches nothing more
            self._drop(next(iter(self.pending.values())))
        self.finds[find.choice_id] = find
        while len(self.finds) > MAX_PENDING:
            self.finds.pop(next(iter(self.finds)))

    def answered(
        self, client: str, *, session: Hashable = None, choice_id: str | None = None, request: str
    ) -> Find | None:
        """The find a run of ``request`` by ``client`` in ``session`` belongs to: the one its ``choice_id`` names
        (of the same request), else the latest of the same caller and request (None: none does)."""
        key = request_key(request)
        if choice_id:
            found = self.finds.get(choice_id)
            return found if found is not None and request_key(found.request) == key else None
        caller = (client, session)
        return next(
            (f for f in reversed(self.finds.values()) if f.caller == caller and request_key(f.request) == key), None
        )

    def follow(
        self,
        client: str,
        *,
        session: Hashable = None,
        choice_id: str | None = None,
        request: str | None = None,
    ) -> Find | None:
        """The find a pick by ``client`` in ``session`` follows, by its ``choice_id`` or the same ``request``, taken
        off the pending ones (None: none does; a pick naming neither follows none)."""
        now = time.monotonic()
        for stale in [f for f in self.pending.values() if now - f.at > PICK_SECONDS]:
            self._drop(stale)
        caller = (client, session)
        if choice_id:
            found = self.pending.get(choice_id)
        elif request is not None:
            key = request_key(request)
            found = next(
                (f for f in reversed(self.pending.values()) if f.caller == caller and request_key(f.request) == key),
                None,
            )
        else:
            return None
        if found is None or found.caller != caller:
            return None
        if request is not None and request_key(found.request) != request_key(request):
            return None  # a run of another request is no pick for this find
        self._drop(found)
        return found

    def _drop(self, find: Find) -> None:
        self.pending.pop(find.choice_id, None)


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
    label = LabelRow(run_id=find.choice_id, by=client, skill=skill, has_skill=True, source="implicit", wrong=wrong)
    return [activate, label.to_row()]
