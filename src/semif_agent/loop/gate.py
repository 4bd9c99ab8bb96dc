"""The act gate: before a routed skill acts, read what the request asks and how sure the route is.

The request is read by the code the assessment uses (:func:`.evidence.read_request`:
a lookup or a change, its verb, and whether it says not to act), and set against
what the chosen skill does (its ``effects``, ``"read"`` or ``"write"``). The rules, in order:

0. **A command that says not to do something is never acted on.** "Don't add
   buy milk to my todo list", "No need to email Alice", "Stop sending me
   reminders" (:mod:`.negation`) are handed back (``negated``), whatever the
   route, whoever chose the skill (``--skill``, the Agent's model) and even
   with ``yes``: acting on them does the one thing the person said not to.
   Negations inside what the command is about ("Remind me never to skip
   breakfast", "Add 'don't forget the keys' to my list") do not count.

1. **A lookup never runs a skill that writes.** The route's last decision is
   taken again without the skills that write (the probabilities of what is
   left, ``none`` included, renormalised): a skill that reads wins, and runs
   (``lookup-read``), or ``none`` does, and the request is handed back
   (``lookup-writes``). A skill that cannot act in this run (a SKILL.md skill
   whose instructions are only shown) changes nothing, so it is not handed
   back for it: "where is my AirTag?" shows findmy.
2. **A change prefers skills that write.** A change request routed to a skill
   that reads goes to the likeliest skill that writes of the same decision
   when that one is likelier than ``none`` there; its probability is
   renormalised the same way, and rules 3 to 6 weigh it as any other
   (``change-write`` when it acts).
3. **Out of scope.** When the request is near one of the tree's
   ``none_examples`` (requests no skill serves), and clearly nearer to it than
   to the descriptions and examples of the skills the route weighed, nothing
   fits: the route ends at ``none`` (``out-of-scope``). The ``none`` examples
   speak for the skills declared beside them: one that the route itself sends
   to a SKILL.md skill installed since, the one chosen (:func:`serves_none_example`),
   no longer counts against it ("Dim the bedroom lights" and openhue), and
   the next nearest is weighed (:meth:`.runner.SkillRunner.adecide` routes it).
4. **A command the skill does not do.** A command whose verb is none of the
   writing skill's words ("Cancel the dentist appointment" routed to
   ``calendar.add_event``) is handed back (``misfit``), when the route was
   scored by similarity (the local and lexical engines, which cannot tell a
   synonym the skill never uses); a model reads what the words mean.
5. **Not what the skill writes.** A command whose verb says nothing of what
   it acts on (send, add, put, write, make...: :data:`.evidence.GENERAL_VERBS`)
   acts on its object: "Send 20 dollars to Bob" is not an email, "Put the
   kettle on" not a to-do. When none of the words it acts on (names and
   numbers left out) is one the writing skill names what it does by (its
   description, inputs and examples), nor close in meaning to them, it is
   handed back (``off-object``); by similarity engines only, as rule 4.
6. **Sure enough.** A skill that writes acts only when the route's
   probability for it is at least the act threshold; otherwise the request is
   handed back with the likeliest candidates (``unsure``). The route's
   probability is the one its decisions hold: where they come from one
   softmax over every leaf (the leaf-aware strategies, and an engine's route
   calibrated on the leaves), the chosen skill's share of all the leaves'
   at the last decision, which does not shrink as the tree deepens; where
   they are an engine's own, decision by decision, their product
   (:func:`~semif_agent.tree.router.route_prefix`).

Rules 3 to 6 hand a request back; ``yes`` (``semif run --yes``) acts all the
same (never on rule 0). Skills that read, and skills that cannot act in this run (a stub, a
SKILL.md skill whose instructions are only shown), are never held back by 4
to 6, but a skill that cannot act is shown only when the route's probability
for it is at least the bar to show it (:data:`SHOW_SHARE` of the act
threshold); below it the request is handed back with the candidates
(``unsure``), as a write would be. A skill proposed by someone else (the Agent's model, through a skill's
tool) passes the same gate with :func:`gate_choice`: the request is routed,
and a proposed skill that writes runs only when the route, ended at it, would
act. What the gate read and did is kept in the run's outcome row
(``evidence["gate"]``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from typing import Any

from ..engine.base import Engine, embedding_function
from ..engine.decisions import NONE_ID, Option
from ..engine.local import leaf_text
from ..routing.scoring import can_score
from ..tree.effects import WRITE
from ..tree.manifests import SkillManifest
from ..tree.router import Route, route_prefix
from ..tree.tree import SkillTree
from .evidence import RequestReading, negation_of, object_fits, object_vocabulary, read_request, skill_fits

# The act threshold when the workspace has no measured one: the lowest route
# probability at which the starter's leave-one-out routes were right 95% of
# the time (bench/act_when_sure.py prints it).
DEFAULT_ACT_THRESHOLD = 0.5
SHOWN = 3  # candidates named when a request is handed back
# A request is out of scope when a ``none`` example is at least NONE_NEAR to it (cosine on the local model, or
# the engine's score) and NONE_MARGIN nearer than the texts of the skills the route weighed. On the starter,
# requests no skill serves sit 0.5-0.8 from their nearest none example and 0.15-0.3 nearer to it than to any
# skill; a shared name or word alone brings a none example to 0.3-0.37, within about 0.1 of the right skill.
NONE_NEAR = 0.45
NONE_MARGIN = 0.1
# A skill that writes acts on a request whose words also name another skill the route weighed (its verb or what it
# acts on) only when, at every decision of the route, its side leads the likeliest other option by ACT_MARGIN: "Write
# to my manager that I'll be late tomorrow", routed to calendar.list_events (46%) and taken by its intent to
# calendar.add_event (31%), names a day the reading skill shows, and is no choice between them. On the starter
# (`bench/gate_phrasing.py --margins` over the development sets, the rule off) the writes that acted right led such a
# runner-up by 0.20 or more (one re-routed note by -0.04), a wrong one by 0.11: the margin is set midway.
ACT_MARGIN = 0.15

# A skill that cannot act in this run (a SKILL.md skill whose instructions are shown, a stub) is shown when the route's
# probability for it is at least SHOW_SHARE of the act threshold: following the wrong instructions changes nothing
# by itself, so it needs less than a write, but a pick the route barely leans to is a guess the user would follow.
SHOW_SHARE = 0.5

ACTS = ("caller", "sure", "yes", "no probability", "reads", "cannot act", "lookup-read", "change-write")
HANDS_BACK = ("negated", "lookup-writes", "out-of-scope", "misfit", "off-object", "contested", "unsure")
NEGATED = "negated"  # the one rule ``yes`` and a caller's choice never overrule
OUT_OF_SCOPE = "out-of-scope"


@dataclass(frozen=True)
class RouteCandidate:
    """A skill the route weighed, with the route's probability for it (None: the engine gives none)."""

    skill: str
    probability: float | None
    effects: str

    def to_dict(self) -> dict[str, Any]:
        p = None if self.probability is None else round(self.probability, 3)
        return {"skill": self.skill, "probability": p, "effects": self.effects}

    def __str__(self) -> str:
        return self.skill if self.probability is None else f"{self.skill} {_percent(self.probability)}"


