"""Routing strategies: different ways to walk the tree to a leaf, compared by ``semif eval``.

- ``chain``: the plain chain; each level is decided on the categories' own summaries.
- ``best_leaf``: each category is scored by its best leaf (one embedding of the request
  against every leaf), then the walk takes the best-scoring branch; ``none`` when even
  the best leaf is below the threshold.
- ``beam``: the top categories by best leaf are tried in turn, each with the engine's own
  decision among its children; a ``none`` there backs off to the next category.
- ``shortlist``: the leaves are ranked by the local scorer and only the top 15 (plus
  ``none``) go to the engine, so no model decision ever sees more than 16 options.
- ``examples``: ``best_leaf`` with each skill's example requests folded into its
  vector (centroid; ``examples="nn"`` for nearest neighbour).

``chain``, ``beam`` and ``shortlist`` ask the engine when it is a model; the
built-in factories walk as ``best_leaf`` for an engine that scores options by
their own text (the local and lexical engines: see :mod:`.builtin`).

Leaf scores from the local engine blend cosine with BM25 (see :mod:`.scoring`).
The leaf-aware strategies' derived decisions give each option the probability
that the route ends under it: a softmax over every leaf and ``none`` at the
tree's calibrated temperature (:mod:`.calibration`, unless one is given;
without examples to fit one, each request's temperature scales with its own
spread of leaf scores), summed over the option's leaves; ``none`` holds the rest (the leaves of other
branches too), so the chosen skill's probability is the route's.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any, Protocol

from ..engine.base import Engine, decide
from ..engine.decisions import NONE_ID, DecisionRequest, DecisionResult, Option
from ..errors import EngineConfigError
from ..tree.leaf_ids import SEPARATOR
from ..tree.router import Route, RoutedDecision, TreeWalker, question_at
from ..tree.tree import NONE_CATEGORY, NONE_SKILL, SkillTree
from .calibration import none_route_score
from .scoring import LeafIndex, LeafScorer, can_score, top_indexes

SHORTLIST_QUESTION = "Which skill should handle this request?"
MAX_OPTIONS = 16  # what a model decision may show, ``none`` included
SHORTLIST_SIZE = MAX_OPTIONS - 1


DERIVED_NOTE = "scored from the leaves"  # the note of a decision derived from the leaves' scores
BACKOFF_NOTE = "backoff after none"  # the note of ``beam``'s derived decision taken again after a branch found none


def derived_from_leaves(result: DecisionResult) -> bool:
    """Whether ``result`` was derived from the leaves' scores (it takes the branch of the best leaf), not an
    engine's own decision."""
    return result.note in (DERIVED_NOTE, BACKOFF_NOTE)


def best_option(scores: dict[str, float]) -> str:
    """The option a derived decision selects: the best score, ``none`` on a tie."""
    return max(scores, key=lambda k: (scores[k], k == NONE_ID))


COPY_MARGIN = 1e-6  # how far under its group's best a copy other than the group's first is scored at most


def first_in_precedence(names: list[str], group: list[int]) -> int:
    """The copy a group of copies of one skill stands for: the one holding the plain name (the tree gave it the name
    before the others, which it told apart with ``~`` and their folder: :mod:`~semif_agent.tree.leaf_ids`), else
    the first of them."""
    return min(group, key=lambda position: (SEPARATOR in names[position], position))


def as_one_skill(index: LeafIndex, leaf_scores: Any) -> Any:
    """``leaf_scores`` with each skill shipped several times scored as one
    (:meth:`~.scoring.LeafIndex.copy_groups`): a group's scores are handed
    to its copies in precedence order, so its copy of highest precedence
    (:func:`first_in_precedence`) holds the best, the others a little under
    it (the scores' spread, which sets the softmax temperature, stays the
    same). A route ends at the copy ``find`` shows, whatever the others'
    evidence: a copy in a vendor folder that claims a trusted skill's name
    and description, with a body written to score better, is never the one
    a run follows."""
    groups = index.copy_groups()
    if not groups:
        return leaf_scores
    scores = leaf_scores.copy()
    for members in groups.values():
        first = first_in_precedence(index.names, members)
        order = [first, *(position for position in members if position != first)]
        values = sorted((leaf_scores[position] for position in members), reverse=True)
        best = values[0]
        scores[first] = best
        for position, value in zip(order[1:], values[1:]):
            scores[position] = min(value, best - COPY_MARGIN)
    return scores


