"""Building a routing strategy by name: the one place that knows every strategy, the learned one included."""

from __future__ import annotations

from typing import Any

from ..engine.base import Engine
from ..errors import EngineConfigError, UserError
from ..tree.router import Router
from ..tree.tree import SkillTree
from .learned import Learned, LearnedScorer
from .names import STRATEGIES
from .scoring import LeafScorer, can_score
from .strategies import SHORTLIST_SIZE, Beam, BestLeaf, RoutingStrategy, Shortlist


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
    router: Any = None,
) -> RoutingStrategy:
    """Build the strategy ``name`` over ``tree``; ``engine`` makes its decisions.

    Leaf scoring uses ``scorer_engine`` (default: ``engine`` when it can score
    options, else the local engine). ``temperature`` turns the derived
    decisions' scores into probabilities (default: the scorer engine's).
    ``learned`` needs ``router``, a :class:`~.learned.LearnedRouter` (``semif train``).
    """
    if name == "chain":
        return Router(tree, engine)
    if name not in STRATEGIES:
        raise EngineConfigError(f"unknown routing strategy {name!r} (known: {', '.join(STRATEGIES)})")
    scorer_engine = scorer_engine or (engine if can_score(engine) else None)
    if scorer_engine is None or (name == "learned" and scorer_engine.name != "local"):
        from ..engine.registry import create_engine

        scorer_engine = create_engine("local")
    if name == "learned":
        if router is None:
            raise UserError("this workspace has no learned router yet: teach it with semif train")
        return Learned(tree, engine, LearnedScorer(tree, scorer_engine, router))
    mode = examples or ("centroid" if name == "examples" else "off")
    scorer = LeafScorer(tree, scorer_engine, examples=mode)
    cut = threshold if threshold is not None else scorer.default_threshold
    if name in ("best_leaf", "examples"):
        return BestLeaf(tree, engine, scorer, cut, temperature)
    if name == "beam":
        return Beam(tree, engine, scorer, cut, temperature, width=beam_width)
    return Shortlist(tree, engine, scorer, cut, temperature, size=shortlist_size)