@dataclass(frozen=True)
class GateResult:
    """What the gate read and decided: whether ``skill`` acts, by which ``rule``, and why."""

    acts: bool
    rule: str
    reason: str
    skill: str | None
    asks: str
    verb: str | None
    effects: str | None
    probability: float | None
    threshold: float
    candidates: tuple[RouteCandidate, ...] = ()
    rerouted_from: str | None = None
    nearest_none: str | None = None
    read_as: str | None = None  # the plain words the request was routed and read as (:mod:`.phrasing`), if it was
    as_written: str | None = None  # where the route of the request as written went, when the plain reading moved it

    @property
    def handed_back(self) -> bool:
        return not self.acts

    @property
    def margin(self) -> float | None:
        """The chosen skill's probability less the next candidate's."""
        ranked = [c.probability for c in self.candidates if c.probability is not None]
        if self.probability is None or not ranked:
            return None
        others = [c.probability for c in self.candidates if c.skill != self.skill and c.probability is not None]
        return self.probability - max(others, default=0.0)

    def summary(self, run_id: str | None = "RUN") -> str:
        """One line for a request handed back: the likeliest candidates, and what to do next (``run_id`` None: the
        run was not logged, so there is nothing to label)."""
        if self.rule == NEGATED:
            return f"{self.reason}; nothing was done (say what to do, without the negation)"
        named = " · ".join(str(c) for c in self.candidates[:SHOWN]) or "no skill"
        label = f", or `semif label {run_id}`" if run_id is not None else ""
        why = f"not sure: {named}" if self.rule == "unsure" else f"{self.reason} (candidates: {named})"
        return f"{why}; run again with --skill NAME{label}"

    def to_dict(self) -> dict[str, Any]:
        def rounded(value: float | None) -> float | None:
            return None if value is None else round(value, 3)

        return {
            "acts": self.acts,
            "handed_back": self.handed_back,
            "rule": self.rule,
            "reason": self.reason,
            "skill": self.skill,
            "asks": self.asks,
            "verb": self.verb,
            "effects": self.effects,
            "probability": rounded(self.probability),
            "margin": rounded(self.margin),
            "threshold": self.threshold,
            "candidates": [c.to_dict() for c in self.candidates],
            "rerouted_from": self.rerouted_from,
            "nearest_none": self.nearest_none,
            "read_as": self.read_as,
            "as_written": self.as_written,
        }