class RoutingStrategy(Protocol):
    name: str

    async def aroute(self, text: str) -> Route: ...


class _LeafAware:
    """Shared ground: a leaf scorer, and each offered option's score derived from the leaves'."""

    def __init__(
        self, tree: SkillTree, engine: Engine, scorer: LeafScorer, threshold: float, temperature: float | None = None
    ) -> None:
        self.tree = tree
        self.engine = engine
        self.scorer = scorer
        self.threshold = threshold
        self.given_temperature = temperature  # None: the tree's calibrated one

    def temperature_for(self, index: LeafIndex) -> float:
        """The softmax temperature over ``index``'s leaves: the one given, else the tree's calibrated one
        (without examples, each request's own is scaled by its scores' spread: see :meth:`route_probabilities`)."""
        return self.given_temperature or self.scorer.calibration(index).temperature

    @property
    def temperature(self) -> float:
        """The softmax temperature over the tree as it is now (see :meth:`temperature_for`)."""
        return self.temperature_for(self.scorer.current())

    def route_probabilities(self, index: LeafIndex, leaf_scores: Any, none: float) -> tuple[Any, float]:
        """Each leaf's probability of being the route's end, and ``none``'s: one softmax over all of them."""
        np = index.numpy
        temperature = self.given_temperature or self.scorer.calibration(index).temperature_of(leaf_scores, np)
        if np is not None and len(leaf_scores):
            top = max(float(leaf_scores.max()), none)
            weights = np.exp((leaf_scores - top) / temperature)
        else:
            top = max([*leaf_scores, none])
            weights = [math.exp((v - top) / temperature) for v in leaf_scores]
        none_weight = math.exp((none - top) / temperature)
        total = float(sum(weights)) + none_weight
        if np is not None and len(leaf_scores):
            return weights / total, none_weight / total
        return [w / total for w in weights], none_weight / total

    def leaf_scores(self, text: str, index: LeafIndex) -> tuple[Any, float]:
        """Every leaf's score for ``text`` (over ``index``) and ``none``'s: the threshold.

        The blend (:meth:`.LeafScorer.score_array`), which the ``none`` cut,
        the temperature and the act gate were measured on; a client's
        ``find`` ranks by the fused scores (:meth:`.LeafScorer.find_array`),
        so the two can differ on the first skill. Walking by find's scores
        was measured twice, on the starter beside 1,376 to 1,915 real SKILL.md
        skills: at BM25 weight 1 it sent 18 of 89 acted runs wrong; at a
        quarter, with the ``none`` cut and temperature fitted on the fused
        scores (or the blend taken over them), run and find agreed on 114 of
        120 real requests instead of 78, but the starter's own requests lost
        one right act in each phrasing set and out-of-scope requests were
        handed SKILL.md instructions. They stay apart until a score holds both.
        """
        return as_one_skill(index, self.scorer.score_array(text, index)), self.threshold

    def node_scores(
        self, index: LeafIndex, leaf_scores: Any, node: str, none: float | None = None
    ) -> tuple[list[Option], dict[str, float]]:
        """The options at ``node`` and their scores: a skill's own, a category's best leaf's; ``none`` the threshold.

        ``leaf_scores`` come from :meth:`leaf_scores` over ``index`` (``none``: its ``none`` score).
        """
        table = index.node(node)
        return list(table.options), dict(
            zip(table.ids, table.scores(leaf_scores, self.threshold if none is None else none))
        )

    def node_probabilities(self, index: LeafIndex, node: str, routes: tuple[Any, float]) -> dict[str, float]:
        """The probability of each option at ``node`` from :meth:`route_probabilities`' ``routes``.

        An option's is the probability that the route ends under it; ``none``'s
        the rest (no skill, or one in another branch), so that they add up to 1.
        """
        table = index.node(node)
        found = dict(zip(table.ids, table.masses(*routes)))
        if NONE_ID in found:
            found[NONE_ID] = max(0.0, 1.0 - sum(v for k, v in found.items() if k != NONE_ID))
        return found

    def calibrate(
        self,
        text: str,
        decisions: list[RoutedDecision],
        start: int = 0,
        scored: tuple[LeafIndex, Any, float] | None = None,
    ) -> None:
        """Give the engine's ``decisions[start:]`` (one path down the tree) the calibrated leaves' probabilities.

        An engine decision's softmax at its fixed temperature says how its
        options compare, not how often the route is right. So each option gets
        the probability that the route ends under it, from the softmax over
        every leaf and ``none`` at the tree's calibration (a skill its own, a
        category its leaves' sum, ``none`` the rest), as the derived decisions
        do. A route the engine ended with ``none`` has ``none`` scored by how
        terse the tree's descriptions are (:func:`.calibration.none_route_score`), and its last ``none`` the
        probability that no skill serves the request (not the rest of the
        leaves, which counts other branches' too). What each decision selected
        is kept. With a temperature given, the engine's own probabilities stay. ``scored``: the index, leaf
        scores and ``none`` score the caller already has for ``text`` (:meth:`leaf_scores`).
        """
        if self.given_temperature or start >= len(decisions):
            return
        if scored is None:
            index = self.scorer.current()
            leaf_scores, none = self.leaf_scores(text, index)
        else:
            index, leaf_scores, none = scored
        stopped = decisions[-1].result.selected == NONE_ID
        none_score = none_route_score(index.words_per_leaf) if stopped else none
        leaves, none_probability = self.route_probabilities(index, leaf_scores, none_score)
        for at in range(start, len(decisions)):
            step = decisions[at]
            masses = self._option_masses(index, step, decisions[at - 1].result.selected if at else "", leaves)
            if stopped and at == len(decisions) - 1:
                masses[NONE_ID] = float(none_probability)
            elif NONE_ID in masses:
                masses[NONE_ID] = max(0.0, 1.0 - sum(v for k, v in masses.items() if k != NONE_ID))
            result = dataclasses.replace(step.result, probabilities=masses)
            decisions[at] = dataclasses.replace(step, result=result, whole=True)

    def _option_masses(self, index: LeafIndex, step: RoutedDecision, node: str, leaves: Any) -> dict[str, float]:
        """Each option's share of the leaves' probabilities (a skill its own, a category its leaves' sum) for a
        decision asked at ``node`` (``none``: 0, set by the caller)."""
        ids = tuple(o.id for o in step.request.options)
        table = index.node(node) if node in self.tree.categories or not node else None
        if table is not None and table.ids == ids:
            return dict(zip(ids, (float(v) for v in table.masses(leaves, 0.0))))
        masses: dict[str, float] = {}
        for option_id in ids:
            if option_id in index.position:
                masses[option_id] = float(leaves[index.position[option_id]])
            elif option_id == NONE_ID:
                masses[option_id] = 0.0
            else:
                under = (index.position.get(s.name) for s in self.tree.leaves_under(option_id))
                masses[option_id] = float(sum(leaves[i] for i in under if i is not None))
        return masses

    def derived(
        self,
        text: str,
        node: str,
        options: list[Option],
        scores: dict[str, float],
        note: str,
        probabilities: dict[str, float],
    ) -> RoutedDecision:
        selected = best_option(scores)
        result = DecisionResult(
            selected=selected,
            scores=scores,
            probabilities={k: probabilities.get(k, 0.0) for k in scores},
            engine=self.scorer.engine.name,
            model=self.scorer.engine.model,
            note=note,
        )
        asked = DecisionRequest(state=text, question=question_at(node), options=options)
        level = "skill" if selected in self.tree.skills else "category"
        return RoutedDecision(level, asked, result, whole=True)


