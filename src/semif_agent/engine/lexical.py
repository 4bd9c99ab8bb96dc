"""The ``lexical`` engine: BM25 over the options' words, standard library only.

The zero-dependency fallback when the embedded model is not installed. Each
option ("option name: description") is a document; the state is the query.
Scores are normalised by the best score the query's known words could reach,
so they lie in [0, 1] and one threshold means the same thing for every
decision, whatever the number of options.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from .base import ThresholdEngine
from .decisions import DecisionRequest

DEFAULT_THRESHOLD = 0.05
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an and are as at be by do for from has have i in is it its me my of on or our please "
    "that the their them this to was we what when where which who will with you your can could "
    "would should about into up out so if all any some there here just want need".split()
)


@functools.lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """A light suffix stripper: enough to match "emails"/"email", "notes"/"note" (cached: words repeat)."""
    for suffix in ("ingly", "edly", "ing", "ies", "ied", "es", "ed", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            base = word[: -len(suffix)]
            return base + "y" if suffix in ("ies", "ied") else base
    return word


def terms(text: str) -> list[str]:
    words = _WORD.findall(text.lower().replace(".", " ").replace("_", " "))
    return [stem(w) for w in words if w not in _STOP]


@functools.lru_cache(maxsize=65_536)
def document_terms(text: str) -> tuple[int, Counter[str]]:
    """A text's length in terms and its term counts (cached: options repeat across decisions, and leaves across
    the indexes a calibration builds; the counts are shared, never changed)."""
    words = terms(text)
    return len(words), Counter(words)


class LexicalEngine(ThresholdEngine):
    """Okapi BM25 (k1=1.2, b=0.75) with IDF taken over the decision's own options."""

    name = "lexical"
    model = "bm25"

    def __init__(self, *, threshold: float = DEFAULT_THRESHOLD, k1: float = 1.2, b: float = 0.75) -> None:
        self.threshold = threshold
        self.k1 = k1
        self.b = b

    def _score(self, request: DecisionRequest) -> dict[str, float]:
        docs = [document_terms(f"{o.id} {o.description}") for o in request.options]
        query = set(terms(request.state))
        n = len(docs)
        avg_len = sum(length for length, _ in docs) / n or 1.0
        df = Counter(t for _, counts in docs for t in counts if t in query)
        idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in query}
        # Normalise by the best score the query could reach on these options: its
        # words that no option knows cannot be matched, so they do not count.
        best_possible = sum(v for t, v in idf.items() if df[t]) * (self.k1 + 1) or 1.0
        scores = {}
        for option, (length, counts) in zip(request.options, docs):
            norm = self.k1 * (1 - self.b + self.b * length / avg_len)
            raw = sum(idf[t] * counts[t] * (self.k1 + 1) / (counts[t] + norm) for t in query if counts[t])
            scores[option.id] = raw / best_possible
        return scores


def create(settings: Mapping[str, Any]) -> LexicalEngine:
    return LexicalEngine(threshold=float(settings.get("threshold", DEFAULT_THRESHOLD)))
