"""Routing at scale: strategies, evaluation and threshold tuning over a skill tree.

The names below are imported on first use, so naming a strategy (``.names``) costs nothing.
"""

from __future__ import annotations

from .._lazy import lazy_namespace

_EXPORTS = {
    "LeafScorer": ".scoring",
    "RoutingStrategy": ".strategies",
    "STRATEGIES": ".names",
    "StrategyInputs": ".create",
    "StrategySpec": ".create",
    "create_strategy": ".create",
    "strategy_names": ".names",
    "strategy_spec": ".create",
}
__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_namespace(__name__, _EXPORTS, globals())
