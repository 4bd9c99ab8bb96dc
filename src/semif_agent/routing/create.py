"""Building a routing strategy by name: its spec says what it needs, checked here, in one place, for every strategy.

A strategy is a :class:`StrategySpec`: a factory and what the factory needs
from the engine. The built-in specs (:mod:`.builtin`) and a plug-in's are
found the same way, by name, in the ``semif_agent.strategies`` entry-point
group. A plug-in's entry point names a :class:`StrategySpec`, or a bare
factory (then its ``needs`` attribute, if any, says what it needs)::

    def create(inputs: StrategyInputs) -> RoutingStrategy: ...
    create.needs = {"scores"}

The factory gets a :class:`StrategyInputs` and returns a
:class:`~.strategies.RoutingStrategy`: a ``name``, and ``async aroute(text)``
giving a :class:`~semif_agent.tree.router.Route`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..engine.base import Engine
from ..errors import ArgumentTypeError, EngineConfigError, InvalidArgumentError, UserError, check_type
from ..tree.tree import SkillTree
from .names import STRATEGIES, STRATEGY_PLUGINS, strategy_names
from .scoring import can_score
from .strategies import SHORTLIST_SIZE, RoutingStrategy

if TYPE_CHECKING:
    from .learned import LearnedHead

NEEDS = {
    "scores": "an engine that scores options",
    "embeddings": "the local engine's embeddings",
    "router": "a trained router",
}
"""What a strategy may need, and how an error names it."""


@dataclass(frozen=True)
class StrategyInputs:
    """What a strategy's factory builds it from.

    ``engine`` makes the decisions; ``scorer`` scores the leaves (an engine
    that scores options, when the strategy needs ``scores`` or ``embeddings``;
    else ``engine``). ``router`` is the workspace's trained router, or None.
    The rest are settings a strategy may use: ``threshold`` (the ``none``
    cut, None: the strategy's default), ``temperature``, ``examples`` (how a
    leaf's example requests stand in for it, None: the strategy's default),
    ``beam_width`` and ``shortlist_size``.
    """

    tree: SkillTree
    engine: Engine
    scorer: Engine
    router: LearnedHead | None = None
    threshold: float | None = None
    temperature: float | None = None
    examples: str | None = None
    beam_width: int = 3
    shortlist_size: int = SHORTLIST_SIZE


StrategyFactory = Callable[[StrategyInputs], RoutingStrategy]


@dataclass(frozen=True)
class StrategySpec:
    """A routing strategy: ``factory(inputs)`` builds it; ``needs`` (keys of :data:`NEEDS`) are met first."""

    factory: StrategyFactory
    needs: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if not callable(self.factory):
            raise ArgumentTypeError(
                f"a strategy's factory builds it from StrategyInputs; {self.factory!r} is not callable"
            )
        check_type("a strategy's needs", self.needs, (set, frozenset, list, tuple))
        unknown = sorted(set(self.needs) - NEEDS.keys())
        if unknown:
            raise InvalidArgumentError(
                f"a strategy needs {', '.join(unknown)}, which semif does not provide (known: {', '.join(NEEDS)})"
            )
        object.__setattr__(self, "needs", frozenset(self.needs))


def strategy_spec(name: str) -> StrategySpec:
    """The spec of the strategy ``name``, built in or a plug-in's (imported now)."""
    found = STRATEGY_PLUGINS.load(name)
    if isinstance(found, StrategySpec):
        return found
    with STRATEGY_PLUGINS.guard(name, passing=()):  # a bare factory: its needs, if any, are an attribute
        return StrategySpec(found, frozenset(getattr(found, "needs", ())))


def create_strategy(
    name: str,
    tree: SkillTree,
    engine: Engine,
    *,
    scorer_engine: Engine | None = None,
    threshold: float | None = None,
    temperature: float | None = None,
    examples: str | None = None,
    beam_width: int = 3,
    shortlist_size: int = SHORTLIST_SIZE,
    router: LearnedHead | None = None,
) -> RoutingStrategy:
    """Build the strategy ``name`` over ``tree``; ``engine`` makes its decisions.

    Leaf scoring uses ``scorer_engine`` (default: ``engine`` when it can score
    options, else the local engine). ``temperature`` turns the derived
    decisions' scores into probabilities (default: the scorer engine's).
    ``learned`` needs ``router``, a :class:`~.learned.LearnedHead` (``semif train``).
    """
    spec = strategy_spec(name)
    inputs = StrategyInputs(
        tree=tree,
        engine=engine,
        scorer=_scorer(name, spec.needs, engine, scorer_engine, router),
        router=router,
        threshold=threshold,
        temperature=temperature,
        examples=examples,
        beam_width=beam_width,
        shortlist_size=shortlist_size,
    )
    with STRATEGY_PLUGINS.guard(name):
        return spec.factory(inputs)


def _scorer(
    name: str, needs: Collection[str], engine: Engine, scorer_engine: Engine | None, router: LearnedHead | None
) -> Engine:
    """Meet ``needs``: refuse what cannot be met, and return the engine that scores leaves."""
    if "router" in needs and router is None:
        raise UserError(f"strategy {name!r} needs {NEEDS['router']}: teach it with semif train")
    if "scores" not in needs and "embeddings" not in needs:
        return engine
    scorer = scorer_engine or (engine if can_score(engine) else None)
    if scorer is not None and ("embeddings" not in needs or scorer.name == "local"):
        return scorer
    from ..engine.registry import create_engine, local_available

    if not local_available():
        need = NEEDS["embeddings" if "embeddings" in needs else "scores"]
        raise EngineConfigError(
            f"strategy {name!r} needs {need}; engine {engine.name!r} cannot, and the local engine is not "
            "installed: pip install 'semif-agent[local]'"
        )
    return create_engine("local")


def usable_strategies(router: LearnedHead | None = None) -> list[str]:
    """The strategies that can be built here, in order: every one whose plug-in loads and whose router, if it needs one, is given."""
    usable = []
    for name in strategy_names():
        try:
            spec = strategy_spec(name)
        except EngineConfigError:
            if name in STRATEGIES:
                raise
            continue  # a plug-in that failed to load: said once, on stderr
        if "router" not in spec.needs or router is not None:
            usable.append(name)
    return usable
