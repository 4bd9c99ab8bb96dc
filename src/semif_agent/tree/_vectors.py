"""Skill vectors for grouping: the local model's embeddings, or word vectors when it is missing.

The model embeds a skill as routing embeds it (``leaf_text(name,
description)``), so the embeddings a build computes (kept in the engine's
cache) serve the router's first request: a new tree of a thousand skills is
embedded once, not twice. Word vectors read ``option_text``, whose name
before the ``:`` they weigh twice.
Texts go to the embedder in small batches of similar length: little padding,
bounded memory, and a progress report after each batch.
"""

from __future__ import annotations

import hashlib
import math
import re
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..engine.lexical import stem
from ..engine.local import leaf_text, option_text
from ..errors import EngineConfigError
from ._shape import LeafSpec, Node
from ._words import is_content_word

if TYPE_CHECKING:
    from .._arrays import Vectors

Embed = Callable[[Sequence[str]], "Vectors"]
Progress = Callable[[str, int, int], None]
BATCH = 64
WORD_DIMENSIONS = 512
_TOKEN = re.compile(r"[a-z0-9]+")


def skill_text(skill: LeafSpec, embed: Embed | None = None) -> str:
    """What a skill is embedded as by ``embed``: the text the router embeds, or for :func:`word_vectors` its name
    and description."""
    if embed is word_vectors:
        return option_text(skill.name, skill.description)
    return leaf_text(skill.name, skill.description)


def default_embed() -> Embed:
    """The local model's ``embed``; word vectors, with one warning, when the model is not installed."""
    try:
        from ..engine.local import shared_embedder

        return shared_embedder().embed
    except (EngineConfigError, ImportError) as exc:
        warnings.warn(f"skills are grouped by their words, not their meaning: {exc}", RuntimeWarning, stacklevel=3)
        return word_vectors


def embed_texts(
    texts: Sequence[str], embed: Embed, progress: Progress | None = None, *, stage: str = "embedding"
) -> Vectors:
    """Unit vectors for ``texts`` (float32, one row each), embedded in batches of similar length."""
    import numpy as np

    order = sorted(range(len(texts)), key=lambda i: (len(texts[i]), i))
    rows: Vectors | None = None
    for start in range(0, len(order), BATCH):
        chunk = order[start : start + BATCH]
        vectors = np.asarray(embed([texts[i] for i in chunk]), dtype=np.float32)
        if rows is None:
            rows = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
        rows[chunk] = vectors
        if progress is not None:
            progress(stage, min(start + BATCH, len(order)), len(order))
    if rows is None:
        return np.zeros((0, 1), dtype=np.float32)
    return _normalised(rows)


def embed_skills(skills: Sequence[LeafSpec], embed: Embed, progress: Progress | None = None) -> Vectors:
    """One unit vector per skill: its text, pulled towards its example requests when it has some."""
    texts = [skill_text(s, embed) for s in skills]
    owners = [i for i, s in enumerate(skills) for _ in s.examples]
    examples = [e for s in skills for e in s.examples]
    vectors = embed_texts(texts + examples, embed, progress)
    rows = vectors[: len(texts)].copy()
    if examples:
        import numpy as np

        sums = np.zeros_like(rows)
        np.add.at(sums, owners, vectors[len(texts) :])
        counts = np.bincount(owners, minlength=len(texts)).astype(np.float32)[:, None]
        rows += np.where(counts > 0, sums / np.maximum(counts, 1), 0)
    return _normalised(rows)


def word_vectors(texts: Sequence[str]) -> Vectors:
    """Deterministic vectors of the texts' content words (feature hashing): grouping without a model.

    Words before the first ``:`` (a skill's name in :func:`skill_text`) count twice.
    """
    import numpy as np

    rows = np.zeros((len(texts), WORD_DIMENSIONS), dtype=np.float32)
    for row, text in enumerate(texts):
        head, _, tail = text.lower().partition(":") if ":" in text else ("", "", text.lower())
        words = [(w, 2.0) for w in _TOKEN.findall(head)] + [(w, 1.0) for w in _TOKEN.findall(tail)]
        kept = [(stem(w), weight) for w, weight in words if is_content_word(w)] or [(w, 1.0) for w, _ in words]
        counts: dict[str, float] = {}
        for word, weight in kept or [(text, 1.0)]:
            counts[word] = counts.get(word, 0.0) + weight
        for word, count in counts.items():
            digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
            slot = int.from_bytes(digest[:4], "little") % WORD_DIMENSIONS
            rows[row, slot] += (1.0 if digest[4] & 1 else -1.0) * (1.0 + math.log(count))
    return _normalised(rows)


def _normalised(rows: Vectors) -> Vectors:
    import numpy as np

    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return (rows / np.where(norms > 0, norms, 1.0)).astype(np.float32)


class Centres:
    """Unit vectors of skills (rows of ``vectors``, by leaf id) and of categories (their leaves' centroid)."""

    def __init__(self, names: Sequence[str], vectors: Vectors):
        self.position = {name: i for i, name in enumerate(names)}
        self.vectors = vectors
        self._nodes: dict[int, Vectors] = {}

    def __call__(self, item: str | Node) -> Vectors:
        if isinstance(item, str):
            return self.vectors[self.position[item]]
        found = self._nodes.get(id(item))
        if found is None:
            leaves = item.leaves()
            mean = self.vectors[[self.position[leaf] for leaf in leaves]].sum(axis=0) if leaves else self.vectors[0] * 0
            found = self._nodes[id(item)] = _normalised(mean[None, :])[0]
        return found

    def forget(self, node: Node) -> None:
        self._nodes.pop(id(node), None)