class BestLeaf(_LeafAware):
    name = "best_leaf"

    def destination(self, text: str) -> str | None:
        """The skill :meth:`aroute` ends at for ``text`` (``None``: no skill), by the same descent without the
        decisions' probabilities and records (what a replay of thousands of requests needs)."""
        index = self.scorer.current()
        leaf_scores, none = self.leaf_scores(text, index)
        return self._descend(index, leaf_scores, none, lambda node, options, scores: best_option(scores))[0]

    async def aroute(self, text: str) -> Route:
        index = self.scorer.current()
        leaf_scores, none = self.leaf_scores(text, index)
        routes = self.route_probabilities(index, leaf_scores, none)
        route = Route(skill=None)

        def decide(node: str, options: list[Option], scores: dict[str, float]) -> str:
            probabilities = self.node_probabilities(index, node, routes)
            step = self.derived(text, node, options, scores, DERIVED_NOTE, probabilities)
            route.decisions.append(step)
            return step.result.selected

        skill, route.reason = self._descend(index, leaf_scores, none, decide)
        route.skill = self.tree.skills[skill] if skill is not None else None
        return route

    def _descend(
        self,
        index: LeafIndex,
        leaf_scores: Any,
        none: float,
        choose: Callable[[str, list[Option], dict[str, float]], str],
    ) -> tuple[str | None, str]:
        """From the root, the option ``choose`` picks at each node (given the node, its options and their
        scores) until a skill or ``none``: the skill (``None``: no skill), and why there is none."""
        node = ""
        while True:
            options, scores = self.node_scores(index, leaf_scores, node, none)
            if len(options) == 1:
                return None, "the skill tree has no skills"
            chosen = choose(node, options, scores)
            if chosen == NONE_ID:
                return None, "no skill scores above the threshold"
            if chosen in self.tree.skills:
                return chosen, ""
            node = chosen


