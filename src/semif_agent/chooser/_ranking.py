"""Ranking a tree's skills for ``find``: the route probabilities of the strategy ``semif run`` routes with.

A leaf-aware strategy (``examples``, ``best_leaf``, the learned router...)
gives every leaf the probability that the route ends there, and ``none`` the
rest (:mod:`semif_agent.routing.strategies`); ``find`` shows the ``k`` most
probable. An untrained strategy ranks by the scores that find real skills
best, the cosine and BM25 fused over every leaf
(:meth:`~semif_agent.routing.scoring.LeafScorer.find_array`, in cosine units,
so the strategy's temperature and ``none`` threshold still apply); the
learned router ranks by its own logits. A strategy that walks the tree one
decision at a time (the chain, for an engine that cannot score) ranks
through the ``examples`` strategy over the same tree, scored by the local
engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..engine.base import Engine
from ..engine.decisions import NONE_ID
from ..routing.create import create_strategy
from ..routing.learned import Learned
from ..routing.scoring import top_indexes
from ..tree.tree import SkillTree


@dataclass(frozen=True)
class Ranked:
    """The ``k`` best leaves with their route probabilities and raw scores, and ``none``'s."""

    names: list[str]
    probabilities: list[float]
    scores: list[float]
    none_probability: float
    none_score: float

    @property
    def best(self) -> str:
        """The first leaf, or ``none`` when it is at least as probable (or there is no leaf)."""
        if not self.names or self.none_probability >= self.probabilities[0]:
            return NONE_ID
        return self.names[0]

    def top(self, k: int) -> Ranked:
        """The ``k`` first leaves of this ranking, ``none``'s the same."""
        return Ranked(self.names[:k], self.probabilities[:k], self.scores[:k], self.none_probability, self.none_score)


def ranking_strategy(strategy: Any, tree: SkillTree, engine: Engine) -> Any:
    """``strategy`` when it scores every leaf at once, else the ``examples`` strategy over ``tree``."""
    if all(hasattr(strategy, name) for name in ("scorer", "leaf_scores", "route_probabilities")):
        return strategy
    return create_strategy("examples", tree, engine)


def rank(strategy: Any, text: str, k: int) -> Ranked:
    """The ``k`` leaves of ``strategy``'s tree most likely to be ``text``'s route, best first."""
    index = strategy.scorer.current()
    if isinstance(strategy, Learned):
        leaf_scores, none = strategy.leaf_scores(text, index)
    else:
        leaf_scores, none = strategy.scorer.find_array(text, index), strategy.threshold
    probabilities, none_probability = strategy.route_probabilities(index, leaf_scores, none)
    order = top_indexes(probabilities, k, index.numpy)
    return Ranked(
        names=[index.names[i] for i in order],
        probabilities=[float(probabilities[i]) for i in order],
        scores=[float(leaf_scores[i]) for i in order],
        none_probability=float(none_probability),
        none_score=float(none),
    )
