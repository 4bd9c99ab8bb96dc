"""The engine protocol and the shared machinery engines build on."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..errors import ArgumentTypeError, DecisionError
from .decisions import NONE_ID, DecisionRequest, DecisionResult, Option, softmax

if TYPE_CHECKING:
    from .._arrays import Vectors


@runtime_checkable
class Engine(Protocol):
    """Anything that answers SemIf decisions.

    ``call`` must return a :class:`DecisionResult` whose ``selected`` is one of
    the request's option ids.
    """

    @property
    def name(self) -> str: ...  # read-only: a wrapper forwards its engine's

    @property
    def model(self) -> str | None: ...

    def call(self, request: DecisionRequest) -> DecisionResult: ...


@runtime_checkable
class Embeds(Protocol):
    """An engine that can embed texts (the local engine can): one unit vector per text, as the rows of an array."""

    def embed(self, texts: Sequence[str]) -> Vectors: ...


def embedding_function(engine: object) -> Callable[[Sequence[str]], Vectors] | None:
    """``engine.embed`` when ``engine`` can embed texts (:class:`Embeds`), else None."""
    return engine.embed if isinstance(engine, Embeds) else None


def check_engine(engine: object) -> None:
    """Refuse, with an :class:`~semif_agent.errors.ArgumentTypeError`, what has no ``call(request)``."""
    if not callable(getattr(engine, "call", None)):
        raise ArgumentTypeError(f"an engine answers decisions with call(request); {type(engine).__name__} has no call")


class BaseEngine:
    """Common ground for engines: timing, answer checking, and an async face.

    Subclasses implement :meth:`_decide`. ``acall`` runs ``call`` in a worker
    thread so the event loop never blocks on a model; engines with a native
    async path override ``acall`` and make ``call`` the thin wrapper instead.
    """

    name = "base"
    model: str | None = None

    def call(self, request: DecisionRequest) -> DecisionResult:
        start = time.perf_counter()
        result = self._decide(request)
        return finish(self, request, result, start)

    async def acall(self, request: DecisionRequest) -> DecisionResult:
        return await asyncio.to_thread(self.call, request)

    def _decide(self, request: DecisionRequest) -> DecisionResult:  # pragma: no cover
        raise NotImplementedError

    def __repr__(self) -> str:
        model = f" model={self.model!r}" if self.model else ""
        return f"<{type(self).__name__} {self.name!r}{model}>"


def finish(engine: Engine, request: DecisionRequest, result: DecisionResult, start: float) -> DecisionResult:
    """Check ``result`` answers ``request`` and stamp engine, model and latency."""
    if result.selected not in request.option_ids:
        raise DecisionError(
            f"engine {engine.name!r} answered {result.selected!r}, which is not one of the "
            f"offered options ({', '.join(request.option_ids)})"
        )
    return DecisionResult(
        selected=result.selected,
        scores=result.scores,
        probabilities=result.probabilities,
        engine=result.engine or engine.name,
        model=result.model if result.model is not None else engine.model,
        latency_ms=(time.perf_counter() - start) * 1000.0,
        usage=result.usage,
        note=result.note,
    )


class ThresholdEngine(BaseEngine):
    """An engine that scores each option and keeps the best one.

    The explicit ``none`` option is never scored on its text: its score is the
    engine's ``threshold``, so ``none`` wins exactly when no real option scores
    above it. Without a ``none`` option the best option wins, unless nothing
    scored at all, which is a :class:`DecisionError`.
    """

    threshold: float = 0.0
    temperature: float | None = None

    def _score(self, request: DecisionRequest) -> dict[str, float]:  # pragma: no cover
        raise NotImplementedError

    def score(self, state: str, options: list[Option]) -> dict[str, float]:
        """The raw score of every option for ``state``, with no choice made (for rankers)."""
        return self._score(DecisionRequest(state, "score", options)) if options else {}

    def _decide(self, request: DecisionRequest) -> DecisionResult:
        real = [o for o in request.options if o.id != NONE_ID]
        scores = self._score(DecisionRequest(request.state, request.question, real)) if real else {}
        if request.has_none:
            scores[NONE_ID] = self.threshold
        if not scores:
            raise DecisionError("no options to choose from")
        selected = max(scores, key=lambda k: (scores[k], k == NONE_ID))
        if not request.has_none and not any(v > 0 for v in scores.values()) and len(scores) > 1:
            raise DecisionError(
                f"engine {self.name!r} found nothing in the state that relates to any option "
                f"of {request.question!r}, and the decision offers no 'none' option"
            )
        probabilities = softmax(scores, self.temperature) if self.temperature else None
        return DecisionResult(selected=selected, scores=scores, probabilities=probabilities)


async def decide(engine: Engine, request: DecisionRequest) -> DecisionResult:
    """Ask ``engine`` without blocking the event loop (native ``acall`` when it has one)."""
    native = getattr(engine, "acall", None)
    if native is not None:
        answer: DecisionResult = await native(request)
        return answer
    return await asyncio.to_thread(engine.call, request)