@dataclass(frozen=True)
class Verdict:
    """What would happen to a request: where its route ends once the gate read it, whether that skill acts, and why.

    The one answer ``semif run``, ``semif route`` (and ``--dry-run``) and ``find_skills``' ``best`` give
    (:meth:`.runner.SkillRunner.adecide` makes it). ``gate`` is None when the route ended at ``none`` itself.
    """

    route: Route
    gate: GateResult | None
    set_aside: Route | None = None  # the route of the request as written, when its plain reading's route stands

    @property
    def skill(self) -> str | None:
        """The skill the request goes to (it acts, or is handed back by the gate); None: no skill (handed back)."""
        return self.route.skill.name if self.route.skill is not None else None

    @property
    def acts(self) -> bool:
        return self.route.skill is not None and (self.gate is None or self.gate.acts)

    @property
    def handed_back(self) -> bool:
        return not self.acts

    @property
    def rule(self) -> str:
        return self.gate.rule if self.gate is not None else "none"

    @property
    def reason(self) -> str:
        if self.gate is not None and (self.route.skill is not None or self.gate.rule == "out-of-scope"):
            return self.gate.reason
        return self.route.reason or "no skill fits"

    def to_dict(self) -> dict[str, Any]:
        return {
            "skill": self.skill,
            "acts": self.acts,
            "handed_back": self.handed_back,
            "rule": self.rule,
            "reason": self.reason,
        }


@dataclass
class _Reading:
    """The gate's working state: the request's reading, the route's last decision, the chosen skill."""

    text: str
    reading: RequestReading
    tree: SkillTree
    prefix: float | None  # the probability of reaching the last decision (1 when it holds the route's)
    last: dict[str, float] | None  # the last decision's probabilities
    skill: SkillManifest
    probability: float | None
    rerouted_from: str | None = None
    candidates: tuple[RouteCandidate, ...] = field(default=())
    route: Route | None = None


def chosen_by_caller(
    skill: SkillManifest, text: str, threshold: float, *, held_back: tuple[str, str] | None = None
) -> GateResult:
    """The gate's record for a skill the caller named (``--skill``): it acts, unless the request says not to, or
    the caller was told this request is handed back at this skill (``held_back``: the rule and reason it was)."""
    reading = read_request(text)
    negated = _negated(reading, skill, threshold)
    if negated is not None:
        return negated
    if held_back is not None:
        rule, reason = held_back
        return GateResult(False, rule, reason, skill.name, reading.asks, reading.verb, skill.effects, None, threshold)
    return GateResult(
        True, "caller", "chosen by the caller", skill.name, reading.asks, reading.verb, skill.effects, None, threshold
    )


def _negated(reading: RequestReading, skill: SkillManifest, threshold: float) -> GateResult | None:
    """Rule 0's result when the request says not to do what ``skill`` would do, else None."""
    negation = negation_of(reading, skill)
    if negation is None:
        return None
    reason = f"the request says not to act ({str(negation)!r})"
    return GateResult(False, NEGATED, reason, skill.name, reading.asks, reading.verb, skill.effects, None, threshold)


