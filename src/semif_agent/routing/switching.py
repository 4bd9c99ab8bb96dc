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

Only what the workspace itself knows is replayed: a request known only from
a client (its picks after a find, its reports) is neither a fix nor a break,
so no number of them can buy a break of what was right.

Otherwise the new router is switched to. ``force`` switches anyway, and the
decision says what it overrode.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._sync import run_sync
from .._text import percent_figure
from .compare import ALPHA, paired_p_value

# Which row says what a request should route to when several hold the same text: a person's word first. A client's
# rows (implicit, reported) are not replayed at all.
AUTHORITY = {"label": 0, "dataset": 1, "examples": 2, "success": 3}
PERSON = "label"  # the source of a person's label, which no switch may break
SHOWN_FLIPS = 10  # flips of each kind printed (--json lists them all)


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
    def now(self) -> str:
        """``right`` (fixed), ``wrong`` (it was right: a break) or ``still wrong`` (from one wrong route to another)."""
        if self.fixed:
            return "right"
        return "wrong" if self.before == self.expected else "still wrong"

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "expected": self.expected,
            "before": self.before,
            "after": self.after,
            "source": self.source,
            "now": self.now,
        }


@dataclass
class HeldOut:
    """The held-out requests, each routed by the untrained ``examples`` strategy and by the router fitted without it."""

    expected: list[str | None]
    untrained: list[str | None]
    learned: list[str | None]

    def right(self, predicted: list[str | None]) -> list[bool]:
        return [p == e for p, e in zip(predicted, self.expected, strict=True)]


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

    @property
    def fixed(self) -> list[Flip]:
        return [f for f in self.flips if f.fixed]

    @property
    def broken(self) -> list[Flip]:
        """Requests the routing in use got right and the new router gets wrong."""
        return [f for f in self.flips if f.before == f.expected]

    def to_dict(self) -> dict[str, Any]:
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
        }


def routing_label(strategy: Any) -> str:
    """The routing ``strategy`` is, in words: ``the learned router trained 2025-03-10T09:00:00+00:00``,
    ``the untrained examples strategy``."""
    from .learned import Learned

    if isinstance(strategy, Learned):
        return f"the learned router trained {strategy.scorer.router.meta.get('trained_at', 'earlier')}"
    name = getattr(strategy, "name", type(strategy).__name__)
    if name == "best_leaf" and getattr(getattr(strategy, "scorer", None), "examples", "off") == "centroid":
        name = "examples"
    return f"the untrained {name} strategy"


def replayable(rows: Sequence[Any]) -> list[tuple[str, str | None, str]]:
    """Each distinct request whose right route is known, with that route and the row that says so.

    Rows that only say which skill was wrong (failures) are left out, and so
    are a client's (only what the workspace knows is replayed). When rows
    disagree on a request, the most authoritative says (:data:`AUTHORITY`).
    """
    chosen: dict[str, Any] = {}
    for row in rows:
        if row.wrong is not None or row.source not in AUTHORITY or getattr(row, "client", None) is not None:
            continue
        held = chosen.get(row.text)
        if held is None or AUTHORITY[row.source] < AUTHORITY[held.source]:
            chosen[row.text] = row
    return [(text, row.skill, row.source) for text, row in chosen.items()]


def routed_skills(strategy: Any, texts: Sequence[str], tell: Callable[[int], None] | None = None) -> list[str | None]:
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
    current: Any,
    new: Any,
    rows: Sequence[Any],
    *,
    held_out: HeldOut | None = None,
    force: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
) -> SwitchDecision:
    """Replay ``rows`` through the strategy routing now (``current``) and the new one (``new``), and :func:`decide`."""
    tell = progress or (lambda stage, done, total: None)
    requests = replayable(rows)
    texts = [text for text, _, _ in requests]
    total = 2 * len(texts)
    before = routed_skills(current, texts, lambda done: tell("replaying", done, total))
    after = routed_skills(new, texts, lambda done: tell("replaying", len(texts) + done, total))
    flips = [
        Flip(text, expected, was, now, source)
        for (text, expected, source), was, now in zip(requests, before, after)
        if was != now
    ]
    before_right = [was == expected for (_, expected, _), was in zip(requests, before)]
    after_right = [now == expected for (_, expected, _), now in zip(requests, after)]
    return decide(routing_label(current), before_right, after_right, flips, held_out, force=force)


def decide(
    current: str,
    before_right: list[bool],
    after_right: list[bool],
    flips: list[Flip],
    held_out: HeldOut | None,
    *,
    force: bool = False,
) -> SwitchDecision:
    """Switch to the new router unless it breaks what was right or does worse held out (see the module docstring)."""
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
            f"the new router gets {broken} request(s) wrong that were right, and {fixed} right that were wrong: "
            f"the fixes do not outnumber the breaks beyond noise (p={decision.p_value:.2g})"
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
                f"on {len(before)} held-out requests the router trained without them is right "
                f"{percent_figure(share_after)} of the time, the untrained examples {percent_figure(share_before)} "
                f"(p={held_p:.2g}): training does not help"
            )
    if not why:
        decision.reason = (
            f"switched from {current}: {fixed} request(s) now right, {broken} now wrong, "
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
            )
        if len(flips) > shown:
            lines.append(f"  … {len(flips) - shown} more {said} (--json lists them all)")
    return lines
