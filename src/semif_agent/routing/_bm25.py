"""BM25 over a fixed set of texts, computed once and scored per query from postings.

The scores are the ones :class:`~semif_agent.engine.lexical.LexicalEngine`
gives when the same texts are a decision's options: Okapi BM25 with IDF over
the texts, each score divided by the best score the query's known words could
reach. What depends only on the texts (term counts, lengths, IDF, the weight
of each term in each text) is computed here once, so a query costs one pass
over the postings of its own words: with numpy, a few array operations; without
it, plain lists.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..engine.lexical import document_terms, terms


class BM25Index:
    """``scores(query)``: one score per text, in the texts' order (an array with numpy, else a list)."""

    def __init__(self, texts: Sequence[str], *, k1: float = 1.2, b: float = 0.75, numpy: Any = None) -> None:
        self.size = len(texts)
        self._np = numpy
        self._gain = k1 + 1
        counted = [document_terms(text) for text in texts]
        docs = [counts for _, counts in counted]
        lengths = [length for length, _ in counted]
        avg_len = sum(lengths) / self.size if self.size else 0.0
        avg_len = avg_len or 1.0
        found: dict[str, tuple[list[int], list[int], list[float]]] = {}
        for i, (counts, length) in enumerate(zip(docs, lengths)):
            norm = k1 * (1 - b + b * length / avg_len)
            for term, count in counts.items():
                where, tally, norms = found.setdefault(term, ([], [], []))
                where.append(i)
                tally.append(count)
                norms.append(norm)
        self.idf: dict[str, float] = {}
        self._postings: dict[str, tuple[Any, Any]] = {}
        for term, (where, tally, norms) in found.items():
            df = len(where)
            idf = self.idf[term] = math.log(1 + (self.size - df + 0.5) / (df + 0.5))
            weights = [idf * c * self._gain / (c + n) for c, n in zip(tally, norms)]
            if numpy is not None:
                self._postings[term] = (numpy.array(where, dtype=numpy.intp), numpy.array(weights, dtype=numpy.float64))
            else:
                self._postings[term] = (where, weights)

    def known(self, query: str) -> list[str]:
        """The query's distinct terms that occur in at least one text."""
        return [t for t in set(terms(query)) if t in self.idf]

    def scores(self, query: str) -> Any:
        words = self.known(query)
        # the best score these words could reach: every one of them matched at saturation
        best = sum(self.idf[t] for t in words) * self._gain or 1.0
        np = self._np
        if np is not None:
            out = np.zeros(self.size, dtype=np.float64)
            for term in words:
                where, weights = self._postings[term]
                out[where] += weights
            out /= best
            return out
        raw = [0.0] * self.size
        for term in words:
            where, weights = self._postings[term]
            for i, weight in zip(where, weights):
                raw[i] += weight
        return [value / best for value in raw]