def gate_route(
    route: Route,
    text: str,
    tree: SkillTree,
    engine: Engine,
    *,
    threshold: float,
    yes: bool = False,
    can_act: Callable[[SkillManifest], bool] = lambda skill: True,
    set_aside: Collection[str] = (),
) -> tuple[Route, GateResult | None]:
    """The route to run (re-routed by intent, or ended at ``none`` when out of scope) and the gate's result.

    ``None`` for a route that ended at ``none`` already. ``can_act`` says whether a skill can change
    anything in this run; ``yes`` acts on requests the gate would hand back; ``set_aside``: ``none`` examples
    rule 3 does not weigh (those the chosen skill serves: :func:`serves_none_example`).
    """
    if route.skill is None:
        return route, None
    state = _read(route, text, tree)
    negated = _negated(state.reading, state.skill, threshold)
    if negated is not None:
        return route, replace(negated, probability=state.probability, candidates=state.candidates)
    _intent(state, can_act(state.skill))
    if state.rerouted_from is not None:
        route = replace(route, skill=state.skill)
    weighed = [state.skill, *(tree.skills[c.skill] for c in state.candidates if c.skill != state.skill.name)]
    none_examples = tuple(e for e in tree.none_examples if e not in set_aside)
    nearest = _nearest_none(text, weighed, none_examples, engine)
    rule, reason = _verdict(state, nearest, threshold, can_act(state.skill), by_similarity=can_score(engine))
    acts = rule in ACTS or yes
    if rule in HANDS_BACK and yes:
        reason = f"{reason}; acted all the same (--yes)"
    result = GateResult(
        acts,
        rule,
        reason,
        state.skill.name,
        state.reading.asks,
        state.reading.verb,
        state.skill.effects,
        state.probability,
        threshold,
        state.candidates,
        state.rerouted_from,
        nearest,
    )
    if rule == "out-of-scope" and not yes:
        route = replace(route, skill=None, reason=reason)
    return route, result


def gate_choice(
    route: Route,
    skill: SkillManifest,
    text: str,
    tree: SkillTree,
    engine: Engine,
    *,
    threshold: float,
    can_act: Callable[[SkillManifest], bool] = lambda skill: True,
) -> tuple[Route, GateResult]:
    """The gate for ``skill``, proposed for ``text`` (the Agent's model chose it), where the request's own
    ``route`` went: the route ended at ``skill``, and whether it acts.

    A skill that reads (or cannot act) runs. One that writes runs when the route ended at it would act by
    :func:`gate_route`'s rules (the route's probability for it, from the route's last decision); it is handed
    back when the gate would hand that route back or take it to another skill, and when the route did not weigh
    it at all.
    """
    chosen = replace(route, skill=skill)
    reading = read_request(text)
    negated = _negated(reading, skill, threshold)
    if negated is not None:
        return chosen, negated
    if skill.effects != WRITE or not can_act(skill):
        rule, reason = ("reads", f"{skill.name} only reads") if skill.effects != WRITE else _cannot_act(skill)
        runs = GateResult(True, rule, reason, skill.name, reading.asks, reading.verb, skill.effects, None, threshold)
        return chosen, runs
    last = route.decisions[-1].result.probabilities if route.decisions else None
    if last and skill.name in last:
        _, result = gate_route(chosen, text, tree, engine, threshold=threshold, can_act=can_act)
        if result is not None and result.skill == skill.name:
            return chosen, result
        if result is not None and reading.asks == "lookup":  # taken to a skill that reads instead
            reason = f"the request asks to look something up, and {skill.name} writes"
            own = next((c.probability for c in result.candidates if c.skill == skill.name), None)
            handed_back = replace(result, acts=False, rule="lookup-writes", reason=reason, rerouted_from=None)
            return chosen, replace(handed_back, skill=skill.name, effects=skill.effects, probability=own)
    _, weighed = gate_route(route, text, tree, engine, threshold=threshold) if route.skill else (route, None)
    where = weighed.skill if weighed is not None else "none"
    reason = f"the route for this request goes to {where}, and does not weigh {skill.name}"
    candidates = weighed.candidates if weighed is not None else ()
    result = GateResult(
        False, "unsure", reason, skill.name, reading.asks, reading.verb, skill.effects, None, threshold, candidates
    )
    return chosen, result


def _cannot_act(skill: SkillManifest) -> tuple[str, str]:
    return (
        "cannot act",
        f"{skill.name} runs, changing nothing in this run (its instructions are shown, or it is a stub)",
    )


def _read(route: Route, text: str, tree: SkillTree) -> _Reading:
    prefix = route_prefix(route.decisions)
    last = route.decisions[-1].result.probabilities if route.decisions else None
    skill = route.skill
    if skill is None:
        raise ValueError("the gate reads a route that ended at a skill")
    state = _Reading(text, read_request(text), tree, prefix, dict(last) if last else None, skill, None, route=route)
    state.probability = _joint(state, state.last, skill.name)
    state.candidates = _candidates(state)
    return state


