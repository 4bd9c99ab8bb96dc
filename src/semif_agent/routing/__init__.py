"""Routing at scale: strategies, evaluation and threshold tuning over a skill tree.

The names below are imported on first use, so naming a strategy (``.names``) costs nothing.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "LeafScorer": ".scoring",
    "RoutingStrategy": ".strategies",
    "STRATEGIES": ".names",
    "create_strategy": ".strategies",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
