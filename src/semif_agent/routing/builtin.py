"""The built-in routing strategies, as specs: each a factory taking :class:`~.create.StrategyInputs`, and its needs.

They are declared as entry points of the ``semif_agent.strategies`` group like a
plug-in's strategies, and built by :func:`~.create.create_strategy` the same way.
"""

from __future__ import annotations

from .create import StrategyInputs, StrategySpec
from .learned import Learned, LearnedScorer
from .scoring import LeafScorer
from .strategies import Beam, BestLeaf, Chain, RoutingStrategy, Shortlist


def _leaf_scorer(inputs: StrategyInputs, example_mode: str = "off") -> tuple[LeafScorer, float]:
    """The leaf scorer (``inputs.examples``, else ``example_mode``) and the ``none`` cut (the threshold, else its default)."""
    scorer = LeafScorer(inputs.tree, inputs.scorer, examples=inputs.examples or example_mode)
    return scorer, inputs.threshold if inputs.threshold is not None else scorer.default_threshold


def chain(inputs: StrategyInputs) -> RoutingStrategy:
    """One decision per level of the tree, from the root down."""
    return Chain(inputs.tree, inputs.engine, inputs.temperature)


def best_leaf(inputs: StrategyInputs, example_mode: str = "off") -> RoutingStrategy:
    """The best-scoring leaf of the whole tree, or none under the cut."""
    scorer, cut = _leaf_scorer(inputs, example_mode)
    return BestLeaf(inputs.tree, inputs.engine, scorer, cut, inputs.temperature)


def examples(inputs: StrategyInputs) -> RoutingStrategy:
    """``best_leaf`` with each leaf standing as the centroid of its description and example requests."""
    return best_leaf(inputs, example_mode="centroid")


def beam(inputs: StrategyInputs) -> RoutingStrategy:
    """Down the tree keeping the ``beam_width`` best branches by leaf score."""
    scorer, cut = _leaf_scorer(inputs)
    return Beam(inputs.tree, inputs.engine, scorer, cut, inputs.temperature, width=inputs.beam_width)


def shortlist(inputs: StrategyInputs) -> RoutingStrategy:
    """The engine chooses among the ``shortlist_size`` best-scoring leaves."""
    scorer, cut = _leaf_scorer(inputs)
    return Shortlist(inputs.tree, inputs.engine, scorer, cut, inputs.temperature, size=inputs.shortlist_size)


def learned(inputs: StrategyInputs) -> RoutingStrategy:
    """The workspace's trained router scores the leaves (``semif train``)."""
    return Learned(inputs.tree, inputs.engine, LearnedScorer(inputs.tree, inputs.scorer, inputs.router))


CHAIN = StrategySpec(chain)
BEST_LEAF = StrategySpec(best_leaf, frozenset({"scores"}))
EXAMPLES = StrategySpec(examples, frozenset({"scores"}))
BEAM = StrategySpec(beam, frozenset({"scores"}))
SHORTLIST = StrategySpec(shortlist, frozenset({"scores"}))
LEARNED = StrategySpec(learned, frozenset({"embeddings", "router"}))