def _intent(state: _Reading, can_act: bool) -> None:
    """Rules 1 and 2: a lookup to a writing skill that can act, a change to a reading one, taken again within the
    decision."""
    asks, effects = state.reading.asks, state.skill.effects
    lookup_to_write = asks == "lookup" and effects == WRITE and can_act
    if state.last is None or not (lookup_to_write or asks == "change" and effects != WRITE):
        return
    wanted_write = asks == "change"
    kept = {
        k: p
        for k, p in state.last.items()
        if k == NONE_ID or k in state.tree.skills and (state.tree.skills[k].effects == WRITE) == wanted_write
    }
    total = sum(kept.values())
    if total <= 0:
        return
    kept = {k: p / total for k, p in kept.items()}
    best = max(kept, key=lambda k: (kept[k], k != NONE_ID))
    if best == NONE_ID:  # nothing of the kind asked is likelier than none: the route stays (rule 1 hands it back)
        return
    state.rerouted_from = state.skill.name
    state.skill = state.tree.skills[best]
    state.probability = _joint(state, kept, best)


def _verdict(
    state: _Reading, nearest: str | None, threshold: float, can_act: bool, *, by_similarity: bool
) -> tuple[str, str]:
    skill, reading = state.skill, state.reading
    if reading.asks == "lookup" and skill.effects == WRITE and can_act:
        return "lookup-writes", f"the request asks to look something up, and {skill.name} writes"
    if nearest is not None:
        return "out-of-scope", f"the request is nearer to what no skill does ({nearest!r}) than to {skill.name}"
    if state.rerouted_from is not None and reading.asks == "lookup":
        return "lookup-read", f"the request asks to look something up: {skill.name} reads"
    if not can_act and state.probability is not None and state.probability < (bar := show_threshold(threshold)):
        return "unsure", f"{skill.name} at {_percent(state.probability)} is below the bar to show a skill {bar:.0%}"
    if skill.effects != WRITE:
        return "reads", f"{skill.name} only reads"
    if not can_act:
        return _cannot_act(skill)
    if by_similarity and reading.asks != "lookup" and reading.verb and not skill_fits(reading, skill):
        said = reading.said or reading.verb
        read_as = f" (read as {reading.verb!r})" if said != reading.verb else ""
        return "misfit", f"{skill.name} does not {said!r}{read_as}"
    if by_similarity and reading.asks != "lookup" and not object_fits(reading, skill):
        return "off-object", f"what the request asks to {reading.verb} is not what {skill.name} writes"
    if state.probability is None:
        return "no probability", "the engine gives no probabilities to weigh"
    if state.probability < threshold:
        return "unsure", f"{skill.name} at {_percent(state.probability)} is below the act threshold {threshold:.0%}"
    contested = _contested(state)
    if contested is not None:
        return "contested", contested
    if state.rerouted_from is not None:
        return "change-write", f"the request asks to {reading.verb or 'change something'}: {skill.name} writes"
    return "sure", f"{skill.name} at {_percent(state.probability)} clears the act threshold {threshold:.0%}"


def show_threshold(threshold: float) -> float:
    """How sure a route must be to show a skill that cannot act in this run (see :data:`SHOW_SHARE`)."""
    return threshold * SHOW_SHARE


def route_probability(route: Route) -> float | None:
    """The route's probability for the skill it ended at (None: it ended at ``none``, or has no probabilities)."""
    if route.skill is None or not route.decisions:
        return None
    prefix = route_prefix(route.decisions)
    chosen = (route.decisions[-1].result.probabilities or {}).get(route.skill.name)
    return None if prefix is None or chosen is None else prefix * chosen


def serves_none_example(skill: SkillManifest, example_route: Route, threshold: float) -> bool:
    """Whether ``skill``, installed as a SKILL.md skill, serves a ``none`` example: the route of the example itself
    ends at it, at least as sure as the bar to show it (:func:`show_threshold`). The ``none`` examples a tree
    declares speak for the skills declared beside them (the starter's say what its code skills do not do); a skill
    installed since that the route sends one of them to is one someone installed for it ("Dim the bedroom lights"
    and openhue), so that example no longer counts against it (rule 3). Against the declared skills they count as
    always, however the route reads them."""
    probability = route_probability(example_route)
    return (
        skill.is_skill_md
        and example_route.skill is not None
        and example_route.skill.name == skill.name
        and probability is not None
        and probability >= show_threshold(threshold)
    )


