"""Score every leaf of a tree against a request at once, for the leaf-aware strategies.

With the local engine, leaves are embedded once per tree (and cached on disk
by the engine), so scoring a request against a thousand leaves is one
embedding and one matrix product. A leaf's example requests, when it has
some, can stand in for it: nearest neighbour (the best example or the
description) or centroid (the mean of the description and the examples).

With the local engine the cosine is blended with BM25 over the same texts
(``lexical_weight``): the embedding catches paraphrases, the keywords catch
what a small model misses ("todo:", "make a note"). Other engines that can
score options (``lexical``) are used as they are.
"""

from __future__ import annotations

from typing import Any

from ..engine.base import Engine
from ..engine.decisions import Option
from ..engine.lexical import LexicalEngine
from ..engine.local import LocalEngine, option_text
from ..errors import EngineConfigError
from ..tree.tree import SkillTree

EXAMPLE_MODES = ("off", "nn", "centroid")
DEFAULT_LEXICAL_WEIGHT = 0.5
# The default ``none`` threshold for blended scores (they run higher than bare
# cosines): what `semif eval --tune` picked on the validation half of the
# starter workspace's request set. Tune your own tree with `semif eval --tune`.
BLENDED_THRESHOLD = 0.35


class LeafScorer:
    """``scores(text)`` -> {leaf name: similarity} over every skill of ``tree``."""

    def __init__(
        self, tree: SkillTree, engine: Engine, *, examples: str = "off", lexical_weight: float = DEFAULT_LEXICAL_WEIGHT
    ) -> None:
        if examples not in EXAMPLE_MODES:
            raise EngineConfigError(f"examples must be one of {', '.join(EXAMPLE_MODES)}, not {examples!r}")
        if not callable(getattr(engine, "score", None)):
            raise EngineConfigError(f"engine {engine.name!r} cannot score options; leaf scoring needs local or lexical")
        self.tree = tree
        self.engine = engine
        self.examples = examples
        self.lexical_weight = lexical_weight if isinstance(engine, LocalEngine) else 0.0
        self._lexical = LexicalEngine()
        self.names = list(tree.skills)
        self._matrix: Any = None
        self._owners: Any = None

    @property
    def embedded(self) -> bool:
        return isinstance(self.engine, LocalEngine)

    @property
    def default_threshold(self) -> float:
        """Where ``none`` starts when no threshold was tuned: the engine's own, or the blended one."""
        if self.embedded and self.lexical_weight:
            return BLENDED_THRESHOLD
        return float(getattr(self.engine, "threshold", 0.0))

    def scores(self, text: str) -> dict[str, float]:
        if not self.names:
            return {}
        options = [Option(s.name, _with_examples(s.description, s.examples, self.examples)) for s in self.tree.skills.values()]
        if not self.embedded:
            return self.engine.score(text, options)
        np = _numpy()
        matrix, owners = self._index()
        query = self.engine.embedder.embed([text])[0]
        sims = matrix @ query
        best = np.full(len(self.names), -1.0, dtype=np.float32)
        np.maximum.at(best, owners, sims)
        keywords = self._lexical.score(text, options) if self.lexical_weight else {}
        return {name: float(best[i]) + self.lexical_weight * keywords.get(name, 0.0) for i, name in enumerate(self.names)}

    def _index(self) -> tuple[Any, Any]:
        """Rows to compare with (descriptions, plus examples or centroids) and their leaf index."""
        if self._matrix is None:
            np = _numpy()
            skills = list(self.tree.skills.values())
            texts = [option_text(s.name, s.description) for s in skills]
            owners = list(range(len(skills)))
            embed = self.engine.embedder.embed
            if self.examples == "off":
                matrix = embed(texts)
            else:
                example_texts = [(i, e) for i, s in enumerate(skills) for e in s.examples]
                rows = embed(texts + [e for _, e in example_texts]) if example_texts else embed(texts)
                if self.examples == "nn":
                    matrix = rows
                    owners += [i for i, _ in example_texts]
                else:
                    matrix = rows[: len(skills)].copy()
                    counts = np.ones(len(skills), dtype=np.float32)
                    for row, (i, _) in zip(rows[len(skills):], example_texts):
                        matrix[i] += row
                        counts[i] += 1
                    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
            self._matrix, self._owners = matrix, np.array(owners)
        return self._matrix, self._owners


def _with_examples(description: str, examples: tuple[str, ...], mode: str) -> str:
    return description if mode == "off" or not examples else f"{description} {' '.join(examples)}"


def _numpy() -> Any:
    import numpy

    return numpy
