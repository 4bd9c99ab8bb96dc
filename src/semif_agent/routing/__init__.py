"""Routing at scale: strategies, evaluation, threshold tuning, and trees for flat catalogs."""

from .scoring import LeafScorer
from .strategies import STRATEGIES, RoutingStrategy, create_strategy

__all__ = ["LeafScorer", "RoutingStrategy", "STRATEGIES", "create_strategy"]