class Beam(_LeafAware):
    name = "beam"

    def __init__(self, *args, width: int = 3, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.width = width

    async def aroute(self, text: str) -> Route:
        index = self.scorer.current()
        leaf_scores, none = self.leaf_scores(text, index)
        options, top = self.node_scores(index, leaf_scores, "", none)
        probabilities = self.node_probabilities(index, "", self.route_probabilities(index, leaf_scores, none))
        route = Route(skill=None)
        remaining = [o for o in options if o.id != NONE_ID]
        for attempt in range(self.width):
            offered = remaining + [NONE_CATEGORY]
            step = self.derived(
                text,
                "",
                offered,
                {o.id: top[o.id] for o in offered},
                DERIVED_NOTE if attempt == 0 else BACKOFF_NOTE,
                probabilities,
            )
            route.decisions.append(step)
            chosen = step.result.selected
            if chosen == NONE_ID:
                self.calibrate(text, route.decisions, len(route.decisions) - 1, (index, leaf_scores, none))
                route.reason = "no category's best leaf scores above the threshold"
                return route
            if chosen in self.tree.skills:
                route.skill = self.tree.skills[chosen]
                return route
            inner = await _chain_from(self.tree, self.engine, text, chosen)
            start = len(route.decisions)
            route.decisions.extend(inner.decisions)
            self.calibrate(text, route.decisions, start, (index, leaf_scores, none))
            if inner.skill is not None:
                route.skill = inner.skill
                return route
            remaining = [o for o in remaining if o.id != chosen]
            if not remaining:
                break
        route.reason = f"no skill fits in the top {self.width} categories"
        return route


class ShortlistStrategy(_LeafAware):
    """The ``shortlist`` strategy: the ``size`` best-scored leaves, then one decision among them and ``none``."""

    name = "shortlist"

    def __init__(self, *args, size: int = SHORTLIST_SIZE, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if not 1 <= size <= SHORTLIST_SIZE:
            raise EngineConfigError(f"a shortlist holds 1 to {SHORTLIST_SIZE} skills (plus none), not {size}")
        self.size = size

    async def aroute(self, text: str) -> Route:
        index = self.scorer.current()
        leaf_scores, none = self.leaf_scores(text, index)
        top = [index.names[i] for i in top_indexes(leaf_scores, self.size, index.numpy)]
        route = Route(skill=None)
        if not top:
            route.reason = "the skill tree has no skills"
            return route
        options = [Option(n, self.tree.skills[n].description) for n in top] + [NONE_SKILL]
        asked = DecisionRequest(state=text, question=SHORTLIST_QUESTION, options=options)
        answer = await decide(self.engine, asked)
        route.decisions.append(RoutedDecision("skill", asked, answer))
        self.calibrate(text, route.decisions, scored=(index, leaf_scores, none))
        if answer.selected == NONE_ID:
            route.reason = "no shortlisted skill fits the request"
        else:
            route.skill = self.tree.skills[answer.selected]
        return route


class Chain(TreeWalker):
    """The plain chain; with an engine that scores options, its decisions get the leaves' calibrated probabilities
    (:meth:`_LeafAware.calibrate`)."""

    def __init__(self, tree: SkillTree, engine: Engine, temperature: float | None = None) -> None:
        super().__init__(tree, engine)
        self.leaves: _LeafAware | None = None
        if can_score(engine) and not temperature:
            scorer = LeafScorer(tree, engine)
            self.leaves = _LeafAware(tree, engine, scorer, scorer.default_threshold)

    async def aroute(self, text: str, *, start: str = "") -> Route:
        route = await super().aroute(text, start=start)
        if self.leaves is not None:
            self.leaves.calibrate(text, route.decisions)
        return route


async def _chain_from(tree: SkillTree, engine: Engine, text: str, node: str) -> Route:
    walker = TreeWalker(tree, engine)
    return await walker.aroute(text, start=node)
