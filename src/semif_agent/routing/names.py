"""The names of the routing strategies and tuning measures (importable without loading them: the command line lists them)."""

from .._plugins import PluginGroup
from ..errors import EngineConfigError

# What `semif eval --tune --measure NAME` maximises: NAME -> its metric in the report.
MEASURES = {"accuracy": "accuracy", "balanced": "balanced_accuracy", "leaf": "leaf_accuracy"}

# name -> "module:attribute" of its StrategySpec; the same table as
# pyproject.toml's [project.entry-points."semif_agent.strategies"].
BUILTIN_STRATEGIES = {
    "chain": "semif_agent.routing.builtin:CHAIN",
    "best_leaf": "semif_agent.routing.builtin:BEST_LEAF",
    "beam": "semif_agent.routing.builtin:BEAM",
    "shortlist": "semif_agent.routing.builtin:SHORTLIST",
    "examples": "semif_agent.routing.builtin:EXAMPLES",
    "learned": "semif_agent.routing.builtin:LEARNED",
}
STRATEGIES = tuple(BUILTIN_STRATEGIES)
"""The built-in strategies, in the order they are listed and measured."""

STRATEGY_PLUGINS = PluginGroup("semif_agent.strategies", "routing strategy", BUILTIN_STRATEGIES, EngineConfigError)


def strategy_names() -> list[str]:
    """Every strategy :func:`~.create.create_strategy` knows: the built-in ones, then the plug-ins' (none is imported)."""
    known = STRATEGY_PLUGINS.names()
    return [n for n in STRATEGIES if n in known] + [n for n in known if n not in STRATEGIES]
