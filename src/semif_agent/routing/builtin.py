"""The built-in routing strategies, as specs: each a factory taking :class:`~.create.StrategyInputs`, and its needs.

They are declared as entry points of the ``semif_agent.strategies`` group like a
plug-in's strategies, and built by :func:`~.create.create_strategy` the same way.

The tree walks that ask the engine at each node (``chain``, ``beam``,
``shortlist``) ask it only when it is a model that reasons over the options.
An engine that scores options by their own text (the local and lexical
engines) would compare the request with a category's summary and commit to a
branch before seeing its leaves, then cut ``none`` at its raw score: on HWU64
that routed 18% (chain) and 40% (beam, shortlist) of the requests right where
a flat cosine over the same descriptions routes 54%. With such an engine every
decision of the walk is derived from the leaves instead, as ``best_leaf``
does: a category scores its best leaf, so the best leaf anywhere decides, the
category only explains it, and ``none`` stands at the calibrated cut.
"""

from __future__ import annotations

from .create import StrategyInputs, StrategySpec
from .learned import Learned, LearnedScorer
from .scoring import LeafScorer, can_score
from .strategies import Beam, BestLeaf, Chain, RoutingStrategy, ShortlistStrategy


def _leaf_scorer(inputs: StrategyInputs, example_mode: str = "off") -> tuple[LeafScorer, float]:
    """The leaf scorer (``inputs.examples``, else ``example_mode``) and the ``none`` cut (the threshold, else its default)."""
    scorer = LeafScorer(inputs.tree, inputs.scorer, examples=inputs.examples or example_mode)
    return scorer, inputs.threshold if inputs.threshold is not None else scorer.default_threshold


def scores_by_text(inputs: StrategyInputs) -> bool:
    """Whether the engine that would decide at each node scores options by their own text (local, lexical)."""
    return can_score(inputs.engine)


def walked_by_leaves(name: str, inputs: StrategyInputs) -> RoutingStrategy:
    """The walk ``name`` with each decision derived from the leaves (``best_leaf``'s descent), under its own name."""
    walk = best_leaf(inputs)
    walk.name = name
    return walk


def chain(inputs: StrategyInputs) -> RoutingStrategy:
    """One decision per level of the tree, from the root down (derived from the leaves for a scoring engine)."""
    if scores_by_text(inputs):
        return walked_by_leaves("chain", inputs)
    return Chain(inputs.tree, inputs.engine, inputs.temperature)


def best_leaf(inputs: StrategyInputs, example_mode: str = "off") -> BestLeaf:
    """The best-scoring leaf of the whole tree, or none under the cut."""
    scorer, cut = _leaf_scorer(inputs, example_mode)
    return BestLeaf(inputs.tree, inputs.engine, scorer, cut, inputs.temperature)


def examples(inputs: StrategyInputs) -> RoutingStrategy:
    """``best_leaf`` with each leaf standing as the centroid of its description and example requests."""
    return best_leaf(inputs, example_mode="centroid")


def beam(inputs: StrategyInputs) -> RoutingStrategy:
    """Down the tree keeping the ``beam_width`` best branches by leaf score, the engine deciding inside each."""
    if scores_by_text(inputs):
        return walked_by_leaves("beam", inputs)
    scorer, cut = _leaf_scorer(inputs)
    return Beam(inputs.tree, inputs.engine, scorer, cut, inputs.temperature, width=inputs.beam_width)


def shortlist(inputs: StrategyInputs) -> RoutingStrategy:
    """The engine chooses among the ``shortlist_size`` best-scoring leaves."""
    if scores_by_text(inputs):
        return walked_by_leaves("shortlist", inputs)
    scorer, cut = _leaf_scorer(inputs)
    return ShortlistStrategy(inputs.tree, inputs.engine, scorer, cut, inputs.temperature, size=inputs.shortlist_size)


def learned(inputs: StrategyInputs) -> RoutingStrategy:
    """The workspace's trained router scores the leaves (``semif train``)."""
    assert inputs.router is not None  # a strategy that needs a router is built with one (create_strategy)
    return Learned(inputs.tree, inputs.engine, LearnedScorer(inputs.tree, inputs.scorer, inputs.router))


CHAIN = StrategySpec(chain)
BEST_LEAF = StrategySpec(best_leaf, frozenset({"scores"}))
EXAMPLES = StrategySpec(examples, frozenset({"scores"}))
BEAM = StrategySpec(beam, frozenset({"scores"}))
SHORTLIST = StrategySpec(shortlist, frozenset({"scores"}))
LEARNED = StrategySpec(learned, frozenset({"embeddings", "router"}))
