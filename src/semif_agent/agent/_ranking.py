"""Ranking short texts (skills, deferred tools) against a request with the SemIf engine.

With the local engine (the embedded model), a text's score is its cosine to
the request blended with BM25 over the same texts, as
:class:`semif_agent.routing.scoring.LeafScorer` scores leaves: the embedding
catches paraphrases, the keywords what a small model misses. The texts are
embedded once per index (and cached on disk by the engine). Without the
model, or with ``engine="lexical"``, BM25 alone ranks.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from ..engine.decisions import Option
from ..engine.lexical import LexicalEngine
from ..engine.local import option_text
from ..engine.registry import create_engine, local_available
from ..errors import EngineConfigError

log = logging.getLogger("semif_agent.agent")

LEXICAL_WEIGHT = 0.5


def resolve_engine(spec: Any) -> Any:
    """The engine for ``spec``: an engine as given, a name, or ``None`` (local when installed, else lexical)."""
    if spec is not None and not isinstance(spec, str):
        return spec
    name = spec or ("local" if local_available() else "lexical")
    try:
        return create_engine(name)
    except EngineConfigError as exc:
        if spec is not None and name != "local":
            raise
        log.warning("skill search falls back to the lexical engine: %s", exc)
        return LexicalEngine()


class RankIndex:
    """Texts by key, ready to rank against requests."""

    def __init__(self, items: Sequence[tuple[str, str]], engine: Any, *, lexical_weight: float = LEXICAL_WEIGHT) -> None:
        self.keys = [key for key, _ in items]
        self._options = [Option(key, text) for key, text in items]
        self._engine = engine
        self._embedder = getattr(engine, "embedder", None)
        self._lexical = LexicalEngine()
        self._weight = lexical_weight if self._embedder is not None else 0.0
        self._matrix: Any = None
        if self._embedder is not None and items:
            self._matrix = self._embedder.embed([option_text(key, text) for key, text in items])
        elif not callable(getattr(engine, "score", None)):
            raise EngineConfigError(f"engine {getattr(engine, 'name', engine)!r} cannot score options; use local or lexical")

    @property
    def engine_name(self) -> str:
        return str(getattr(self._engine, "name", "lexical"))

    def scores(self, query: str) -> dict[str, float]:
        """Every key's score for ``query`` (higher is closer)."""
        if not self.keys:
            return {}
        if self._matrix is None:
            return self._engine.score(query, self._options)
        sims = self._matrix @ self._embedder.embed([query])[0]
        keywords = self._lexical.score(query, self._options) if self._weight else {}
        return {key: float(sim) + self._weight * keywords.get(key, 0.0) for key, sim in zip(self.keys, sims)}

    def rank(self, query: str, k: int, *, minimum: float | None = None) -> list[tuple[str, float]]:
        """The ``k`` best keys for ``query``, best first (only those scoring above ``minimum`` when given)."""
        scores = self.scores(query)
        ranked = sorted(scores.items(), key=lambda item: -item[1])  # stable: ties keep the index's order
        if minimum is not None:
            ranked = [item for item in ranked if item[1] > minimum]
        return ranked[:k]