def runner_up(state: _Reading) -> tuple[str, float, float] | None:
    """The decision of the route where the chosen skill leads least: the likeliest other option there (a skill, or
    a category), its probability and the chosen path's (the category taken; at the last decision the chosen skill,
    the skill the request's intent took it from counting as another option). ``none`` is no option to lead."""
    if state.route is None:
        return None
    closest: tuple[str, float, float] | None = None
    for at, step in enumerate(state.route.decisions):
        probabilities = step.result.probabilities or {}
        last = at == len(state.route.decisions) - 1
        own = state.skill.name if last else step.result.selected
        others = {k: p for k, p in probabilities.items() if k not in (own, NONE_ID)}
        if own not in probabilities or not others:
            continue
        other = max(others, key=others.__getitem__)
        if closest is None or probabilities[own] - others[other] < closest[2] - closest[1]:
            closest = (other, others[other], probabilities[own])
    return closest


def _contested(state: _Reading) -> str | None:
    """Why the chosen skill that writes does not lead clearly enough (see :data:`ACT_MARGIN`), else None: at the
    decision where it leads least, the runner-up is a skill (or a category with one) the request's words name too,
    and the chosen one is less than ACT_MARGIN above it."""
    found = runner_up(state)
    if found is None:
        return None
    other, p_other, own = found
    if own - p_other >= ACT_MARGIN:
        return None
    tree, reading = state.tree, state.reading
    skills = [tree.skills[other]] if other in tree.skills else list(tree.leaves_under(other))
    named = [s for s in skills if s.name != state.skill.name and _names(reading, s)]
    if not named:
        return None
    what = state.skill.name if other in tree.skills else f"{state.skill.category} ({state.skill.name})"
    return (
        f"{what} at {_percent(own)} is not {ACT_MARGIN:.0%} above {other} at {_percent(p_other)}, "
        f"and the request names what {named[0].name} does too"
    )


def _names(reading: RequestReading, skill: SkillManifest) -> bool:
    """Whether the request's words name ``skill``: its verb is the skill's, or what it acts on is."""
    return (reading.verb is not None and skill_fits(reading, skill)) or bool(reading.objects & object_vocabulary(skill))


def _nearest_none(text: str, skills: list[SkillManifest], none_examples: tuple[str, ...], engine: Engine) -> str | None:
    """The ``none`` example near ``text`` and nearer than anything of ``skills`` (descriptions, examples), if one is.

    A skill's description is compared as the router embeds it (:func:`~semif_agent.engine.local.leaf_text`), so
    its vector is the one the tree's index holds already: the bare description would be embedded anew for each
    skill a route ends beside (a second or more per run on long real descriptions, and minutes when the act
    threshold is measured on a thousand skills)."""
    if not none_examples:
        return None
    own = [t for skill in skills for t in (leaf_text(skill.name, skill.description), *skill.examples)]
    embed = embedding_function(engine)
    if embed is not None:
        vectors = embed([text, *none_examples, *own])
        sims = [float(s) for s in vectors[1:] @ vectors[0]]
    elif callable(score := getattr(engine, "score", None)):
        options = [Option(f"t{i}", t) for i, t in enumerate([*none_examples, *own])]
        scored = score(text, options)
        sims = [float(scored.get(o.id, 0.0)) for o in options]
    else:
        return None
    count = len(none_examples)
    best = max(range(count), key=sims.__getitem__)
    near = sims[best] >= NONE_NEAR and sims[best] > max(sims[count:], default=0.0) + NONE_MARGIN
    return none_examples[best] if near else None


def _candidates(state: _Reading) -> tuple[RouteCandidate, ...]:
    skills = state.tree.skills
    last = state.last
    if last is None:
        return (RouteCandidate(state.skill.name, None, state.skill.effects),)
    ranked = sorted((k for k in last if k in skills), key=lambda k: -last[k])
    return tuple(RouteCandidate(k, _joint(state, last, k), skills[k].effects) for k in ranked)


def _joint(state: _Reading, last: dict[str, float] | None, name: str) -> float | None:
    if state.prefix is None or last is None or name not in last:
        return None
    return state.prefix * last[name]


def _percent(p: float) -> str:
    return "<1%" if p < 0.01 else ">99%" if p > 0.99 else f"{p:.0%}"
