"""What ``semif eval`` and ``semif train`` send to a :class:`~.pool.RayPool`, and how the answers are put together.

- Evaluation: each actor builds the strategy once (by the caller's ``make``,
  exactly as the local evaluation does) and routes its batch with
  :func:`~semif_agent.routing.evaluate.route_all`, which embeds them in one go first.
  The outcomes come back in dataset order: the same decisions as a local run
  (an embedding does not depend on the batch it was made in).
- Training: each actor embeds a batch of the training texts and scores every
  leaf for them the untrained way (:func:`~semif_agent.routing._fitting.encode`);
  the driver stacks the arrays and fits, as it would have locally.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING

from .pool import RayPool, Status, batches_of

if TYPE_CHECKING:
    import numpy as np

    from ..routing.evaluate import Example, RoutedExample
    from ..routing.scoring import LeafScorer
    from ..routing.strategies import RoutingStrategy
    from ..tree import SkillTree

    Arrays = tuple[np.ndarray, np.ndarray]

ROUTE_BATCH = 64
"""Requests per evaluation batch: one model run's worth of texts, twice over."""
ENCODE_BATCH = 256
"""Training texts per batch."""


def route_all(
    pool: RayPool,
    make: Callable[..., RoutingStrategy],
    args: tuple[object, ...],
    examples: Sequence[Example],
    *,
    batch_size: int = ROUTE_BATCH,
    progress: Callable[[Status], None] | None = None,
    stage: str = "routing",
) -> list[RoutedExample]:
    """The outcomes of routing ``examples`` with the strategy ``make(*args)`` on the cluster, in dataset order.

    ``make`` (a closure is fine: Ray pickles it by value) runs once per actor.
    Each outcome's latency includes its share of its batch's embedding time.
    """
    outcomes: list[RoutedExample] = []
    pool.map(
        partial(_call, make, args),
        _route_batch,
        batches_of(examples, batch_size),
        on_result=lambda _, part: outcomes.extend(part),
        stage=stage,
        progress=progress,
    )
    return outcomes


def encoder(
    pool: RayPool,
    tree: SkillTree,
    settings: Mapping[str, object],
    *,
    batch_size: int = ENCODE_BATCH,
    status: Callable[[Status], None] | None = None,
) -> Callable[[list[str], Callable[[str, int, int], None]], Arrays]:
    """An ``encoder`` for :func:`~semif_agent.routing.training.train` that embeds and scores on the cluster.

    ``settings`` are the local engine's (the workspace's engine settings); ``status``
    also hears the cluster's progress (the texts done, the rate, the batches sent again).
    """

    def encode(texts: list[str], tell: Callable[[str, int, int], None]) -> Arrays:
        import numpy as np

        vectors: list[np.ndarray] = []
        priors: list[np.ndarray] = []

        def take(_: int, part: Arrays) -> None:
            vectors.append(part[0])
            priors.append(part[1])

        def show(now: Status) -> None:
            tell("embedding", now.done, now.total)
            if status is not None:
                status(now)

        pool.map(
            partial(_leaf_scorer, tree, settings),
            _encode_batch,
            batches_of(texts, batch_size),
            on_result=take,
            stage="embedding",
            progress=show,
        )
        if not vectors:
            return np.zeros((0, 384), dtype=np.float32), np.zeros((0, len(tree.skills)))
        return np.concatenate(vectors), np.concatenate(priors)

    return encode


# -- what runs on the actors ------------------------------------------------------


def _call(make: Callable[..., RoutingStrategy], args: tuple[object, ...]) -> RoutingStrategy:
    return make(*args)


def _route_batch(strategy: RoutingStrategy, examples: list[Example]) -> list[RoutedExample]:
    from .._sync import run_sync
    from ..loop.act_threshold import gate_routes
    from ..routing.evaluate import route_all as route_locally

    return run_sync(route_locally(strategy, examples, on_route=gate_routes(strategy), batch_size=len(examples) or 1))


def _leaf_scorer(tree: SkillTree, settings: Mapping[str, object]) -> LeafScorer:
    from ..engine.registry import create_engine
    from ..routing.scoring import LeafScorer

    return LeafScorer(tree, create_engine("local", settings), examples="off")


def _encode_batch(scorer: LeafScorer, texts: list[str]) -> Arrays:
    from ..routing._fitting import encode

    return encode(scorer, texts)
