"""Routing at scale: strategies, evaluation and threshold tuning over a skill tree.

The names below are imported on first use, so naming a strategy (``.names``) costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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

if TYPE_CHECKING:  # what a type checker sees: the same names, from the same modules
    from .create import StrategyInputs as StrategyInputs
    from .create import StrategySpec as StrategySpec
    from .create import create_strategy as create_strategy
    from .create import strategy_spec as strategy_spec
    from .names import STRATEGIES as STRATEGIES
    from .names import strategy_names as strategy_names
    from .scoring import LeafScorer as LeafScorer
    from .strategies import RoutingStrategy as RoutingStrategy
else:  # at run time each name is imported on first use
    __getattr__, __dir__ = lazy_namespace(__name__, _EXPORTS, globals())
