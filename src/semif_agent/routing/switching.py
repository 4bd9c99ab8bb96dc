"""Whether a newly trained router may replace the routing in use: what it would route differently, and a paired test.

:func:`compare_routers` replays every request the workspace knows the answer
to (its skills' examples, labelled datasets, runs a person labelled, runs
judged a success) through the routing in use and through the new router, as
each routes, and lists the requests whose route flips: "now right" (the new
router fixes it) and "now wrong" (it breaks what was right). It then weighs
them (:func:`decide`):

- **What was right stays right.** A request the routing in use gets right may
  flip to wrong only when the fixes outnumber the breaks beyond noise: the
  exact sign test on the requests that flipped between right and wrong
  (McNemar's, :func:`.compare.paired_p_value`, taken one-sided since only
  more fixes than breaks counts) below :data:`.compare.ALPHA` (0.05): 1 break
  needs at least 7 fixes, 2 need 9, 3 need 10. One label that fixes its own
  request and breaks a neighbour is not such a gain.
- **Learning must help on requests it never saw.** With requests held out
  (:mod:`.training`), the router fitted without them is compared with the
  untrained ``examples`` strategy without them; doing worse there, by any
  margin, keeps the routing in use: a router that generalises worse than no
  training is not worth switching to.

- **A person's label is never broken.** A request a person labelled
  (``semif label``, the web view) that the routing in use gets right and the
  new router gets wrong keeps the routing in use, whatever the number of
  fixes; the reason names it.

**A person's label outranks a skill's examples.** A skill's example that a
person's label of the same or nearly the same request contradicts
(:mod:`.outranked`) is what is wrong: it is replayed and shown
(``outranked: an example a person's label contradicts``), never counted as a
fix or a break, so never blamed on the label, and the decision names it and
its skill (``outranked``).

Only what the workspace itself knows counts: a request known only from a
client (its picks after a find, its reports) is neither a fix nor a break, so
no number of them can buy a break of what was right. Such requests are
replayed all the same and their flips listed, marked as a client's word
(``implicit: a client's pick``, ``reported: a client's report``), so that
what the report calls right is never a client's claim passed off as a fix.

**The label behind the breaks.** When the guard refuses because right routes
would turn wrong, :func:`label_culprits` finds which of the latest
:data:`MAX_SUSPECTS` labels people gave caused it: the router is refitted
the same way (same settings, same rows) without each one in turn (the labels
of one request that say the same count as one) and the broken requests
replayed through it; a label without which some of them are
right again (at least half as many as the label that mends most: refitting
without any label moves a route or two by itself) is named, with how many,
and how to take it back (``semif label --undo RUN``). When no single label is behind them, the same is
tried without all of them together. Each refit costs one final fit (no search
of settings), and only the broken requests are replayed.

Otherwise the new router is switched to. ``force`` switches anyway, and the
decision says what it overrode.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._sync import run_sync
from .._text import percent_figure, plural
from .compare import ALPHA, paired_p_value
from .outranked import Contradiction, contradicted_examples

if TYPE_CHECKING:
    from .strategies import RoutingStrategy
    from .training import TrainingExample

# Which row says what a request should route to when several hold the same text: a person's word first. A client's
# rows (implicit, reported) are replayed only to be shown, marked, and never counted.
AUTHORITY = {"label": 0, "dataset": 1, "examples": 2, "success": 3}
CLIENTS_WORD = {"reported": "a client's report", "implicit": "a client's pick"}  # the more authoritative first
OUTRANKED = "outranked"  # the source of a skill's example a person's label contradicts: replayed, shown, not counted
UNCOUNTED = {**CLIENTS_WORD, OUTRANKED: "an example a person's label contradicts"}  # what a flip not counted is
PERSON = "label"  # the source of a person's label, which no switch may break
SHOWN_FLIPS = 10  # flips of each kind printed (--json lists them all)
SHOWN_RUNS = 3  # run ids named in a line about several labels
MAX_SUSPECTS = 5  # the latest labels people gave that a refused switch refits without, one at a time


@dataclass(frozen=True)
class Flip:
    """A replayed request whose route differs: the skill it should go to, where it went, where it goes now."""

    text: str
    expected: str | None
    before: str | None
    after: str | None
    source: str

    @property
    def fixed(self) -> bool:
        return self.after == self.expected

    @property
    def counted(self) -> bool:
        """Whether the workspace's own evidence says where the request goes (else a client's word: only shown)."""
        return self.source in AUTHORITY

    @property
    def mark(self) -> str | None:
        """``implicit: a client's pick`` for a flip only a client's word stands behind, else None."""
        return None if self.counted else f"{self.source}: {UNCOUNTED.get(self.source, 'a client')}, not counted"

    @property
    def now(self) -> str:
        """``right`` (fixed), ``wrong`` (it was right: a break) or ``still wrong`` (from one wrong route to another)."""
        if self.fixed:
            return "right"
        return "wrong" if self.before == self.expected else "still wrong"

    def to_dict(self) -> dict[str, object]:
        return {
            "text": self.text,
            "expected": self.expected,
            "before": self.before,
            "after": self.after,
            "source": self.source,
            "now": self.now,
            "counted": self.counted,
            **({"mark": self.mark} if self.mark else {}),
        }


@dataclass
class HeldOut:
    """The held-out requests, each routed by the untrained ``examples`` strategy and by the router fitted without it."""

    expected: list[str | None]
    untrained: list[str | None]
    learned: list[str | None]

    def right(self, predicted: list[str | None]) -> list[bool]:
        return [p == e for p, e in zip(predicted, self.expected, strict=True)]


@dataclass(frozen=True)
class Culprit:
    """Labels people gave (usually one) without which some broken requests route right again: how many."""

    run_ids: tuple[str, ...]
    text: str  # the first label's request
    said: str  # what it says: "--skill NAME", "--none", "--outcome failure"
    mends: int

    def sentence(self) -> str:
        if len(self.run_ids) == 1:
            [run_id] = self.run_ids
            return (
                f"the label on run {run_id} ({self.text!r} {self.said}) turns {plural(self.mends, 'right route')} wrong; "
                f"take it back with `semif label --undo {run_id}`"
            )
        what = f" ({self.text!r} {self.said})" if self.said else ""
        runs = ", ".join(self.run_ids[:SHOWN_RUNS]) + (
            f" and {len(self.run_ids) - SHOWN_RUNS} more" if len(self.run_ids) > SHOWN_RUNS else ""
        )
        return (
            f"the labels on runs {runs}{what} together turn {plural(self.mends, 'right route')} wrong; "
            f"take them back with `semif label --undo RUN` for each (--json lists every run)"
        )

    def to_dict(self) -> dict[str, object]:
        return {"run_ids": list(self.run_ids), "text": self.text, "said": self.said, "mends": self.mends}


@dataclass
class SwitchDecision:
    """Whether the new router routes from now on, why (one line), and the flips behind it."""

    switched: bool
    reason: str
    current: str
    replayed: int
    right_before: int
    right_after: int
    flips: list[Flip] = field(default_factory=list)
    p_value: float = 1.0  # one-sided, of "the fixes outnumber the breaks"; 1 when they do not
    held_out: dict[str, Any] = field(default_factory=dict)
    forced: bool = False
    culprits: list[Culprit] = field(default_factory=list)  # the labels behind a refusal's breaks (label_culprits)
    unlearned: list[Flip] = field(default_factory=list)  # labelled requests the new router still gets wrong
    outranked: list[Contradiction] = field(default_factory=list)  # skills' examples people's labels contradict

    @property
    def fixed(self) -> list[Flip]:
        return [f for f in self.flips if f.fixed and f.counted]

    @property
    def broken(self) -> list[Flip]:
        """Requests the routing in use got right and the new router gets wrong."""
        return [f for f in self.flips if f.before == f.expected and f.counted]

    def to_dict(self) -> dict[str, object]:
        return {
            "switched": self.switched,
            "forced": self.forced,
            "reason": self.reason,
            "current": self.current,
            "replayed": self.replayed,
            "right_before": self.right_before,
            "right_after": self.right_after,
            "now_right": len(self.fixed),
            "now_wrong": len(self.broken),
            "p_value": round(self.p_value, 4),
            "held_out": self.held_out,
            "flips": [f.to_dict() for f in self.flips],
            "culprits": [c.to_dict() | {"says": c.sentence()} for c in self.culprits],
            "unlearned": [f.to_dict() for f in self.unlearned],
            "outranked": [c.to_dict() for c in self.outranked],
        }


def routing_label(strategy: object) -> str:
    """The routing ``strategy`` is, in words: ``the learned router trained 2025-03-10T09:00:00+00:00``,
    ``the untrained examples strategy``."""
    from .learned import Learned

    if isinstance(strategy, Learned):
        return f"the learned router trained {strategy.scorer.router.meta.get('trained_at', 'earlier')}"
    name = getattr(strategy, "name", type(strategy).__name__)
    if name == "best_leaf" and getattr(getattr(strategy, "scorer", None), "examples", "off") == "centroid":
        name = "examples"
    return f"the untrained {name} strategy"


def replayable(rows: Sequence[TrainingExample]) -> list[tuple[str, str | None, str]]:
    """Each distinct request whose right route is known, with that route and the row that says so.

    Rows that only say which skill was wrong (failures) are left out, and so
    are a client's (only what the workspace knows is replayed). When rows
    disagree on a request, the most authoritative says (:data:`AUTHORITY`).
    """
    chosen: dict[str, TrainingExample] = {}
    for row in rows:
        if row.wrong is not None or row.source not in AUTHORITY or getattr(row, "client", None) is not None:
            continue
        held = chosen.get(row.text)
        if held is None or AUTHORITY[row.source] < AUTHORITY[held.source]:
            chosen[row.text] = row
    return [(text, row.skill, row.source) for text, row in chosen.items()]


def request_key(text: str) -> str:
    """``text`` as requests are told apart when a client repeats one: case, spacing and punctuation aside."""
    return " ".join(re.findall(r"\w+", text.casefold()))


def clients_requests(rows: Sequence[TrainingExample], known: set[str]) -> list[tuple[str, str | None, str]]:
    """Each distinct request only a client's rows say where to go (not in ``known``), with the skill its most
    authoritative row names (a report before a pick) and that row's source: replayed to be shown, never counted."""
    known_keys = {request_key(text) for text in known}
    chosen: dict[str, TrainingExample] = {}
    order = list(CLIENTS_WORD)
    for row in rows:
        if row.wrong is not None or row.source not in CLIENTS_WORD or request_key(row.text) in known_keys:
            continue
        held = chosen.get(request_key(row.text))
        if held is None or order.index(row.source) < order.index(held.source):
            chosen[request_key(row.text)] = row
    return [(row.text, row.skill, row.source) for row in chosen.values()]


