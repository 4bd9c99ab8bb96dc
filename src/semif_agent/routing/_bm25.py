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
from collections import Counter
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from ..engine.lexical import document_terms, terms


class BM25Index:
    """``scores(query)``: one score per text, in the texts' order (an array with numpy, else a list)."""

    def __init__(
        self, texts: Sequence[str], *, k1: float = 1.2, b: float = 0.75, numpy: ModuleType | None = None
    ) -> None:
        self.size = len(texts)
        self._np = numpy
        self._gain = k1 + 1
        counted = [document_terms(text) for text in texts]
        lengths = [length for length, _ in counted]
        avg_len = sum(lengths) / self.size if self.size else 0.0
        avg_len = avg_len or 1.0
        norms = [k1 * (1 - b + b * length / avg_len) for length in lengths]
        self.idf: dict[str, float] = {}
        self._postings: dict[str, tuple[Any, Any]] = {}
        if numpy is not None:
            self._index_arrays([counts for _, counts in counted], norms, numpy)
            return
        found: dict[str, tuple[list[int], list[int], list[float]]] = {}
        for i, ((_, counts), norm) in enumerate(zip(counted, norms)):
            for term, count in counts.items():
                where, tally, term_norms = found.setdefault(term, ([], [], []))
                where.append(i)
                tally.append(count)
                term_norms.append(norm)
        for term, (where, tally, term_norms) in found.items():
            df = len(where)
            idf = self.idf[term] = math.log(1 + (self.size - df + 0.5) / (df + 0.5))
            self._postings[term] = (where, [idf * c * self._gain / (c + n) for c, n in zip(tally, term_norms)])

    def _index_arrays(self, docs: list[Counter[str]], norms: list[float], np: ModuleType) -> None:
        """The same postings computed with numpy in one pass: each term's documents and weights are slices of two
        arrays sorted by term (a calibration builds ten indexes of a thousand leaves; term by term, that took
        most of a new process's first request)."""
        vocabulary: dict[str, int] = {}
        term_ids: list[int] = []
        where: list[int] = []
        tally: list[int] = []
        for i, counts in enumerate(docs):
            for term, count in counts.items():
                term_ids.append(vocabulary.setdefault(term, len(vocabulary)))
                where.append(i)
                tally.append(count)
        terms_of = np.array(term_ids, dtype=np.intp)
        docs_of = np.array(where, dtype=np.intp)
        counts_of = np.array(tally, dtype=np.float64)
        df = np.bincount(terms_of, minlength=len(vocabulary))
        idf = np.log(1 + (self.size - df + 0.5) / (df + 0.5))
        weights = idf[terms_of] * counts_of * self._gain / (counts_of + np.array(norms, dtype=np.float64)[docs_of])
        order = np.argsort(terms_of, kind="stable")  # by term, each term's documents in order
        docs_of, weights = docs_of[order], weights[order]
        ends = np.cumsum(df).tolist()
        idfs = idf.tolist()
        start = 0
        for term, t in vocabulary.items():
            self.idf[term] = idfs[t]
            self._postings[term] = (docs_of[start : ends[t]], weights[start : ends[t]])
            start = ends[t]

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
