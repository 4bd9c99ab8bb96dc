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

A skill shipped by several collections is one skill: leaves with the same
name (as their SKILL.md writes it) and the same description are shown once,
where the most probable of them ranks, with the others listed as its ``copies``
(:meth:`~semif_agent.routing.scoring.LeafIndex.copy_groups`), so repeats never
take the places of other skills. The group is shown as its copy of highest
precedence, the one the tree gave the plain name (the workspace's own folder
before a nested or hidden collection, :mod:`semif_agent.tree.leaf_ids`),
whatever the others' evidence: a copy dropped in a vendor folder that claims
to be a trusted skill, with a body written to rank better, never has its
folder shown first or its body loaded under the name a client picks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..engine.base import Engine
from ..engine.decisions import NONE_ID
from ..routing.create import create_strategy
from ..routing.learned import Learned
from ..routing.scoring import top_indexes
from ..routing.strategies import first_in_precedence
from ..tree.tree import SkillTree


@dataclass(frozen=True)
class Ranked:
    """The ``k`` best leaves with their route probabilities and raw scores, and ``none``'s."""

    names: list[str]
    probabilities: list[float]
    scores: list[float]
    none_probability: float
    none_score: float
    copies: list[tuple[str, ...]] = field(default_factory=list)  # each leaf's copies, the same skill elsewhere

    @property
    def best(self) -> str:
        """The first leaf, or ``none`` when it is at least as probable (or there is no leaf)."""
        if not self.names or self.none_probability >= self.probabilities[0]:
            return NONE_ID
        return self.names[0]

    def top(self, k: int) -> Ranked:
        """The ``k`` first leaves of this ranking, ``none``'s the same."""
        return Ranked(
            self.names[:k],
            self.probabilities[:k],
            self.scores[:k],
            self.none_probability,
            self.none_score,
            self.copies[:k],
        )

    def copies_of(self, name: str) -> tuple[str, ...]:
        """The leaves that are ``name``'s skill shipped elsewhere, shown as ``name`` (empty: none)."""
        return self.copies[self.names.index(name)] if self.copies else ()


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
    groups = index.copy_groups()
    # enough leaves that, with every copy set aside, ``k`` distinct skills remain
    order = top_indexes(probabilities, k + sum(len(members) - 1 for members in groups.values()), index.numpy)
    shown: list[int] = []
    seen: set[int] = set()
    for i in order:
        group = index.copy_of(i)
        if group in seen:
            continue
        seen.add(group)
        shown.append(i)
        if len(shown) == k:
            break
    members = [groups.get(index.copy_of(i), [i]) for i in shown]
    firsts = [first_in_precedence(index.names, group) for group in members]
    return Ranked(
        names=[index.names[first] for first in firsts],
        probabilities=[float(probabilities[i]) for i in shown],
        scores=[float(leaf_scores[i]) for i in shown],
        none_probability=float(none_probability),
        none_score=float(none),
        copies=[tuple(index.names[j] for j in group if j != first) for group, first in zip(members, firsts)],
    )