def routed_skills(
    strategy: RoutingStrategy, texts: Sequence[str], tell: Callable[[int], None] | None = None
) -> list[str | None]:
    """The skill ``strategy`` routes each of ``texts`` to (``None``: no skill): by its ``destination`` where it has
    one, else on one run of the event loop (one per request cost more than the routing); ``tell`` hears how many
    are done every 200."""
    destination = getattr(strategy, "destination", None)

    async def route_all() -> list[str | None]:
        skills = []
        for done, text in enumerate(texts, start=1):
            if destination is not None:
                skills.append(destination(text))
            else:
                route = await strategy.aroute(text)
                skills.append(route.skill.name if route.skill is not None else None)
            if tell is not None and (done % 200 == 0 or done == len(texts)):
                tell(done)
        return skills

    return run_sync(route_all())


def compare_routers(
    current: RoutingStrategy,
    new: RoutingStrategy,
    rows: Sequence[TrainingExample],
    *,
    held_out: HeldOut | None = None,
    force: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
    require_gain: bool = False,
) -> SwitchDecision:
    """Replay ``rows`` through the strategy routing now (``current``) and the new one (``new``), and :func:`decide`."""
    tell = progress or (lambda stage, done, total: None)
    outranked = contradicted_examples(rows)
    counted: list[tuple[str, str | None, str]] = []
    shown: list[tuple[str, str | None, str]] = []  # examples a person's label contradicts: shown, not counted
    for text, skill, source in replayable(rows):
        if source == "examples" and text in outranked:
            shown.append((text, outranked[text].label_skill, OUTRANKED))  # where the label says it goes
        else:
            counted.append((text, skill, source))
    requests = counted + shown + clients_requests(rows, {text for text, _, _ in counted + shown})
    texts = [text for text, _, _ in requests]
    total = 2 * len(texts)
    before = routed_skills(current, texts, lambda done: tell("replaying", done, total))
    after = routed_skills(new, texts, lambda done: tell("replaying", len(texts) + done, total))
    flips = [
        Flip(text, expected, was, now, source)
        for (text, expected, source), was, now in zip(requests, before, after)
        if was != now
    ]
    before_right = [was == expected for (_, expected, _), was in zip(counted, before)]
    after_right = [now == expected for (_, expected, _), now in zip(counted, after)]
    decision = decide(
        routing_label(current), before_right, after_right, flips, held_out, force=force, require_gain=require_gain
    )
    decision.outranked = list(outranked.values())
    decision.unlearned = [
        Flip(text, expected, was, now, source)
        for (text, expected, source), was, now in zip(counted, before, after)
        if source == PERSON and was != expected and now != expected
    ]
    return decision


def label_culprits(
    decision: SwitchDecision,
    rows: Sequence[TrainingExample],
    without: Callable[[list[int]], RoutingStrategy],
    *,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[Culprit]:
    """The labels behind ``decision``'s breaks (see the module docstring), most breaks first.

    ``rows`` are the rows the new router was fitted on; ``without(positions)`` is
    the router fitted the same way without the rows at those positions. Only
    rows a person labelled (those carrying a ``run_id``) are suspects, and the
    labels of one request that say the same (a request labelled on each of its
    runs) are one suspect: without one of them, the others still say it.
    """
    broken = decision.broken
    groups: dict[tuple[str, str | None, str | None], list[int]] = {}
    for i, row in enumerate(rows):
        if getattr(row, "run_id", None) and row.client is None:
            key = (request_key(row.text), row.skill, row.wrong)
            groups[key] = [*groups.pop(key, []), i]  # moved to the end: groups in the order of their latest label
    suspects = list(groups.values())[-MAX_SUSPECTS:][::-1]  # the latest first
    if not broken or not suspects:
        return []
    tell = progress or (lambda stage, done, total: None)
    texts = [flip.text for flip in broken]

    def mends(positions: list[int]) -> int:
        routes = routed_skills(without(positions), texts)
        return sum(route == flip.expected for route, flip in zip(routes, broken))

    def culprit(positions: list[int], mended: int) -> Culprit:
        first = rows[positions[0]]
        said = _said(first) if len({(rows[i].skill, rows[i].wrong) for i in positions}) == 1 else ""
        return Culprit(tuple(dict.fromkeys(rows[i].run_id or "" for i in positions)), first.text, said, mended)

    found = []
    for done, positions in enumerate(suspects, start=1):
        tell("labels", done, len(suspects))  # refitting without each suspect
        mended = mends(positions)
        if mended:
            found.append(culprit(positions, mended))
    if not found and len(suspects) > 1:
        every = [i for positions in suspects for i in positions]
        mended = mends(every)
        if mended:
            found.append(culprit(every, mended))
    found.sort(key=lambda culprit: -culprit.mends)
    # refitting without any one label moves a route or two by itself: only those that mend at least half as many
    # breaks as the one that mends most are named
    return [culprit for culprit in found if 2 * culprit.mends >= found[0].mends] if found else []


def _said(row: TrainingExample) -> str:
    """What a person's label row says, as `semif label` takes it."""
    if row.wrong is not None:
        return "--outcome failure"
    return "--none" if row.skill is None else f"--skill {row.skill}"


def decide(
    current: str,
    before_right: list[bool],
    after_right: list[bool],
    flips: list[Flip],
    held_out: HeldOut | None,
    *,
    force: bool = False,
    require_gain: bool = False,
) -> SwitchDecision:
    """Switch to the new router unless it breaks what was right or does worse held out (see the module docstring);
    with ``require_gain``, also unless its fixes outnumber its breaks beyond noise (a new encoder's bar)."""
    decision = SwitchDecision(True, "", current, len(before_right), sum(before_right), sum(after_right), flips)
    fixed, broken = len(decision.fixed), len(decision.broken)
    if fixed > broken:  # one-sided: the chance of at least this many more fixes if either way were as likely
        decision.p_value = paired_p_value(before_right, after_right, [1] * len(before_right)) / 2
    why = ""
    labelled = [f for f in decision.broken if f.source == PERSON]
    if labelled:
        first = labelled[0]
        more = f" (and {len(labelled) - 1} more a person labelled)" if len(labelled) > 1 else ""
        why = (
            f"the new router sends {first.text!r}, which a person labelled {first.expected or 'none'}, "
            f"to {first.after or 'none'}{more}: a person's label is never broken"
        )
    elif broken and decision.p_value >= ALPHA:
        why = (
            f"the new router gets {plural(broken, 'request')} wrong that were right, and {fixed} right that were wrong: "
            f"the fixes do not outnumber the breaks beyond noise (p={decision.p_value:.2g})"
        )
    elif require_gain and (fixed <= broken or decision.p_value >= ALPHA):
        p_value = f" (p={decision.p_value:.2g})" if fixed > broken else ""
        why = (
            f"the new router gets {plural(fixed, 'request')} right that were wrong and {broken} wrong that were right: "
            f"not better beyond noise{p_value}"
        )
    if held_out is not None and held_out.expected:
        before, after = held_out.right(held_out.untrained), held_out.right(held_out.learned)
        held_p = paired_p_value(before, after, [1] * len(before))
        share_before, share_after = sum(before) / len(before), sum(after) / len(after)
        decision.held_out = {
            "requests": len(before),
            "untrained_right": sum(before),
            "learned_right": sum(after),
            "p_value": round(held_p, 4),
        }
        if share_after < share_before and not why:
            why = (
                f"on {plural(len(before), 'held-out request')} the router trained without them is right "
                f"{percent_figure(share_after)} of the time, the untrained examples {percent_figure(share_before)} "
                f"(p={held_p:.2g}): training does not help"
            )
    if not why:
        decision.reason = (
            f"switched from {current}: {plural(fixed, 'request')} now right, {broken} now wrong, "
            f"of {len(before_right)} replayed"
        )
    elif force:
        decision.forced = True
        decision.reason = f"switched from {current} (--force), although {why}"
    else:
        decision.switched = False
        decision.reason = f"kept {current}: {why} (--force switches anyway)"
    return decision


def flip_lines(decision: dict[str, Any], shown: int = SHOWN_FLIPS) -> list[str]:
    """The flips of a decision's ``to_dict()``, for people: ``now right  "text"  old -> new``, a few of each kind."""
    lines = []
    for now in ("right", "wrong", "still wrong"):
        flips = [f for f in decision["flips"] if f["now"] == now]
        said = "now " + now if now != "still wrong" else now
        for flip in flips[:shown]:
            lines.append(
                f"  {said} {flip['text']!r}  {flip['before'] or 'none'} -> {flip['after'] or 'none'}"
                + ("" if now == "right" else f"  (should be {flip['expected'] or 'none'})")
                + (f"  ({flip['mark']})" if flip.get("mark") else "")
            )
        if len(flips) > shown:
            lines.append(f"  … {len(flips) - shown} more {said} (--json lists them all)")
    return lines


def label_lines(decision: dict[str, Any], shown: int = SHOWN_FLIPS) -> list[str]:
    """What a decision's ``to_dict()`` says of people's labels: the labels behind a refusal, and labelled requests the
    new router still gets wrong (one label does not always outweigh the examples: label more requests like it)."""
    lines = [culprit["says"] for culprit in decision.get("culprits", [])]
    outranked = decision.get("outranked", [])
    lines += [contradiction["says"] for contradiction in outranked[:shown]]
    if len(outranked) > shown:
        lines.append(f"  … {len(outranked) - shown} more examples a person's label outranks (--json lists them all)")
    unlearned = decision.get("unlearned", [])
    for flip in unlearned[:shown]:
        lines.append(
            f"  not learned {flip['text']!r}: labelled {flip['expected'] or 'none'}, the new router still sends it "
            f"to {flip['after'] or 'none'} (label more requests like it)"
        )
    if len(unlearned) > shown:
        lines.append(f"  … {len(unlearned) - shown} more not learned (--json lists them all)")
    return lines
